"""Every module, file and attribute that the package's docstrings and comments name exists, and
the docs' walk of one WebMCP call (docs/architecture.md) names code that is there: a rename
must take its mentions with it."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "src" / "agentsurface"
SOURCES = sorted(PACKAGE.rglob("*.py"))

DOTTED = re.compile(r"(?<![\w.])agentsurface(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
# `server/routes.py`, `_core/pipeline/execution.py`, `scripts/build_web.py`: paths from the
# package or from the repository's root.
PATH = re.compile(r"(?<![\w/.])((?:[A-Za-z_][\w]*/)+[A-Za-z_][\w]*\.py)\b")
# Dotted names that are not code: loggers, file names, example ids.
NOT_CODE = {
    "agentsurface.js",  # the page's script file
    "agentsurface.whl",
    "agentsurface.relay",  # logger
    "agentsurface.caller",  # a request-state key
    "agentsurface.webmcp",  # logger
    "agentsurface.external.acme",  # an external capability id in an example
    "agentsurface.django.request",  # logger
    "agentsurface.mcp_server.http",  # logger
    "agentsurface.page.relay",  # logger
    "agentsurface.server.postgres",  # logger (its name kept from before the stores/ folder)
    "agentsurface.__path__",
}
# Placeholder paths in examples (a module of the reader's own).
EXAMPLE_PATHS = {"pkg/mod.py", "asyncio/events.py", "rpds/__init__.py"}


@functools.cache
def top_level_names(module: Path) -> frozenset[str]:
    """Names a module defines or imports at its top level (and in its ``if``/``try`` blocks)."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    names: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(t.id for t in targets if isinstance(t, ast.Name))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, (ast.If, ast.Try)):
                visit(node.body)
                visit(getattr(node, "orelse", []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)
    visit(tree.body)
    return frozenset(names)


def class_members(module: Path, cls: str) -> frozenset[str]:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            members = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
            for n in node.body:
                if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
                    members.add(n.target.id)
                elif isinstance(n, ast.Assign):
                    members.update(t.id for t in n.targets if isinstance(t, ast.Name))
            return frozenset(members)
    return frozenset()


def module_file(parts: list[str]) -> Path | None:
    path = PACKAGE.joinpath(*parts)
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    if path.with_suffix(".py").is_file():
        return path.with_suffix(".py")
    return None


def resolves(dotted: str) -> bool:
    """``agentsurface.a.b.Name.attr``: the longest module prefix exists, then ``Name`` is defined
    (or imported) there, then ``attr`` is a member of that class (when it is one, in that file)."""
    parts = dotted.split(".")[1:]
    for cut in range(len(parts), -1, -1):
        module = module_file(parts[:cut]) if cut else PACKAGE / "__init__.py"
        if module is None:
            continue
        rest = parts[cut:]
        if not rest:
            return True
        if rest[0] not in top_level_names(module):
            return False
        if len(rest) == 1:
            return True
        members = class_members(module, rest[0])
        return not members or rest[1] in members  # a re-exported class: checked where it lives
    return False


def mentions() -> list[tuple[str, str]]:
    found = []
    for source in SOURCES:
        text = source.read_text(encoding="utf-8")
        rel = source.relative_to(ROOT).as_posix()
        found += [(rel, m) for m in sorted(set(DOTTED.findall(text))) if m not in NOT_CODE]
    return found


def path_mentions() -> list[tuple[str, str]]:
    found = []
    for source in SOURCES:
        text = source.read_text(encoding="utf-8")
        rel = source.relative_to(ROOT).as_posix()
        found += [(rel, m) for m in sorted(set(PATH.findall(text))) if m not in EXAMPLE_PATHS]
    return found


@pytest.mark.parametrize(("source", "dotted"), mentions())
def test_a_dotted_name_in_the_package_names_code_that_exists(source: str, dotted: str) -> None:
    assert resolves(dotted), f"{source} names {dotted}, which does not exist"


@pytest.mark.parametrize(("source", "path"), path_mentions())
def test_a_file_named_in_the_package_exists(source: str, path: str) -> None:
    candidates = [ROOT / path, PACKAGE / path, *(p / path for p in (ROOT / source).parents)]
    assert any(c.is_file() for c in candidates), f"{source} names {path}, which does not exist"


WALK_STEP = re.compile(r"^\d+\. `(?P<path>[^`]+\.py)` — (?P<text>.*(?:\n(?!\d+\. ).*)*)", re.M)
CODE = re.compile(r"`([A-Za-z_][\w.]*)`")


def walk_steps() -> list[tuple[str, str]]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    walk = text.split("## One WebMCP call", 1)[1].split("\n## ", 1)[0]
    return [(m["path"], m["text"]) for m in WALK_STEP.finditer(walk)]


def test_the_call_walk_has_its_steps() -> None:
    assert len(walk_steps()) >= 5


def all_members(module: Path) -> frozenset[str]:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    return frozenset(
        member
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        for member in class_members(module, node.name)
    )


@pytest.mark.parametrize(("path", "text"), walk_steps())
def test_each_step_of_the_call_walk_names_code_that_exists(path: str, text: str) -> None:
    """A dotted name is checked in the step's module; a bare one anywhere along the walk."""
    module = PACKAGE / path
    assert module.is_file(), f"the walk names {path}, which does not exist"
    walked = [PACKAGE / p for p, _ in walk_steps() if (PACKAGE / p).is_file()]
    known = set().union(*(top_level_names(m) | all_members(m) for m in walked))
    for name in CODE.findall(text):
        head, _, member = name.partition(".")
        if not member:
            assert head in known, f"{path}: the walk names {head}, found in none of its modules"
            continue
        assert head in top_level_names(module), f"{path}: {head} is not in this module"
        members = class_members(module, head)
        assert not members or member.split(".")[0] in members, f"{path}: {name} does not exist"

"""A value that is "the answer now, or an awaitable of it" is spelled only where the split is
needed: the pipeline's entry (phases hand it a ``Wait``), the browser's call, and the three
callbacks an author may write either sync or async. Anywhere else, a layer answers one way."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "src" / "agentsurface"

# Where an `X | Awaitable[...]` union may be written, and why.
ALLOWED = {
    "_core/pipeline/__init__.py": "the pipeline's entry: start() answers now or hands back the rest",
    "_core/pipeline/call.py": "Wait, what a phase hands the entry",
    "_core/registry/registry.py": "start_invocation, the registry's face of the entry",
    "adapters/webmcp.py": "the browser's call: a tool's now()",
    "browser/calls.py": "the browser's call: the JS entry reads now()",
    "_core/policies/base.py": "HookResult: a policy hook the author writes sync or async",
    "_core/pipeline/runtime.py": "ProcedureExecutor: the host's executor, sync or async",
    "server/config.py": "Authenticate: the server's caller lookup, sync or async",
}


def _mentions_awaitable(node: ast.AST) -> bool:
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name) and inner.id == "Awaitable":
            return True
        if isinstance(inner, ast.Attribute) and inner.attr == "Awaitable":
            return True
        if isinstance(inner, ast.Constant) and isinstance(inner.value, str) and "Awaitable[" in inner.value:
            return _string_union(inner.value)
    return False


def _string_union(text: str) -> bool:
    try:
        parsed = ast.parse(text, mode="eval").body
    except SyntaxError:
        return False
    return any(_is_awaitable_union(node) for node in ast.walk(parsed))


def _is_awaitable_union(node: ast.AST) -> bool:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _mentions_awaitable(node)
    if isinstance(node, ast.Subscript) and getattr(node.value, "id", None) in {"Union", "Optional"}:
        return _mentions_awaitable(node.slice)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return "Awaitable[" in node.value and _string_union(node.value)
    return False


def awaitable_unions() -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        lines = sorted({node.lineno for node in ast.walk(tree) if _is_awaitable_union(node)})
        if lines:
            found[path.relative_to(PACKAGE).as_posix()] = lines
    return found


def test_awaitable_unions_are_only_at_the_boundaries() -> None:
    outside = {path: lines for path, lines in awaitable_unions().items() if path not in ALLOWED}
    assert outside == {}, f"answer-now-or-later unions outside the boundaries: {outside}"


def test_each_allowed_place_still_needs_its_union() -> None:
    # A boundary that lost its union leaves its entry here: remove it so the list stays true.
    assert set(awaitable_unions()) == set(ALLOWED)


def test_the_finder_sees_each_spelling() -> None:
    for text in (
        "x: int | Awaitable[int]",
        "x: Union[int, Awaitable[int]]",
        "x: Optional[Awaitable[int]]",
        'x: "int | Awaitable[int]"',
        "def f() -> typing.Awaitable[None] | None: ...",
    ):
        assert any(_is_awaitable_union(node) for node in ast.walk(ast.parse(text))), text
    for text in ("x: Awaitable[int]", "x: int | None", 'x = "an Awaitable[int], or None, in prose"'):
        assert not any(_is_awaitable_union(node) for node in ast.walk(ast.parse(text))), text

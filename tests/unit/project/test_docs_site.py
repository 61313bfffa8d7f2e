"""The docs site holds together: README.md is a front page (under 200 lines) whose relative links,
like every relative link of the pages under docs/, reach a file of the repository (and, for a
``page.md#anchor`` link, a heading of that page); every public module has its reference page, and
every page is in mkdocs.yml's nav. ``mkdocs build --strict`` (scripts/test.sh) checks the site's
own links again as it renders them; this test also covers the README, which the site leaves out."""

from __future__ import annotations

import importlib.util
import re
import unicodedata
from pathlib import Path
from types import ModuleType

import pytest

from tests.doc_blocks import DOCS, README, ROOT, doc_pages
from tests.unit.project.test_public_api import PUBLIC

_FENCE = re.compile(r"^(```|~~~)")
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _prose_lines(text: str) -> list[str]:
    """The page's lines outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def _slug(heading: str) -> str:
    """The anchor Python-Markdown's toc extension gives a heading (its default slugify)."""
    text = re.sub(r"`|\*\*|\*|\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(page: Path) -> set[str]:
    return {_slug(m.group(2)) for line in _prose_lines(page.read_text(encoding="utf-8")) if (m := _HEADING.match(line))}


def _relative_links(page: Path) -> list[str]:
    links = [m.group(1) for line in _prose_lines(page.read_text(encoding="utf-8")) for m in _LINK.finditer(line)]
    return [link for link in links if not re.match(r"^[a-z][a-z0-9+.-]*:", link)]


def test_the_readme_is_a_front_page() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) < 200
    text = "\n".join(lines)
    for needed in ("pip install agentsurface", "python3 scripts/demo.py", "bash scripts/test.sh"):
        assert needed in text, needed
    # It links into the docs: every guide, the getting-started page, the reference, the architecture.
    linked = {(README.parent / link.split("#")[0]).resolve() for link in _relative_links(README)}
    pages = {p.resolve() for p in DOCS.rglob("*.md") if p.parent.name != "reference" or p.name == "index.md"}
    assert pages <= linked, sorted(str(p.relative_to(ROOT)) for p in pages - linked)


@pytest.mark.parametrize("page", doc_pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    problems = []
    for link in _relative_links(page):
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists() or ROOT not in target.parents:
            problems.append(f"{link}: no such file in the repository")
        elif anchor and target.suffix == ".md" and anchor not in _anchors(target):
            problems.append(f"{link}: no heading with that anchor")
    assert problems == []


def test_the_link_check_sees_a_broken_link(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n## Code `x`: y\n\n[ok](#code-x-y) [gone](nowhere.md)\n```\n[in code](skip.md)\n```\n")
    assert _relative_links(page) == ["#code-x-y", "nowhere.md"]
    assert _anchors(page) == {"title", "code-x-y"}


def test_every_public_module_has_a_reference_page_in_the_nav() -> None:
    documented = {
        m.group(1)
        for page in (DOCS / "reference").glob("*.md")
        for m in re.finditer(r"^::: (\S+)$", page.read_text(encoding="utf-8"), re.M)
    }
    assert documented == set(PUBLIC) - {"agentsurface.cli"}  # the command: guides/contract-review.md
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in DOCS.rglob("*.md"):
        assert page.relative_to(DOCS).as_posix() in nav, page


def _rst_roles() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mkdocs_rst_roles", ROOT / "scripts" / "mkdocs_rst_roles.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_reference_shows_the_docstrings_rst_roles_as_markdown() -> None:
    convert = _rst_roles().markdown_docstring
    assert convert("Serve :class:`~agentsurface.ProcedureContract` objects with :meth:`Passkeys.verify`::\n") == (
        "Serve `ProcedureContract` objects with `Passkeys.verify`:\n"
    )
    assert convert(":func:`run <agentsurface.server.run>` then\n\n::\n\n    run()\n") == "`run` then\n\n\n    run()\n"
    # Every role the package's docstrings use is one the extension rewrites.
    roles = {
        m.group(0)
        for path in (ROOT / "src").rglob("*.py")
        for m in re.finditer(r":[a-z:]+:`[^`]+`", path.read_text(encoding="utf-8"))
    }
    assert roles and [role for role in roles if re.search(r":[a-z:]+:`", convert(role))] == []

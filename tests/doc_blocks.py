"""The code blocks of the documentation (README.md and every page under docs/), for the tests that
run them (tests/integration/project/test_doc_blocks.py and e2e/test_readme_first_app.py). A block
is marked by an HTML comment on the line before its fence:

    <!-- first-app: board/surface.py -->   a file of the "Your first app" project, as written
    <!-- first-app: run -->               the shell commands that install, review, bundle and test it
    <!-- readme: runs -->                 a Python block that runs on its own under CPython
    <!-- example: fastapi_app/app.py -->   a file of an app under examples/, exactly as there
    <!-- full-stack: server.py -->        a file of the full-stack guide's expense tracker
    <!-- full-stack: run -->              its commands (e2e/test_full_stack_example.py)
    <!-- django-app: expenses/views.py --> an excerpt of that file of examples/django_app, verbatim
                                          (the example's own tests run it)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
_MARKED = re.compile(r"<!-- (first-app|readme|example|full-stack|django-app): ([^ ]+) -->\n```(\w*)\n(.*?)```", re.S)


class Block(NamedTuple):
    page: str  # the page's path, relative to the repository root
    name: str
    language: str
    code: str


def doc_pages() -> list[Path]:
    """README.md, then every Markdown page of the docs site, in path order."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def located_blocks(kind: str) -> list[Block]:
    """Every block marked ``<!-- kind: name -->`` in the documentation, with the page it is on."""
    return [
        Block(path.relative_to(ROOT).as_posix(), name, lang, code)
        for path in doc_pages()
        for k, name, lang, code in _MARKED.findall(path.read_text(encoding="utf-8"))
        if k == kind
    ]


def marked_blocks(kind: str, text: str | None = None) -> list[tuple[str, str, str]]:
    """``(name, language, code)`` of every block marked ``<!-- kind: name -->``, in order: in ``text``
    when given, else in README.md and the docs pages."""
    if text is not None:
        return [(name, lang, code) for k, name, lang, code in _MARKED.findall(text) if k == kind]
    return [(b.name, b.language, b.code) for b in located_blocks(kind)]


def first_app_page() -> Path:
    """The one page that holds the "Your first app" project."""
    (page,) = {b.page for b in located_blocks("first-app")}
    return ROOT / page


def first_app_files() -> dict[str, str]:
    return {name: code for name, _, code in marked_blocks("first-app") if name != "run"}


def first_app_commands() -> str:
    (commands,) = [code for name, _, code in marked_blocks("first-app") if name == "run"]
    return commands


def full_stack_files() -> dict[str, str]:
    return {name: code for name, _, code in marked_blocks("full-stack") if name != "run"}


def full_stack_commands() -> str:
    (commands,) = [code for name, _, code in marked_blocks("full-stack") if name == "run"]
    return commands

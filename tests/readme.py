"""The README's code blocks, for the tests that run them (tests/test_readme.py and
e2e/test_readme_first_app.py). A block is marked by an HTML comment on the line before its fence:

    <!-- first-app: board/surface.py -->   a file of the "Your first app" project, as written
    <!-- first-app: run -->               the shell commands that install, review, bundle and test it
    <!-- readme: runs -->                 a Python block that runs on its own under CPython
"""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
_MARKED = re.compile(r"<!-- (first-app|readme): ([^ ]+) -->\n```(\w*)\n(.*?)```", re.S)


def marked_blocks(kind: str, text: str | None = None) -> list[tuple[str, str, str]]:
    """``(name, language, code)`` of every block marked ``<!-- kind: name -->``, in order."""
    source = README.read_text(encoding="utf-8") if text is None else text
    return [(name, lang, code) for k, name, lang, code in _MARKED.findall(source) if k == kind]


def first_app_files() -> dict[str, str]:
    return {name: code for name, _, code in marked_blocks("first-app") if name != "run"}


def first_app_commands() -> str:
    (commands,) = [code for name, _, code in marked_blocks("first-app") if name == "run"]
    return commands

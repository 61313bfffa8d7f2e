"""A griffe extension for the docs site (mkdocs.yml loads it): the package's docstrings are prose
with a few reStructuredText habits, which Markdown would print as they are. Before mkdocstrings
renders a docstring, this rewrites them into Markdown, leaving the source alone:

- a role, :class:`~agentsurface.ProcedureContract` or :meth:`Passkeys.verify_assertion`, becomes a
  code span of the name as Sphinx shows it (``ProcedureContract``, ``Passkeys.verify_assertion``);
- a paragraph ending in ``::`` (the literal block that follows is indented, so Markdown already
  shows it as code) ends in ``:``, and a line that is only ``::`` goes.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|mod|data|exc|obj|const):`(~?)([^`<]*?)\s*(?:<([^>]*)>)?`")


def _role(match: re.Match[str]) -> str:
    short, text, target = match.group(1), match.group(2), match.group(3)
    name = text or target or ""
    if short:
        name = name.rsplit(".", 1)[-1]
    return f"`{name}`"


def markdown_docstring(text: str) -> str:
    """The docstring's text with its reStructuredText roles and ``::`` markers made Markdown."""
    text = _ROLE.sub(_role, text)
    text = re.sub(r"^[ \t]*::[ \t]*$\n?", "", text, flags=re.M)
    return re.sub(r"(\S)::[ \t]*$", r"\1:", text, flags=re.M)


class MarkdownDocstrings(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_docstring(obj.docstring.value)

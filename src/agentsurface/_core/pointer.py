"""JSON pointers (RFC 6901) for the ``path`` of agent-facing issues: the one place they are built."""

from __future__ import annotations

from collections.abc import Iterable

# The whole value. (RFC 6901 spells it ""; issues have always said "/" and agents key on it.)
ROOT = "/"


def json_pointer(parts: Iterable[str | int]) -> str:
    """``("a", 0, "b/c")`` → ``/a/0/b~1c``: ``~`` and ``/`` inside a key are escaped, so every
    key, whatever it contains, names exactly one place. No parts → :data:`ROOT`."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in parts) or ROOT

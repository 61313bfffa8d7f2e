"""Previews: what a confirmed call will change, as the app computes it from the effective input
and the current state ("dev-0003: status offline → disabled"), shown in the approval dialog and
fingerprinted, so that an approval given while the state was one thing never applies to another.

An app's preview function returns changes (:class:`Change`, or mappings with exactly the keys
``row``, ``field``, ``before``, ``after``); :func:`make_preview` checks them and keeps the first
``PREVIEW_ROWS_KEPT`` for the dialog, with the count and the digest of them all.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping, Set
from typing import Any, Literal

from .base_error import AgentSurfaceError
from .jsonvalue import JsonValue, NotJsonError, digest, json_size, to_json_value
from .records import record

#: The largest preview accepted, as compact JSON: a larger one refuses the call
#: (``preview-too-large``); nothing is shown, nothing applied.
MAX_PREVIEW_BYTES = 262_144
#: How many changes a pending confirmation keeps (and the dialog shows); the rest are counted
#: and covered by the digest, and the dialog says how many it does not show.
PREVIEW_ROWS_KEPT = 50
#: The longest ``row`` or ``field`` label.
MAX_LABEL_CHARS = 200
#: How deep ``before``/``after`` values may nest.
MAX_VALUE_DEPTH = 8

_KEYS = frozenset({"row", "field", "before", "after"})

PreviewProblem = Literal["preview-invalid", "preview-too-large"]


@record
class Change:
    """One change a call will make: on ``row`` (a record's id or name), ``field`` goes from
    ``before`` to ``after`` (plain JSON values)."""

    row: str
    field: str
    before: JsonValue
    after: JsonValue

    def to_json(self) -> dict[str, JsonValue]:
        return {"row": self.row, "field": self.field, "before": self.before, "after": self.after}


@record
class Preview:
    """A checked preview: the first changes (at most ``PREVIEW_ROWS_KEPT``), how many there are
    in all, and the digest of all of them (what the approval is bound to)."""

    changes: tuple[Change, ...]
    total: int
    digest: str

    @property
    def not_shown(self) -> int:
        """How many changes are counted but not kept (the dialog says so)."""
        return self.total - len(self.changes)

    def to_json(self) -> dict[str, JsonValue]:
        return {"changes": [c.to_json() for c in self.changes], "total": self.total, "digest": self.digest}


class PreviewRefused(AgentSurfaceError):
    """An app's preview is not one (``preview-invalid``) or is too large (``preview-too-large``)."""

    def __init__(self, problem: PreviewProblem, why: str) -> None:
        super().__init__(f"{problem}: {why}")
        self.problem: PreviewProblem = problem
        self.why = why


def make_preview(raw: object) -> Preview:
    """Check what a preview function returned: an iterable (not a string or a mapping) of
    changes. Raises :class:`PreviewRefused`; stops reading a too-large (or endless) one as soon
    as it passes ``MAX_PREVIEW_BYTES``."""
    if inspect.isawaitable(raw):
        close = getattr(raw, "close", None)
        if callable(close):
            close()  # a coroutine never awaited would warn
        raise PreviewRefused(
            "preview-invalid", "a preview must be computed synchronously (it is recomputed just before the write)"
        )
    if raw is None or isinstance(raw, (str, bytes, bytearray, Mapping)) or not isinstance(raw, Iterable):
        raise PreviewRefused("preview-invalid", f"expected a list of changes, got {type(raw).__name__}")
    if isinstance(raw, Set):  # its order may differ between two computations of the same state
        raise PreviewRefused("preview-invalid", "a preview must be ordered (a list), not a set")
    changes: list[dict[str, JsonValue]] = []
    size = 2
    for index, item in enumerate(raw):
        change = _change(item, index)
        size += json_size(change) + 1
        if size > MAX_PREVIEW_BYTES:
            raise PreviewRefused("preview-too-large", f"the preview exceeds {MAX_PREVIEW_BYTES} bytes")
        changes.append(change)
    kept = tuple(Change(c["row"], c["field"], c["before"], c["after"]) for c in changes[:PREVIEW_ROWS_KEPT])  # type: ignore[arg-type]
    return Preview(kept, len(changes), digest(changes))


def _change(item: Any, index: int) -> dict[str, JsonValue]:
    where = f"change {index}"
    if isinstance(item, Change):
        fields: Mapping[str, Any] = item.to_json()
    elif isinstance(item, Mapping):
        if set(item) != _KEYS:
            raise PreviewRefused("preview-invalid", f"{where} must have exactly the keys row, field, before, after")
        fields = item
    else:
        raise PreviewRefused("preview-invalid", f"{where} is a {type(item).__name__}, not a Change")
    for label in ("row", "field"):
        text = fields[label]
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_LABEL_CHARS:
            raise PreviewRefused(
                "preview-invalid", f"{where}: {label} must be a non-empty string of at most {MAX_LABEL_CHARS} characters"
            )
    out: dict[str, JsonValue] = {"row": fields["row"], "field": fields["field"]}
    for side in ("before", "after"):
        try:
            out[side] = to_json_value(fields[side], max_depth=MAX_VALUE_DEPTH)
        except NotJsonError as exc:
            raise PreviewRefused("preview-invalid", f"{where}: {side} is not plain JSON ({exc.reason})") from None
    return out

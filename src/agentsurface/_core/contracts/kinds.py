"""Capability kinds, effects and the defaults table (reference doc 01)."""

from __future__ import annotations

from typing import Literal, TypeAlias

from ..records import record

Kind: TypeAlias = Literal["observation", "action", "procedure"]
ViewEffect: TypeAlias = Literal["local-state", "navigation"]
ProcedureEffect: TypeAlias = Literal["server-query", "server-mutation", "external-side-effect", "destructive"]
Effect: TypeAlias = Literal[
    "read",
    "local-state",
    "navigation",
    "server-query",
    "server-mutation",
    "external-side-effect",
    "destructive",
]
ConfirmationLevel: TypeAlias = Literal["never", "optional", "required"]
AuditLevel: TypeAlias = Literal["none", "metadata", "full"]

VIEW_EFFECTS: frozenset[str] = frozenset({"local-state", "navigation"})
PROCEDURE_EFFECTS: frozenset[str] = frozenset(
    {"server-query", "server-mutation", "external-side-effect", "destructive"}
)
CONFIRMATION_LEVELS: tuple[ConfirmationLevel, ...] = ("never", "optional", "required")
AUDIT_LEVELS: tuple[AuditLevel, ...] = ("none", "metadata", "full")
# Effects whose calls must echo a matching surface version (AS-STALE-002).
VERSION_GUARDED_EFFECTS: frozenset[str] = frozenset({"destructive", "external-side-effect"})
READ_ONLY_EFFECTS: frozenset[str] = frozenset({"read", "server-query"})


@record
class Defaults:
    idempotent: bool
    reversible: bool | None
    confirmation: ConfirmationLevel
    audit: AuditLevel


DEFAULTS: dict[str, Defaults] = {
    "read": Defaults(True, None, "never", "none"),
    "local-state": Defaults(False, True, "never", "metadata"),
    "navigation": Defaults(False, True, "never", "metadata"),
    "server-query": Defaults(True, None, "never", "metadata"),
    "server-mutation": Defaults(False, False, "optional", "metadata"),
    "external-side-effect": Defaults(False, False, "required", "full"),
    "destructive": Defaults(False, False, "required", "full"),
}


def confirmation_rank(level: ConfirmationLevel) -> int:
    return CONFIRMATION_LEVELS.index(level)

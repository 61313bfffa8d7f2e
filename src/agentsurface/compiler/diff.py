"""Classify the changes between two contract documents.

- widening: a new declaration or capability, a removed policy, lower confirmation, a lower
  effect (less cautious posture), lower audit, output no longer marked untrusted;
- narrowing: the opposite of each;
- neutral: descriptions, schemas, tags, meta, priority, idempotence/reversibility flags, moves
  (a declaration written in another module or under another name).

Who ships a declaration and the app's consent to installed distributions are findings too: a
declaration that a dependency now ships, or a new or moved approval, is widening; the opposite,
narrowing; another version of a contributor, neutral.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeAlias

from .._core.contracts.kinds import AUDIT_LEVELS, CONFIRMATION_LEVELS
from .._core.jsonvalue import JsonValue, canonical_json
from .._core.records import record

FindingClass: TypeAlias = Literal["widening", "narrowing", "neutral"]
CLASSES: tuple[FindingClass, ...] = ("widening", "narrowing", "neutral")

EFFECT_ORDER = (
    "read",
    "local-state",
    "navigation",
    "server-query",
    "server-mutation",
    "external-side-effect",
    "destructive",
)


@record(order=True)
class Finding:
    """One classified change; ``subject`` is a declaration or capability id."""

    subject: str
    change: str
    cls: FindingClass
    detail: str = ""

    def to_json(self) -> dict[str, JsonValue]:
        return {"subject": self.subject, "change": self.change, "class": self.cls, "detail": self.detail}


def _by_id(document: Mapping[str, Any] | None, key: str) -> dict[str, Mapping[str, Any]]:
    if not document:
        return {}
    return {str(item["id"]): item for item in document.get(key, ())}


def _same(a: Any, b: Any) -> bool:
    return canonical_json(a) == canonical_json(b)


def _ranked(subject: str, what: str, old: Any, new: Any, order: tuple[str, ...], out: list[Finding]) -> None:
    """Lower rank → widening; higher → narrowing (confirmation, effect, audit)."""
    if old == new or old not in order or new not in order:
        return
    lowered = order.index(new) < order.index(old)
    out.append(
        Finding(
            subject,
            f"{what}-{'lowered' if lowered else 'raised'}",
            "widening" if lowered else "narrowing",
            f"{old} → {new}",
        )
    )


def _policies(subject: str, old: Any, new: Any, out: list[Finding]) -> None:
    before, after = set(old or ()), set(new or ())
    out.extend(Finding(subject, "policy-removed", "widening", name) for name in sorted(before - after))
    out.extend(Finding(subject, "policy-added", "narrowing", name) for name in sorted(after - before))


def _neutral(subject: str, change: str, old: Any, new: Any, out: list[Finding]) -> None:
    if not _same(old, new):
        out.append(Finding(subject, change, "neutral"))


def _capability(subject: str, old: Mapping[str, Any], new: Mapping[str, Any], out: list[Finding]) -> None:
    _ranked(subject, "effect", old.get("effect", "read"), new.get("effect", "read"), EFFECT_ORDER, out)
    _ranked(
        subject,
        "confirmation",
        old.get("confirmation", "never"),
        new.get("confirmation", "never"),
        CONFIRMATION_LEVELS,
        out,
    )
    _ranked(subject, "audit", old.get("audit", "none"), new.get("audit", "none"), AUDIT_LEVELS, out)
    was, now = bool(old.get("untrustedOutput")), bool(new.get("untrustedOutput"))
    if was != now:
        out.append(
            Finding(
                subject,
                "untrusted-output-" + ("dropped" if was else "declared"),
                "widening" if was else "narrowing",
            )
        )
    _neutral(subject, "description-changed", old.get("description"), new.get("description"), out)
    for key in ("inputSchema", "outputSchema"):
        _neutral(subject, "schema-changed", old.get(key), new.get(key), out)
    settled = {
        "effect",
        "confirmation",
        "audit",
        "untrustedOutput",
        "description",
        "inputSchema",
        "outputSchema",
        "kind",
        "policies",
        "id",
        "type",
        "origin",
        "tags",
        "priority",
        "observations",
        "actions",
    }
    rest = {k: v for k, v in old.items() if k not in settled}
    rest_new = {k: v for k, v in new.items() if k not in settled}
    _neutral(subject, "metadata-changed", rest, rest_new, out)


def _members(body: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """A declaration's capabilities by id, from its contract body."""
    if body.get("kind") == "procedure":
        return {str(body["id"]): body}
    members: dict[str, Mapping[str, Any]] = {}
    for group in ("observations", "actions"):
        for name, member in (body.get(group) or {}).items():
            members[f"view:{body['type']}.{name}"] = member
    return members


def _declaration(subject: str, old: Mapping[str, Any], new: Mapping[str, Any], out: list[Finding]) -> None:
    old_body, new_body = old.get("contract") or {}, new.get("contract") or {}
    _policies(subject, old_body.get("policies"), new_body.get("policies"), out)
    origin_old, origin_new = old.get("origin") or {}, new.get("origin") or {}
    if (origin_old.get("module"), origin_old.get("name")) != (
        origin_new.get("module"),
        origin_new.get("name"),
    ):
        out.append(
            Finding(
                subject,
                "moved",
                "neutral",
                f"{origin_old.get('module')}:{origin_old.get('name')} → "
                f"{origin_new.get('module')}:{origin_new.get('name')}",
            )
        )
    shipped_old, shipped_new = origin_old.get("distribution"), origin_new.get("distribution")
    if shipped_old != shipped_new:
        # Who ships the declaration changed: a dependency now decides what it is (or no longer does).
        out.append(
            Finding(
                subject,
                "contributor-changed",
                "widening" if shipped_new is not None else "narrowing",
                f"{shipped_old or 'app'} → {shipped_new or 'app'}",
            )
        )
    if old_body.get("kind") == "component":
        _neutral(
            subject, "description-changed", old_body.get("description"), new_body.get("description"), out
        )
        for key, change in (
            ("tags", "tags-changed"),
            ("priority", "priority-changed"),
            ("origin", "metadata-changed"),
            ("meta", "metadata-changed"),
        ):
            _neutral(subject, change, old_body.get(key), new_body.get(key), out)
    _set_diff(_members(old_body), _members(new_body), "capability", _capability, out)


def _set_diff(
    old: Mapping[str, Mapping[str, Any]],
    new: Mapping[str, Mapping[str, Any]],
    noun: str,
    compare: Callable[[str, Mapping[str, Any], Mapping[str, Any], list[Finding]], None],
    out: list[Finding],
) -> None:
    for ident in sorted(set(new) - set(old)):
        out.append(Finding(ident, f"{noun}-added", "widening"))
    for ident in sorted(set(old) - set(new)):
        out.append(Finding(ident, f"{noun}-removed", "narrowing"))
    for ident in sorted(set(old) & set(new)):
        compare(ident, old[ident], new[ident], out)


def _consent(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None, out: list[Finding]) -> None:
    """The app's consent to installed distributions (the ``external`` records): an approval that
    appears or moves lets a dependency's capabilities register (widening); one withdrawn, narrowing."""
    before = {str(r["distribution"]): r for r in (old or {}).get("external", ())}
    after = {str(r["distribution"]): r for r in (new or {}).get("external", ())}

    def approved(record: Mapping[str, Any] | None) -> str | None:
        authorization = (record or {}).get("authorization") or {}
        return authorization.get("expectedDigest")

    for name in sorted(set(before) | set(after)):
        was, now = approved(before.get(name)), approved(after.get(name))
        if now is not None and now != was:
            out.append(Finding(name, "external-approved", "widening", f"{was or 'none'} → {now}"))
        elif was is not None and now is None:
            out.append(Finding(name, "external-approval-withdrawn", "narrowing", was))
        old_version = (before.get(name) or {}).get("version")
        new_version = (after.get(name) or {}).get("version")
        if old_version and new_version and old_version != new_version:
            out.append(Finding(name, "external-version-changed", "neutral", f"{old_version} → {new_version}"))


def diff_contracts(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> list[Finding]:
    """Findings that turn ``old`` into ``new`` (``None`` is the empty contract), sorted."""
    out: list[Finding] = []
    old_decls, new_decls = _by_id(old, "contracts"), _by_id(new, "contracts")
    for ident in sorted(set(new_decls) - set(old_decls)):
        out.append(Finding(ident, "declaration-added", "widening"))
        members = _members(new_decls[ident].get("contract") or {})
        out.extend(Finding(cap, "capability-added", "widening") for cap in sorted(members) if cap != ident)
    for ident in sorted(set(old_decls) - set(new_decls)):
        out.append(Finding(ident, "declaration-removed", "narrowing"))
        members = _members(old_decls[ident].get("contract") or {})
        out.extend(Finding(cap, "capability-removed", "narrowing") for cap in sorted(members) if cap != ident)
    for ident in sorted(set(old_decls) & set(new_decls)):
        _declaration(ident, old_decls[ident], new_decls[ident], out)
    _consent(old, new, out)
    return sorted(set(out))

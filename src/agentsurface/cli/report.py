"""The report model every output format renders: inventory, integrity, drift, verdict.

``inspect`` and ``check`` build one ``Report``; ``json`` is its canonical JSON, and the human,
Markdown and GitHub renderings read the same fields, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any, Literal, TypeAlias

from .._core.contracts.external import Contributor
from .._core.jsonvalue import JsonValue
from .._core.records import record
from ..compiler.diff import CLASSES, Finding
from ..compiler.errors import Problem

Policy: TypeAlias = Literal["all", "widening", "narrowing", "neutral", "none"]
POLICIES: tuple[Policy, ...] = ("all", "widening", "narrowing", "neutral", "none")
IntegrityStatus: TypeAlias = Literal["current", "stale", "missing"]
APP_ORIGIN = "app"


@record
class Row:
    """One capability of the inventory (the table's columns, plus what ``detail`` adds)."""

    id: str
    declaration: str
    kind: str
    effect: str
    reach: str
    confirmation: str
    policies: tuple[str, ...]
    tags: tuple[str, ...]
    description: str
    origin: str = APP_ORIGIN  # "app", or the installed distribution that contributes it

    @property
    def external(self) -> bool:
        return self.origin != APP_ORIGIN

    @property
    def gated(self) -> bool:
        return self.confirmation != "never" or bool(self.policies)

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "id": self.id,
            "declaration": self.declaration,
            "kind": self.kind,
            "effect": self.effect,
            "reach": self.reach,
            "confirmation": self.confirmation,
            "policies": list(self.policies),
            "tags": list(self.tags),
            "description": self.description,
            "origin": self.origin,
        }


def rows_of(document: Mapping[str, Any]) -> list[Row]:
    descriptions: dict[str, str] = {}
    origins: dict[str, str] = {}
    for entry in document.get("contracts", ()):
        body = entry.get("contract") or {}
        origins[str(entry["id"])] = str((entry.get("origin") or {}).get("distribution") or APP_ORIGIN)
        if body.get("kind") == "procedure":
            descriptions[str(body["id"])] = str(body.get("description", ""))
        for group in ("observations", "actions"):
            for name, member in (body.get(group) or {}).items():
                descriptions[f"view:{body.get('type')}.{name}"] = str(member.get("description", ""))
    return [
        Row(
            id=str(r["id"]),
            declaration=str(r["declaration"]),
            kind=str(r["kind"]),
            effect=str(r["effect"]),
            reach=str(r["reach"]),
            confirmation=str(r["confirmation"]),
            policies=tuple(r.get("policies", ())),
            tags=tuple(r.get("tags", ())),
            description=descriptions.get(str(r["id"]), ""),
            origin=origins.get(str(r["declaration"]), APP_ORIGIN),
        )
        for r in document.get("capabilities", ())
    ]


@record
class Section:
    """A comparison: integrity (source vs committed) or drift (base vs committed)."""

    name: Literal["integrity", "drift"]
    status: str
    findings: tuple[Finding, ...] = ()
    base: str | None = None

    def counts(self) -> dict[str, int]:
        return {c: sum(1 for f in self.findings if f.cls == c) for c in CLASSES}

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {
            "status": self.status,
            "counts": dict(self.counts()),
            "findings": [f.to_json() for f in self.findings],
        }
        if self.base is not None:
            out["base"] = self.base
        return out


@record
class Report:
    command: Literal["inspect", "check"]
    contract: str  # project-relative path of the committed contract
    policy: Policy
    rows: tuple[Row, ...] = ()
    manifest_hash: str = ""
    compiler: str = ""
    integrity: Section | None = None
    drift: Section | None = None
    problems: tuple[Problem, ...] = ()
    failures: tuple[str, ...] = field(default=())
    contributors: tuple[Contributor, ...] = ()  # installed distributions that contribute
    document: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)  # compiled
    unused_approvals: tuple[str, ...] = ()  # approved distributions that contribute nothing now

    @property
    def exit_code(self) -> int:
        if self.problems:
            return 2
        return 1 if self.failures else 0

    @property
    def verdict(self) -> str:
        return {0: "pass", 1: "fail", 2: "error"}[self.exit_code]

    def headline(self) -> dict[str, JsonValue]:
        gated = sum(1 for r in self.rows if r.gated)
        total = len(self.rows)
        return {
            "declarations": len({r.declaration for r in self.rows}),
            "capabilities": total,
            "gated": gated,
            "gatedPercent": round(100 * gated / total) if total else 0,
            "reach": {g: sum(1 for r in self.rows if r.reach == g) for g in ("low", "medium", "high")},
            "integrity": self.integrity.status if self.integrity else "unknown",
        }

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {
            "command": self.command,
            "verdict": self.verdict,
            "exitCode": self.exit_code,
            "contract": self.contract,
            "policy": self.policy,
            "compiler": self.compiler,
            "hash": self.manifest_hash,
            "headline": self.headline(),
            "capabilities": [r.to_json() for r in self.rows],
            "failures": list(self.failures),
            "problems": [{"code": p.code, "where": p.where, "message": p.message} for p in self.problems],
        }
        if self.contributors:
            out["contributors"] = [{**c.to_json(), "status": c.status} for c in self.contributors]
        if self.unused_approvals:
            out["unusedApprovals"] = list(self.unused_approvals)
        if self.integrity is not None:
            out["integrity"] = self.integrity.to_json()
        if self.drift is not None:
            out["drift"] = self.drift.to_json()
        return out


def selected(policy: Policy, findings: Sequence[Finding]) -> list[Finding]:
    """The findings that fail ``check`` under ``policy`` (rows are never removed from output)."""
    if policy == "none":
        return []
    return [f for f in findings if policy == "all" or f.cls == policy]

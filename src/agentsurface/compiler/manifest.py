"""The canonical contract document (``.agentsurface/contract.json``) and its bytes.

It extends the runtime manifest of ``compile_manifest`` (format, version, completeness, one entry
per declaration with its hash, whole-manifest hash), so ``CapabilityAuthority.from_manifest`` accepts it
as is, with what a reviewer needs: the compiler that wrote it, the modules it compiled, each
declaration's origin (module, top-level name, project-relative file, and the installed
distribution that contributes it, if not the app) and one row per capability (kind, effect, reach,
confirmation, audit, policies, tags, hash). When installed distributions contribute declarations,
an ``external`` list records, per distribution, what it contributes (``contractDigest``) apart from
what the app approved (``authorization``), as ``core.external`` reads them back. Nothing in it depends on the
machine, the checkout path, the time or a running app: the same source gives the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from importlib import metadata
from typing import Any, Literal, TypeAlias

from .._core.contracts import ActionContract, ComponentContract, ObservationContract, ProcedureContract
from .._core.contracts.authority import compile_manifest
from .._core.contracts.external import Contributor, contributor_digest
from .._core.jsonvalue import JsonValue, canonical_json, digest
from .attribution import Shipper
from .config import ProjectConfig
from .consent import check_listed_capabilities
from .discover import Declaration

COMPILER_NAME = "agentsurface-python"
Reach: TypeAlias = Literal["low", "medium", "high"]

# The reference's grading: how far a capability reaches if an agent misuses it.
REACH: dict[str, Reach] = {
    "read": "low",
    "local-state": "low",
    "navigation": "medium",
    "server-query": "medium",
    "server-mutation": "high",
    "external-side-effect": "high",
    "destructive": "high",
}


def compiler_version() -> str:
    try:
        return metadata.version("agentsurface")
    except metadata.PackageNotFoundError:  # running from a source tree that is not installed
        return "0+unknown"


def _capability_rows(declaration: Declaration) -> list[dict[str, JsonValue]]:
    contract = declaration.contract
    if isinstance(contract, ProcedureContract):
        body = contract.to_json()
        return [_row(contract.id, contract.id, "procedure", body, list(contract.policies), [])]
    assert isinstance(contract, ComponentContract)
    rows = []
    members: list[tuple[str, ObservationContract | ActionContract]] = [
        *contract.observations.items(),
        *contract.actions.items(),
    ]
    for name, member in members:
        body = member.to_json()
        rows.append(
            _row(
                contract.capability_id(name),
                contract.id,
                str(body["kind"]),
                body,
                list(contract.policies),
                list(contract.tags),
            )
        )
    return rows


def _row(
    ident: str, declaration: str, kind: str, body: Mapping[str, Any], policies: list[str], tags: list[str]
) -> dict[str, JsonValue]:
    effect = str(body.get("effect", "read"))
    return {
        "id": ident,
        "declaration": declaration,
        "kind": kind,
        "effect": effect,
        "reach": REACH[effect],
        "confirmation": str(body.get("confirmation", "never")),
        "audit": str(body.get("audit", "none")),
        "policies": list[JsonValue](sorted(policies)),
        "tags": list[JsonValue](sorted(tags)),
        "untrustedOutput": bool(body.get("untrustedOutput", False)),
        "hash": digest(body),
    }


def build_contract(config: ProjectConfig, declarations: Sequence[Declaration]) -> dict[str, JsonValue]:
    """The contract document for ``declarations`` (already proven complete by ``discover``)."""
    manifest = compile_manifest([d.contract for d in declarations])
    origins = {d.contract.id: d for d in declarations}
    entries: list[JsonValue] = []
    for entry in manifest["contracts"]:  # type: ignore[union-attr]
        assert isinstance(entry, dict)
        where = origins[str(entry["id"])]
        origin: dict[str, JsonValue] = {"module": where.module, "name": where.name, "file": where.file}
        if where.distribution is not None:
            origin["distribution"] = where.distribution.name
        if where.route:  # the page never imports a route's module: its JSON Schema decides there
            origin["route"] = True
        entries.append({**entry, "origin": origin})
    rows = sorted((row for d in declarations for row in _capability_rows(d)), key=lambda r: str(r["id"]))
    external = contributors(config, declarations, entries, rows)
    document: dict[str, JsonValue] = {
        "format": manifest["format"],
        "version": manifest["version"],
        "compiler": {"name": COMPILER_NAME, "version": compiler_version()},
        "targets": list[JsonValue](sorted(config.modules)),
        "completeness": {"status": "complete", "declarations": len(entries), "capabilities": len(rows)},
        "contracts": entries,
        "capabilities": list(rows),
    }
    if external:  # absent when the app alone declares: a contract without it has no contributor
        document["external"] = [c.to_json() for c in external]
    # The same formula as the runtime manifest: the hash of everything but the hash.
    document["hash"] = digest(document)
    return document


def contributors(
    config: ProjectConfig,
    declarations: Sequence[Declaration],
    entries: Sequence[JsonValue],
    rows: Sequence[Mapping[str, JsonValue]],
) -> list[Contributor]:
    """One record per contributing distribution: its digest, and the app's approval if any."""
    by_id = {str(e["id"]): e for e in entries if isinstance(e, dict)}
    shipped: dict[Shipper, list[str]] = {}
    for d in declarations:
        if d.distribution is not None:
            shipped.setdefault(d.distribution, []).append(d.contract.id)
    out: list[Contributor] = []
    for shipper, ids in sorted(shipped.items(), key=lambda item: item[0].name):
        contract_digest = contributor_digest(by_id[i] for i in ids)
        approval = config.approvals.get(shipper.name)
        if approval is not None and approval.digest == contract_digest:
            check_listed_capabilities(approval, capabilities_of(rows, ids))
        out.append(
            Contributor(
                shipper.name,
                shipper.version,
                tuple(sorted(ids)),
                contract_digest,
                None if approval is None else approval.digest,
            )
        )
    return out


def capabilities_of(rows: Sequence[Mapping[str, Any]], declarations: Sequence[str]) -> list[str]:
    """The capability ids of ``declarations`` (from the document's capability rows)."""
    wanted = set(declarations)
    return sorted(str(r["id"]) for r in rows if r["declaration"] in wanted)


def contract_bytes(document: Mapping[str, Any]) -> bytes:
    """Stable, diff-friendly bytes: canonical values, sorted keys, two-space indent, final newline."""
    normalized = json.loads(canonical_json(document))
    return (json.dumps(normalized, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def compile_project(config: ProjectConfig) -> dict[str, JsonValue]:
    """Import the app, prove its declarations complete, and return its contract document."""
    from .discover import discover

    return build_contract(config, discover(config))

"""What ``inspect``, ``check`` and ``snapshot`` do, independent of how the result is printed."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from .._core.errors import AuthorityError
from .._core.records import record
from ..compiler.config import ProjectConfig, load_config
from ..compiler.diff import Finding, diff_contracts
from ..compiler.errors import CompileError, ContractFileError, Problem
from ..compiler.load import authority_from_contract, parse_contract
from ..compiler.manifest import compile_project, contract_bytes
from .external import consent_failures, contributors_of
from .git import GitError, read_at_ref
from .report import Policy, Report, Section, rows_of, selected

SNAPSHOT_HINT = "agentsurface snapshot"


@record
class Compiled:
    config: ProjectConfig
    document: Mapping[str, Any]
    data: bytes


def compile_at(root: Path) -> Compiled:
    config = load_config(root)
    document = compile_project(config)
    return Compiled(config, document, contract_bytes(document))


def verified(data: bytes, where: str) -> Mapping[str, Any]:
    """A contract document whose hashes hold (what the page's authority would accept)."""
    try:
        document = parse_contract(data)
        authority_from_contract(document)
    except AuthorityError as exc:
        raise ContractFileError(f"{where} is not a valid contract: {exc}") from None
    return document


def _read_committed(compiled: Compiled) -> bytes | None:
    path = compiled.config.contract_path
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ContractFileError(f"cannot read {compiled.config.contract}: {exc}") from None


def _integrity(compiled: Compiled, committed: bytes | None) -> tuple[Section, Mapping[str, Any] | None]:
    if committed is None:
        findings = tuple(diff_contracts(None, compiled.document))
        return Section("integrity", "missing", findings), None
    document = verified(committed, compiled.config.contract)
    if committed == compiled.data:
        return Section("integrity", "current"), document
    return Section("integrity", "stale", tuple(diff_contracts(document, compiled.document))), document


def _drift(compiled: Compiled, head: Mapping[str, Any] | None, base: str) -> Section:
    data = read_at_ref(compiled.config.contract_path, base)
    old = None if data is None else verified(data, f"{compiled.config.contract} at {base}")
    new = head if head is not None else compiled.document
    findings: tuple[Finding, ...] = tuple(diff_contracts(old, new))
    status = "absent at base" if old is None else ("changed" if findings else "no changes")
    return Section("drift", status, findings, base=base)


def build_report(
    command: Literal["inspect", "check"], root: Path, base: str | None, policy: Policy
) -> Report:
    contract = ".agentsurface/contract.json"
    try:
        compiled = compile_at(root)
        contract = compiled.config.contract
        integrity, head = _integrity(compiled, _read_committed(compiled))
        drift = _drift(compiled, head, base) if base else None
    except CompileError as exc:
        return Report(command, contract, policy, problems=tuple(exc.problems))
    except ContractFileError as exc:
        return Report(command, contract, policy, problems=(Problem("invalid-contract", str(exc)),))
    except GitError as exc:
        return Report(command, contract, policy, problems=(Problem("git-failed", str(exc), base or ""),))
    failures: list[str] = []
    contributors = tuple(contributors_of(compiled.document))
    if command == "check":
        # Before integrity: consent is judged on what the source contributes now, and no flag
        # (not --policy, not a fresh snapshot) makes an unapproved contributor pass.
        failures.extend(consent_failures(compiled.document, contributors))
        if integrity.status != "current":
            failures.append(
                f"integrity: {contract} is {integrity.status}; run `{SNAPSHOT_HINT}` and commit it"
            )
        chosen = selected(policy, drift.findings) if drift else []
        if chosen:
            failures.append(f"drift: {len(chosen)} finding(s) selected by --policy {policy}")
    compiler = compiled.document["compiler"]
    return Report(
        command,
        contract,
        policy,
        rows=tuple(rows_of(compiled.document)),
        manifest_hash=str(compiled.document["hash"]),
        compiler=f"{compiler['name']} {compiler['version']}",
        integrity=integrity,
        drift=drift,
        failures=tuple(failures),
        contributors=contributors,
        document=compiled.document,
        unused_approvals=tuple(
            sorted(set(compiled.config.approvals) - {c.distribution for c in contributors})
        ),
    )


def write_snapshot(root: Path, output: Path | None) -> tuple[Path, bool, Mapping[str, Any]]:
    """Write the contract (atomically); returns the path, whether its bytes changed, and the document."""
    compiled = compile_at(root)
    target = output if output is not None else compiled.config.contract_path
    if target.exists() and target.read_bytes() == compiled.data:
        return target, False, compiled.document
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    temporary.write_bytes(compiled.data)
    temporary.replace(target)
    return target, True, compiled.document

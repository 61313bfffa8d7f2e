"""Consent to external contributors on the command line: what fails ``check``, what to paste.

``check`` fails for every installed distribution whose contribution the app has not approved, and,
with a different message, for an approved one whose contribution changed. There is no flag that
skips either. ``agentsurface approve [DIST...]`` prints the ``pyproject.toml`` table that approves
a contribution as it is now, one capability id a line, so the pull request that approves a
dependency shows what it may do.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .._core.contracts.external import Contributor, normalize_distribution, read_contributors
from ..compiler.consent import approval_toml
from ..compiler.manifest import capabilities_of

APPROVE_HINT = "agentsurface approve"


def contributors_of(document: Mapping[str, Any]) -> list[Contributor]:
    entries = {str(e["id"]): e for e in document.get("contracts", ())}
    return read_contributors(document, entries)


def capability_ids(document: Mapping[str, Any], contributor: Contributor) -> list[str]:
    return capabilities_of(document.get("capabilities", ()), contributor.declarations)


def consent_failure(document: Mapping[str, Any], contributor: Contributor) -> str | None:
    """One line saying why ``contributor`` fails ``check`` (None when approved)."""
    name, count = contributor.distribution, len(capability_ids(document, contributor))
    if contributor.status == "unapproved":
        return (
            f"external: {name} {contributor.version} contributes {count} capabilities that the app "
            f"has not approved; review them (`agentsurface inspect`), then add the approval that "
            f"`{APPROVE_HINT} {name}` prints to pyproject.toml"
        )
    if contributor.status == "changed":
        return (
            f"external: {name} {contributor.version} changed what it contributes since the app "
            f"approved it (approved {contributor.expected_digest}, now {contributor.contract_digest}); "
            f"review the change (`agentsurface inspect --base <ref>`), then update the approval "
            f"with what `{APPROVE_HINT} {name}` prints"
        )
    return None


def consent_failures(document: Mapping[str, Any], contributors: Iterable[Contributor]) -> list[str]:
    return [f for c in contributors if (f := consent_failure(document, c)) is not None]


def _comment(row: Mapping[str, Any]) -> str:
    parts = [str(row["effect"])]
    if row.get("confirmation", "never") != "never":
        parts.append(f"confirmation {row['confirmation']}")
    return ", ".join(parts)


def approval_text(document: Mapping[str, Any], contributor: Contributor) -> str:
    """The table approving ``contributor``, each capability annotated with its effect."""
    ids = capability_ids(document, contributor)
    rows = {str(r["id"]): r for r in document.get("capabilities", ())}
    text = approval_toml(contributor, ids)
    width = max((len(c) for c in ids), default=0) + 4
    for ident in ids:
        line = f'  "{ident}",'
        text = text.replace(line + "\n", f"{line:<{width + 2}}  # {_comment(rows[ident])}\n", 1)
    header = (
        f"# {contributor.distribution} {contributor.version}: {len(ids)} capabilities in "
        f"{len(contributor.declarations)} declarations\n"
    )
    return header + text


def select(contributors: Sequence[Contributor], names: Sequence[str]) -> tuple[list[Contributor], list[str]]:
    """The contributors ``names`` ask for (all not approved when none), and names that match none."""
    if not names:
        return [c for c in contributors if c.status != "approved"], []
    by_name = {c.distribution: c for c in contributors}
    wanted = [normalize_distribution(n) for n in names]
    return [by_name[n] for n in wanted if n in by_name], [n for n in wanted if n not in by_name]

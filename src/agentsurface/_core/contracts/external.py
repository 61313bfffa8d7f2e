"""Capabilities contributed by installed distributions, and the app's consent to them.

A contract document may carry an ``external`` list: one entry per installed distribution (not the
app's own code) that declares capabilities the app's surface imports. Each entry records two facts
that answer different questions and are kept apart:

    {
      "distribution": "acme-widgets",        # normalized distribution name (PEP 503)
      "version": "1.2.0",                    # the installed version that was compiled
      "declarations": ["acme.widgets.panel", "domain:acme.widgets.order"],
      "contractDigest": "sha256:…",          # integrity: what it contributes to *this* build
      "authorization": {"expectedDigest": "sha256:…"} | null,   # consent: what the app approved
    }

The contributor is *approved* when the app's approval names the same digest, *changed* when the
app approved another digest (the dependency changed what it contributes), and *unapproved* when
the app never approved it. The authority verifies the record against the manifest's own entries
and refuses every registration of a declaration whose contributor is not approved, naming the
distribution. Imports only the core (safe in the page).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypeAlias

from ..errors import AuthorityError
from ..jsonvalue import JsonValue, digest
from ..records import record

ConsentStatus: TypeAlias = Literal["approved", "unapproved", "changed"]
DIGEST_RE = re.compile(r"sha256:[0-9a-f]{64}")
_NAME_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def normalize_distribution(name: str) -> str:
    """The PEP 503 form of a distribution name: ``Acme_Widgets`` and ``acme.widgets`` → ``acme-widgets``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def contributor_digest(entries: Iterable[Mapping[str, Any]]) -> str:
    """The digest of what one distribution contributes: its declarations' ids and content hashes.

    Independent of the distribution's version, of where the declarations are written (module,
    name) and of the order they were found: a release that contributes the same contracts keeps
    its digest, and any change to a contributed contract changes it."""
    pairs = sorted((str(e["id"]), str(e["hash"])) for e in entries)
    return digest({"declarations": [{"id": i, "hash": h} for i, h in pairs]})


def consent_status(contract_digest: str, expected: str | None) -> ConsentStatus:
    if expected is None:
        return "unapproved"
    return "approved" if expected == contract_digest else "changed"


@record
class Contributor:
    """One external contributor as recorded in a contract document."""

    distribution: str
    version: str
    declarations: tuple[str, ...]
    contract_digest: str
    expected_digest: str | None

    @property
    def status(self) -> ConsentStatus:
        return consent_status(self.contract_digest, self.expected_digest)

    def refusal(self) -> str | None:
        """Why the authority refuses this contributor's declarations (None when approved)."""
        if self.status == "unapproved":
            return (
                f"contributed by the installed distribution {self.distribution!r} "
                f"({self.version}), which the app has not approved; review its capabilities and "
                f"add [tool.agentsurface.external.{self.distribution}] with digest "
                f"{self.contract_digest} to pyproject.toml, then run `agentsurface snapshot`"
            )
        if self.status == "changed":
            return (
                f"contributed by the installed distribution {self.distribution!r} "
                f"({self.version}), whose contract changed since the app approved it "
                f"(approved {self.expected_digest}, now {self.contract_digest}); review the "
                "change, update the approval's digest, then run `agentsurface snapshot`"
            )
        return None

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "distribution": self.distribution,
            "version": self.version,
            "declarations": list(self.declarations),
            "contractDigest": self.contract_digest,
            "authorization": None
            if self.expected_digest is None
            else {"expectedDigest": self.expected_digest},
        }


class ExternalContractError(AuthorityError):
    """A registration refused because an installed distribution contributed its contract and the
    app has not approved that contribution (or approved a different one). ``distribution`` names it."""

    def __init__(self, message: str, *, distribution: str, status: ConsentStatus) -> None:
        super().__init__(message)
        self.distribution = distribution
        self.status = status


def _bad(message: str, index: int | None = None) -> AuthorityError:
    return AuthorityError(message, path="external" if index is None else f"external[{index}]")


def _contributor(raw: Any, index: int, entries: Mapping[str, Mapping[str, Any]]) -> Contributor:
    if not isinstance(raw, Mapping):
        raise _bad("an external contributor must be a JSON object", index)
    name, version, declared = raw.get("distribution"), raw.get("version"), raw.get("declarations")
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise _bad(f"distribution must be a normalized distribution name, got {name!r}", index)
    if not isinstance(version, str) or not version:
        raise _bad(f"version of {name!r} must be a non-empty string", index)
    if (
        not isinstance(declared, (list, tuple))
        or not declared
        or not all(isinstance(d, str) for d in declared)
    ):
        raise _bad(f"declarations of {name!r} must be a non-empty list of ids", index)
    unknown = sorted(d for d in declared if d not in entries)
    if unknown:
        raise _bad(f"{name!r} claims declarations the manifest does not hold: {unknown}", index)
    recorded = raw.get("contractDigest")
    actual = contributor_digest(entries[d] for d in declared)
    if recorded != actual:
        raise _bad(f"contractDigest of {name!r} does not match its declarations", index)
    authorization = raw.get("authorization")
    expected: str | None = None
    if authorization is not None:
        expected = authorization.get("expectedDigest") if isinstance(authorization, Mapping) else None
        if not isinstance(expected, str) or not DIGEST_RE.fullmatch(expected):
            raise _bad(f"authorization of {name!r} must be null or {{expectedDigest: 'sha256:…'}}", index)
    return Contributor(name, version, tuple(declared), actual, expected)


def read_contributors(
    manifest: Mapping[str, Any], entries: Mapping[str, Mapping[str, Any]]
) -> list[Contributor]:
    """The manifest's external contributors, verified against its entries (AuthorityError if not)."""
    raw = manifest.get("external", [])
    if not isinstance(raw, (list, tuple)):
        raise _bad("external must be a list")
    contributors = [_contributor(item, i, entries) for i, item in enumerate(raw)]
    seen: dict[str, str] = {}
    for c in contributors:
        if c.distribution in seen:
            raise _bad(f"{c.distribution!r} is listed twice")
        seen[c.distribution] = c.distribution
    claimed: dict[str, str] = {}
    for c in contributors:
        for ident in c.declarations:
            if ident in claimed:
                raise _bad(f"{ident!r} is attributed to both {claimed[ident]!r} and {c.distribution!r}")
            claimed[ident] = c.distribution
    for ident, entry in entries.items():
        origin = entry.get("origin")
        said = origin.get("distribution") if isinstance(origin, Mapping) else None
        if said is not None and claimed.get(ident) != said:
            raise _bad(f"{ident!r} names distribution {said!r} but no external entry lists it there")
    return contributors


def external_refusals(
    manifest: Mapping[str, Any], entries: Mapping[str, Mapping[str, Any]]
) -> dict[str, Contributor]:
    """Declaration id → its contributor, for the contributors that are not approved."""
    return {
        ident: contributor
        for contributor in read_contributors(manifest, entries)
        if contributor.status != "approved"
        for ident in contributor.declarations
    }


def refuse(ident: str, contributor: Contributor) -> ExternalContractError:
    """The error a registration of ``ident`` gets (a fresh one per refusal)."""
    return ExternalContractError(
        f"registration refused: {ident!r} is {contributor.refusal()}",
        distribution=contributor.distribution,
        status=contributor.status,
    )

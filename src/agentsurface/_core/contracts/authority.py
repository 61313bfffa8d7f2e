"""Contract manifests and the capability authority that a registry requires.

``compile_manifest(contracts)`` writes the canonical manifest: format version, completeness,
one entry per contract with its SHA-256, and a hash over the whole. ``CapabilityAuthority.from_manifest``
verifies such a manifest, deep-freezes it, and mints the only kind of object a registry accepts.
Genuineness is recorded in a private weak set: copying attributes onto another object proves
nothing.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import AuthorityError
from ..jsonvalue import FrozenDict, JsonValue, digest, frozen_copy
from . import ComponentBinding, ComponentContract, ProcedureContract, ProcedureReference, is_minted
from .external import Contributor, external_refusals, refuse

MANIFEST_FORMAT = "agentsurface/contract-manifest"
MANIFEST_VERSION = 1

Contract = ComponentContract | ProcedureContract


def _entry(contract: Contract) -> dict[str, JsonValue]:
    body = contract.to_json()
    return {"id": contract.id, "kind": str(body["kind"]), "hash": digest(body), "contract": body}


def _manifest_hash(manifest: Mapping[str, Any]) -> str:
    return digest({k: v for k, v in manifest.items() if k != "hash"})


def compile_manifest(contracts: Iterable[Any]) -> dict[str, JsonValue]:
    """Build the canonical manifest for ``contracts`` (contract objects or component classes)."""
    entries: dict[str, dict[str, JsonValue]] = {}
    for item in contracts:
        contract = getattr(item, "contract", item)
        if not isinstance(contract, (ComponentContract, ProcedureContract)):
            raise AuthorityError(f"{item!r} is not a component or procedure contract")
        entry = _entry(contract)
        if contract.id in entries:
            if entries[contract.id]["hash"] != entry["hash"]:
                raise AuthorityError(f"two different contracts declare {contract.id!r}")
            continue
        entries[contract.id] = entry
    manifest: dict[str, JsonValue] = {
        "format": MANIFEST_FORMAT,
        "version": MANIFEST_VERSION,
        "completeness": {"status": "complete"},
        "contracts": [entries[key] for key in sorted(entries)],
    }
    manifest["hash"] = _manifest_hash(manifest)
    return manifest


class CapabilityAuthority:
    """The frozen, verified manifest a registry executes under. Mint with
    ``CapabilityAuthority.from_manifest(manifest)``; instances made any other way are refused."""

    __slots__ = ("__weakref__", "_entries", "_manifest", "_refused", "_verified", "_withheld", "domain_paths")

    def __init__(
        self,
        manifest: FrozenDict,
        entries: Mapping[str, FrozenDict],
        refused: Mapping[str, Contributor] | None = None,
        withheld: Mapping[str, str] | None = None,
    ) -> None:
        self._manifest = manifest
        self._entries = FrozenDict(entries)
        # Reviewed declarations this authority still refuses, each with why (see withholding()).
        self._withheld = dict(withheld or {})
        # Declarations an installed distribution contributed without the app's approval (or with
        # an approval of another digest): in the manifest, reviewed, and still never registered.
        self._refused = dict(refused or {})
        self.domain_paths = frozenset(i.split(":", 1)[1] for i in entries if i.startswith("domain:"))
        """The paths of the manifest's domain procedures (a registry checks view ids against them)."""
        # Contracts are frozen; once a contract object has been checked, re-hashing it on
        # every mount would only cost time.
        self._verified: set[weakref.ref[Contract]] = set()  # weak: a C-level lookup per registration

    @classmethod
    def from_manifest(cls, manifest: Mapping[str, Any]) -> CapabilityAuthority:
        """Verify a complete, hash-consistent manifest (``compile_manifest([...])``, or a reviewed
        ``contract.json``) and mint an authority over it: the only kind a registry accepts."""
        return _mint(manifest)

    @property
    def manifest(self) -> FrozenDict:
        """The verified manifest, deep-frozen (read-only: there is no setter)."""
        return self._manifest

    @property
    def hash(self) -> str:
        return str(self._manifest["hash"])

    def ids(self) -> list[str]:
        return sorted(self._entries)

    @property
    def withheld(self) -> Mapping[str, str]:
        """Reviewed declarations this authority refuses anyway, with the reason for each."""
        return dict(self._withheld)

    def withholding(self, withheld: Mapping[str, str]) -> CapabilityAuthority:
        """The same reviewed manifest, refusing also the declarations ``withheld`` names (id →
        why, e.g. "not served by the backend"): what ``BackendBridge.authority()`` returns. An
        id the manifest does not list is refused here (it could not be registered anyway)."""
        unknown = sorted(set(withheld) - set(self._entries))
        if unknown:
            raise AuthorityError(f"cannot withhold {unknown}: not in the capability manifest")
        authority = CapabilityAuthority(
            self._manifest, self._entries, self._refused, {**self._withheld, **dict(withheld)}
        )
        _GENUINE.add(weakref.ref(authority, _GENUINE.discard))
        return authority

    def verify_binding(self, binding: object) -> ComponentBinding:
        """Return the binding if its contract and procedure references are in this manifest."""
        if not isinstance(binding, ComponentBinding) or not is_minted(binding):
            raise AuthorityError(
                "registration refused: not a binding made by ComponentContract.bind() "
                "(raw definitions carry no contract proof)"
            )
        self._verify_contract(binding.contract)
        if binding.contract.policies:
            missing = sorted(set(binding.contract.policies) - {p.name for p in binding.policies})
            if missing:
                raise AuthorityError(
                    f"{binding.contract.type!r} requires policies {missing}, which the binding does not attach"
                )
        for ref in binding.procedures:
            self.verify_reference(ref)
        return binding

    def verify_reference(self, ref: ProcedureReference) -> None:
        if not isinstance(ref, ProcedureReference) or not is_minted(ref):
            raise AuthorityError("procedure reference was not made by ProcedureContract.reference()")
        self._verify_contract(ref.contract)
        missing = sorted(set(ref.contract.policies) - {p.name for p in ref.policies})
        if missing:
            raise AuthorityError(f"{ref.contract.id!r} requires policies {missing}")

    def _verify_contract(self, contract: Contract) -> None:
        if weakref.ref(contract) in self._verified:
            return
        entry = self._entries.get(contract.id)
        if entry is None:
            raise AuthorityError(
                f"{contract.id!r} is not in the capability manifest (unknown contract): the authority "
                "was built from a manifest that does not list it. A page's authority is its reviewed "
                "contract, components and procedures alike (authority_from_bundle(), after `agentsurface "
                "snapshot`); a test surface lists it in create_test_surface(contracts=[...])"
            )
        why = self._withheld.get(contract.id)
        if why is not None:
            raise AuthorityError(f"{contract.id!r} is withheld from this page: {why}")
        contributor = self._refused.get(contract.id)
        if contributor is not None:
            raise refuse(contract.id, contributor)
        # Recompute from the contract's semantics, not its cached hash: a contract changed
        # after the manifest was compiled is stale and must fail closed.
        actual = digest(contract.to_json())
        if actual != entry["hash"]:
            raise AuthorityError(
                f"{contract.id!r} differs from its manifest entry (stale or semantically "
                f"changed contract: manifest {entry['hash']}, contract {actual})"
            )
        self._verified.add(weakref.ref(contract, self._verified.discard))

    def __repr__(self) -> str:
        return f"<CapabilityAuthority {len(self._entries)} contracts {self.hash[:19]}>"


# Weak references to the authorities minted here (a set of refs, not a WeakSet: checking one
# is then a C-level lookup, on the path of every registry created).
_GENUINE: set[weakref.ref[CapabilityAuthority]] = set()


def _mint(manifest: Mapping[str, Any]) -> CapabilityAuthority:
    """``CapabilityAuthority.from_manifest``: verify, then mint."""
    if not isinstance(manifest, Mapping):
        raise AuthorityError("manifest must be a JSON object")
    # One deep-frozen copy (nothing of the caller's, FrozenDicts included, is kept): everything
    # below checks the very values the authority then holds.
    frozen: FrozenDict = frozen_copy(manifest)
    version = frozen.get("version")
    # type() check: True == 1 in Python, and a boolean version is not format version 1.
    if frozen.get("format") != MANIFEST_FORMAT or type(version) is not int or version != MANIFEST_VERSION:
        raise AuthorityError(
            f"unsupported manifest format {frozen.get('format')!r} version {frozen.get('version')!r}"
        )
    completeness = frozen.get("completeness")
    if not isinstance(completeness, Mapping) or completeness.get("status") != "complete":
        raise AuthorityError("manifest is not complete")
    contracts = frozen.get("contracts")
    if not isinstance(contracts, (list, tuple)):
        raise AuthorityError("manifest contracts must be a list")
    entries: dict[str, FrozenDict] = {}
    for i, raw in enumerate(contracts):
        if not isinstance(raw, FrozenDict) or not isinstance(raw.get("id"), str):  # frozen: any object
            raise AuthorityError("manifest entry has no id", path=f"contracts[{i}]")
        ident = raw["id"]
        if ident in entries:
            raise AuthorityError(f"{ident!r} is declared twice", path=f"contracts[{i}]")
        body = raw.get("contract")
        if not isinstance(body, Mapping) or digest(body) != raw.get("hash"):
            raise AuthorityError(
                f"contract hash of {ident!r} does not match its content", path=f"contracts[{i}]"
            )
        if body.get("kind") != raw.get("kind") or body.get("type", body.get("id")) != ident:
            raise AuthorityError(f"entry {ident!r} disagrees with its contract body", path=f"contracts[{i}]")
        entries[ident] = raw
    if _manifest_hash(frozen) != frozen.get("hash"):
        raise AuthorityError("manifest hash does not match its content")
    refused = external_refusals(frozen, entries)
    authority = CapabilityAuthority(frozen, entries, refused)
    _GENUINE.add(weakref.ref(authority, _GENUINE.discard))
    return authority


def is_genuine_authority(value: object) -> bool:
    return isinstance(value, CapabilityAuthority) and weakref.ref(value) in _GENUINE


# The authority last proven genuine (an app makes every registry with the same one): proven
# again by identity, without making a weak reference to look it up.
_last_genuine: weakref.ref[CapabilityAuthority] | None = None


def assert_capability_authority(value: object) -> CapabilityAuthority:
    global _last_genuine
    last = _last_genuine
    if last is not None and last() is value:
        return value  # type: ignore[return-value]
    if not (isinstance(value, CapabilityAuthority) and weakref.ref(value) in _GENUINE):  # is_genuine_authority
        raise AuthorityError(
            "a registry needs a CapabilityAuthority minted by CapabilityAuthority.from_manifest(manifest)"
        )
    assert isinstance(value, CapabilityAuthority)
    _last_genuine = weakref.ref(value)
    return value

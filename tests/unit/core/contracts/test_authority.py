"""AS-CONTRACT-001..004 and AS-AUTHORITY-001..003: a registry runs only under a genuine,
frozen capability authority, and accepts only minted bindings of contracts that authority
proves (reference doc 02, "Mandatory runtime authority"; doc 03, "Contract, binding, and
authority")."""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentsurface import (
    AgentSurfaceRegistry,
    AuthorityError,
    CapabilityAuthority,
    DefinitionError,
    Policy,
    compile_manifest,
)
from agentsurface._core.contracts.authority import (
    MANIFEST_FORMAT,
    assert_capability_authority,
    is_genuine_authority,
)
from agentsurface._core.jsonvalue import FrozenDict, canonical_json, digest, thaw
from agentsurface.lowlevel import ComponentBinding
from tests.support import bind_devices, devices_contract, disable_procedure, registry_for


class Auth(Policy):
    name = "auth"


def _manifest(*contracts: Any) -> dict[str, Any]:
    return thaw(compile_manifest(list(contracts)))  # type: ignore[no-any-return]


def _rehash(manifest: dict[str, Any]) -> dict[str, Any]:
    """Recompute the outer hash, so that only the inner defect remains."""
    body = {k: v for k, v in manifest.items() if k != "hash"}
    return {**body, "hash": digest(body)}


# ----------------------------------------------------------------------------- AS-AUTHORITY-001


@pytest.mark.parametrize("bogus", [None, "authority", {}, object()])
def test_AS_AUTHORITY_001_registry_refuses_construction_without_an_authority(bogus: Any) -> None:
    with pytest.raises(AuthorityError, match="from_manifest"):
        AgentSurfaceRegistry(authority=bogus)


def test_AS_AUTHORITY_001_registry_refuses_a_hand_made_authority() -> None:
    manifest = compile_manifest([devices_contract()])
    genuine = CapabilityAuthority.from_manifest(manifest)
    forged = CapabilityAuthority(genuine.manifest, {e["id"]: e for e in genuine.manifest["contracts"]})
    assert forged.ids() == genuine.ids()
    assert not is_genuine_authority(forged)
    with pytest.raises(AuthorityError):
        AgentSurfaceRegistry(authority=forged)
    with pytest.raises(AuthorityError):
        assert_capability_authority(forged)


def test_AS_AUTHORITY_001_registry_refuses_a_copy_of_a_genuine_authority() -> None:
    genuine = CapabilityAuthority.from_manifest(compile_manifest([devices_contract()]))
    for clone in (copy.copy(genuine), copy.deepcopy(genuine)):
        assert clone is not genuine
        assert not is_genuine_authority(clone)
        with pytest.raises(AuthorityError):
            AgentSurfaceRegistry(authority=clone)
    assert AgentSurfaceRegistry(authority=genuine).authority is genuine


def test_AS_AUTHORITY_001_registry_refuses_the_raw_manifest() -> None:
    with pytest.raises(AuthorityError):
        AgentSurfaceRegistry(authority=compile_manifest([devices_contract()]))  # type: ignore[arg-type]


def test_AS_AUTHORITY_001_authority_manifest_is_cloned_and_deep_frozen() -> None:
    source = _manifest(devices_contract())
    authority = CapabilityAuthority.from_manifest(source)
    manifest = authority.manifest
    assert isinstance(manifest, FrozenDict)
    with pytest.raises(TypeError):
        manifest["hash"] = "x"  # type: ignore[index]
    with pytest.raises(TypeError):
        manifest["completeness"]["status"] = "partial"
    assert isinstance(manifest["contracts"], tuple)
    entry = manifest["contracts"][0]
    with pytest.raises(TypeError):
        entry["contract"]["description"] = "changed"
    with pytest.raises(AttributeError):
        authority.manifest = FrozenDict()  # type: ignore[misc]
    # Mutating the caller's dict afterwards changes nothing inside the authority.
    source["contracts"][0]["contract"]["description"] = "mutated later"
    assert authority.manifest["contracts"][0]["contract"]["description"] == "The devices table"
    assert authority.hash == source["hash"]


# ----------------------------------------------------------------------------- manifest tampering


def test_AS_CONTRACT_004_manifest_hash_must_match() -> None:
    manifest = _manifest(devices_contract())
    with pytest.raises(AuthorityError, match="manifest hash does not match"):
        CapabilityAuthority.from_manifest({**manifest, "hash": "sha256:" + "0" * 64})
    without = {k: v for k, v in manifest.items() if k != "hash"}
    with pytest.raises(AuthorityError, match="manifest hash does not match"):
        CapabilityAuthority.from_manifest(without)


def test_AS_CONTRACT_004_entry_hash_must_match_its_contract() -> None:
    manifest = _manifest(devices_contract())
    manifest["contracts"][0]["contract"]["description"] = "Tampered"
    with pytest.raises(AuthorityError, match=r"contract hash of 'devices\.table' does not match") as info:
        CapabilityAuthority.from_manifest(_rehash(manifest))
    assert info.value.path == "contracts[0]"


def test_AS_CONTRACT_004_entry_must_agree_with_its_body() -> None:
    manifest = _manifest(devices_contract())
    manifest["contracts"][0]["id"] = "other.table"
    with pytest.raises(AuthorityError, match="disagrees with its contract body"):
        CapabilityAuthority.from_manifest(_rehash(manifest))


def test_AS_CONTRACT_004_incomplete_manifest_is_refused() -> None:
    manifest = _manifest(devices_contract())
    manifest["completeness"] = {"status": "partial"}
    with pytest.raises(AuthorityError, match="not complete"):
        CapabilityAuthority.from_manifest(_rehash(manifest))
    del manifest["completeness"]
    with pytest.raises(AuthorityError, match="not complete"):
        CapabilityAuthority.from_manifest(_rehash(manifest))


def test_AS_CONTRACT_004_duplicate_ids_are_refused() -> None:
    manifest = _manifest(devices_contract())
    manifest["contracts"].append(copy.deepcopy(manifest["contracts"][0]))
    with pytest.raises(AuthorityError, match=r"'devices\.table' is declared twice") as info:
        CapabilityAuthority.from_manifest(_rehash(manifest))
    assert info.value.path == "contracts[1]"


@pytest.mark.parametrize(
    "patch",
    [
        {"format": "something-else"},
        {"format": None},
        {"version": 2},
        {"version": "1"},
        {"version": True},
    ],
)
def test_AS_CONTRACT_004_wrong_format_or_version_is_refused(patch: dict[str, Any]) -> None:
    manifest = {**_manifest(devices_contract()), **patch}
    with pytest.raises(AuthorityError, match="unsupported manifest format"):
        CapabilityAuthority.from_manifest(_rehash(manifest))


@pytest.mark.parametrize(
    ("manifest", "fragment"),
    [
        (None, "manifest must be a JSON object"),
        ([], "manifest must be a JSON object"),
        ({"format": MANIFEST_FORMAT, "version": 1, "completeness": {"status": "complete"}, "contracts": {}},
         "contracts must be a list"),
        ({"format": MANIFEST_FORMAT, "version": 1, "completeness": {"status": "complete"}, "contracts": [{}]},
         "manifest entry has no id"),
    ],
)
def test_AS_CONTRACT_004_malformed_manifests_are_refused(manifest: Any, fragment: str) -> None:
    with pytest.raises(AuthorityError, match=fragment):
        CapabilityAuthority.from_manifest(manifest)


def test_authority_errors_are_definition_errors_with_the_authority_code() -> None:
    with pytest.raises(DefinitionError) as info:
        CapabilityAuthority.from_manifest({})
    assert info.value.code == "AUTHORITY_VIOLATION"


# ----------------------------------------------------------------------------- AS-CONTRACT-002


def test_AS_CONTRACT_002_manifest_hashes_bind_static_identity() -> None:
    contract = devices_contract()
    proc = disable_procedure()
    manifest = compile_manifest([proc, contract])
    assert manifest["format"] == MANIFEST_FORMAT
    assert manifest["version"] == 1
    assert manifest["completeness"] == {"status": "complete"}
    entries = {e["id"]: e for e in manifest["contracts"]}  # type: ignore[index, union-attr]
    assert entries["devices.table"]["hash"] == contract.hash == digest(contract.to_json())
    assert entries["domain:devices.disable"]["hash"] == proc.hash
    assert entries["devices.table"]["kind"] == "component"
    assert entries["domain:devices.disable"]["kind"] == "procedure"
    assert manifest["hash"] == digest({k: v for k, v in manifest.items() if k != "hash"})
    # Any semantic change of any contract changes the manifest hash.
    changed = compile_manifest([proc, devices_contract(select_description="Pick rows")])
    assert changed["hash"] != manifest["hash"]
    assert compile_manifest([proc, devices_contract()])["hash"] == manifest["hash"]


def test_AS_CONTRACT_002_manifest_is_independent_of_contract_order() -> None:
    a = devices_contract("devices.table")
    b = devices_contract("reports.panel")
    p = disable_procedure()
    first = canonical_json(compile_manifest([a, b, p]))
    assert canonical_json(compile_manifest([p, b, a])) == first
    assert canonical_json(compile_manifest([b, p, a, b])) == first  # an identical repeat is one entry
    ids = [e["id"] for e in compile_manifest([p, b, a])["contracts"]]  # type: ignore[index, union-attr]
    assert ids == sorted(ids)


def test_AS_CONTRACT_002_two_different_contracts_with_one_id_do_not_compile() -> None:
    with pytest.raises(AuthorityError, match=r"two different contracts declare 'devices\.table'"):
        compile_manifest([devices_contract(), devices_contract(description="Another")])


def test_AS_CONTRACT_002_compile_refuses_things_that_are_not_contracts() -> None:
    with pytest.raises(AuthorityError, match="is not a component or procedure contract"):
        compile_manifest([{"type": "devices.table"}])


_MANIFEST_SCRIPT = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {root!r})
    from agentsurface import compile_manifest
    from agentsurface._core.jsonvalue import canonical_json
    from tests.support import devices_contract, disable_procedure
    contracts = [devices_contract(), disable_procedure(), devices_contract("reports.panel", meta={{"b": 1, "a": [2]}})]
    contracts[0] = type(contracts[0])(
        type="tagged.panel", description="Tags", actions=dict(contracts[0].actions), tags={{"z", "y", "x", "w"}}
    )
    sys.stdout.write(canonical_json(compile_manifest(contracts)))
    """
)


def test_AS_COMPILER_002_canonical_manifest_is_byte_identical_across_runs() -> None:
    root = str(Path(__file__).resolve().parents[4])
    script = _MANIFEST_SCRIPT.format(root=root)
    outputs = []
    for seed in ("1", "2"):  # different hash seeds: set and dict-iteration order would differ
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, check=True, cwd="/"
        )
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    manifest = json.loads(outputs[0])
    assert set(manifest) == {"format", "version", "completeness", "contracts", "hash"}  # no volatility
    assert [e["id"] for e in manifest["contracts"]] == ["domain:devices.disable", "reports.panel", "tagged.panel"]


# ----------------------------------------------------------------------------- AS-CONTRACT-001 / 003


def test_AS_CONTRACT_001_registration_requires_proof_matching_the_running_authority() -> None:
    contract = devices_contract()
    registry = registry_for([contract])
    assert registry.register(bind_devices(contract)).status == "active"
    other = registry_for([devices_contract("reports.panel")])
    with pytest.raises(AuthorityError, match=r"'devices\.table' is not in the capability manifest"):
        other.register(bind_devices(contract, "second"))


@pytest.mark.parametrize(
    "raw",
    [
        {"type": "devices.table", "description": "raw", "actions": {}},
        "devices.table",
        None,
    ],
)
def test_AS_CONTRACT_003_raw_definitions_are_refused(raw: Any) -> None:
    registry = registry_for([devices_contract()])
    with pytest.raises(AuthorityError, match=r"not a binding made by ComponentContract\.bind"):
        registry.register(raw)
    assert registry.snapshot().components == ()
    assert registry.version == "0"


def test_AS_CONTRACT_003_a_contract_itself_is_not_a_binding() -> None:
    contract = devices_contract()
    registry = registry_for([contract])
    with pytest.raises(AuthorityError):
        registry.register(contract)


def test_AS_CONTRACT_003_unknown_contracts_cannot_widen_the_registry() -> None:
    registry = registry_for([devices_contract()])
    stranger = devices_contract("admin.console")
    with pytest.raises(AuthorityError, match=r"'admin\.console' is not in the capability manifest"):
        registry.register(bind_devices(stranger))
    assert registry.registrations() == []


def test_AS_CONTRACT_003_unknown_procedure_references_are_refused() -> None:
    contract = devices_contract()
    registry = registry_for([contract])  # the procedure is not in the manifest
    binding = bind_devices(contract, procedures=[disable_procedure().reference()])
    with pytest.raises(AuthorityError, match=r"'domain:devices\.disable' is not in the capability manifest"):
        registry.register(binding)
    assert registry.version == "0"


# ----------------------------------------------------------------------------- AS-AUTHORITY-002


def test_AS_AUTHORITY_002_a_hand_built_binding_is_refused() -> None:
    contract = devices_contract()
    registry = registry_for([contract])
    genuine = bind_devices(contract)
    forged = ComponentBinding(
        contract=contract,
        instance_id="forged",
        observations=genuine.observations,
        actions=genuine.actions,
        procedures=(),
        policies=(),
        enabled=True,
        parent=None,
        internal={},
    )
    with pytest.raises(AuthorityError, match=r"not a binding made by ComponentContract\.bind"):
        registry.register(forged)


def test_AS_AUTHORITY_002_copies_of_minted_bindings_are_refused() -> None:
    contract = devices_contract()
    registry = registry_for([contract])
    genuine = bind_devices(contract)
    for clone in (dataclasses.replace(genuine, instance_id="clone"), copy.copy(genuine)):
        with pytest.raises(AuthorityError):
            registry.register(clone)
    assert registry.register(genuine).status == "active"


def test_AS_AUTHORITY_002_copied_procedure_references_are_refused() -> None:
    contract, proc = devices_contract(), disable_procedure()
    registry = registry_for([contract, proc])
    forged_ref = dataclasses.replace(proc.reference())
    with pytest.raises(DefinitionError, match=r"must come from ProcedureContract\.reference"):
        bind_devices(contract, procedures=[forged_ref])
    with pytest.raises(AuthorityError, match="procedure reference was not made by"):
        registry.authority.verify_reference(forged_ref)


# ----------------------------------------------------------------------------- AS-AUTHORITY-003


@pytest.mark.parametrize(
    "changed",
    [
        {"description": "Another description"},
        {"select_description": "Select devices"},
        {"priority": 1},
        {"origin": "third-party"},
        {"meta": {"x": 1}},
    ],
)
def test_AS_AUTHORITY_003_stale_contracts_are_refused(changed: dict[str, Any]) -> None:
    registry = registry_for([devices_contract()])
    stale = devices_contract(**changed)
    with pytest.raises(AuthorityError, match="differs from its manifest entry"):
        registry.register(bind_devices(stale))
    assert registry.version == "0"


def test_AS_AUTHORITY_003_changed_schema_or_effect_is_stale() -> None:
    from agentsurface.lowlevel import ActionContract, ComponentContract

    def variant(**action: Any) -> ComponentContract:
        return ComponentContract(
            type="devices.table", description="Devices", actions={"go": ActionContract("Go", **action)}
        )

    registry = registry_for([variant()])
    for stale in (
        variant(effect="navigation"),
        variant(input={"type": "object", "properties": {"x": {"type": "string"}}}),
        variant(confirmation="required"),
        variant(idempotent=True),
    ):
        with pytest.raises(AuthorityError, match="stale or semantically changed"):
            registry.register(stale.bind(actions={"go": lambda v, c: None}))
    assert registry.register(variant().bind(actions={"go": lambda v, c: None})).status == "active"


def test_AS_AUTHORITY_003_a_contract_mutated_after_compilation_is_refused() -> None:
    contract = devices_contract()
    registry = registry_for([contract])
    binding = bind_devices(contract)
    # Frozen dataclasses can still be forced; the authority re-hashes the semantics.
    object.__setattr__(contract.actions["selectRows"], "description", "Tampered")
    with pytest.raises(AuthorityError, match="differs from its manifest entry"):
        registry.register(binding)


def test_AS_AUTHORITY_003_required_contract_policies_must_be_attached() -> None:
    contract = devices_contract(policies=["auth"])
    registry = registry_for([contract])
    with pytest.raises(AuthorityError, match=r"requires policies \['auth'\]"):
        registry.register(bind_devices(contract))
    assert registry.register(bind_devices(contract, policies=[Auth()])).status == "active"


def test_AS_AUTHORITY_003_required_procedure_policies_must_be_attached() -> None:
    contract, proc = devices_contract(), disable_procedure(policies=["auth"])
    registry = registry_for([contract, proc])
    with pytest.raises(AuthorityError, match=r"'domain:devices.disable' requires policies \['auth'\]"):
        registry.register(bind_devices(contract, procedures=[proc.reference()]))
    handle = registry.register(bind_devices(contract, procedures=[proc.reference(policies=[Auth()])]))
    assert handle.status == "active"


def test_authority_lists_its_ids_and_has_a_short_repr() -> None:
    authority = CapabilityAuthority.from_manifest(compile_manifest([disable_procedure(), devices_contract()]))
    assert authority.ids() == ["devices.table", "domain:devices.disable"]
    assert repr(authority).startswith("<CapabilityAuthority 2 contracts sha256:")

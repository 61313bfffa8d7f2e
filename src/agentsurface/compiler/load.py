"""Trust a committed contract: ``contract.json`` → ``CapabilityAuthority`` (safe in the page).

    authority = authority_from_contract(text)      # text of .agentsurface/contract.json
    registry = AgentSurfaceRegistry(authority=authority)

    registry = AgentSurfaceRegistry(authority=authority_from_bundle())   # in a bundled page

    procedures = procedures_from_contract(text)      # {id: ProcedureContract}, no pydantic

``agentsurface bundle`` puts the reviewed contract into the app's wheel (its ``.dist-info``), which
the page loads integrity-checked against the runtime's lock; ``authority_from_bundle`` reads it
from there: one line, no fetch, and the very bytes that were reviewed.

The authority verifies every declaration's hash and the whole document's hash, so an edited or
truncated file is refused; at registration, a contract that is not in the file, or whose content
differs from its reviewed entry, is refused as unknown or stale, and one that an installed
distribution contributes without the app's approval (or with an approval of another digest) is
refused with ``ExternalContractError`` naming the distribution. Imports only the core.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .._core.contracts.authority import CapabilityAuthority
from .._core.contracts.external import ExternalContractError
from .._core.contracts.procedures import ProcedureContract
from .._core.errors import AuthorityError
from .._core.schemas.schema import Schema, schema_from_json

__all__ = [
    "ExternalContractError",
    "authority_from_bundle",
    "authority_from_contract",
    "parse_contract",
    "procedures_from_bundle",
    "procedures_from_contract",
]


def parse_contract(source: str | bytes | Mapping[str, Any]) -> Mapping[str, Any]:
    """The contract document from its JSON text (or an already parsed mapping)."""
    if isinstance(source, Mapping):
        return source
    try:
        document = json.loads(source)
    except (ValueError, TypeError) as exc:
        raise AuthorityError(f"contract.json is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise AuthorityError("contract.json must hold a JSON object")
    return document


def authority_from_contract(source: str | bytes | Mapping[str, Any]) -> CapabilityAuthority:
    """Mint the authority over a committed contract written by ``agentsurface snapshot``."""
    document = parse_contract(source)
    if not isinstance(document.get("compiler"), Mapping):
        raise AuthorityError(
            "contract.json was not written by the compiler (no 'compiler' field); "
            "run `agentsurface snapshot`"
        )
    return CapabilityAuthority.from_manifest(document)


# The file ``agentsurface bundle`` writes into the app wheel's .dist-info: the reviewed contract.
BUNDLED_CONTRACT = "agentsurface_contract.json"


def authority_from_bundle(distribution: str | None = None) -> CapabilityAuthority:
    """The authority over the contract ``agentsurface bundle`` shipped inside the app's wheel
    (loaded by the page with ``data-packages="<app>"``). ``distribution`` names the app when the
    page loads several bundled apps."""
    return authority_from_contract(_bundled_text(distribution))


def _bundled_text(distribution: str | None) -> str:
    from importlib import metadata

    found: list[tuple[str, str]] = []
    candidates: Iterable[metadata.Distribution] = (
        metadata.distributions() if distribution is None else [metadata.distribution(distribution)]
    )
    for dist in candidates:
        text = dist.read_text(BUNDLED_CONTRACT)
        if text is not None:
            found.append((dist.metadata["Name"], text))
    if not found:
        raise AuthorityError(
            "no bundled contract: the page has not loaded an app wheel made by `agentsurface bundle` "
            '(load it with <script type="module" src="agentsurface.js" data-packages="your-app">); '
            "outside a bundle, use authority_from_contract(text of contract.json)"
        )
    if len(found) > 1:
        names = sorted(name for name, _ in found)
        raise AuthorityError(f"several bundled apps carry a contract ({names}): pass distribution=")
    return found[0][1]


def procedures_from_bundle(distribution: str | None = None) -> dict[str, ProcedureContract]:
    """The procedure contracts of the contract ``agentsurface bundle`` shipped inside the app's
    wheel, by id (:func:`procedures_from_contract` of that file): what a page references when its
    procedures are declared in server code it never imports (an app's routes, say)."""
    return procedures_from_contract(_bundled_text(distribution))


def procedures_from_contract(source: str | bytes | Mapping[str, Any]) -> dict[str, ProcedureContract]:
    """The procedure contracts the committed contract declares, by id, made from its JSON Schemas:
    a page references the server's procedures without importing the module that declares them
    (and the pydantic models it is written with). Each has the reviewed hash (the registry's
    authority and ``BackendBridge.connect()``'s digest checks see the very same contract); its
    input and output are checked by the compiled JSON-Schema check, and a value that check cannot
    prove valid goes to the declaring module's own contract (``origin`` in contract.json,
    imported then), so the page refuses exactly what that contract refuses, with its issues.
    Raises AuthorityError for an entry that does not rebuild to its reviewed hash.

    The contract's ``timeout`` is not part of its reviewed JSON, so these contracts have none."""
    document = parse_contract(source)
    entries = document.get("contracts")
    if not isinstance(entries, list):
        raise AuthorityError("contract.json has no 'contracts' list; run `agentsurface snapshot`")
    found: dict[str, ProcedureContract] = {}
    for entry in entries:
        if not isinstance(entry, Mapping) or entry.get("kind") != "procedure":
            continue
        found[str(entry.get("id"))] = _committed_procedure(entry)
    return found


def _committed_procedure(entry: Mapping[str, Any]) -> ProcedureContract:
    from .._core.schemas.committed import CommittedSchema  # only pages that take procedures from it

    body = entry.get("contract")
    origin = entry.get("origin")
    if not isinstance(body, Mapping) or not isinstance(origin, Mapping):
        raise AuthorityError(f"contract.json: procedure {entry.get('id')!r} has no contract or origin")
    where = (str(origin.get("module")), str(origin.get("name")), str(entry.get("hash")))
    output = body.get("outputSchema")
    route = origin.get("route") is True
    try:
        contract = ProcedureContract(
            id=body["id"],
            description=body["description"],
            effect=body["effect"],
            input=CommittedSchema(body["inputSchema"], _declared(where, "input", route, body["inputSchema"])),
            output=None
            if output is None
            else CommittedSchema(output, _declared(where, "output", route, output)),
            idempotent=body.get("idempotent"),
            reversible=body.get("reversible"),
            confirmation=body.get("confirmation"),
            audit=body.get("audit"),
            meta=body.get("meta"),
            untrusted_output=bool(body.get("untrustedOutput", False)),
            policies=body.get("policies") or (),
        )
    except (KeyError, TypeError) as exc:
        raise AuthorityError(f"contract.json: procedure {entry.get('id')!r} is incomplete: {exc}") from None
    if contract.hash != entry.get("hash"):
        raise AuthorityError(
            f"contract.json: procedure {contract.id!r} does not rebuild to its reviewed hash "
            "(an edited file?); run `agentsurface snapshot`"
        )
    return contract


def _declared(origin: tuple[str, str, str], part: str, route: bool, committed: Any) -> Callable[[], Schema]:
    """The declaring contract's schema, imported on first use (it must be the reviewed one).
    A procedure declared by an app's route lives in server code the page cannot import (the web
    framework): there the committed JSON Schema itself decides, and the server, which validates
    with the route's own models, refuses the rest."""
    if route:
        return lambda: schema_from_json(committed)

    def load() -> Schema:
        module, name, reviewed = origin
        declared = getattr(importlib.import_module(module), name, None)
        if not isinstance(declared, ProcedureContract):
            raise AuthorityError(f"{module}.{name} is not the ProcedureContract contract.json names")
        if declared.hash != reviewed:
            raise AuthorityError(f"{module}.{name} differs from its reviewed entry in contract.json (stale)")
        schema = declared.input if part == "input" else declared.output
        if schema is None:
            raise AuthorityError(f"{module}.{name} declares no {part} schema")
        return schema

    return load

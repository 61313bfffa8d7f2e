"""Trust a committed contract: ``contract.json`` → ``CapabilityAuthority`` (safe in the page).

    authority = authority_from_contract(text)      # text of .agent-surface/contract.json
    registry = AgentSurfaceRegistry(authority=authority)

    registry = AgentSurfaceRegistry(authority=authority_from_bundle())   # in a bundled page

``agent-surface bundle`` puts the reviewed contract into the app's wheel (its ``.dist-info``), which
the page loads integrity-checked against the runtime's lock; ``authority_from_bundle`` reads it
from there: one line, no fetch, and the very bytes that were reviewed.

The authority verifies every declaration's hash and the whole document's hash, so an edited or
truncated file is refused; at registration, a contract that is not in the file, or whose content
differs from its reviewed entry, is refused as unknown or stale, and one that an installed
distribution contributes without the app's approval (or with an approval of another digest) is
refused with ``ExternalContractError`` naming the distribution. Imports only the core.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from .._core.contracts.authority import CapabilityAuthority, create_capability_authority
from .._core.contracts.external import ExternalContractError
from .._core.errors import AuthorityError

__all__ = ["ExternalContractError", "authority_from_bundle", "authority_from_contract", "parse_contract"]


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
    """Mint the authority over a committed contract written by ``agent-surface snapshot``."""
    document = parse_contract(source)
    if not isinstance(document.get("compiler"), Mapping):
        raise AuthorityError(
            "contract.json was not written by the compiler (no 'compiler' field); "
            "run `agent-surface snapshot`"
        )
    return create_capability_authority(document)


# The file ``agent-surface bundle`` writes into the app wheel's .dist-info: the reviewed contract.
BUNDLED_CONTRACT = "agent_surface_contract.json"


def authority_from_bundle(distribution: str | None = None) -> CapabilityAuthority:
    """The authority over the contract ``agent-surface bundle`` shipped inside the app's wheel
    (loaded by the page with ``data-packages="<app>"``). ``distribution`` names the app when the
    page loads several bundled apps."""
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
            "no bundled contract: the page has not loaded an app wheel made by `agent-surface bundle` "
            '(load it with <script type="module" src="agent-surface.js" data-packages="your-app">); '
            "outside a bundle, use authority_from_contract(text of contract.json)"
        )
    if len(found) > 1:
        names = sorted(name for name, _ in found)
        raise AuthorityError(f"several bundled apps carry a contract ({names}): pass distribution=")
    return authority_from_contract(found[0][1])

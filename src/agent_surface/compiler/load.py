"""Trust a committed contract: ``contract.json`` → ``CapabilityAuthority`` (safe in the page).

    authority = authority_from_contract(text)      # text of .agent-surface/contract.json
    registry = AgentSurfaceRegistry(authority=authority)

The authority verifies every declaration's hash and the whole document's hash, so an edited or
truncated file is refused; at registration, a contract that is not in the file, or whose content
differs from its reviewed entry, is refused as unknown or stale, and one that an installed
distribution contributes without the app's approval (or with an approval of another digest) is
refused with ``ExternalContractError`` naming the distribution. Imports only the core.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .._core.contracts.authority import CapabilityAuthority, create_capability_authority
from .._core.contracts.external import ExternalContractError
from .._core.errors import AuthorityError

__all__ = ["ExternalContractError", "authority_from_contract", "parse_contract"]


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

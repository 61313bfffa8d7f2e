"""The page side of the procedure bridge: one backend URL as the registry's procedure executor.

::

    bridge = BackendBridge("/api/agent", headers=lambda: {"Authorization": f"Bearer {token()}"})
    manifest = await bridge.connect(CONTRACTS)        # the backend manifest is the ceiling
    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(manifest), procedure_executor=bridge)

In the page the transport is the browser's ``fetch`` (with an AbortController); under CPython it is httpx
(``pip install 'agentsurface[bridge]'``). The server side is :mod:`agentsurface.server`.
"""

from __future__ import annotations

from .agreement import BackendContractError, ContractDisagreement
from .executor import BackendBridge, BackendUnavailableError, Headers
from .responses import Presence, ServerChallenge
from .transport import HttpxTransport, Transport, TransportError, TransportResponse, default_transport
from .wire import CALLABLE_PATH, CHANNEL_HEADER, MANIFEST_PATH, ManifestFormatError, ServedProcedureInfo

__all__ = [
    "CALLABLE_PATH",
    "CHANNEL_HEADER",
    "MANIFEST_PATH",
    "BackendBridge",
    "BackendContractError",
    "BackendUnavailableError",
    "ContractDisagreement",
    "Headers",
    "HttpxTransport",
    "ManifestFormatError",
    "Presence",
    "ServedProcedureInfo",
    "ServerChallenge",
    "Transport",
    "TransportError",
    "TransportResponse",
    "default_transport",
]

"""agentsurface: declare typed, governed capabilities for AI agents.

If a capability is not declared, it does not exist for the agent.

Public: the names in ``__all__`` here (what an app author writes), ``agentsurface.lowlevel`` (the
contracts, bindings and descriptors the authoring API compiles to, schemas, the error matrix: for
tools and tests built on the library), and the modules the docs' reference lists
(docs/reference/index.md: ``agentsurface.page``, ``.testing``, ``.toolset``,
``.adapters.webmcp``, ``.explain``, ``.wire_names``, ``.bridge``, ``.server``,
``.compiler.load``, ``.browser.jsvalues``, ``.server.passkeys``, ``.browser.passkeys``). Modules
whose names start with an underscore (``_core``, ``_catalog``, ``_compat``, ``_runtime_build``)
are internal: import from here instead.
"""

from typing import TYPE_CHECKING

from ._core.audit import AuditEvent, AuditSink, ConsoleAuditSink, MemoryAuditSink
from ._core.consumer import Consumer
from ._core.contracts import ProcedureContract, ProcedureReference
from ._core.contracts.authoring import AgentComponent, action, observation
from ._core.contracts.authority import CapabilityAuthority, compile_manifest
from ._core.contracts.context import ActionContext, CancelSignal, ReadContext
from ._core.errors import (
    AgentSurfaceError,
    AuthorityError,
    CapabilityFailure,
    DefinitionError,
    ErrorCode,
    ErrorPayload,
    RegistryClosedError,
    Retry,
    error,
    surface_shut_down,
)
from ._core.events import SurfaceEvent
from ._core.jsonvalue import JsonValue
from ._core.limits import Limits
from ._core.pipeline.confirmation import PendingConfirmation
from ._core.pipeline.invocation import Invocation, InvocationResult, PreconditionFailure
from ._core.policies.base import Decision, Policy, PolicyContext
from ._core.policies.builtin import (
    audit,
    authenticated,
    environment,
    has_permission,
    rate_limit,
    require_confirmation,
    tenant_boundary,
)
from ._core.preview import Change, Preview
from ._core.registry.registry import AgentSurfaceRegistry

__all__ = [
    "ActionContext",
    "AgentComponent",
    "AgentSurfaceError",
    "AgentSurfaceRegistry",
    "AuditEvent",
    "AuditSink",
    "AuthorityError",
    "CancelSignal",
    "CapabilityAuthority",
    "CapabilityFailure",
    "Change",
    "ConsoleAuditSink",
    "Consumer",
    "Decision",
    "DefinitionError",
    "ErrorCode",
    "ErrorPayload",
    "Invocation",
    "InvocationResult",
    "JsonValue",
    "Limits",
    "MemoryAuditSink",
    "PendingConfirmation",
    "Policy",
    "PolicyContext",
    "PreconditionFailure",
    "Preview",
    "ProcedureContract",
    "ProcedureReference",
    "ReadContext",
    "RegistryClosedError",
    "Retry",
    "SurfaceEvent",
    "action",
    "audit",
    "authenticated",
    "compile_manifest",
    "environment",
    "error",
    "has_permission",
    "observation",
    "rate_limit",
    "require_confirmation",
    "surface_shut_down",
    "tenant_boundary",
]


__version__: str
"""The installed distribution's version (``importlib.metadata``), read on first access; the same
in the page, whose zip or wheel carries the ``.dist-info``. ``"0+unknown"`` without metadata."""


def _installed_version() -> str:
    # Imported here, not at the top: importlib.metadata (email, zipfile, csv) is not on the page's
    # way to its first tool (tests/unit/project/test_page_import_cost.py).
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(__name__)
    except PackageNotFoundError:  # sources on sys.path without their .dist-info
        return "0+unknown"


if not TYPE_CHECKING:  # type checkers see the annotation above, and flag any other missing name

    def __getattr__(name: str) -> str:
        if name == "__version__":
            globals()["__version__"] = found = _installed_version()  # computed once
            return found
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

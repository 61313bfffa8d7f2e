"""agentsurface: declare typed, governed capabilities for AI agents.

If a capability is not declared, it does not exist for the agent.

Public: the names in ``__all__`` here, and the modules the docs' reference lists
(docs/reference/index.md: ``agentsurface.page``, ``.testing``, ``.toolset``,
``.adapters.webmcp``, ``.explain``, ``.wire_names``, ``.bridge``, ``.server``,
``.compiler.load``, ``.browser.jsvalues``, ``.server.passkeys``, ``.browser.passkeys``). Modules
whose names start with an underscore (``_core``, ``_catalog``, ``_compat``, ``_runtime_build``)
are internal: import from here instead.
"""

# ruff: noqa: E402 (the compiled dataclass code is switched on before the imports that use it)

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from ._compat import use_compiled_dataclass_code

use_compiled_dataclass_code()  # first: before any module below defines its dataclasses

from ._core import errors as _errors
from ._core.audit import AuditEvent, AuditSink, MemoryAuditSink, console_audit_sink, memory_audit_sink
from ._core.clock import Clock, SystemClock
from ._core.consumer import Consumer
from ._core.contracts import (
    ActionBinding,
    ActionContract,
    ComponentBinding,
    ComponentContract,
    Concurrency,
    ObservationBinding,
    ObservationContract,
    ProcedureContract,
    ProcedureReference,
)
from ._core.contracts.authoring import AgentComponent, action, observation
from ._core.contracts.authority import (
    CapabilityAuthority,
    compile_manifest,
    create_capability_authority,
)
from ._core.contracts.context import ActionContext, CancelSignal, ReadContext
from ._core.errors import (
    AgentSurfaceError,
    AuthorityError,
    CapabilityFailure,
    DefinitionError,
    ErrorCode,
    ErrorPayload,
    ErrorSpec,
    RegistryClosedError,
    Retry,
    error,
    surface_shut_down,
)
from ._core.events import EVENT_TYPES, SurfaceEvent
from ._core.jsonvalue import JsonValue, canonical_json
from ._core.limits import Limits
from ._core.pipeline import ProcedureExecutor
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
from ._core.registry.descriptors import (
    ActionDescriptor,
    Budget,
    ComponentDescriptor,
    ObservationDescriptor,
    ProcedureDescriptor,
    Snapshot,
)
from ._core.registry.registry import AgentSurfaceRegistry, RegistrationHandle
from ._core.schemas.schema import Invalid, Issue, Schema, Valid, schema_from_json, schema_from_type

ERROR_MATRIX: Mapping[ErrorCode, ErrorSpec] = MappingProxyType(_errors.ERROR_MATRIX)
"""The closed set of error codes: each code's phases, retry hints and agent-safe detail keys
(a read-only view)."""

__all__ = [
    "ERROR_MATRIX",
    "EVENT_TYPES",
    "ActionBinding",
    "ActionContext",
    "ActionContract",
    "ActionDescriptor",
    "AgentComponent",
    "AgentSurfaceError",
    "AgentSurfaceRegistry",
    "AuditEvent",
    "AuditSink",
    "AuthorityError",
    "Budget",
    "CancelSignal",
    "CapabilityAuthority",
    "CapabilityFailure",
    "Change",
    "Clock",
    "ComponentBinding",
    "ComponentContract",
    "ComponentDescriptor",
    "Concurrency",
    "Consumer",
    "Decision",
    "DefinitionError",
    "ErrorCode",
    "ErrorPayload",
    "ErrorSpec",
    "Invalid",
    "Invocation",
    "InvocationResult",
    "Issue",
    "JsonValue",
    "Limits",
    "MemoryAuditSink",
    "ObservationBinding",
    "ObservationContract",
    "ObservationDescriptor",
    "PendingConfirmation",
    "Policy",
    "PolicyContext",
    "PreconditionFailure",
    "Preview",
    "ProcedureContract",
    "ProcedureDescriptor",
    "ProcedureExecutor",
    "ProcedureReference",
    "ReadContext",
    "RegistrationHandle",
    "RegistryClosedError",
    "Retry",
    "Schema",
    "Snapshot",
    "SurfaceEvent",
    "SystemClock",
    "Valid",
    "action",
    "audit",
    "authenticated",
    "canonical_json",
    "compile_manifest",
    "console_audit_sink",
    "create_capability_authority",
    "environment",
    "error",
    "has_permission",
    "memory_audit_sink",
    "observation",
    "rate_limit",
    "require_confirmation",
    "schema_from_json",
    "schema_from_type",
    "surface_shut_down",
    "tenant_boundary",
]


__version__: str
"""The installed distribution's version (``importlib.metadata``), read on first access; the same
in the page, whose zip or wheel carries the ``.dist-info``. ``"0+unknown"`` without metadata."""


def _installed_version() -> str:
    # Imported here, not at the top: importlib.metadata (email, zipfile, csv) is not on the page's
    # way to its first tool (tests/test_page_import_cost.py).
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

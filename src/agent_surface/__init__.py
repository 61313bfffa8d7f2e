"""agent-surface: declare typed, governed capabilities for AI agents.

If a capability is not declared, it does not exist for the agent.
"""

from .core.audit import AuditEvent, AuditSink, MemoryAuditSink, console_audit_sink, memory_audit_sink
from .core.authoring import AgentComponent, action, observation
from .core.authority import (
    CapabilityAuthority,
    compile_manifest,
    create_capability_authority,
)
from .core.clock import Clock, ManualClock, SystemClock
from .core.confirmation import PendingConfirmation
from .core.consumer import Consumer
from .core.context import ActionContext, CancelSignal, ReadContext
from .core.contracts import (
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
from .core.errors import (
    AgentSurfaceError,
    AuthorityError,
    CapabilityError,
    DefinitionError,
    RegistryDisposedError,
)
from .core.invocation import Invocation, InvocationResult, PreconditionFailure
from .core.limits import Limits
from .core.policies import (
    audit,
    authenticated,
    environment,
    has_permission,
    rate_limit,
    require_confirmation,
    tenant_boundary,
)
from .core.policy import Decision, Policy, PolicyContext
from .core.registry import AgentSurfaceRegistry, RegistrationHandle, create_registry
from .core.schema import schema_from_json, schema_from_type
from .core.snapshot import Budget, Snapshot

__all__ = [
    "ActionBinding",
    "ActionContext",
    "ActionContract",
    "AgentComponent",
    "AgentSurfaceError",
    "AgentSurfaceRegistry",
    "AuditEvent",
    "AuditSink",
    "AuthorityError",
    "Budget",
    "CancelSignal",
    "CapabilityAuthority",
    "CapabilityError",
    "Clock",
    "ComponentBinding",
    "ComponentContract",
    "Concurrency",
    "Consumer",
    "Decision",
    "DefinitionError",
    "Invocation",
    "InvocationResult",
    "Limits",
    "ManualClock",
    "MemoryAuditSink",
    "ObservationBinding",
    "ObservationContract",
    "PendingConfirmation",
    "Policy",
    "PolicyContext",
    "PreconditionFailure",
    "ProcedureContract",
    "ProcedureReference",
    "ReadContext",
    "RegistrationHandle",
    "RegistryDisposedError",
    "Snapshot",
    "SystemClock",
    "action",
    "audit",
    "authenticated",
    "compile_manifest",
    "console_audit_sink",
    "create_capability_authority",
    "create_registry",
    "environment",
    "has_permission",
    "memory_audit_sink",
    "observation",
    "rate_limit",
    "require_confirmation",
    "schema_from_json",
    "schema_from_type",
    "tenant_boundary",
]

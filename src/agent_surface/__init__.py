"""agent-surface: declare typed, governed capabilities for AI agents.

If a capability is not declared, it does not exist for the agent.
"""

from .core.authoring import AgentComponent, action, observation
from .core.authority import (
    CapabilityAuthority,
    compile_manifest,
    create_capability_authority,
)
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
from .core.limits import Limits
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
    "AuthorityError",
    "Budget",
    "CancelSignal",
    "CapabilityAuthority",
    "CapabilityError",
    "ComponentBinding",
    "ComponentContract",
    "Concurrency",
    "Consumer",
    "Decision",
    "DefinitionError",
    "Limits",
    "ObservationBinding",
    "ObservationContract",
    "Policy",
    "PolicyContext",
    "ProcedureContract",
    "ProcedureReference",
    "ReadContext",
    "RegistrationHandle",
    "RegistryDisposedError",
    "Snapshot",
    "action",
    "compile_manifest",
    "create_capability_authority",
    "create_registry",
    "observation",
    "schema_from_json",
    "schema_from_type",
]

"""Provider-neutral tools for your own agent loop: ``AgentToolset(registry, ...)``.

Public: the names in ``__all__``. The submodules (``tools``, ``agent_toolset``, ``meta``) are
internal; import from here.
"""

from .._catalog import Target, describe_prefix
from .agent_toolset import AgentToolset, ConfirmationMode, Mode, Topology
from .tools import AgentTool, ToolState, capability_state

__all__ = [
    "AgentTool",
    "AgentToolset",
    "ConfirmationMode",
    "Mode",
    "Target",
    "ToolState",
    "Topology",
    "capability_state",
    "describe_prefix",
]

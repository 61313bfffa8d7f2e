"""Provider-neutral tools for your own agent loop: ``AgentToolset(registry, ...)``.

Public: the names in ``__all__``. The submodules (``tools``, ``agent_toolset``, ``meta``) are
internal; import from here.
"""

from .._catalog import Target, describe_prefix
from .._core.deprecation import module_getattr
from .agent_toolset import AgentToolset, ConfirmationMode, Mode, Topology
from .agent_toolset import create_agent_toolset as _create_agent_toolset
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

# Old names, kept for one release: each use warns with the name to use instead.
__getattr__ = module_getattr(
    __name__, {"create_agent_toolset": ("agentsurface.toolset.AgentToolset", lambda: _create_agent_toolset)}
)

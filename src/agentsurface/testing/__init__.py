"""Testing helpers for applications built on agentsurface.

    from agentsurface.testing import create_test_surface, assert_exposes, assert_fails_with

The pytest plugin (installed with the package) adds ``test_surface_factory`` and
``surface_snapshot`` fixtures, and ``webmcp_agent``: a WebMCP agent client (:class:`WebMCPAgent`)
for end-to-end tests of a page with pytest-playwright; see docs/guides/testing.md. Playwright is optional:
nothing here imports it.
"""

from .._core.clock import ManualClock
from .chromium_flags import with_features
from .harness import CapturedRef, ImpureObservation, InvocationFailed, TestSurface, create_test_surface
from .matchers import (
    assert_exposes,
    assert_exposes_unavailable,
    assert_fails_with,
    assert_hidden,
    assert_ok,
    render_semantic_snapshot,
    semantic_snapshot,
)
from .webmcp_agent import AgentCall, DialogSelectors, WebMCPAgent, with_webmcp
from .webmcp_results import AgentClientError, Tool, ToolCallRejected, ToolError, ToolNotFound, ToolResult

__all__ = [
    "AgentCall",
    "AgentClientError",
    "CapturedRef",
    "DialogSelectors",
    "ImpureObservation",
    "InvocationFailed",
    "ManualClock",
    "TestSurface",
    "Tool",
    "ToolCallRejected",
    "ToolError",
    "ToolNotFound",
    "ToolResult",
    "WebMCPAgent",
    "assert_exposes",
    "assert_exposes_unavailable",
    "assert_fails_with",
    "assert_hidden",
    "assert_ok",
    "create_test_surface",
    "render_semantic_snapshot",
    "semantic_snapshot",
    "with_features",
    "with_webmcp",
]

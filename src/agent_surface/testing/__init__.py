"""Testing helpers for applications built on agent-surface.

    from agent_surface.testing import create_test_surface, assert_exposes, assert_fails_with

The pytest plugin (installed with the package) adds ``test_surface_factory`` and
``surface_snapshot`` fixtures; see the README.
"""

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

__all__ = [
    "CapturedRef",
    "ImpureObservation",
    "InvocationFailed",
    "TestSurface",
    "assert_exposes",
    "assert_exposes_unavailable",
    "assert_fails_with",
    "assert_hidden",
    "assert_ok",
    "create_test_surface",
    "render_semantic_snapshot",
    "semantic_snapshot",
]

"""Shared pytest configuration: a deterministic, modest hypothesis profile."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

# Deterministic (same examples every run) and small enough that the whole suite stays fast.
settings.register_profile(
    "agent-surface",
    derandomize=True,
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.load_profile("agent-surface")

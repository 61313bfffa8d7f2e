"""Shared pytest configuration: a deterministic, modest hypothesis profile."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Deterministic (same examples every run) and small enough that the whole suite stays fast.
settings.register_profile(
    "agentsurface",
    derandomize=True,
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.load_profile("agentsurface")


# Speed classes, used by the test command (scripts/test.sh runs unit, then integration, then e2e):
# every test under tests/ is ``unit`` unless it is in one of these, which start servers (uvicorn,
# the demo backend), build wheels or venvs, or run node and other processes.
INTEGRATION_PATHS = (
    "backend/",
    "bridge/",
    "cli/",
    "demo/",
    "examples/",  # the examples' own test runs and `agentsurface check`, in subprocesses
    "fastapi_routes/test_on_postgres.py",  # a real PostgreSQL
    "django_views/test_example_project.py",  # the example project's own runner and `agentsurface check`
    "django_views/test_django_store_postgres.py",  # a real PostgreSQL
    "mcp_server/test_relay_listener.py",  # real loopback sockets
    "mcp_server/test_relay_hostile_table.py",  # real loopback sockets
    "mcp_server/test_http_listener.py",  # real loopback sockets
    "compiler/test_page_imports.py",
    "compiler/test_procedures_from_contract.py",  # the page side in a fresh interpreter
    "compiler/test_external_installed.py",
    "server/test_hardening.py",
    "server/test_idempotency.py",
    "server/test_load.py",
    "server/test_store_conformance.py",
    "server/test_workers.py",
    "test_layering.py",
    "test_doc_blocks.py",  # runs the blocks of README.md and docs/ in subprocesses
    "test_release_artifacts.py",  # python -m build, twine check
    "test_testing_plugin_quiet.py",  # an app's pytest run, with Chromium, in a subprocess
)
SPEED_MARKERS = ("unit", "integration", "e2e")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        path = Path(str(item.fspath))
        if here not in path.parents:
            continue  # e2e/ marks its own
        if any(m.name in SPEED_MARKERS for m in item.iter_markers()):
            continue
        rel = path.relative_to(here).as_posix()
        speed = "integration" if rel.startswith(INTEGRATION_PATHS) else "unit"
        item.add_marker(getattr(pytest.mark, speed))

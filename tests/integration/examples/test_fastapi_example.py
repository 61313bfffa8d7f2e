"""examples/fastapi_app, as a user runs it: its own tests with FastAPI's test client, and
`agentsurface check` holding its reviewed contract.json equal to what its routes declare."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "fastapi_app"


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS")}
    return subprocess.run(command, cwd=EXAMPLE, env=env, capture_output=True, text=True, timeout=300)


def test_the_examples_own_tests_pass() -> None:
    result = _run(sys.executable, "-m", "pytest", "tests", "-q", "-p", "no:cacheprovider", "-W", "error")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "6 passed" in result.stdout
    assert not list(EXAMPLE.glob("*.sqlite3"))  # the tests wrote their databases elsewhere


def test_check_reviews_the_examples_routes() -> None:
    agentsurface = str(Path(sys.executable).with_name("agentsurface"))
    result = _run(agentsurface, "check")
    assert result.returncode == 0, result.stdout + result.stderr
    inspected = _run(agentsurface, "inspect")
    for procedure in ("domain:expenses.add", "domain:expenses.delete", "domain:expenses.list"):
        assert procedure in inspected.stdout
    assert "delete_all" not in inspected.stdout  # the unmarked route is no capability

"""The example project (examples/django_app) as its developers run it, in subprocesses: its own
test suite with Django's runner (`manage.py test`), and `agentsurface check`, which imports the
project and finds the procedures its views declare (origin "route": the page checks them by
their JSON Schema alone) exactly as the committed contract.json records them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests._shared.django.setup import EXAMPLE


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "EXPENSES_", "PYTHONPATH"))}
    env.update(
        EXPENSES_DB=str(tmp_path / "db.sqlite3"),
        EXPENSES_TEST_DB=str(tmp_path / "test-db.sqlite3"),
    )
    return env


def test_the_example_projects_own_tests_pass_with_djangos_runner(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", "test", "expenses", "-v", "2"],
        cwd=EXAMPLE, env=_env(tmp_path), capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Ran 6 tests" in result.stderr and "OK" in result.stderr
    assert "test_a_delete_needs_the_persons_approval_of_that_call" in result.stderr


def test_the_committed_contract_is_what_the_views_declare(tmp_path: Path) -> None:
    agentsurface = Path(sys.executable).with_name("agentsurface")
    result = subprocess.run(
        [str(agentsurface), "check"], cwd=EXAMPLE, env=_env(tmp_path), capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    contract = json.loads((EXAMPLE / "expenses_page" / "contract.json").read_text())
    origins = {c["contract"]["id"]: c["origin"] for c in contract["contracts"] if c["kind"] == "procedure"}
    assert origins["domain:expenses.delete"] == {
        "file": "expenses/views.py", "module": "expenses.views", "name": "delete_expense", "route": True,
    }
    assert sorted(origins) == ["domain:expenses.add", "domain:expenses.delete", "domain:expenses.list"]

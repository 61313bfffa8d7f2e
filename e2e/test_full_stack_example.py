"""The full-stack guide's expense tracker (docs/guides/full-stack.md) runs as written: its files,
as the page shows them, go into a folder outside the repository, and its commands run there in
bash after the install lines (``python3 -m venv``, ``pip install``: this test runs them on the
checkout's own venv, whose agentsurface is this checkout, instead of installing by name, which
e2e/test_readme_first_app.py covers). ``pytest tests/`` runs the example's four tests: the
surface in the harness, the bundled page with its server in Chromium (``asgi_server``,
``webmcp_agent``), per-user tools, and the server's own refusal; with no warning and no
traceback (issue 43)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.doc_blocks import full_stack_commands, full_stack_files

REPO = Path(__file__).resolve().parents[1]
INSTALL = ("python3 -m venv", "pip install")


def _env() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTEST_ADDOPTS") and not k.startswith("AGENTSURFACE")
    }
    venv_bin = str(Path(sys.executable).parent)  # the checkout's venv: agentsurface and its extras
    return {**env, "PATH": venv_bin + os.pathsep + env.get("PATH", "")}


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    app = tmp_path_factory.mktemp("full-stack") / "expenses-app"
    assert REPO not in app.parents
    for name, code in full_stack_files().items():
        (app / name).parent.mkdir(parents=True, exist_ok=True)
        (app / name).write_text(code, encoding="utf-8")
    lines = [line for line in full_stack_commands().splitlines() if not line.startswith(INSTALL)]
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", "\n".join(lines)],
        cwd=app, capture_output=True, text=True, timeout=900, env=_env(),
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-8000:]
    return app, output


def test_the_full_stack_example_passes_its_tests_as_written(example: tuple[Path, str]) -> None:
    app, output = example
    assert "bundled expenses-app" in output
    assert "4 passed" in output, output[-4000:]
    assert (app / "site" / "index.html").is_file() and (app / ".agentsurface" / "contract.json").is_file()


def test_its_runs_have_no_warning_nor_traceback(example: tuple[Path, str]) -> None:
    _, output = example
    assert "warning" not in output.lower(), output[-4000:]
    assert "Traceback" not in output, output[-4000:]


def test_the_commands_are_the_ones_a_reader_types() -> None:
    commands = full_stack_commands()
    assert 'pip install "agentsurface[cli,testing,server,bridge]"' in commands
    assert "agentsurface bundle --out site/" in commands and "pytest tests/" in commands

"""The layering in pyproject.toml's import-linter contracts: the package keeps it, and a copy of
the package with one deliberately wrong import breaks the contract that forbids it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "src" / "agentsurface"
LINT_IMPORTS = "from importlinter.cli import lint_imports_command; lint_imports_command()"


def lint_imports(project: Path, src: Path, *contracts: str) -> subprocess.CompletedProcess[str]:
    """Run ``lint-imports`` with ``project``'s pyproject.toml over the package found in ``src``."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    selected = [arg for contract in contracts for arg in ("--contract", contract)]
    return subprocess.run(
        [sys.executable, "-c", LINT_IMPORTS, "--no-cache", *selected, str(project / "pyproject.toml")],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_package_keeps_every_contract() -> None:
    done = lint_imports(ROOT, ROOT / "src")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A project holding a copy of the package, of the demo and of pyproject.toml (its contracts)."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copytree(PACKAGE, tmp_path / "src" / "agentsurface", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "demo", tmp_path / "demo", ignore=shutil.ignore_patterns("__pycache__", "data"))
    return tmp_path


def add_import(project: Path, module: str, statement: str) -> None:
    # The demo sits at the project's root, the package in src/.
    path = project / ("." if module.startswith("demo.") else "src") / Path(*module.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    path.write_text(path.read_text() + f"\n{statement}\n")


@pytest.mark.parametrize(
    ("module", "statement", "contract"),
    [
        # core reaching up to the toolset
        ("agentsurface._core.consumer", "from agentsurface.toolset import AgentTool", "layers"),
        # names reaching up to the catalog that is built on them
        ("agentsurface.wire_names", "from agentsurface._catalog import Target", "layers"),
        # the toolset reaching the page layer
        ("agentsurface.toolset.tools", "import agentsurface.browser.proxies", "layers"),
        # a sibling dependency the layer says is independent
        ("agentsurface.testing.harness", "from agentsurface.bridge import BackendBridge", "layers"),
        # core touching the browser directly
        ("agentsurface._core.consumer", "import js", "browser-boundary"),
        ("agentsurface._catalog", "from pyodide.ffi import to_js", "browser-boundary"),
        # the page layer touching the browser directly (its DOM goes through browser.dom)
        ("agentsurface.page.lifecycle", "import js", "browser-boundary"),
        # the browser helpers reaching up to the page layer built on them
        ("agentsurface.browser.jsvalues", "import agentsurface.page.lifecycle", "layers"),
        # the toolset's tool types importing meta mode back: a cycle inside one layer
        ("agentsurface.toolset.tools", "from agentsurface.toolset import meta", "no-cycles"),
        # the server's challenges reaching the stores that keep them: a cycle between its parts
        ("agentsurface.server.challenges.challenge", "from agentsurface.server.stores import Outcome", "no-cycles"),
        # the demo's server reaching into the page, and the page into the server
        ("demo.server.procedures", "from demo.page import model", "demo-split"),
        ("demo.page.model", "from demo.server import db", "demo-split"),
        # code both sides import touching the browser, or the server's packages
        ("demo.shared.values", "import js", "demo-server-side"),
        ("demo.server.db", "import agentsurface.page", "demo-server-side"),
        ("demo.shared.contracts", "import starlette", "demo-page-side"),
        ("demo.page.surface", "from agentsurface.server import serve", "demo-page-side"),
    ],
)
def test_a_wrong_import_breaks_its_contract(copy: Path, module: str, statement: str, contract: str) -> None:
    kept = lint_imports(copy, copy / "src", contract)
    assert kept.returncode == 0, kept.stdout + kept.stderr  # the copy is faithful before the edit
    add_import(copy, module, statement)
    broken = lint_imports(copy, copy / "src", contract)
    assert broken.returncode != 0, broken.stdout
    assert "BROKEN" in broken.stdout

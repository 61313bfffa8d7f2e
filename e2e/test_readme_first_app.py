"""The README's "Your first app" runs as written, end to end: its files are written out as the
README shows them, and its commands run as the README shows them, in bash, in the app's folder:
a fresh venv, ``pip install "$AGENTSURFACE[cli,testing]"`` of agentsurface's wheel built here,
``agentsurface snapshot``/``check``/``bundle --out site/``, and ``pytest tests/``, whose page test
serves the bundle and drives it in Chromium with the WebMCP test client. No edits.

Bounded: one venv for the module; pip installs the dependencies from its cache or PyPI; the
runtime cache that ``bundle`` builds from a pip install is seeded (as in
tests/cli/test_bundle_installed.py) with ``web/node_modules`` and the wheels of ``web/dist/wheels``
except ours, through ``XDG_CACHE_HOME``: nothing is fetched from npm, and our wheel is repacked
from the install for real.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.doc_blocks import first_app_commands, first_app_files

REPO = Path(__file__).resolve().parents[1]
WEB = REPO / "web"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTEST_ADDOPTS")}
    # pytest-playwright's own browser for the app's tests is Debian's chromium (its conftest says so).
    return {**env, **extra}


@pytest.fixture(scope="module")
def first_app(tmp_path_factory: pytest.TempPathFactory, web_dist: Path) -> tuple[Path, str, float]:
    """The README's project after its commands ran: (folder, their output, seconds taken)."""
    assert (WEB / "node_modules" / "pyodide").is_dir(), "run scripts/build_web.py first"
    work = tmp_path_factory.mktemp("first-app")
    wheels = work / "wheelhouse"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(REPO)],
        capture_output=True, text=True, timeout=300, env=_env(),
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = wheels.glob("agentsurface-*.whl")
    version = wheel.name.split("-")[1]

    cache = work / "cache"
    runtime = cache / "agentsurface" / f"runtime-{version}"
    (runtime / "dist" / "wheels").mkdir(parents=True)
    (runtime / "node_modules").symlink_to(WEB / "node_modules", target_is_directory=True)
    for dependency in (WEB / "dist" / "wheels").glob("*.whl"):
        if not dependency.name.startswith("agentsurface-"):
            shutil.copy2(dependency, runtime / "dist" / "wheels" / dependency.name)

    app = work / "board-app"
    for name, code in first_app_files().items():
        (app / name).parent.mkdir(parents=True, exist_ok=True)
        (app / name).write_text(code, encoding="utf-8")
    started = time.perf_counter()
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", first_app_commands()],
        cwd=app, capture_output=True, text=True, timeout=1200,
        env=_env(AGENTSURFACE=str(wheel), XDG_CACHE_HOME=str(cache)),
    )
    elapsed = time.perf_counter() - started
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-8000:]
    return app, output, elapsed


def test_the_first_app_installs_reviews_bundles_and_passes_its_tests(
    first_app: tuple[Path, str, float], record_timing: object
) -> None:
    app, output, elapsed = first_app
    assert "agentsurface check: PASS" in output
    assert "bundled board-app" in output
    assert "2 passed" in output, output[-4000:]
    site = app / "site"
    for part in ("index.html", "app.py", "agentsurface.js", "contract.json", "dist/pyodide/pyodide-lock.json"):
        assert (site / part).is_file(), part
    assert (site / "contract.json").read_bytes() == (app / ".agentsurface" / "contract.json").read_bytes()
    # The venv runs the installed wheel, not this checkout.
    probe = subprocess.run(
        [str(app / ".venv" / "bin" / "python"), "-c", "import agentsurface; print(agentsurface.__file__)"],
        capture_output=True, text=True, env=_env(),
    )
    assert str(app / ".venv") in probe.stdout and str(REPO / "src") not in probe.stdout
    record_timing({"readmeFirstAppSeconds": round(elapsed)}, "README first app")  # type: ignore[operator]


def test_check_fails_when_the_first_app_lowers_a_confirmation(first_app: tuple[Path, str, float]) -> None:
    app, _, _ = first_app
    surface = app / "board" / "surface.py"
    original = surface.read_text()
    surface.write_text(original.replace('confirmation="required"', 'confirmation="optional"', 1))
    try:
        result = subprocess.run(
            [str(app / ".venv" / "bin" / "agentsurface"), "check"],
            cwd=app, capture_output=True, text=True, timeout=120, env=_env(),
        )
    finally:
        surface.write_text(original)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "view:board.canvas.eraseAll" in result.stdout + result.stderr
    assert "agentsurface snapshot" in result.stderr

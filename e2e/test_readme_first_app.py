"""The getting-started page's "Your first app" (docs/getting-started.md) runs as written, end to
end, with no checkout anywhere: its files are written out as the page shows them into a folder
outside the repository, and its commands run as the page shows them, in bash, in that folder: a
fresh venv, ``pip install "agentsurface[cli,testing]"`` by name, ``agentsurface
snapshot``/``check``/``bundle --out site/``, and ``pytest tests/``, whose page test serves the
bundle and drives it in Chromium with the WebMCP test client. No edits.

The release artifacts come from ``python -m build`` (sdist and wheel) into a dist folder, and pip
resolves the name ``agentsurface`` to that wheel through ``PIP_FIND_LINKS`` (its dependencies come
from PyPI as for any user). The runtime cache (``XDG_CACHE_HOME``) starts empty, and so does npm's
cache: the first ``bundle`` fetches Pyodide, PyScript and the polyfills from npm and the browser's
wheels from PyPI for real, and repacks agentsurface from the install. Nothing of the checkout is
used: no PYTHONPATH, VIRTUAL_ENV or PATH entry into it, and the venv's agentsurface is the built
wheel. A second ``bundle`` shows what the cache saves; both are timed (see the timing summary, and
docs/guides/offline-runtime.md for the figures).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.doc_blocks import first_app_commands, first_app_files

REPO = Path(__file__).resolve().parents[1]
# Each command of the block is traced with the time it starts (bash 5's EPOCHREALTIME); PS4 is
# set in the script because bash ignores it from the environment when run as root.
TRACE = "PS4='+ $EPOCHREALTIME '; set -x\n"


@dataclass(frozen=True)
class FirstApp:
    app: Path
    dist: Path
    version: str
    cache: Path
    npm_cache: Path
    output: str
    seconds: float
    bundle_seconds: float
    rebundle_output: str
    rebundle_seconds: float


def _env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTEST_ADDOPTS") and not k.startswith("AGENTSURFACE")
    }
    # No command found in the checkout (its .venv/bin, say): only what the app's own venv adds.
    path = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p and not Path(p).resolve().is_relative_to(REPO))
    return {**env, "PATH": path, **extra}


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def _command_seconds(trace: str, command: str) -> float:
    """How long ``command`` took: from its trace line to the next top-level one."""
    starts = [(float(m.group(1)), m.group(2)) for m in re.finditer(r"^\+ (\d+\.\d+) (.*)$", trace, re.M)]
    for (started, line), (ended, _) in itertools.pairwise(starts):
        if line.startswith(command):
            return ended - started
    raise AssertionError(f"{command!r} is not in the trace, or was the last command")


@pytest.fixture(scope="module")
def first_app(tmp_path_factory: pytest.TempPathFactory) -> FirstApp:
    """The getting-started project after its commands ran from an install by name."""
    work = tmp_path_factory.mktemp("first-app")
    assert REPO not in work.parents
    dist = work / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(REPO)],
        capture_output=True, text=True, timeout=600, env=_env(),
    )
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]

    cache, npm_cache = work / "cache", work / "npm-cache"  # both empty: nothing is seeded
    app = work / "board-app"
    for name, code in first_app_files().items():
        (app / name).parent.mkdir(parents=True, exist_ok=True)
        (app / name).write_text(code, encoding="utf-8")
    env = _env(PIP_FIND_LINKS=str(dist), XDG_CACHE_HOME=str(cache), npm_config_cache=str(npm_cache))
    started = time.perf_counter()
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", TRACE + first_app_commands()],
        cwd=app, capture_output=True, text=True, timeout=900, env=env,
    )
    elapsed = time.perf_counter() - started
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-8000:]

    started = time.perf_counter()
    again = subprocess.run(
        [str(app / ".venv" / "bin" / "agentsurface"), "bundle", "--out", "site-again/"],
        cwd=app, capture_output=True, text=True, timeout=300, env=env,
    )
    rebundle_seconds = time.perf_counter() - started
    assert again.returncode == 0, again.stdout[-4000:] + again.stderr[-4000:]
    (wheel,) = dist.glob("agentsurface-*.whl")
    return FirstApp(
        app, dist, wheel.name.split("-")[1], cache, npm_cache, output, elapsed, _command_seconds(result.stderr, "agentsurface bundle"),
        again.stdout + again.stderr, rebundle_seconds,
    )


def test_the_first_app_installs_reviews_bundles_and_passes_its_tests(
    first_app: FirstApp, record_timing: object
) -> None:
    app, output = first_app.app, first_app.output
    assert "agentsurface check: PASS" in output
    assert "bundled board-app" in output
    assert "2 passed" in output, output[-4000:]
    site = app / "site"
    for part in ("index.html", "app.py", "agentsurface.js", "contract.json", "dist/pyodide/pyodide-lock.json"):
        assert (site / part).is_file(), part
    assert (site / "contract.json").read_bytes() == (app / ".agentsurface" / "contract.json").read_bytes()
    (wheel,) = first_app.dist.glob("agentsurface-*.whl")
    (sdist,) = first_app.dist.glob("agentsurface-*.tar.gz")
    record_timing(  # type: ignore[operator]
        {
            "readmeFirstAppSeconds": round(first_app.seconds),
            "firstBundleSeconds": round(first_app.bundle_seconds, 1),
            "secondBundleSeconds": round(first_app.rebundle_seconds, 1),
            "wheelBytes": wheel.stat().st_size,
            "sdistBytes": sdist.stat().st_size,
            "npmFetchedBytes": _size(first_app.npm_cache),
            "runtimeCacheBytes": _size(first_app.cache),
            "siteBytes": _size(site),
        },
        "first app (docs/getting-started.md), installed by name",
    )


def test_the_venv_runs_the_built_wheel_and_nothing_of_the_checkout(first_app: FirstApp) -> None:
    (wheel,) = first_app.dist.glob("agentsurface-*.whl")
    probe = subprocess.run(
        [
            str(first_app.app / ".venv" / "bin" / "python"), "-c",
            "import json, sys, agentsurface\n"
            "from agentsurface._runtime_build.build import source_checkout\n"
            "print(json.dumps([agentsurface.__file__, agentsurface.__version__, sys.path, source_checkout()]))",
        ],
        cwd=first_app.app, capture_output=True, text=True, env=_env(),
    )
    assert probe.returncode == 0, probe.stderr
    file, installed_version, path, checkout = json.loads(probe.stdout)
    assert Path(file).is_relative_to(first_app.app / ".venv")
    assert installed_version == first_app.version
    assert checkout is None  # so bundle took the installed package's runtime path
    assert not [entry for entry in path if entry and Path(entry).resolve().is_relative_to(REPO)]
    with zipfile.ZipFile(wheel) as archive:  # the wheel pip found by name in the dist folder
        assert Path(file).read_bytes() == archive.read("agentsurface/__init__.py")


def test_the_first_bundle_fetched_the_runtime_and_the_second_reused_it(first_app: FirstApp) -> None:
    output = first_app.output
    runtime = first_app.cache / "agentsurface" / f"runtime-{first_app.version}"
    assert f"runtime cache: {runtime}" in output
    # npm ci into the empty cache (from the registry: npm's own cache was empty too), and a pip
    # download of each browser wheel; our wheel repacked from the install, not built from source.
    assert "$ npm ci" in output
    assert (runtime / "node_modules" / "pyodide" / "pyodide.asm.wasm").is_file()
    assert _size(first_app.npm_cache) > 10_000_000
    assert len(re.findall(r"pip download .* -d dist/wheels \S+==", output)) == 12
    assert "repacked the installed package into agentsurface-" in output
    assert "pip wheel" not in output
    again = first_app.rebundle_output
    assert "node_modules up to date" in again and "$ npm ci" not in again
    assert "pip download" not in again and "up to date agentsurface-" in again
    assert "bundled board-app" in again
    assert first_app.rebundle_seconds < first_app.bundle_seconds


def test_check_fails_when_the_first_app_lowers_a_confirmation(first_app: FirstApp) -> None:
    app = first_app.app
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

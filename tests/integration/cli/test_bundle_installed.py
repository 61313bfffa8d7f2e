"""`agentsurface bundle` from a pip install (no source checkout): our wheel, installed in a fresh
venv, builds the runtime in its cache from the assets it ships and repacks itself as the runtime's
agentsurface wheel; the fixture app's bundle then holds everything a static host serves.

Seeded, so the test downloads nothing and stays bounded: the cache gets a symlink to the checkout's
``web/node_modules`` (the npm pins, so no ``npm ci``) and copies of ``web/dist/wheels`` minus our own
wheel (so no ``pip download``). Both exist once ``scripts/build_web.py`` ran, as scripts/test.sh does
before pytest. What the test still runs for real: the asset copy, the Pyodide/PyScript copy, the
repack of the installed package, Pyodide's bytecode compilation of it (node) and the lock.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from agentsurface._runtime_build.source import default_cache
from tests.fixtures import copy_shop

REPO = Path(__file__).resolve().parents[3]
WEB = REPO / "web"
OURS = "agentsurface-0.1.0-py3-none-any.whl"
APP_WHEEL = "shop_app-0.1.0-py3-none-any.whl"


def _run(cmd: list[str | Path], cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    result = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True)
    assert result.returncode == 0, f"{cmd} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout + result.stderr


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv holding our wheel as a plain (non-editable) install; returns its bin directory."""
    assert (WEB / "node_modules" / "pyodide").is_dir() and any((WEB / "dist" / "wheels").glob("*.whl")), (
        "run scripts/build_web.py first: this test seeds its cache from web/node_modules and web/dist/wheels"
    )
    work = tmp_path_factory.mktemp("installed")
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", work / "wheelhouse", REPO], work)
    venv = work / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], work)
    # A venv made from a venv would inherit the *base* interpreter's site-packages with
    # --system-site-packages, not the dev venv's: a .pth line puts the dev venv's site-packages
    # (pydantic, rich, packaging, pip) after the new venv's own. A plain path line, so the dev
    # venv's .pth files (its editable install of this repository) are not run.
    (site,) = (venv / "lib").glob("python3*/site-packages")
    (site / "dev_venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    python = venv / "bin" / "python"
    _run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", work / "wheelhouse" / OURS], work)
    return venv / "bin"


def test_the_venv_runs_the_installed_copy_not_the_source(installed: Path) -> None:
    probe = "import agentsurface, importlib.metadata as m; print(agentsurface.__file__); print(m.distribution('agentsurface').read_text('direct_url.json'))"
    lines = _run([installed / "python", "-c", probe], installed).splitlines()
    assert Path(lines[0]).is_relative_to(installed.parent), lines[0]
    assert not Path(lines[0]).is_relative_to(REPO / "src")
    assert "editable" not in lines[1]  # installed from the wheel file, not `pip install -e`
    runtime_assets = Path(lines[0]).parent / "_runtime_build" / "runtime_assets"
    assert (runtime_assets / "agentsurface.js").read_bytes() == (WEB / "agentsurface.js").read_bytes()


def _record_is_valid(archive: zipfile.ZipFile) -> None:
    (record_name,) = [n for n in archive.namelist() if n.endswith(".dist-info/RECORD")]
    rows = {line.split(",")[0]: line.split(",")[1:] for line in archive.read(record_name).decode().split()}
    assert set(rows) == set(archive.namelist())
    for name, (digest, size) in rows.items():
        if name == record_name:
            continue
        data = archive.read(name)
        assert (
            digest
            == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        )
        assert int(size) == len(data)


def test_bundle_from_a_pip_install_builds_the_runtime_in_its_cache(installed: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (cache / "dist" / "wheels").mkdir(parents=True)
    (cache / "node_modules").symlink_to(WEB / "node_modules", target_is_directory=True)  # seed: npm pins
    for wheel in (WEB / "dist" / "wheels").glob("*.whl"):  # seed: the downloaded wheels, not ours
        if not wheel.name.startswith("agentsurface-"):
            shutil.copy2(wheel, cache / "dist" / "wheels" / wheel.name)

    app = copy_shop(tmp_path / "app")
    _run([installed / "agentsurface", "snapshot"], app)
    site = tmp_path / "site"
    log = _run([installed / "agentsurface", "bundle", "--out", site, "--cache", cache], app)
    assert "node_modules up to date" in log
    assert f"repacked the installed package into {OURS}" in log
    assert "pip wheel" not in log and "pip download" not in log  # nothing built from source or fetched

    for asset in ("agentsurface.js", "package.json", "package-lock.json"):  # copied from the install
        assert (cache / asset).read_bytes() == (WEB / asset).read_bytes()
    assert (site / "agentsurface.js").read_bytes() == (WEB / "agentsurface.js").read_bytes()
    for part in (
        "pyodide/pyodide.mjs",
        "pyodide/pyodide.asm.wasm",
        "pyodide/python_stdlib_compiled.zip",
    ):
        assert (site / "dist" / part).is_file(), part
    # What the shop's page never loads stays out (cli/bundle_prune): PyScript, Pyodide's source
    # maps and UMD build, npm's stdlib zip (the loader boots with the compiled one), micropip.
    assert not (site / "dist" / "pyscript").exists()
    assert not (site / "dist" / "pyodide" / "python_stdlib.zip").exists()
    assert not list((site / "dist" / "pyodide").glob("*.map"))
    assert not (site / "dist" / "pyodide" / "pyodide.js").exists()
    assert (site / "contract.json").read_bytes() == (app / ".agentsurface" / "contract.json").read_bytes()

    lock = json.loads((site / "dist" / "pyodide" / "pyodide-lock.json").read_text())["packages"]
    assert lock["agentsurface"]["file_name"] == f"../wheels/{OURS}"
    assert lock["shop-app"]["file_name"] == f"../wheels/{APP_WHEEL}"
    assert {"pydantic", "jsonschema"} <= set(lock["agentsurface"]["depends"])
    local = {
        key: entry
        for key, entry in lock.items()
        if entry["file_name"].startswith("../wheels/") and key != "micropip"
    }
    zip_info = json.loads((site / "dist" / "pyodide" / "agentsurface-zip.json").read_text())
    assert {p.name for p in (site / "dist" / "wheels").iterdir()} == {
        e["file_name"].removeprefix("../wheels/") for e in local.values()
    } | {zip_info["file"].rsplit("/", 1)[-1]}
    assert zip_info["wheel_sha256"] == lock["agentsurface"]["sha256"]
    for entry in local.values():  # every wheel the page may load matches its lock entry
        wheel = site / "dist" / "wheels" / entry["file_name"].removeprefix("../wheels/")
        assert hashlib.sha256(wheel.read_bytes()).hexdigest() == entry["sha256"], wheel.name

    with zipfile.ZipFile(site / "dist" / "wheels" / OURS) as ours:
        names = set(ours.namelist())
        assert "agentsurface/_runtime_build/runtime_assets/agentsurface.js" in names
        assert "agentsurface-0.1.0.dist-info/entry_points.txt" in names
        assert "agentsurface/__pycache__/__init__.cpython-314.pyc" in names  # compiled by Pyodide
        assert "agentsurface/dataclass_code.bin" in names  # so are dataclasses' generated methods
        assert not any(n.endswith(("INSTALLER", "direct_url.json")) for n in names)
        _record_is_valid(ours)

    # A second run reuses the cache (nothing to fetch: --offline; our wheel is kept) and gives the same bytes.
    before = {p: p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}
    log = _run([installed / "agentsurface", "bundle", "--out", site, "--cache", cache, "--offline"], app)
    assert f"up to date {OURS} (repacked from the installed package)" in log
    assert {p: p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()} == before


def test_the_default_cache_follows_xdg_and_the_version(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache("1.2.3") == tmp_path / "agentsurface" / "runtime-1.2.3"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")  # the XDG spec: a relative path is ignored
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache("1.2.3") == tmp_path / "home" / ".cache" / "agentsurface" / "runtime-1.2.3"

"""The page zip (agentsurface/_runtime_build/page_zip.py): our wheel's files with each precompiled pyc
beside its source, so zipimport uses it; importable in place; its info ties it to the wheel."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from agentsurface._runtime_build.page_zip import ZIP_INFO, legacy_pyc_name, page_zip_bytes, write_page_zip

ROOT = Path(__file__).resolve().parents[3]


def test_legacy_names() -> None:
    assert legacy_pyc_name("agentsurface/_core/__pycache__/schema.cpython-314.pyc") == "agentsurface/_core/schema.pyc"
    assert legacy_pyc_name("agentsurface/__pycache__/__init__.cpython-314.pyc") == "agentsurface/__init__.pyc"
    assert legacy_pyc_name("agentsurface/_core/schema.py") is None
    assert legacy_pyc_name("agentsurface/__pycache__/x.cpython-313.pyc") is None  # another Python's
    assert legacy_pyc_name("__pycache__.py") is None


def _wheel(tmp_path: Path) -> Path:
    wheel = tmp_path / "wheels" / "agentsurface-9.9.9-py3-none-any.whl"
    wheel.parent.mkdir(parents=True)
    with zipfile.ZipFile(wheel, "w") as out:
        out.writestr("agentsurface/__init__.py", "VALUE = 'from source'\n")
        out.writestr("agentsurface/__pycache__/__init__.cpython-314.pyc", b"pyc bytes")
        out.writestr("agentsurface/data.css", "p {}\n")
        out.writestr("agentsurface-9.9.9.dist-info/METADATA", "Name: agentsurface\nVersion: 9.9.9\n")
    return wheel


def test_pycs_move_beside_their_sources_and_nothing_else_changes(tmp_path: Path) -> None:
    data = page_zip_bytes(_wheel(tmp_path))
    (tmp_path / "page.zip").write_bytes(data)
    with zipfile.ZipFile(tmp_path / "page.zip") as page:
        assert page.namelist() == [
            "agentsurface/__init__.py",
            "agentsurface/__init__.pyc",
            "agentsurface/data.css",
            "agentsurface-9.9.9.dist-info/METADATA",
        ]
        assert page.read("agentsurface/__init__.pyc") == b"pyc bytes"
    assert page_zip_bytes(_wheel(tmp_path / "again")) == data  # deterministic


def test_the_info_names_the_zip_and_the_wheel_it_came_from(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path)
    (tmp_path / "pyodide").mkdir()
    assert write_page_zip(wheel, tmp_path) is True
    assert write_page_zip(wheel, tmp_path) is False  # up to date
    info = json.loads((tmp_path / "pyodide" / ZIP_INFO).read_text())
    zipped = tmp_path / "wheels" / "agentsurface-9.9.9.zip"
    assert info == {
        "file": "../wheels/agentsurface-9.9.9.zip",
        "sha256": hashlib.sha256(zipped.read_bytes()).hexdigest(),
        "wheel_sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
    }


@pytest.mark.skipif(
    not list((ROOT / "web" / "dist" / "wheels").glob("agentsurface-*.zip")), reason="web/dist not built"
)
def test_the_built_zip_imports_in_place_without_site_packages() -> None:
    zipped = next((ROOT / "web" / "dist" / "wheels").glob("agentsurface-*.zip"))
    with zipfile.ZipFile(zipped) as page:
        names = set(page.namelist())
    sources = {n for n in names if n.endswith(".py")}
    assert sources and all(n[:-3] + ".pyc" in names for n in sources)  # every module precompiled
    assert not any("__pycache__" in n for n in names)
    # -S: no site-packages, so agentsurface can only come from the zip (this CPython rejects the
    # 3.14 pycs by their magic number and compiles the sources beside them).
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import agentsurface, agentsurface.adapters.webmcp;"
        "from importlib import resources;"
        "assert agentsurface.__file__.startswith(sys.argv[1]), agentsurface.__file__;"
        "assert resources.files('agentsurface.page').joinpath('dialog.css').read_text().strip();"
        "print('ok')"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", code, str(zipped)], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip() == "ok", done.stderr

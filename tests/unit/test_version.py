"""``agentsurface.__version__`` is the installed distribution's version, read lazily: importing the
package does not import importlib.metadata (the page's start-up budget), the first access does."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import agentsurface

PROBE = """
import json, sys
import agentsurface
before = "importlib.metadata" in sys.modules or "__version__" in vars(agentsurface)
version = agentsurface.__version__
print(json.dumps([before, version, "__version__" in vars(agentsurface), agentsurface.__file__]))
"""


def test_version_is_the_installed_metadata() -> None:
    assert agentsurface.__version__ == importlib.metadata.version("agentsurface")
    assert agentsurface.__version__ == importlib.metadata.distribution("agentsurface").metadata["Version"]


def test_version_is_read_on_first_access_and_then_kept() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    imported_before, version, kept, _ = json.loads(done.stdout)
    assert imported_before is False
    assert version == importlib.metadata.version("agentsurface")
    assert kept is True


def test_version_without_metadata_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    def not_installed(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    installed = agentsurface.__version__
    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    monkeypatch.delitem(vars(agentsurface), "__version__")  # put back when the test ends
    assert agentsurface.__version__ == "0+unknown"  # sources without their .dist-info
    assert installed == importlib.metadata.distribution("agentsurface").version


def test_version_is_read_from_a_zip_on_sys_path(tmp_path: Path) -> None:
    # As the page imports the package: its files and .dist-info in a zip on sys.path, ahead of the
    # site-packages that holds its dependencies (and this checkout's own metadata).
    import pydantic

    package = Path(agentsurface.__file__).parent
    archive_path = tmp_path / "agentsurface-9.8.7.zip"
    with zipfile.ZipFile(archive_path, "w") as archive:
        for source in package.rglob("*.py"):
            archive.write(source, f"agentsurface/{source.relative_to(package).as_posix()}")
        archive.writestr(
            "agentsurface-9.8.7.dist-info/METADATA", "Metadata-Version: 2.4\nName: agentsurface\nVersion: 9.8.7\n"
        )
    paths = [str(archive_path), str(Path(pydantic.__file__).parent.parent)]
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", f"import sys; sys.path[:0] = {paths!r}\n{PROBE}"],
        capture_output=True, text=True, check=True,
    )
    imported_before, version, _, loaded_from = json.loads(done.stdout)
    assert loaded_from.startswith(str(archive_path)), loaded_from
    assert (imported_before, version) == (False, "9.8.7")

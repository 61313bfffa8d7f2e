"""The release artifacts: ``python -m build`` makes the sdist, then the wheel from the sdist (so the
sdist holds what the wheel needs); ``twine check --strict`` accepts both; the wheel's metadata
has what PyPI shows (license, classifiers, project URLs, the README as Markdown) and the wheel
holds the package with its type marker and runtime assets, nothing of the repository beside it.
Built once for the module (a build takes tens of seconds on a small machine)."""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from email.message import Message
from email.parser import Parser
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
VERSION = PROJECT["version"]
DIST_INFO = f"agentsurface-{VERSION}.dist-info"
RUNTIME_ASSETS = ("agentsurface.js", "package.json", "package-lock.json")
NOT_SHIPPED = ("tests/", "demo/", "e2e/", "benchmarks/", "scripts/", "web/node_modules/", "web/dist/", "site/", ".venv/")


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(REPO)],
        capture_output=True, text=True, timeout=600,
    )
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    return out


@pytest.fixture(scope="module")
def wheel(dist: Path) -> zipfile.ZipFile:
    (path,) = dist.glob("*.whl")
    assert path.name == f"agentsurface-{VERSION}-py3-none-any.whl"
    return zipfile.ZipFile(path)


@pytest.fixture(scope="module")
def metadata(wheel: zipfile.ZipFile) -> Message:
    return Parser().parsestr(wheel.read(f"{DIST_INFO}/METADATA").decode())


def test_twine_accepts_both_strictly(dist: Path) -> None:
    files = sorted(str(p) for p in dist.iterdir())
    assert [Path(f).name for f in files] == [f"agentsurface-{VERSION}-py3-none-any.whl", f"agentsurface-{VERSION}.tar.gz"]
    checked = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *files], capture_output=True, text=True, timeout=120
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("PASSED") == 2, checked.stdout


def test_the_wheel_metadata_has_what_pypi_shows(metadata: Message) -> None:
    assert metadata["Name"] == "agentsurface" and metadata["Version"] == VERSION
    assert metadata["License-Expression"] == "MIT"
    assert metadata.get_all("License-File") == ["LICENSE"]
    assert metadata["Author"] == "agentsurface contributors"
    assert metadata["Requires-Python"] == ">=3.11"
    classifiers = set(metadata.get_all("Classifier") or [])
    for expected in (
        "Development Status :: 3 - Alpha",
        "Framework :: Pydantic",
        "Environment :: WebAssembly :: Emscripten",
        "Typing :: Typed",
        *(f"Programming Language :: Python :: 3.{minor}" for minor in range(11, 15)),
    ):
        assert expected in classifiers, expected
    assert not any(c.startswith("License ::") for c in classifiers)  # PEP 639: the expression says it
    urls = dict(entry.split(", ", 1) for entry in metadata.get_all("Project-URL") or [])
    assert set(urls) == {"Homepage", "Documentation", "Repository", "Issues", "Changelog"}
    assert urls["Repository"] == "https://github.com/agentsurface/agentsurface"
    assert urls["Documentation"] == "https://agentsurface.github.io/agentsurface/"
    assert all(url.startswith("https://") for url in urls.values())
    assert metadata["Description-Content-Type"] == "text/markdown"
    # PyPI's page shows the README with its docs/ links turned into links into the published site.
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    shown = metadata.get_payload()
    assert "](docs/" in readme and "](docs/" not in shown
    assert _site_links(readme) == _site_links(shown)
    requires = metadata.get_all("Requires-Dist") or []
    assert any(r.startswith("pydantic") for r in requires) and any("extra == 'cli'" in r for r in requires)


SITE = "https://agentsurface.github.io/agentsurface/"


def _site_links(markdown: str) -> list[str]:
    """Each link of the text as the docs page it lands on (``docs/x.md#a`` and the site's
    ``x/#a`` alike), so the README and PyPI's copy of it can be compared link for link."""
    pages: list[str] = []
    for target in re.findall(r"\]\(([^)]+)\)", markdown):
        path, _, anchor = target.partition("#")
        if path.startswith("docs/"):
            page = path.removeprefix("docs/")
        elif path.startswith(SITE):
            route = path.removeprefix(SITE)
            page = f"{route}index.md" if route == "" or (REPO / "docs" / route / "index.md").is_file() else route.rstrip("/") + ".md"
        else:
            page = path
        if not page.startswith("http"):
            assert (REPO / "docs" / page).is_file(), target
        pages.append(f"{page}#{anchor}")
    return pages


def test_the_wheel_holds_the_package_its_type_marker_and_runtime_assets_only(wheel: zipfile.ZipFile) -> None:
    names = wheel.namelist()
    assert "agentsurface/py.typed" in names
    assert "agentsurface/page/dialog.css" in names
    assert f"{DIST_INFO}/licenses/LICENSE" in names
    assert wheel.read(f"{DIST_INFO}/licenses/LICENSE") == (REPO / "LICENSE").read_bytes()
    assert "agentsurface.testing.plugin" in wheel.read(f"{DIST_INFO}/entry_points.txt").decode()
    for asset in RUNTIME_ASSETS:
        shipped = wheel.read(f"agentsurface/_runtime_build/runtime_assets/{asset}")
        assert shipped == (REPO / "web" / asset).read_bytes(), asset
    assert {name.split("/")[0] for name in names} == {"agentsurface", DIST_INFO}
    assert not [n for n in names if n.endswith(".pyc") or "__pycache__" in n]
    sources = {n.removeprefix("agentsurface/") for n in names if n.startswith("agentsurface/") and n.endswith(".py")}
    in_tree = {p.relative_to(REPO / "src" / "agentsurface").as_posix() for p in (REPO / "src" / "agentsurface").rglob("*.py")}
    assert sources == in_tree


def test_the_sdist_holds_what_the_wheel_is_built_from_and_nothing_heavy(dist: Path) -> None:
    (path,) = dist.glob("*.tar.gz")
    root = f"agentsurface-{VERSION}/"
    with tarfile.open(path) as sdist:
        names = [m.name.removeprefix(root) for m in sdist.getmembers() if m.isfile()]
    for expected in ("PKG-INFO", "pyproject.toml", "README.md", "LICENSE", "CHANGELOG.md",
                     "src/agentsurface/__init__.py", "src/agentsurface/py.typed",
                     *(f"web/{asset}" for asset in RUNTIME_ASSETS)):
        assert expected in names, expected
    assert not [n for n in names if n.startswith(NOT_SHIPPED) or n.endswith(".pyc")]
    assert path.stat().st_size < 1_000_000  # about 0.3 MB: sources and text only

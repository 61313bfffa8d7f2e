"""``agentsurface precompile PAGE`` (agentsurface/_runtime_build/page_bytecode.py): the Python
files a page's loader tag lists in ``data-files``, compiled by the runtime's own Pyodide into
checked hash-based pycs where the loader fetches them (``data-compiled``). That the page then
imports them, and never a stale one, is e2e/test_page_bytecode.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentsurface._runtime_build.page_bytecode import page_pyodide, page_python_files, precompile_page
from agentsurface._runtime_build.precompile import PrecompileError
from agentsurface.cli.main import main as cli

ROOT = Path(__file__).resolve().parents[3]
PYODIDE = ROOT / "web" / "dist" / "pyodide"
needs_runtime = pytest.mark.skipif(
    not (PYODIDE / "pyodide-lock.json").exists(), reason="needs the built runtime (scripts/build_web.py)"
)

PAGE = """<!doctype html>
<script type="text/x-agentsurface" src="app/main.py"></script>
<script type="module" src="{src}" data-compiled
        data-files="app/__init__.py app/data.json app/view.py
                    app/view.py"></script>
<script type="module" src="other.js" data-files="elsewhere/not_ours.py"></script>
"""


def _page(folder: Path, files: dict[str, str], src: str = "web/agentsurface.js") -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    page = folder / "index.html"
    page.write_text(PAGE.format(src=src))
    return page


def test_the_python_files_of_the_loader_tag_once_each_in_order() -> None:
    assert page_python_files(PAGE.format(src="web/agentsurface.js?v=2")) == ["app/__init__.py", "app/view.py"]
    assert page_python_files("<script src='x.js' data-files='a.py'></script>") == []


@needs_runtime
def test_each_file_gets_a_checked_pyc_of_the_runtime_where_the_loader_fetches_it(tmp_path: Path) -> None:
    page = _page(tmp_path, {"app/__init__.py": "", "app/view.py": "VIEW = 1\n", "app/data.json": "{}"})
    written = precompile_page(page, PYODIDE)
    assert written == {
        "app/__init__.py": tmp_path / "app/__pycache__/__init__.cpython-314.pyc",
        "app/view.py": tmp_path / "app/__pycache__/view.cpython-314.pyc",
    }
    pyc = written["app/view.py"].read_bytes()
    # PEP 552 flags: hash-based (1) and checked against the source (2), so an edited source is
    # compiled in the page instead of running stale bytecode.
    assert int.from_bytes(pyc[4:8], "little") == 0b11
    magic = written["app/__init__.py"].read_bytes()[:4]
    assert pyc[:4] == magic and magic[2:] == b"\r\n"
    before = written["app/view.py"].stat().st_mtime_ns
    precompile_page(page, PYODIDE)  # unchanged: not written again
    assert written["app/view.py"].stat().st_mtime_ns == before


@needs_runtime
def test_a_file_that_does_not_compile_is_named(tmp_path: Path) -> None:
    page = _page(tmp_path, {"app/__init__.py": "", "app/view.py": "def (:\n"})
    with pytest.raises(PrecompileError, match=r"app/view.py does not compile"):
        precompile_page(page, PYODIDE)


def test_a_file_outside_the_pages_folder_or_missing_is_refused(tmp_path: Path) -> None:
    page = tmp_path / "index.html"
    page.write_text('<script type="module" src="web/agentsurface.js" data-files="../secret.py"></script>')
    with pytest.raises(PrecompileError, match=r"'../secret.py' is not inside the page's folder"):
        precompile_page(page, PYODIDE)
    page.write_text('<script type="module" src="web/agentsurface.js" data-files="app/gone.py"></script>')
    with pytest.raises(PrecompileError, match=r"cannot read app/gone.py"):
        precompile_page(page, PYODIDE)


def test_the_runtime_is_the_one_beside_the_loader_the_page_loads(tmp_path: Path) -> None:
    page = _page(tmp_path, {"app/__init__.py": ""}, src="static/agentsurface.js")
    with pytest.raises(PrecompileError, match=r"has no .*static/dist/pyodide \(build it first\)"):
        page_pyodide(page)
    (tmp_path / "static/dist/pyodide").mkdir(parents=True)
    (tmp_path / "static/dist/pyodide/pyodide-lock.json").write_text("{}")
    assert page_pyodide(page) == tmp_path / "static/dist/pyodide"
    page.write_text('<script type="module" src="https://cdn.example/agentsurface.js"></script>')
    with pytest.raises(PrecompileError, match="--runtime"):
        page_pyodide(page)


@needs_runtime
def test_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = _page(tmp_path, {"app/__init__.py": "", "app/view.py": "VIEW = 1\n"})
    assert cli(["precompile", str(page), "--runtime", str(PYODIDE.parent)]) == 0
    assert capsys.readouterr().out == f"{page}: 2 modules compiled\n"
    assert (tmp_path / "app/__pycache__/view.cpython-314.pyc").exists()
    assert cli(["precompile", str(page)]) == 2  # no web/dist beside this page
    assert "build it first" in capsys.readouterr().err

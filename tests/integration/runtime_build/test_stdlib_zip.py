"""The compiled stdlib zip (agentsurface/_runtime_build/stdlib_zip.py): npm's stdlib zip with a
pyc beside each module a page imports, which zipimport then uses instead of compiling the source;
rebuilt only when its inputs change; named in the page zip's info file for the loader."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from importlib._bootstrap_external import _code_to_hash_pyc  # type: ignore[attr-defined]
from importlib.util import source_hash
from pathlib import Path

import pytest

from agentsurface._runtime_build import stdlib_zip
from agentsurface._runtime_build.page_zip import ZIP_INFO, write_page_zip
from agentsurface._runtime_build.stdlib_zip import MOUNTED_AT, build_tag, compiled_stdlib_bytes, is_current

ROOT = Path(__file__).resolve().parents[3]


def _stdlib() -> bytes:
    target = io.BytesIO()
    with zipfile.ZipFile(target, "w") as out:
        out.writestr(zipfile.ZipInfo("hot.py", date_time=(2020, 1, 1, 0, 0, 0)), "WHERE = 'source'\n")
        out.writestr("pkg/__init__.py", "")
        out.writestr("pkg/cold.py", "WHERE = 'source'\n")
        out.writestr("broken.py", "def (:\n")
        out.writestr("LICENSE.txt", "text")
    return target.getvalue()


def _compile_on_host(sources: dict[str, str], calls: list[dict[str, str]]) -> dict[str, bytes]:
    """What the build's Pyodide does, with this CPython: a pyc whose code says it came from the
    pyc (so an import shows which one zipimport used); a syntax error gets none."""
    calls.append(sources)
    compiled = {}
    for name, text in sources.items():
        try:
            compile(text, name, "exec")
        except SyntaxError:
            continue
        code = compile(text.replace("'source'", "'pyc'"), name, "exec")
        compiled[name] = bytes(_code_to_hash_pyc(code, source_hash(text.encode()), checked=False))
    return compiled


def test_only_the_wanted_modules_get_a_pyc_beside_their_source_and_nothing_else_changes() -> None:
    stdlib = _stdlib()
    calls: list[dict[str, str]] = []
    data = compiled_stdlib_bytes(
        stdlib, ["hot.py", "broken.py", "missing.py", "LICENSE.txt"], lambda s: _compile_on_host(s, calls), b"tag"
    )
    # compiled under the name the page mounts the stdlib at, as zipimport would compile it there
    assert sorted(calls[0]) == [f"{MOUNTED_AT}/broken.py", f"{MOUNTED_AT}/hot.py"]
    with zipfile.ZipFile(io.BytesIO(stdlib)) as before, zipfile.ZipFile(io.BytesIO(data)) as after:
        assert after.namelist() == ["hot.py", "hot.pyc", "pkg/__init__.py", "pkg/cold.py", "broken.py", "LICENSE.txt"]
        for info in before.infolist():
            kept = after.getinfo(info.filename)
            assert (after.read(kept), kept.compress_type) == (before.read(info), info.compress_type)
        assert after.getinfo("hot.pyc").compress_type == zipfile.ZIP_DEFLATED
        assert after.comment == b"tag"


def test_zipimport_uses_the_pyc_and_compiles_the_rest_from_source(tmp_path: Path) -> None:
    data = compiled_stdlib_bytes(_stdlib(), ["hot.py"], lambda s: _compile_on_host(s, []), b"tag")
    (tmp_path / "stdlib.zip").write_bytes(data)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import hot, pkg.cold;"
        "print(hot.WHERE, pkg.cold.WHERE)"
    )
    done = subprocess.run([sys.executable, "-S", "-c", code, str(tmp_path / "stdlib.zip")], capture_output=True, text=True)
    assert done.stdout.split() == ["pyc", "source"], done.stderr


def test_the_tag_follows_the_stdlib_and_every_wheel(tmp_path: Path) -> None:
    wheel = tmp_path / "a-1-py3-none-any.whl"
    wheel.write_bytes(b"one")
    tag = build_tag(b"stdlib", [wheel])
    assert build_tag(b"stdlib", [wheel]) == tag
    assert build_tag(b"other stdlib", [wheel]) != tag
    wheel.write_bytes(b"two")
    assert build_tag(b"stdlib", [wheel]) != tag
    compiled = tmp_path / "python_stdlib_compiled.zip"
    assert not is_current(compiled, tag)
    compiled.write_bytes(compiled_stdlib_bytes(_stdlib(), [], lambda s: {}, tag))
    assert is_current(compiled, tag)
    assert not is_current(compiled, build_tag(b"stdlib", [wheel]))
    compiled.write_bytes(b"not a zip")
    assert not is_current(compiled, tag)


def test_written_once_then_up_to_date(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / stdlib_zip.STDLIB).write_bytes(_stdlib())
    wheel = tmp_path / "a-1-py3-none-any.whl"
    wheel.write_bytes(b"wheel")
    recorded: list[list[Path]] = []

    def imports(pyodide_dir: Path, lock_file: Path, wheels: list[Path]) -> list[str]:
        recorded.append(wheels)
        return ["hot.py"]

    monkeypatch.setattr(stdlib_zip, "stdlib_imports", imports)
    monkeypatch.setattr(stdlib_zip, "compile_sources", lambda d, lock, s: _compile_on_host(s, []))
    said: list[str] = []
    assert stdlib_zip.write_compiled_stdlib(tmp_path, tmp_path / "lock.json", [wheel], said.append) is True
    assert stdlib_zip.write_compiled_stdlib(tmp_path, tmp_path / "lock.json", [wheel], said.append) is False
    assert recorded == [[wheel]]  # the second build asked Pyodide nothing
    assert said[-1].endswith("up to date")
    with zipfile.ZipFile(tmp_path / stdlib_zip.COMPILED_STDLIB) as out:
        assert "hot.pyc" in out.namelist()


def test_the_page_zip_info_names_the_compiled_stdlib_only_when_it_exists(tmp_path: Path) -> None:
    wheel = tmp_path / "wheels" / "agentsurface-9.9.9-py3-none-any.whl"
    wheel.parent.mkdir(parents=True)
    (tmp_path / "pyodide").mkdir()
    with zipfile.ZipFile(wheel, "w") as out:
        out.writestr("agentsurface/__init__.py", "")
    write_page_zip(wheel, tmp_path, stdlib=stdlib_zip.COMPILED_STDLIB)
    assert "stdlib" not in json.loads((tmp_path / "pyodide" / ZIP_INFO).read_text())
    (tmp_path / "pyodide" / stdlib_zip.COMPILED_STDLIB).write_bytes(b"zip")
    assert write_page_zip(wheel, tmp_path, stdlib=stdlib_zip.COMPILED_STDLIB) is True
    assert json.loads((tmp_path / "pyodide" / ZIP_INFO).read_text())["stdlib"] == stdlib_zip.COMPILED_STDLIB


@pytest.mark.skipif(
    not (ROOT / "web" / "dist" / "pyodide" / stdlib_zip.COMPILED_STDLIB).exists(), reason="web/dist not built"
)
def test_the_built_zip_holds_the_boots_modules_compiled_for_pyodides_python() -> None:
    built = ROOT / "web" / "dist" / "pyodide"
    with zipfile.ZipFile(built / stdlib_zip.COMPILED_STDLIB) as compiled, zipfile.ZipFile(built / stdlib_zip.STDLIB) as npm:
        names = set(compiled.namelist())
        assert set(npm.namelist()) <= names
        for module in ("asyncio/events", "typing", "dataclasses", "ast", "pyodide/_package_loader", "tarfile"):
            pyc = compiled.read(f"{module}.pyc")
            assert int.from_bytes(pyc[4:8], "little") == 0b01  # hash-based, never checked
    assert json.loads((built / ZIP_INFO).read_text())["stdlib"] == stdlib_zip.COMPILED_STDLIB

"""agentsurface.browser.packages against fakes of Pyodide's run_sync/loadPackage: a module of a
deferred package is loaded on its first import where Python can wait, fails clearly where it
cannot, and a failed load is reported once, not retried on every import."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest


class FakePyodide:
    """Installs ``<name>.py`` into ``site`` when its package is loaded (like Pyodide's loader)."""

    def __init__(self, site: Path) -> None:
        self.site = site
        self.can_wait = True
        self.loads: list[str] = []
        self.fail = False

    def loadPackage(self, name: str) -> Any:
        self.loads.append(name)
        if self.fail:
            raise RuntimeError("NetworkError: HTTP 404")
        for module in {"late-pkg": ["late_mod"], "other-pkg": ["other_mod"]}[name]:
            (self.site / f"{module}.py").write_text(f"LOADED_BY = {name!r}\n")
        return None  # run_sync's argument; the fake run_sync ignores it


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakePyodide]:
    site = tmp_path / "site"
    site.mkdir()
    fake = FakePyodide(site)
    ffi = ModuleType("pyodide.ffi")
    ffi.can_run_sync = lambda: fake.can_wait  # type: ignore[attr-defined]
    ffi.run_sync = lambda awaitable: awaitable  # type: ignore[attr-defined]
    pyodide = ModuleType("pyodide")
    pyodide.ffi = ffi  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pyodide", pyodide)
    monkeypatch.setitem(sys.modules, "pyodide.ffi", ffi)
    monkeypatch.setitem(sys.modules, "pyodide_js", SimpleNamespace(loadPackage=fake.loadPackage))
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "agentsurface.browser.packages", raising=False)
    saved = list(sys.meta_path)
    packages = importlib.import_module("agentsurface.browser.packages")
    packages.load_on_import(json.dumps({"late_mod": "late-pkg", "other_mod": "other-pkg"}))
    yield fake
    sys.meta_path[:] = saved
    for name in ("late_mod", "other_mod"):
        sys.modules.pop(name, None)


def test_a_deferred_module_is_loaded_on_its_first_import(fake: FakePyodide) -> None:
    late = importlib.import_module("late_mod")
    assert late.LOADED_BY == "late-pkg"
    importlib.import_module("late_mod")
    assert fake.loads == ["late-pkg"]  # once: afterwards the path finders find it


def test_modules_nobody_deferred_are_left_to_the_usual_error(fake: FakePyodide) -> None:
    with pytest.raises(ModuleNotFoundError) as caught:
        importlib.import_module("not_a_module_anywhere")
    assert "data-packages" not in str(caught.value)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("late_mod.sub")  # a submodule is its parent's business
    assert fake.loads == ["late-pkg"]  # the parent was loaded for it


def test_where_python_cannot_wait_the_error_says_how_to_load_it_at_start(fake: FakePyodide) -> None:
    fake.can_wait = False
    with pytest.raises(ModuleNotFoundError) as caught:
        importlib.import_module("late_mod")
    message = str(caught.value)
    assert caught.value.name == "late_mod"
    assert "'late-pkg'" in message and 'data-packages="late-pkg"' in message
    assert fake.loads == []
    fake.can_wait = True  # later, from async code, it loads
    assert importlib.import_module("late_mod").LOADED_BY == "late-pkg"


def test_a_failed_load_is_a_typed_error_and_is_not_retried(fake: FakePyodide) -> None:
    fake.fail = True
    with pytest.raises(ModuleNotFoundError) as caught:
        importlib.import_module("other_mod")
    assert "loading its package 'other-pkg' failed" in str(caught.value)
    assert isinstance(caught.value.__cause__, RuntimeError)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("other_mod")
    assert fake.loads == ["other-pkg"]


def test_installing_twice_keeps_one_finder(fake: FakePyodide) -> None:
    packages = sys.modules["agentsurface.browser.packages"]
    packages.load_on_import(json.dumps({"late_mod": "late-pkg"}))
    assert sum(isinstance(f, packages.LoadOnImport) for f in sys.meta_path) == 1
    with pytest.raises(TypeError):
        packages.load_on_import(json.dumps(["late_mod"]))


def test_dependencies_count_as_pending_until_the_loader_says_they_are_loaded(fake: FakePyodide) -> None:
    packages = sys.modules["agentsurface.browser.packages"]
    assert packages.dependencies_pending() is True  # the fixture installed a non-empty map
    packages.dependencies_loaded()
    assert packages.dependencies_pending() is False
    packages.load_on_import("{}")  # nothing deferred: nothing to wait for
    assert packages.dependencies_pending() is False


async def test_calls_wait_for_the_background_load_until_the_loader_says_it_settled(fake: FakePyodide) -> None:
    import asyncio

    packages = sys.modules["agentsurface.browser.packages"]
    waiting = [asyncio.ensure_future(packages.dependencies_ready()) for _ in range(3)]
    await asyncio.sleep(0)
    assert not any(w.done() for w in waiting)
    packages.dependencies_loaded()
    await asyncio.gather(*waiting)
    await packages.dependencies_ready()  # nothing pending: returns at once


def test_unpack_wheels_installs_a_pure_wheel_and_its_bytecode(
    fake: FakePyodide, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loader's install of a pure-Python data-package without Pyodide's package loader: the
    wheel's files land in site-packages (its __pycache__ pycs with them) and the wheel is removed."""
    import site
    import zipfile

    monkeypatch.setattr(site, "getsitepackages", lambda: [str(fake.site)])
    wheel = tmp_path / "ünpacked_pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("unpacked_pkg/__init__.py", "VALUE = 'from the wheel'\n")
        archive.writestr("unpacked_pkg/__pycache__/__init__.cpython-314.pyc", b"\0")
        archive.writestr("unpacked_pkg/données.txt", "utf-8 name")  # Python sets the UTF-8 flag
        archive.writestr("unpacked_pkg-1.0.dist-info/METADATA", "Name: unpacked-pkg\n")
    packages = sys.modules["agentsurface.browser.packages"]
    packages.unpack_wheels(json.dumps([str(wheel)]))
    try:
        assert not wheel.exists()
        assert (fake.site / "unpacked_pkg" / "__pycache__" / "__init__.cpython-314.pyc").read_bytes() == b"\0"
        assert (fake.site / "unpacked_pkg" / "données.txt").read_text() == "utf-8 name"
        assert importlib.import_module("unpacked_pkg").VALUE == "from the wheel"
        assert fake.loads == []  # never through the package loader
    finally:
        sys.modules.pop("unpacked_pkg", None)
    with pytest.raises(TypeError):
        packages.unpack_wheels(json.dumps({"not": "a list"}))

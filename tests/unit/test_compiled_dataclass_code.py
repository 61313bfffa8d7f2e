"""agentsurface._compat.use_compiled_dataclass_code: in the page, dataclasses' generated methods
come from code the build compiled for the same Python; anything else compiles as before, and
nothing changes outside Pyodide or without the file."""

from __future__ import annotations

import builtins
import dataclasses
import importlib.util
import marshal
import sys
from typing import Any

import pytest

from agentsurface import _compat
from agentsurface._compat import DATACLASS_CODE, use_compiled_dataclass_code


def _define() -> type:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Point:
        x: int
        y: int = 0

    return Point


def _texts() -> dict[str, Any]:
    """The source texts dataclasses compiles for _define(), compiled as the build does."""
    texts: dict[str, Any] = {}

    def recording(source: Any, globals: Any = None, locals: Any = None, /) -> None:
        if type(source) is str:
            texts[source] = compile(source, "<string>", "exec", dont_inherit=True)
        builtins.exec(source, globals, locals)

    previous = vars(dataclasses).get("exec")
    dataclasses.exec = recording  # type: ignore[attr-defined]
    try:
        _define()
    finally:
        if previous is None:
            del dataclasses.exec  # type: ignore[attr-defined]
        else:
            dataclasses.exec = previous  # type: ignore[attr-defined]
    assert texts
    return texts


def test_nothing_changes_outside_the_browser() -> None:
    assert sys.platform != "emscripten"
    assert use_compiled_dataclass_code() is False
    assert "exec" not in vars(dataclasses)


@pytest.fixture
def in_the_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "emscripten")
    monkeypatch.setattr(dataclasses, "exec", builtins.exec, raising=False)  # restored after


def test_generated_methods_come_from_the_compiled_code(monkeypatch: pytest.MonkeyPatch, in_the_page: None) -> None:
    texts = _texts()
    served = importlib.util.MAGIC_NUMBER + marshal.dumps(texts)
    monkeypatch.setattr(_compat, "package_data", lambda package, name: served if name == DATACLASS_CODE else None)
    compiled_by_hand: list[str] = []
    real_compile = builtins.compile

    def counting_compile(source: Any, *args: Any, **kwargs: Any) -> Any:
        compiled_by_hand.append(source)
        return real_compile(source, *args, **kwargs)

    assert use_compiled_dataclass_code() is True
    monkeypatch.setattr(builtins, "compile", counting_compile)
    point = _define()(1)
    assert compiled_by_hand == []  # exec got code objects, not text to compile
    assert (point.x, point.y, point == _define()(1)) == (1, 0, False)  # two classes: not equal
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 2

    @dataclasses.dataclass
    class Other:  # a text the build never saw: compiled as before
        name: str

    assert Other("a").name == "a"


def test_another_pythons_code_is_ignored(monkeypatch: pytest.MonkeyPatch, in_the_page: None) -> None:
    served = b"\0\0\r\n" + marshal.dumps(_texts())
    monkeypatch.setattr(_compat, "package_data", lambda package, name: served)
    assert use_compiled_dataclass_code() is False
    assert dataclasses.exec is builtins.exec  # type: ignore[attr-defined]


def test_a_wheel_without_the_file_changes_nothing(monkeypatch: pytest.MonkeyPatch, in_the_page: None) -> None:
    def missing(package: str, name: str) -> bytes:
        raise FileNotFoundError(name)

    monkeypatch.setattr(_compat, "package_data", missing)
    assert use_compiled_dataclass_code() is False
    assert dataclasses.exec is builtins.exec  # type: ignore[attr-defined]

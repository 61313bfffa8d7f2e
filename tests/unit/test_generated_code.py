"""agentsurface._compat.generated_code: the code a record generates is served from the build's
compiled texts in the page, only while the record is made. Anything else (another text, a
user's own dataclass, CPython outside the build) compiles as before, with dataclasses untouched."""

from __future__ import annotations

import builtins
import dataclasses
import importlib.util
import marshal
import sys
from collections.abc import Iterator
from types import CodeType
from typing import Any

import pytest

from agentsurface import _compat
from agentsurface._compat import DATACLASS_CODE, exec_generated, generated_code
from agentsurface._core.records import record


def _define_records() -> list[type]:
    """The same three records on every call: the same texts to compile each time."""

    @record
    class Point:
        x: int
        y: int = 0

    @record(hot=True)
    class Event:
        at: float
        what: str = "tick"

    @record(frozen=False)
    class Counter:
        count: int = 0

    return [Point, Event, Counter]


@pytest.fixture
def execs(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """What reaches ``builtins.exec``: ``"text"`` for source it must compile, ``"code"`` for code."""
    seen: list[str] = []
    real_exec = builtins.exec

    def spying(source: Any, globals: Any = None, locals: Any = None, /) -> None:
        seen.append("code" if isinstance(source, CodeType) else "text")
        real_exec(source, globals, locals)

    monkeypatch.setattr(builtins, "exec", spying)
    yield seen


def _recorded_texts(monkeypatch: pytest.MonkeyPatch) -> dict[str, CodeType]:
    """What the build records for _define_records() (RECORD_CODE_ENV, in-process)."""
    monkeypatch.setattr(_compat, "_recorded", {})
    _define_records()
    texts = _compat.recorded_code()
    monkeypatch.setattr(_compat, "_recorded", None)
    return texts


@pytest.fixture
def in_the_page(monkeypatch: pytest.MonkeyPatch) -> dict[str, CodeType]:
    """A page whose wheel holds the compiled texts of _define_records(); returns them."""
    texts = _recorded_texts(monkeypatch)
    served = importlib.util.MAGIC_NUMBER + marshal.dumps(texts)
    monkeypatch.setattr(sys, "platform", "emscripten")
    monkeypatch.setattr(_compat, "_compiled", None)  # read again, from the page's wheel
    monkeypatch.setattr(_compat, "package_data", lambda package, name: served if name == DATACLASS_CODE else None)
    return texts


def test_outside_the_page_dataclasses_is_never_touched(execs: list[str]) -> None:
    assert sys.platform != "emscripten"
    with generated_code():
        assert "exec" not in vars(dataclasses)
    _define_records()
    assert "exec" not in vars(dataclasses) and _compat._compiled_code() == {}
    # dataclasses compiled its methods' text itself; only the hot record's fast __init__ went
    # through exec_generated, compiled there.
    assert execs.count("code") == 1 and execs.count("text") > 3
    with pytest.raises(RuntimeError, match="AGENTSURFACE_RECORD_GENERATED_CODE was not set"):
        _compat.recorded_code()


def test_the_build_records_every_text_a_record_generates(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _recorded_texts(monkeypatch)
    assert any(text.startswith("def __init__(self, at, what=_default_what)") for text in texts)  # the fast init
    # one per record, and dataclasses' own for the hot one (which the fast one replaces)
    assert sum("def __init__(" in text for text in texts) == 4
    assert all(isinstance(code, CodeType) for code in texts.values())
    assert "exec" not in vars(dataclasses)


def test_in_the_page_records_get_the_compiled_code(in_the_page: dict[str, CodeType], execs: list[str]) -> None:
    point_cls, event_cls, counter_cls = _define_records()
    assert execs and set(execs) == {"code"}  # every method of the three: nothing compiled here
    assert len(execs) == len(in_the_page)
    assert (point_cls(1), event_cls(2.0).what, counter_cls().count) == (point_cls(1, 0), "tick", 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        point_cls(1).x = 2  # type: ignore[attr-defined]


def test_in_the_page_a_users_dataclass_never_meets_the_substitution(
    in_the_page: dict[str, CodeType], execs: list[str]
) -> None:
    _define_records()
    assert "exec" not in vars(dataclasses)  # removed once each record was made
    execs.clear()

    @dataclasses.dataclass(frozen=True)
    class Users:  # the same fields as Point: a text the build holds, yet compiled by dataclasses
        x: int
        y: int = 0

    assert execs and set(execs) == {"text"}
    assert Users(1) == Users(1, 0)


def test_a_text_the_build_never_saw_compiles_as_before(in_the_page: dict[str, CodeType], execs: list[str]) -> None:
    @record
    class Other:
        name: str

    assert "text" not in execs  # compiled by exec_generated, then run as code
    assert Other("a").name == "a"


def test_the_substitution_is_undone_when_a_record_fails(in_the_page: dict[str, CodeType]) -> None:
    with pytest.raises(TypeError):

        @record(hot=True)
        class Broken:
            a: int = 0
            b: int  # type: ignore[misc]  # a field without a default after one with a default

    assert "exec" not in vars(dataclasses)


def test_what_dataclasses_held_before_is_put_back(monkeypatch: pytest.MonkeyPatch, in_the_page: Any) -> None:
    def someone_elses(source: Any, globals: Any = None, locals: Any = None, /) -> None:
        builtins.exec(source, globals, locals)

    monkeypatch.setattr(dataclasses, "exec", someone_elses, raising=False)
    with generated_code():
        assert dataclasses.exec is exec_generated  # type: ignore[attr-defined]
    assert dataclasses.exec is someone_elses  # type: ignore[attr-defined]


def test_another_pythons_code_is_ignored(monkeypatch: pytest.MonkeyPatch, in_the_page: Any) -> None:
    served = b"\0\0\r\n" + marshal.dumps(in_the_page)
    monkeypatch.setattr(_compat, "package_data", lambda package, name: served)
    assert _compat._compiled_code() == {}
    with generated_code():
        assert "exec" not in vars(dataclasses)  # nothing to serve: nothing changed


def test_a_wheel_without_the_file_changes_nothing(monkeypatch: pytest.MonkeyPatch, in_the_page: Any) -> None:
    def missing(package: str, name: str) -> bytes:
        raise FileNotFoundError(name)

    monkeypatch.setattr(_compat, "package_data", missing)
    assert _compat._compiled_code() == {}
    monkeypatch.setattr(_compat, "_compiled", None)
    monkeypatch.setattr(_compat, "package_data", lambda package, name: None)
    assert _compat._compiled_code() == {}


def test_generated_text_compiles_without_this_modules_future_flags() -> None:
    namespace: dict[str, Any] = {}
    exec_generated("def f(x: int) -> int:\n    return x\n", namespace)
    assert namespace["f"].__annotations__ == {"x": int, "return": int}  # not strings: no PEP 563

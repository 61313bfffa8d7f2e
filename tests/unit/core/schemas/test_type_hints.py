"""Type hints in Python terms: every refused hint names the class, the method, the parameter and
what to write instead; ``set[...]`` refuses repeated items instead of dropping them; a class
keyword typo names the accepted keywords; a ``when()`` check gives its own reason."""

# No `from __future__ import annotations`: _declare() puts a runtime hint into an annotation.

import datetime
import pathlib
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from agentsurface import (
    AgentComponent,
    AgentSurfaceRegistry,
    CapabilityAuthority,
    DefinitionError,
    Invocation,
    action,
    compile_manifest,
    observation,
)


class Plain:
    """Not a model: an agent cannot send one."""


class WithSet(BaseModel):
    labels: set[str]


REFUSED: list[tuple[Any, str, str]] = [
    (dict[str, str], "dict[str, str]", "use a pydantic model with those fields, or list[Entry]"),
    (dict[str, int], "dict[str, int]", "key and value fields"),
    (tuple[int, str], "tuple[int, str]", "use list[X] for several values of one type"),
    (bytes, "bytes", "use str (for example base64 text)"),
    (pathlib.Path, "Path", "use str and make the Path in the method"),
    (Callable[[int], int], "Callable[[int], int]", "never code: take a str (or a Literal[...]"),
    (Plain, "Plain", "declare Plain as a pydantic model (class Plain(BaseModel): ...) or a dataclass"),
    (datetime.time, "time", "use str (an ISO 8601 time"),
    (datetime.timedelta, "timedelta", "a number of seconds"),
    (complex, "complex", "use two float parameters"),
    (list[dict[str, float]], "dict[str, float]", "use a pydantic model"),
    (int | tuple[int, int], "tuple[int, int]", "use list[X]"),
    (WithSet, "set[str]", "field WithSet.labels: set[str] is not supported; a set inside a model"),
]


def _declare(hint: Any) -> type[AgentComponent]:
    class Board(AgentComponent, type="board.canvas", description="A drawing board"):
        @action("Add strokes")
        def add_strokes(self, strokes: hint) -> None:  # type: ignore[valid-type]
            return None

    return Board


@pytest.mark.parametrize(("hint", "written", "advice"), REFUSED, ids=[w for _, w, _ in REFUSED])
def test_a_refused_parameter_hint_says_what_to_write_instead(hint: Any, written: str, advice: str) -> None:
    with pytest.raises(DefinitionError) as info:
        _declare(hint)
    message = str(info.value)
    assert info.value.code == "UNSUPPORTED_SCHEMA"
    assert "Board.add_strokes(): parameter 'strokes'" in message, message
    assert f"{written} is not supported" in message, message
    assert advice in message, message
    for jargon in ("additionalProperties", "prefixItems", "arbitrary_types_allowed", "core_schema"):
        assert jargon not in message


def test_a_refused_return_annotation_is_named_too() -> None:
    with pytest.raises(DefinitionError) as info:

        class Board(AgentComponent, type="board.canvas", description="A drawing board"):
            @observation("Counts per colour")
            def counts(self) -> dict[str, int]:
                return {}

    assert "Board.counts(): the return annotation: dict[str, int] is not supported" in str(info.value)


def test_supported_hints_are_accepted() -> None:
    class Point(BaseModel):
        x: float
        y: float

    for hint in (str, int, float, bool, list[str], tuple[int, ...], int | None, Point, list[Point],
                 datetime.datetime, datetime.date, dict[str, Any], set[str], frozenset[int]):
        assert _declare(hint).contract.type == "board.canvas"


class Tags(AgentComponent, type="notes.tags", description="Tags of a note"):
    def __init__(self) -> None:
        self.got: Any = None

    @action("Set the tags")
    def set_tags(self, tags: set[str]) -> int:
        self.got = tags
        return len(tags)

    @observation("The tags")
    def tags(self) -> set[str]:
        return {"a"}


async def test_a_set_parameter_refuses_repeated_items_instead_of_dropping_them() -> None:
    schema = Tags.contract.actions["setTags"].input.json_schema
    assert schema["properties"]["tags"]["uniqueItems"] is True
    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([Tags])))
    tags = Tags()
    registry.register(tags)
    repeated = await registry.invoke(Invocation("view:notes.tags.setTags", {"tags": ["a", "b", "a"]}))
    assert repeated.code == "INVALID_INPUT"
    assert repeated.error is not None and "items must be unique" in repeated.error.message
    assert tags.got is None  # the method never ran on a silently shortened set
    ok = await registry.invoke(Invocation("view:notes.tags.setTags", {"tags": ["a", "b"]}))
    assert ok.ok and ok.output == 2 and tags.got == {"a", "b"}
    assert (await registry.invoke(Invocation("view:notes.tags.tags"))).output == ["a"]


def test_a_class_keyword_typo_names_the_accepted_keywords() -> None:
    with pytest.raises(TypeError) as info:

        class Board(AgentComponent, type="board.canvas", descripton="A drawing board"):  # type: ignore[call-arg]
            pass

    message = str(info.value)
    assert "'descripton' (did you mean 'description'?)" in message
    assert "type=, description=, meta=, origin=, priority=, tags=, policies=" in message


class Strokes(AgentComponent, type="board.strokes", description="Strokes"):
    def __init__(self) -> None:
        self.items: list[str] = []

    @action("Erase every stroke")
    def erase_all(self) -> None:
        self.items = []

    @erase_all.when(reason="the board is empty: draw something first")
    def has_strokes(self) -> bool:
        return bool(self.items)

    @action("Undo the last stroke")
    def undo(self) -> None:
        self.items.pop()

    @undo.when
    def can_undo(self) -> bool:
        """There is nothing to undo.

        (Only the first line is the reason.)"""
        return bool(self.items)


def test_a_when_check_gives_its_reason_or_its_docstring() -> None:
    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([Strokes])))
    registry.register(Strokes())
    reasons = {c.capability_id: c.unavailable_reason for c in registry.snapshot().capabilities()}
    assert reasons["view:board.strokes.eraseAll"] == "the board is empty: draw something first"
    assert reasons["view:board.strokes.undo"] == "There is nothing to undo."


def test_when_reason_must_be_text() -> None:
    with pytest.raises(DefinitionError):

        class Bad(AgentComponent, type="board.bad", description="Bad"):
            @action("Erase")
            def erase(self) -> None:
                return None

            @erase.when(reason="  ")
            def can_erase(self) -> bool:
                return True

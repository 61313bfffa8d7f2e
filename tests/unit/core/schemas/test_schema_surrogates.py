"""A lone surrogate reaching a pydantic-typed input (JSON text and JavaScript strings may hold
one; UTF-8 and pydantic's parser cannot) is refused at its own path, in words an agent can act
on, not as pydantic's "Invalid JSON" at the root. Raw JSON Schemas keep accepting it (its
canonical form escapes it)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentsurface.lowlevel import Invalid, Valid, schema_from_json, schema_from_type


class Rename(BaseModel):
    name: str
    tags: list[str] = []


@pytest.mark.parametrize(
    ("value", "path", "message"),
    [
        ({"name": "a\ud800b"}, "/name", "a string with a lone surrogate (\\ud800) is not valid Unicode text"),
        ({"name": "ok", "tags": ["x", "\udc00"]}, "/tags/1", "a string with a lone surrogate (\\udc00)"),
        ({"name": "\udc00\ud800"}, "/name", "(\\udc00)"),  # a reversed pair is two lone ones
        ({"name": "ok", "\ud800": 1}, "/", "a member name with a lone surrogate (\\ud800)"),
    ],
)
def test_a_lone_surrogate_is_named_where_it_is(value: object, path: str, message: str) -> None:
    outcome = schema_from_type(Rename).validate(value)  # type: ignore[arg-type]
    assert isinstance(outcome, Invalid)
    assert [(issue.path, issue.message.startswith(message) or message in issue.message) for issue in outcome.issues] == [
        (path, True)
    ]
    assert "Invalid JSON" not in outcome.issues[0].message
    outcome.issues[0].path.encode("utf-8")  # the pointer itself stays valid text


def test_other_failures_keep_pydantics_own_issues() -> None:
    outcome = schema_from_type(Rename).validate({"name": 1})
    assert isinstance(outcome, Invalid)
    assert [(i.path, i.message) for i in outcome.issues] == [("/name", "Input should be a valid string")]


def test_an_astral_character_is_fine() -> None:
    assert isinstance(schema_from_type(Rename).validate({"name": "\U0001f600"}), Valid)


def test_raw_json_schemas_still_accept_it() -> None:
    schema = schema_from_json({"type": "object", "properties": {"name": {"type": "string"}}})
    assert isinstance(schema.validate({"name": "a\ud800b"}), Valid)

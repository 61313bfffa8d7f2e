"""Issue paths in error details are RFC 6901 JSON pointers: ``~`` and ``/`` inside a key are
escaped (``~0``, ``~1``) at every place that reports one, and they are all built by one helper."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from agentsurface._core.jsonvalue import NotJsonError, to_json_value
from agentsurface._core.pointer import json_pointer
from agentsurface._core.schemas.schema import Invalid
from agentsurface.lowlevel import ActionContract, ComponentContract, schema_from_json, schema_from_type

from .helpers import make_registry

SRC = Path(__file__).resolve().parents[4] / "src" / "agentsurface"
KEY = "a/b~c"  # a legal JSON object key that needs both escapes
ESCAPED = "a~1b~0c"


def test_json_pointer_escapes_tilde_before_slash() -> None:
    assert json_pointer(()) == "/"
    assert json_pointer(("a", 0, "b")) == "/a/0/b"
    assert json_pointer((KEY,)) == f"/{ESCAPED}"
    assert json_pointer(("~1",)) == "/~01"  # '~' first, or '~1' would read back as '/'


def paths(outcome: Any) -> list[str]:
    assert isinstance(outcome, Invalid), outcome
    return [issue.path for issue in outcome.issues]


def test_json_schema_issues_escape_their_keys() -> None:
    schema = schema_from_json(
        {
            "type": "object",
            "properties": {KEY: {"type": "object", "additionalProperties": {"type": "integer"}}},
        }
    )
    assert paths(schema.validate({KEY: {"x/y": "no"}})) == [f"/{ESCAPED}/x~1y"]


def test_model_schema_issues_escape_their_keys() -> None:
    schema = schema_from_type(dict[str, int])
    assert paths(schema.validate({KEY: "no"})) == [f"/{ESCAPED}"]


def test_non_json_issues_escape_their_keys() -> None:
    schema = schema_from_json({"type": "object"})
    not_json: Any = {KEY: {1, 2}}  # a set is not JSON
    assert paths(schema.validate(not_json)) == [f"/{ESCAPED}"]


async def test_non_json_invocation_input_is_reported_at_an_escaped_pointer() -> None:
    # The pipeline used to rebuild the pointer from the human path ("$.a/b~c.x"), neither
    # escaping '/' nor telling a '.' inside a key from a nesting step.
    contract = ComponentContract(
        type="ptr.widget",
        description="pointers",
        actions={"set": ActionContract("Set", input={"type": "object"})},
    )
    registry = make_registry([contract])
    registry.register(contract.bind(actions={"set": lambda value, ctx: None}))
    deep: Any = "leaf"
    for _ in range(40):  # plain JSON, but deeper than the pipeline's input depth cap
        deep = {"x.y": deep}
    result = await registry.invoke({"capabilityId": "view:ptr.widget.set", "input": {KEY: deep}})
    assert result.code == "INVALID_INPUT"
    assert result.error is not None and result.error.details is not None
    issues: Any = result.error.details["issues"]
    assert [i["path"] for i in issues] == ["/" + "/".join([ESCAPED] + ["x.y"] * 32)]


def test_not_json_error_pointer_agrees_with_the_helper() -> None:
    with pytest.raises(NotJsonError) as caught:
        to_json_value({KEY: [0, {"x.y": object()}]})
    assert caught.value.pointer == json_pointer(caught.value.parts) == f"/{ESCAPED}/1/x.y"


# Pointer text put together by hand: an f-string or concatenation starting a "path" with "/",
# or a second copy of the escaping.
HAND_BUILT = (
    re.compile(r"""["']path["']\s*:\s*f["']/"""),
    re.compile(r"""["']/["']\s*\+\s*["']/["']\.join"""),
    re.compile(r"""Issue\(\s*f["']/"""),
)
ESCAPING = re.compile(r"""replace\(\s*["']~["']\s*,\s*["']~0["']\s*\)""")
# NotJsonError.pointer (jsonvalue.py) predates the helper; it is checked against it above.
ESCAPING_ALLOWED = {"_core/pointer.py", "_core/jsonvalue.py"}


def test_no_module_builds_json_pointers_by_hand() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        text = path.read_text(encoding="utf-8")
        offenders += [f"{rel}: {p.pattern}" for p in HAND_BUILT if p.search(text)]
        if rel not in ESCAPING_ALLOWED and ESCAPING.search(text):
            offenders.append(f"{rel}: its own '~' escaping")
    assert offenders == []

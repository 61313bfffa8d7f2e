"""What the compiler, the page and FastAPI's own checks see of a route declared as a procedure."""

from __future__ import annotations

import dataclasses
import inspect
import json
import sys
import textwrap
from pathlib import Path
from typing import get_type_hints

import pytest
from fastapi import FastAPI
from pydantic import BaseModel

from agentsurface import DefinitionError, ProcedureContract
from agentsurface._core.contracts.procedures import route_contract
from agentsurface._core.schemas.schema import Invalid, Valid
from agentsurface.compiler.config import load_config
from agentsurface.compiler.errors import CompileError
from agentsurface.compiler.load import procedures_from_contract
from agentsurface.compiler.manifest import compile_project, contract_bytes
from agentsurface.fastapi import AgentProcedures, procedure
from agentsurface.lowlevel import RouteProcedureOptions
from agentsurface.server import SqliteInvocationStore
from tests.unit.core.contracts.test_options import SAMPLES, plain

ROUTES = '''
from fastapi import APIRouter, Depends, Header
from pydantic import BaseModel, Field, field_validator

from agentsurface.fastapi import procedure

router = APIRouter()


class ItemIn(BaseModel):
    name: str = Field(max_length=20)

    @field_validator("name")
    @classmethod
    def no_shouting(cls, value: str) -> str:
        if value.isupper():
            raise ValueError("no shouting")
        return value


class Item(BaseModel):
    id: int
    name: str


def token(authorization: str = Header()) -> str:
    return authorization


@router.post("/lists/{list_id}/items")
@procedure("domain:lists.addItem", effect="server-mutation")
def add_item(list_id: int, body: ItemIn, who: str = Depends(token)) -> Item:
    """Add an item to a list."""
    return Item(id=1, name=body.name)
'''


def project(root: Path, routes: str = ROUTES) -> Path:
    (root / "shopping").mkdir(parents=True)
    (root / "shopping" / "__init__.py").write_text("")
    (root / "shopping" / "routes.py").write_text(textwrap.dedent(routes))
    (root / "pyproject.toml").write_text(
        '[project]\nname = "shopping"\nversion = "0.1.0"\n\n[tool.agentsurface]\nmodules = ["shopping.routes"]\n'
    )
    return root


def test_the_compiler_records_a_route_procedure_as_its_function(tmp_path: Path) -> None:
    document = json.loads(contract_bytes(compile_project(load_config(project(tmp_path / "app")))))
    [entry] = document["contracts"]
    assert entry["id"] == "domain:lists.addItem"
    assert entry["origin"] == {"module": "shopping.routes", "name": "add_item", "file": "shopping/routes.py", "route": True}
    schema = entry["contract"]["inputSchema"]
    assert set(schema["properties"]) == {"list_id", "name"}  # the path parameter and the body's fields
    assert schema["additionalProperties"] is False and sorted(schema["required"]) == ["list_id", "name"]
    assert entry["contract"]["outputSchema"]["title"] == "Item"
    assert entry["contract"]["description"] == "Add an item to a list."


def test_the_page_checks_a_route_procedure_by_its_json_schema_without_importing_it(tmp_path: Path) -> None:
    text = contract_bytes(compile_project(load_config(project(tmp_path / "app"))))
    for name in [m for m in sys.modules if m.startswith("shopping")]:
        del sys.modules[name]
    contract = procedures_from_contract(text)["domain:lists.addItem"]
    assert isinstance(contract.input.validate({"list_id": 1, "name": "milk"}), Valid)
    refused = contract.input.validate({"list_id": 1, "name": "x" * 21, "extra": 1})
    assert isinstance(refused, Invalid) and {i.path for i in refused.issues} == {"/name", "/"}
    # The route's own validator is the server's to apply: the page lets it through to the server.
    assert isinstance(contract.input.validate({"list_id": 1, "name": "MILK"}), Valid)
    assert not any(m.startswith("shopping") for m in sys.modules)


def test_a_route_declared_inside_a_function_fails_completeness(tmp_path: Path) -> None:
    dynamic = ROUTES.replace('@router.post("/lists/{list_id}/items")', "def make():\n  @router.post('/x/{list_id}')").replace(
        '@procedure("domain:lists.addItem"', '  @procedure("domain:lists.addItem"'
    )
    dynamic = dynamic.replace('def add_item(list_id: int, body: ItemIn, who: str = Depends(token)) -> Item:\n    """Add an item to a list."""\n    return Item(id=1, name=body.name)\n',
                              '  def add_item(list_id: int, body: ItemIn) -> Item:\n    """Add."""\n    return Item(id=1, name=body.name)\n  return add_item\n\nmade = make()\n')
    with pytest.raises(CompileError) as caught:
        compile_project(load_config(project(tmp_path / "app", dynamic)))
    assert [p.code for p in caught.value.problems] == ["dynamic-declaration"]


def _decorate(source: str) -> None:
    namespace: dict[str, object] = {}
    exec(compile(textwrap.dedent(source), "<routes>", "exec"), namespace)


PRELUDE = """
from typing import Annotated
from fastapi import Body, FastAPI, File, Form, UploadFile
from pydantic import BaseModel
from agentsurface.fastapi import procedure
class Thing(BaseModel):
    name: str
"""


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("@procedure('domain:t.a', effect='server-mutation')\ndef a(name: str = Form()) -> Thing: ...", "form fields or files"),
        ("@procedure('domain:t.b', effect='server-mutation')\ndef b(name: str, body: Thing) -> Thing:\n  '''B.'''", "also path or query"),
        ("@procedure('domain:t.c', effect='server-query')\ndef c() -> dict[str, int]:\n  '''C.'''", "needs named fields"),
        ("@procedure('domain:t.d', effect='server-query')\ndef d() -> Thing: ...", "description"),
        ("@procedure('t.e', effect='server-query', description='E')\ndef e() -> Thing: ...", "domain"),
        ("@procedure('domain:t.f', effect='view-local', description='F')\ndef f() -> Thing: ...", "server effect"),
    ],
)
def test_a_route_the_contract_cannot_describe_is_a_definition_error(source: str, message: str) -> None:
    with pytest.raises(DefinitionError, match=message):
        _decorate(PRELUDE + source)


class Thing(BaseModel):
    name: str


class Other(BaseModel):
    size: int


def test_the_route_must_agree_with_its_contract_when_served() -> None:
    app = FastAPI()

    @app.get("/things", response_model=Other)
    @procedure("domain:t.things", effect="server-query", description="Things")
    def things() -> Thing:
        return Thing(name="x")

    with pytest.raises(DefinitionError, match="response_model and the procedure's output schema differ"):
        AgentProcedures(app, caller=lambda: None, store=SqliteInvocationStore(":memory:"))

    second = FastAPI()
    second.get("/a")(things)
    second.get("/b")(things)
    with pytest.raises(DefinitionError, match="more than one route"):
        AgentProcedures(second, caller=lambda: None, store=SqliteInvocationStore(":memory:"))


def test_every_option_reaches_the_contract_as_given() -> None:
    given = {name: SAMPLES[name] for name in get_type_hints(RouteProcedureOptions)}

    @procedure("domain:t.options", effect="server-mutation", description="Options", **given)
    def options() -> Thing: ...

    contract = route_contract(options)
    assert contract is not None
    expected = ProcedureContract(
        id="domain:t.options", description="Options", effect="server-mutation", input=contract.input, **given
    )
    assert plain(contract) == plain(expected)


def test_an_option_left_out_takes_the_contracts_default_and_the_output_the_return_annotation() -> None:
    @procedure("domain:t.plain", effect="server-query", description="Plain")
    def plain_route() -> Thing: ...

    @procedure("domain:t.none", effect="server-query", description="None", output=None)
    def no_output() -> Thing: ...

    contract, bare = route_contract(plain_route), route_contract(no_output)
    assert contract is not None and bare is not None
    assert contract.output is not None and list(contract.output.json_schema["required"]) == ["name"]
    assert bare.output is None
    defaults = ProcedureContract(id="domain:t.plain", description="Plain", effect="server-query", input=contract.input)
    assert {**plain(contract), "output": None, "hash": ""} == {**plain(defaults), "hash": ""}


def test_the_signature_names_each_option_and_a_misspelt_one_fails_at_the_call() -> None:
    parameters = inspect.signature(procedure).parameters
    defaults = {f.name: f.default for f in dataclasses.fields(ProcedureContract)}
    for name in get_type_hints(RouteProcedureOptions):
        assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY
        assert name == "output" or parameters[name].default == defaults[name], name
    assert repr(parameters["output"].default) == "<the return annotation>"
    assert list(parameters)[:3] == ["id", "effect", "description"]
    with pytest.raises(TypeError, match=r"procedure\(\.\.\.\) got unknown keyword 'reversable' \(did you mean 'reversible'\?\)"):
        procedure("domain:t.typo", effect="server-mutation", reversable=True)

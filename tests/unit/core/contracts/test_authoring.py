"""The class-based authoring API (_core/contracts/authoring.py): class = contract, instance = binding,
methods = capabilities, schemas from type hints."""

import asyncio
import inspect
from typing import Any

import pytest
from pydantic import BaseModel

from agentsurface import (
    ActionContext,
    AgentComponent,
    AuthorityError,
    Consumer,
    DefinitionError,
    Policy,
    ProcedureContract,
    ReadContext,
    action,
    compile_manifest,
    observation,
)
from agentsurface._core.contracts.authoring import camel_case
from agentsurface._core.contracts.context import CancelSignal
from agentsurface._core.jsonvalue import thaw
from agentsurface._core.schemas.schema import Valid
from agentsurface.lowlevel import ActionContract
from tests.support import disable_procedure, registry_for


class Device(BaseModel):
    id: str
    online: bool


class Filters(BaseModel):
    status: str = "all"
    city: str | None = None


class Gate(Policy):
    name = "gate"


PROC = disable_procedure()


class DevicesTable(AgentComponent, type="devices.table", description="The devices table", priority=2):
    def __init__(self, devices: list[Device] | None = None) -> None:
        self.devices = devices or []
        self.selected: list[str] = []
        self.calls: list[Any] = []

    @observation("Rows currently visible")
    def visible_rows(self) -> list[Device]:
        return self.devices

    @observation("The selection", name="selection")
    def current_selection(self, ctx: ReadContext) -> list[str]:
        self.calls.append(("selection", ctx))
        return self.selected

    @action("Select rows by id")
    def select_rows(self, ids: list[str], mode: str = "replace") -> None:
        self.calls.append(("select", ids, mode))
        self.selected = list(ids)

    @select_rows.precondition
    def ids_must_exist(self, ids: list[str], mode: str) -> str | None:
        known = {d.id for d in self.devices}
        return None if set(ids) <= known else "unknown ids"

    @action("Clear the selection", idempotent=True, policies=[Gate()])
    async def clear_selection(self, context: ActionContext) -> int:
        self.calls.append(("clear", context))
        await asyncio.sleep(0)
        count = len(self.selected)
        self.selected = []
        return count

    @clear_selection.when
    def has_selection(self) -> bool:
        return bool(self.selected)

    @action("Apply filters", effect="navigation")
    def apply_filters(self, filters: Filters) -> None:
        self.calls.append(("filters", filters))

    def agent_procedures(self) -> list[Any]:
        return [PROC.reference(bind=lambda: {"ids": self.selected}, bound_fields=["ids"])]

    def agent_policies(self) -> list[Policy]:
        return [Gate()]


def _read_ctx() -> ReadContext:
    return ReadContext("view:devices.table.selection", "reg_1", Consumer("test", "test"))


def _action_ctx() -> ActionContext:
    return ActionContext("view:devices.table.x", "reg_1", Consumer("test", "test"), "inv_1", CancelSignal())


def test_camel_case_names() -> None:
    assert camel_case("select_rows") == "selectRows"
    assert camel_case("_private_thing_") == "privateThing"
    assert camel_case("get2_items") == "get2Items"
    assert camel_case("read") == "read"


def test_the_class_is_the_contract() -> None:
    contract = DevicesTable.contract
    assert contract.type == "devices.table"
    assert contract.description == "The devices table"
    assert contract.priority == 2
    assert set(contract.observations) == {"visibleRows", "selection"}
    assert set(contract.actions) == {"selectRows", "clearSelection", "applyFilters"}
    assert contract.actions["applyFilters"].effect == "navigation"
    assert contract.actions["clearSelection"].idempotent is True
    assert contract.actions["selectRows"].idempotent is False


def test_schemas_come_from_type_hints() -> None:
    contract = DevicesTable.contract
    rows = thaw(contract.observations["visibleRows"].output.json_schema)
    assert rows["type"] == "array"
    assert rows["items"] == {"$ref": "#/$defs/Device"}
    select = thaw(contract.actions["selectRows"].input.json_schema)
    assert select["type"] == "object"
    assert select["additionalProperties"] is False
    assert select["required"] == ["ids"]
    assert select["properties"]["ids"] == {"items": {"type": "string"}, "title": "Ids", "type": "array"}
    assert select["properties"]["mode"]["default"] == "replace"
    assert contract.actions["selectRows"].output is None
    assert thaw(contract.actions["clearSelection"].output.json_schema) == {"type": "integer"}


def test_context_parameters_are_injected_not_part_of_the_schema() -> None:
    contract = DevicesTable.contract
    clear = thaw(contract.actions["clearSelection"].input.json_schema)
    assert clear["properties"] == {}
    assert "context" not in clear["properties"]
    table = DevicesTable()
    binding = table.bind()
    ctx = _read_ctx()
    assert binding.observations["selection"].read(ctx) == []
    assert table.calls == [("selection", ctx)]


def test_a_single_pydantic_model_parameter_is_the_input() -> None:
    schema = DevicesTable.contract.actions["applyFilters"].input
    assert thaw(schema.json_schema)["properties"].keys() == {"status", "city"}
    result = schema.validate({"status": "online"})
    assert isinstance(result, Valid)
    table = DevicesTable()
    table.bind().actions["applyFilters"].execute(result.value, _action_ctx())
    assert table.calls == [("filters", Filters(status="online"))]


def test_sync_handlers_receive_validated_input_as_keyword_arguments() -> None:
    table = DevicesTable([Device(id="d1", online=True)])
    schema = DevicesTable.contract.actions["selectRows"].input
    result = schema.validate({"ids": ["d1"]})
    assert isinstance(result, Valid)
    outcome = table.bind().actions["selectRows"].execute(result.value, _action_ctx())
    assert outcome is None
    assert table.calls == [("select", ["d1"], "replace")]
    assert table.selected == ["d1"]


def test_async_handlers_stay_async_in_the_binding() -> None:
    table = DevicesTable()
    table.selected = ["a", "b"]
    ctx = _action_ctx()
    schema = DevicesTable.contract.actions["clearSelection"].input
    value = schema.validate({})
    assert isinstance(value, Valid)
    pending = table.bind().actions["clearSelection"].execute(value.value, ctx)
    assert inspect.iscoroutine(pending)
    assert asyncio.run(pending) == 2
    assert table.calls == [("clear", ctx)]


def test_when_and_precondition_are_bound_to_the_instance() -> None:
    table = DevicesTable([Device(id="d1", online=True)])
    binding = table.bind()
    clear = binding.actions["clearSelection"]
    assert clear.when is not None and clear.when() is False
    table.selected = ["d1"]
    assert clear.when() is True
    select = binding.actions["selectRows"]
    assert select.precondition is not None
    schema = DevicesTable.contract.actions["selectRows"].input
    ok = schema.validate({"ids": ["d1"]})
    bad = schema.validate({"ids": ["zz"]})
    assert isinstance(ok, Valid) and isinstance(bad, Valid)
    assert select.precondition(ok.value, _read_ctx()) is None
    assert select.precondition(bad.value, _read_ctx()) == "unknown ids"
    # The helper functions stay ordinary methods under their own names.
    assert table.has_selection() is True


def test_member_policies_and_component_hooks_reach_the_binding() -> None:
    table = DevicesTable()
    binding = table.bind(instance_id="main")
    assert binding.instance_id == "main"
    assert [p.name for p in binding.actions["clearSelection"].policies] == ["gate"]
    assert [p.name for p in binding.policies] == ["gate"]
    assert [r.procedure_id for r in binding.procedures] == ["domain:devices.disable"]
    table.selected = ["d9"]
    bound = binding.procedures[0].bind
    assert bound is not None and bound() == {"ids": ["d9"]}


def test_handlers_are_looked_up_at_call_time() -> None:
    table = DevicesTable([Device(id="d1", online=True)])
    read = table.bind().observations["visibleRows"].read
    assert read(_read_ctx()) == [Device(id="d1", online=True)]
    table.visible_rows = lambda: []  # type: ignore[method-assign]
    assert read(_read_ctx()) == []


def test_methods_remain_callable_directly() -> None:
    table = DevicesTable()
    table.select_rows(["x"])
    assert table.selected == ["x"]
    assert DevicesTable.select_rows.name == "selectRows"  # type: ignore[attr-defined]


def test_registering_an_instance_end_to_end() -> None:
    registry = registry_for([DevicesTable, PROC])
    table = DevicesTable()
    table.instance_id = "main"
    handle = registry.register(table)
    assert handle.status == "active"
    snapshot = registry.snapshot()
    assert [c.instance_id for c in snapshot.components] == ["main"]
    clear = snapshot.find("view:devices.table.clearSelection")[0]
    assert clear.available is False
    table.selected = ["d1"]
    assert registry.snapshot().find("view:devices.table.clearSelection")[0].available is True
    assert [p.procedure_id for p in snapshot.procedures] == ["domain:devices.disable"]
    assert set(snapshot.procedures[0].input_schema["properties"]) == {"reason"}


def test_manifest_compiles_from_classes() -> None:
    manifest = compile_manifest([DevicesTable])
    assert [e["id"] for e in manifest["contracts"]] == ["devices.table"]  # type: ignore[index, union-attr]


def test_explicit_names_and_raw_schemas() -> None:
    class Counter(AgentComponent, type="demo.counter", description="A counter"):
        @observation("The value", name="current", output={"type": "integer", "minimum": 0})
        def read_it(self):  # no annotation needed with output=
            return 1

        @action("Add", input={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
        def add(self, value: Any, ctx: Any) -> None:
            return None

    contract = Counter.contract
    assert set(contract.observations) == {"current"}
    assert thaw(contract.observations["current"].output.json_schema) == {"type": "integer", "minimum": 0}
    assert thaw(contract.actions["add"].input.json_schema)["required"] == ["n"]


def test_description_defaults_to_the_docstring() -> None:
    class Panel(AgentComponent, type="demo.panel"):
        """A panel of things."""

        @observation("State")
        def state(self) -> int:
            return 0

    assert Panel.contract.description == "A panel of things."


def test_abstract_bases_share_capabilities_with_concrete_subclasses() -> None:
    class Resettable(AgentComponent):
        @action("Reset to defaults")
        def reset(self) -> None:
            return None

    class Form(Resettable, type="demo.form", description="A form"):
        @observation("Values")
        def values(self) -> list[str]:
            return []

    class Special(Form):  # no type=: inherits Form's contract unchanged
        def reset(self) -> None:
            return None

    assert set(Form.contract.actions) == {"reset"}
    assert Special.contract is Form.contract
    assert not hasattr(Resettable, "contract")


# ----------------------------------------------------------------------------- errors naming the method


def _error(build: Any) -> DefinitionError:
    with pytest.raises(DefinitionError) as info:
        build()
    return info.value


def test_missing_parameter_hint_names_the_method() -> None:
    def build() -> None:
        class Bad(AgentComponent, type="demo.bad", description="Bad"):
            @action("Go")
            def go_now(self, ids) -> None:  # type: ignore[no-untyped-def]
                return None

    error = _error(build)
    assert error.code == "INVALID_DEFINITION"
    assert "Bad.go_now()" in str(error)
    assert "parameter 'ids' needs a type hint" in str(error)
    assert error.path == "demo.bad.goNow"


def test_observation_without_return_annotation_names_the_method() -> None:
    def build() -> None:
        class Bad(AgentComponent, type="demo.bad", description="Bad"):
            @observation("Rows")
            def rows(self):  # type: ignore[no-untyped-def]
                return []

    error = _error(build)
    assert "Bad.rows(): an observation needs a return annotation or output=" in str(error)


def test_observation_returning_none_is_refused() -> None:
    def build() -> None:
        class Bad(AgentComponent, type="demo.bad", description="Bad"):
            @observation("Rows")
            def rows(self) -> None:
                return None

    assert "cannot return None" in str(_error(build))


def test_invalid_capability_name_names_the_method() -> None:
    def build() -> None:
        class Bad(AgentComponent, type="demo.bad", description="Bad"):
            @action("Get")
            def HTTPGet(self) -> None:
                return None

    error = _error(build)
    assert error.code == "INVALID_ID"
    assert "Bad.HTTPGet()" in str(error)


def test_plane_violation_names_the_method() -> None:
    def build() -> None:
        class Bad(AgentComponent, type="demo.bad", description="Bad"):
            @action("Delete", effect="destructive")  # type: ignore[arg-type]
            def delete_all(self) -> None:
                return None

    error = _error(build)
    assert error.code == "PLANE_VIOLATION"
    assert "Bad.delete_all()" in str(error)


def test_unsupported_hint_names_the_method() -> None:
    def build() -> None:
        class Bad(AgentComponent, type="demo.bad", description="Bad"):
            @action("Tag")
            def tag(self, labels: dict[str, int]) -> None:
                return None

    error = _error(build)
    assert error.code == "UNSUPPORTED_SCHEMA"
    assert "Bad.tag()" in str(error)
    assert "parameter 'labels': dict[str, int] is not supported" in str(error)
    assert error.path is not None and error.path.startswith("demo.bad.tag.input")


def test_varargs_are_refused() -> None:
    def build() -> None:
        class Bad(AgentComponent, type="demo.bad", description="Bad"):
            @action("Go")
            def go(self, *ids: str) -> None:
                return None

    assert "Bad.go(): *ids parameters are not supported" in str(_error(build))


def test_two_methods_with_one_capability_name_are_duplicates() -> None:
    def build() -> None:
        class Bad(AgentComponent, type="demo.bad", description="Bad"):
            @observation("One", name="rows")
            def one(self) -> int:
                return 1

            @action("Two", name="rows")
            def two(self) -> None:
                return None

    error = _error(build)
    assert error.code == "DUPLICATE_CAPABILITY"
    assert "Bad.two() declares capability 'rows' a second time" in str(error)


def test_two_observations_with_one_name_are_duplicates() -> None:
    def build() -> None:
        class Bad(AgentComponent, type="demo.bad", description="Bad"):
            @observation("One", name="rows")
            def one(self) -> int:
                return 1

            @observation("Two", name="rows")
            def two(self) -> int:
                return 2

    assert _error(build).code == "DUPLICATE_CAPABILITY"


def test_a_when_helper_named_like_its_capability_is_refused() -> None:
    def build() -> None:
        class Bad(AgentComponent, type="demo.bad", description="Bad"):
            @action("Clear")
            def clear(self) -> None:
                return None

            @clear.when
            def clear(self) -> bool:  # type: ignore[no-redef]
                return True

    error = _error(build)
    assert "@clear.when function must not be named 'clear'" in str(error)


def test_a_subclass_adding_capabilities_needs_its_own_type() -> None:
    def build() -> None:
        class Extended(DevicesTable):
            @action("Export")
            def export(self) -> None:
                return None

    error = _error(build)
    assert "Extended declares capabilities ['export'] but no type=" in str(error)


def test_a_component_without_description_is_refused() -> None:
    def build() -> None:
        class Bare(AgentComponent, type="demo.bare"):
            @action("Go")
            def go(self) -> None:
                return None

    assert "component 'demo.bare' description must be a non-empty string" in str(_error(build))




def test_procedure_inputs_refuse_unknown_fields_like_view_inputs() -> None:
    """Issue 43.8: nested models too; a model that says extra="allow" keeps its choice."""
    from pydantic import BaseModel, ConfigDict

    class Line(BaseModel):
        amount: int

    class Expense(BaseModel):
        title: str
        line: Line

    class Open(BaseModel):
        model_config = ConfigDict(extra="allow")
        title: str

    add = ProcedureContract(id="domain:expenses.add", effect="server-mutation", description="Add", input=Expense)
    schema = add.input.json_schema
    assert schema["additionalProperties"] is False
    assert schema["$defs"]["Line"]["additionalProperties"] is False
    ok = add.input.validate({"title": "Taxi", "line": {"amount": 3}})
    assert ok.json == {"title": "Taxi", "line": {"amount": 3}}
    top = add.input.validate({"title": "Taxi", "line": {"amount": 3}, "amount": 3})
    nested = add.input.validate({"title": "Taxi", "line": {"amount": 3, "cents": 1}})
    assert [i.path for i in getattr(top, "issues", ())] == ["/amount"]
    assert [i.path for i in getattr(nested, "issues", ())] == ["/line/cents"]
    loose = ProcedureContract(id="domain:expenses.note", effect="server-mutation", description="Note", input=Open)
    assert loose.input.json_schema["additionalProperties"] is True
    assert loose.input.validate({"title": "x", "more": 1}).json == {"title": "x", "more": 1}


@pytest.mark.parametrize(
    ("declare", "named", "meant"),
    [
        (lambda: action("Wipe", confirmaton="required"), "@action(...)", "confirmation"),
        (lambda: observation("Rows", timout=3), "@observation(...)", "timeout"),
        (
            lambda: ProcedureContract(id="domain:a.b", descripton="d", effect="destructive"),
            "ProcedureContract()",
            "description",
        ),
        (
            lambda: ProcedureContract(id="domain:a.b", description="d", effect="destructive").reference(
                bound_field=["x"]
            ),
            "ProcedureContract.reference(...)",
            "bound_fields",
        ),
        (lambda: ActionContract(name="go", descripton="Go"), "ActionContract()", "description"),
    ],
)
def test_every_authoring_keyword_typo_says_did_you_mean(declare: Any, named: str, meant: str) -> None:
    """Issue 43.9: like the class keywords, not a bare TypeError."""
    with pytest.raises(TypeError) as caught:
        declare()
    message = str(caught.value)
    assert message.startswith(f"{named} got unknown keyword")
    assert f"(did you mean {meant!r}?)" in message and f"{meant}=" in message


def test_decimal_hints_are_refused_with_what_to_write() -> None:
    """Issue 43.9: pydantic took any text (' 1_0 ') or a float for a Decimal, in neither table."""
    from decimal import Decimal

    from pydantic import BaseModel

    class Expense(BaseModel):
        amount: Decimal

    with pytest.raises(DefinitionError, match=r"Expense\.amount: Decimal is not supported; .*int \(an amount in cents\)"):
        ProcedureContract(id="domain:expenses.add", effect="server-mutation", description="Add", input=Expense)
    with pytest.raises(DefinitionError, match=r"parameter 'amount': Decimal is not supported"):

        class Ledger(AgentComponent, type="ledger.dec", description="Ledger"):
            @action("Add")
            def add(self, amount: Decimal) -> None: ...


def test_a_component_missing_from_the_harness_contracts_says_where_to_list_it() -> None:
    """Issue 43.9: not only "unknown contract"."""
    from agentsurface.testing import create_test_surface

    class Listed(AgentComponent, type="harness.listed", description="Listed"):
        @observation("Rows")
        def rows(self) -> list[str]:
            return []

    class Forgotten(AgentComponent, type="harness.forgotten", description="Forgotten"):
        @observation("Rows")
        def rows(self) -> list[str]:
            return []

    surface = create_test_surface(contracts=[Listed])
    with pytest.raises(AuthorityError, match=r"create_test_surface\(contracts=\[\.\.\.\]\)"):
        surface.mount(Forgotten())

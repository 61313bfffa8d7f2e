"""Declaring views as procedures (agentsurface.django.procedure) and finding them under a
project's URL patterns (AgentViews): the contract a declaration makes, what the compiler finds,
and the definition errors raised at start instead of at the first call."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, get_type_hints

import pytest
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, JsonResponse
from django.urls import include, path, re_path
from expenses import views
from pydantic import BaseModel, ConfigDict

from agentsurface import DefinitionError, ProcedureContract
from agentsurface._core.contracts.procedures import route_contract
from agentsurface.django import AgentViews, procedure
from agentsurface.lowlevel import RouteProcedureOptions
from agentsurface.server import open_store
from tests.unit.core.contracts.test_options import SAMPLES, plain


class Ref(BaseModel):
    item_id: int


class Loose(BaseModel):
    note: str


def fresh() -> Any:
    """A new view function (a function declares one procedure)."""

    def view(request: HttpRequest, **kwargs: Any) -> JsonResponse:
        """A view of the tests."""
        return JsonResponse({})

    return view


def _served(patterns: list[Any]) -> AgentViews:
    return AgentViews(patterns, store=open_store("sqlite:///:memory:"))


def test_a_declaration_is_a_procedure_contract_on_the_view_the_urlconf_holds() -> None:
    contract = route_contract(views.delete_expense)
    assert contract is not None and contract.id == "domain:expenses.delete"
    assert contract.effect == "destructive" and contract.confirmation == "required"
    assert contract.description == "Delete one of the signed-in user's expenses."
    assert list(contract.input.json_schema["required"]) == ["expense_id"]
    assert contract.input.json_schema["additionalProperties"] is False
    # Under login_required (functools.wraps): the compiler finds it by the module's own name.
    assert views.delete_expense.__qualname__ == "delete_expense"
    assert route_contract(views.clear_expenses) is None and route_contract(views.home) is None


def test_an_input_model_that_allows_extra_fields_is_made_strict() -> None:
    marked = procedure("domain:x.loose", effect="server-mutation", input=Loose)(fresh())
    contract = route_contract(marked)
    assert contract is not None and contract.input.json_schema["additionalProperties"] is False
    assert Loose.model_config.get("extra") is None  # the app's own model is left alone
    empty = route_contract(procedure("domain:x.empty", effect="server-mutation")(fresh()))
    assert empty is not None and empty.input.json_schema["properties"] == {}


def test_the_method_defaults_to_get_for_reads_and_post_otherwise() -> None:
    read = procedure("domain:x.read", effect="server-query", input=Ref)(fresh())
    write = procedure("domain:x.write", effect="server-mutation", input=Ref)(fresh())
    patterns = [path("r/<int:item_id>/", read), path("w/<int:item_id>/", write)]
    served = _served(patterns)
    assert {v.declared.contract.id: v.inputs.method for v in served.views} == {
        "domain:x.read": "GET",
        "domain:x.write": "POST",
    }


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"input": dict}, "input must be a pydantic model class"),
        ({"input": Ref, "method": "TRACE"}, "method must be one of"),
        ({"input": Ref, "approval": "sms"}, "approval must be"),
        ({"input": Ref, "permissions": [""]}, "permissions must be non-empty strings"),
    ],
)
def test_a_bad_declaration_fails_at_import(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(DefinitionError, match=message):
        procedure("domain:x.bad", effect="server-mutation", **kwargs)(fresh())


def test_a_view_declares_one_procedure() -> None:
    once = procedure("domain:x.once", effect="server-mutation", input=Ref)(fresh())
    with pytest.raises(DefinitionError, match="already declares a procedure"):
        procedure("domain:x.twice", effect="server-mutation", input=Ref)(once)


def test_a_url_argument_must_be_an_input_field() -> None:
    marked = procedure("domain:x.noarg", effect="server-mutation", input=Loose)(fresh())
    with pytest.raises(DefinitionError, match=r"keyword arguments \['item_id'\] are not fields"):
        _served([path("items/<int:item_id>/", marked)])
    # Found through a regex pattern inside an include, too.
    with pytest.raises(DefinitionError, match=r"\['slug'\]"):
        _served([path("api/", include([re_path(r"^(?P<slug>[a-z]+)/$", marked)]))])


def test_a_procedure_is_one_url_pattern() -> None:
    marked = procedure("domain:x.one", effect="server-mutation", input=Ref)(fresh())
    with pytest.raises(DefinitionError, match="reachable at"):
        _served([path("a/<int:item_id>/", marked), path("b/<int:item_id>/", marked)])
    other = procedure("domain:x.one", effect="server-mutation", input=Ref)(login_required(fresh()))
    with pytest.raises(DefinitionError, match="declared twice"):
        _served([path("a/<int:item_id>/", marked), path("c/<int:item_id>/", other)])


def test_unmarked_views_and_foreign_markers_are_not_served() -> None:
    class Strict(BaseModel):
        model_config = ConfigDict(extra="forbid")
        item_id: int

    marked = procedure("domain:x.kept", effect="server-mutation", input=Strict)(fresh())
    served = _served([path("plain/", fresh()), path("kept/<int:item_id>/", marked)])
    assert sorted(served.procedures) == ["domain:x.kept"]
    assert route_contract(marked).input is not None  # type: ignore[union-attr]


def test_the_patterns_must_be_a_list() -> None:
    with pytest.raises(DefinitionError, match="list of URL patterns"):
        AgentViews("expenses_site.urls", store=open_store("sqlite:///:memory:"))  # type: ignore[arg-type]


def test_the_compiler_never_sets_up_a_lazy_object_of_the_project() -> None:
    """Django's settings and storages are lazy proxies: the compiler's search for contracts
    among live objects must not set one up (an unconfigured one raises)."""
    from django.utils.functional import SimpleLazyObject

    from agentsurface.compiler.discover import _live_contracts

    touched: list[int] = []
    lazy = SimpleLazyObject(lambda: touched.append(1) or object())
    found = _live_contracts()
    assert touched == [] and lazy is not None
    assert route_contract(views.delete_expense) in found


def test_an_optional_url_group_follows_its_optional_field() -> None:
    class Page(BaseModel):
        number: int | None = None

    marked = procedure("domain:x.page", effect="server-query", input=Page)(fresh())
    served = _served([re_path(r"^pages/(?:(?P<number>[0-9]+)/)?$", marked)])
    (view,) = served.views
    assert served._resolve(view, {"number": 3})[1] == "/pages/3/"
    assert served._resolve(view, {})[1] == "/pages/"
    assert served._resolve(view, {})[0].kwargs == {}


def test_every_option_reaches_the_contract_as_given() -> None:
    given = {name: SAMPLES[name] for name in get_type_hints(RouteProcedureOptions)}
    contract = route_contract(procedure("domain:x.options", effect="server-mutation", input=Ref, **given)(fresh()))
    assert contract is not None
    expected = ProcedureContract(
        id="domain:x.options",
        description="A view of the tests.",
        effect="server-mutation",
        input=contract.input,
        **given,
    )
    assert plain(contract) == plain(expected)
    bare = route_contract(procedure("domain:x.bare", effect="server-mutation", input=Ref)(fresh()))
    assert bare is not None
    defaults = ProcedureContract(
        id="domain:x.bare", description="A view of the tests.", effect="server-mutation", input=bare.input
    )
    assert plain(bare) == plain(defaults)


def test_the_signature_names_each_option_and_a_misspelt_one_fails_at_the_call() -> None:
    parameters = inspect.signature(procedure).parameters
    defaults = {f.name: f.default for f in dataclasses.fields(ProcedureContract)}
    for name in get_type_hints(RouteProcedureOptions):
        assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY
        assert parameters[name].default == defaults[name], name
    assert list(parameters)[:4] == ["id", "effect", "input", "method"]
    with pytest.raises(TypeError, match=r"procedure\(\.\.\.\) got unknown keyword 'untrusted' \(did you mean 'untrusted_output'\?\)"):
        procedure("domain:x.typo", effect="server-mutation", untrusted=True)

"""Procedures from a Django project's own views (``pip install 'agentsurface[django]'``).

Mark a view the project already runs; serve the marked ones through the procedure pipeline,
inside the same project (its ASGI application, its middleware, its database)::

    from agentsurface.django import AgentViews, DjangoInvocationStore, procedure

    @procedure("domain:expenses.delete", effect="destructive", input=DeleteIn, output=Deleted,
               method="POST", approval="confirm")
    @login_required
    def delete_expense(request, pk): ...

    # urls.py, after the project's own patterns
    agent = AgentViews(urlpatterns, store=DjangoInvocationStore())
    urlpatterns += [path("api/agent/", include(agent.urls))]

Views carry no types, so the declaration names them: ``input`` (a pydantic model) is what the
agent sends; the keyword arguments of the view's URL pattern are its fields by name, the others
go as the view's JSON body (or query string for ``method="GET"``). ``output`` is the schema of
the JSON the view answers. The caller comes from Django's authentication (the session cookie,
with the CSRF token checked); the view runs with the person's own request after the pipeline's
steps: authentication, rate limit, permissions, the envelope's limits, the server-minted
approval, idempotency by invocation id, audit. With :class:`DjangoInvocationStore` the call's
record is written in the view's own transaction, on the project's database (any other store,
``agentsurface.server.open_store(dsn)``, works too, with a commit of its own). Views not marked
are never procedures.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar, Unpack

from .. import DefinitionError, ProcedureContract
from .._core.contracts.kinds import ProcedureEffect
from .._core.contracts.options import RouteProcedureOptions, spelled_out
from .._core.keywords import keywords_checked
from ..server.procedures import Approval
from ..server.routes import RouteProcedure, described, mark, route_rules
from ._serving import AgentViews, user_caller
from ._store import DjangoInvocationStore
from ._views import METHODS, Method, ViewInputs, field_names, input_model

F = TypeVar("F", bound=Callable[..., Any])


@keywords_checked("procedure(...)")
@spelled_out(RouteProcedureOptions, ProcedureContract)
def procedure(
    id: str,
    *,
    effect: ProcedureEffect,
    input: Any = None,
    method: Method | None = None,
    description: str | None = None,
    permissions: Iterable[str] = (),
    require_confirmation: bool = False,
    approval: Approval | None = None,
    **options: Unpack[RouteProcedureOptions],
) -> Callable[[F], F]:
    """Declare the view below it as the procedure ``id`` (``domain:...``).

    Put it on top of the view's other decorators (``login_required`` and the like run when the
    procedure calls the view). ``input`` is a pydantic model (None: no input): the view's URL
    keyword arguments by name, the rest sent as its JSON body, or as its query string when
    ``method`` is ``"GET"`` (the default for ``effect="server-query"``, else ``"POST"``); it
    refuses unknown fields. ``output`` is the schema of the view's JSON answer (None: none).
    ``effect``, ``description`` (default: the docstring's first paragraph) and ``options``
    (:class:`~agentsurface.lowlevel.RouteProcedureOptions`: the governance fields and the rest)
    are the :class:`~agentsurface.ProcedureContract`'s; ``permissions`` (Django's
    ``"app.codename"`` with the default caller), ``require_confirmation`` and ``approval`` are
    :func:`agentsurface.server.serve`'s; a procedure that needs approval asks the page for its
    dialog too (``confirmation="required"`` unless given)."""
    verb = method if method is not None else ("GET" if effect == "server-query" else "POST")
    if verb not in METHODS:
        raise DefinitionError("INVALID_DEFINITION", f"method must be one of {list(METHODS)}, got {verb!r}", path=str(id))

    def decorate(function: F) -> F:
        if not callable(function):
            raise DefinitionError("INVALID_DEFINITION", f"{function!r} is not a view", path=str(id))
        name = getattr(function, "__name__", "view")
        model = input_model(input, name, str(id))
        perms, required, level = route_rules(
            str(id), permissions=permissions, require_confirmation=require_confirmation, approval=approval
        )
        declared = options.copy()
        if required and declared.get("confirmation") is None:
            declared["confirmation"] = "required"
        contract = ProcedureContract(
            id=id, description=described(function, description), effect=effect, input=model, **declared
        )
        inputs = ViewInputs(model, verb, field_names(model))
        return mark(function, RouteProcedure(contract, perms, required, level, inputs))

    return decorate


__all__ = ["AgentViews", "DjangoInvocationStore", "procedure", "user_caller"]

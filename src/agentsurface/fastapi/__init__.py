"""Procedures from a FastAPI app's own path operations (``pip install 'agentsurface[fastapi]'``).

Mark a route the app already runs; serve the marked ones through the procedure pipeline,
inside the same app and process::

    from agentsurface.fastapi import AgentProcedures, procedure

    @app.delete("/expenses/{expense_id}", response_model=Deleted)
    @procedure("domain:expenses.delete", effect="destructive", approval="confirm")
    def delete_expense(expense_id: int, user: User = Depends(current_user)) -> Deleted: ...

    app.mount("/api/agent", AgentProcedures(app, caller=agent_caller, store=open_store(dsn)))

The route's path and query parameters and its request model become the procedure's input
schema, its return annotation (or ``output=``) the output schema; the compiler records the
contract as the decorated function. ``caller`` is a FastAPI dependency (it may use ``Depends``
and ``Security``) returning the :class:`~agentsurface.server.Caller` or None; the route then runs
with the person's own request (cookies, headers, the app's dependencies), after the pipeline's
steps: authentication, rate limit, permissions, the envelope's limits, the server-minted
approval, idempotency by invocation id, audit. Routes not marked are never procedures.
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
from ._inputs import return_model, route_inputs
from ._serving import AgentProcedures

F = TypeVar("F", bound=Callable[..., Any])


class _ReturnAnnotation:
    """``output``'s default in the signature: the route's return annotation."""

    def __repr__(self) -> str:
        return "<the return annotation>"


@keywords_checked("procedure(...)")
@spelled_out(RouteProcedureOptions, ProcedureContract, output=_ReturnAnnotation())
def procedure(
    id: str,
    *,
    effect: ProcedureEffect,
    description: str | None = None,
    permissions: Iterable[str] = (),
    require_confirmation: bool = False,
    approval: Approval | None = None,
    **options: Unpack[RouteProcedureOptions],
) -> Callable[[F], F]:
    """Declare the path operation below it as the procedure ``id`` (``domain:...``).

    Put it under the route decorator (``@app.post(...)`` on top). ``effect``, ``description``
    (default: the docstring's first paragraph) and ``options``
    (:class:`~agentsurface.lowlevel.RouteProcedureOptions`: the governance fields and the rest)
    are the :class:`~agentsurface.ProcedureContract`'s; ``output`` overrides the return
    annotation as the output schema (``None``: no output schema). ``permissions``,
    ``require_confirmation`` and ``approval`` are :func:`agentsurface.server.serve`'s; a
    procedure that needs approval asks the page for its dialog too (``confirmation="required"``
    unless given)."""

    def decorate(function: F) -> F:
        if not callable(function):
            raise DefinitionError("INVALID_DEFINITION", f"{function!r} is not a function", path=str(id))
        text = described(function, description)
        inputs = route_inputs(function, str(id))
        perms, required, level = route_rules(
            str(id), permissions=permissions, require_confirmation=require_confirmation, approval=approval
        )
        declared = options.copy()
        if "output" not in declared:
            declared["output"] = return_model(function)
        if required and declared.get("confirmation") is None:
            declared["confirmation"] = "required"
        contract = ProcedureContract(id=id, description=text, effect=effect, input=inputs.model, **declared)
        return mark(function, RouteProcedure(contract, perms, required, level, inputs))

    return decorate


__all__ = ["AgentProcedures", "procedure"]

"""A path operation's parameters as one procedure input model.

The agent sends one JSON object: the route's path and query parameters by name (their alias,
as in the URL) and, for a route with one body model, that model's own fields beside them (a
route with several body parameters, or one declared ``Body(embed=True)``, takes each under its
name, as FastAPI reads it). Dependencies (``Depends``, ``Security``), headers, cookies and the
request itself are not input: they come from the person's own request. The model refuses
unknown fields, so an agent's typo is an error rather than silently dropped.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Annotated, Any, get_args, get_origin

from fastapi import params
from pydantic import BaseModel, create_model
from pydantic.fields import FieldInfo
from starlette.background import BackgroundTasks
from starlette.requests import HTTPConnection
from starlette.responses import Response

from .. import DefinitionError
from .._core.records import record

_CONTEXT = (HTTPConnection, Response, BackgroundTasks)


@record
class RouteInputs:
    """How the input model's fields go back onto the route's request."""

    model: type[BaseModel]
    scalars: tuple[str, ...]  # path and query parameters, by the name in the URL
    body: tuple[str, ...]  # the body parameters' names (empty: no body)
    # "flat": one body model, its fields at the input's top level; "single": one body value
    # under its name (sent as the body itself); "embedded": each under its name; "none".
    body_mode: str


def _marker(annotation: Any, default: Any) -> tuple[Any, Any]:
    """(the bare type, FastAPI's marker for the parameter or None)."""
    if get_origin(annotation) is Annotated:
        bare, *extras = get_args(annotation)
        for extra in extras:
            if isinstance(extra, (params.Depends, FieldInfo)):
                return bare, extra
        return bare, None
    if isinstance(default, (params.Depends, FieldInfo)):
        return annotation, default
    return annotation, None


def _is_model(annotation: Any) -> bool:
    return inspect.isclass(annotation) and issubclass(annotation, BaseModel)


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part) or "Route"


def _hints(function: Callable[..., Any], contract_id: str) -> dict[str, Any]:
    target: Any = function
    if not (inspect.isfunction(function) or inspect.ismethod(function)):
        # a class, or an object with __call__ (FastAPI reads those too)
        target = function.__init__ if inspect.isclass(function) else type(function).__call__
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception as exc:
        raise DefinitionError(
            "UNSUPPORTED_SCHEMA", f"cannot read the type hints of {function!r}: {exc}", path=contract_id
        ) from None


def _walk(
    function: Callable[..., Any],
    contract_id: str,
    scalars: dict[str, tuple[Any, Any]],
    bodies: list[tuple[str, Any, Any, bool]],
    seen: set[int],
) -> None:
    """Collect the request parameters of ``function`` and of the dependencies it declares (a
    dependency's path or query parameter is the route's too, as FastAPI reads it)."""
    if id(function) in seen:
        return
    seen.add(id(function))
    hints = _hints(function, contract_id)
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return
    for name, param in signature.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or name == "self":
            continue
        annotation = hints.get(name, Any)
        bare, marker = _marker(annotation, param.default)
        if isinstance(marker, params.Depends):
            dependency = marker.dependency if marker.dependency is not None else bare
            if callable(dependency):
                _walk(dependency, contract_id, scalars, bodies, seen)
            continue
        if inspect.isclass(bare) and issubclass(bare, _CONTEXT):
            continue  # the person's own request, never sent by the agent
        if isinstance(marker, (params.Header, params.Cookie)):
            continue
        if isinstance(marker, (params.Form, params.File)):
            raise DefinitionError(
                "UNSUPPORTED_SCHEMA",
                f"{getattr(function, '__qualname__', function)!r} reads form fields or files ({name!r}); "
                "a procedure takes JSON",
                path=contract_id,
            )
        default = param.default if param.default is not inspect.Parameter.empty else ...
        if isinstance(marker, params.Body) or (marker is None and _is_model(bare)):
            bodies.append((name, annotation, default, bool(getattr(marker, "embed", False))))
            continue
        alias = getattr(marker, "alias", None) or name
        if alias not in scalars:
            scalars[alias] = (annotation, default)


def route_inputs(function: Callable[..., Any], contract_id: str) -> RouteInputs:
    """The input model of ``function``'s path and query parameters and body."""
    scalars: dict[str, tuple[Any, Any]] = {}
    bodies: list[tuple[str, Any, Any, bool]] = []
    _walk(function, contract_id, scalars, bodies, set())
    flat = len(bodies) == 1 and not bodies[0][3] and _is_model(_marker(bodies[0][1], None)[0])
    single = len(bodies) == 1 and not bodies[0][3] and not flat
    base: type[BaseModel] = BaseModel
    fields: dict[str, Any] = dict(scalars)
    if flat:
        base = _marker(bodies[0][1], None)[0]
        names = set(base.model_fields) | {f.alias for f in base.model_fields.values() if f.alias}
        clash = set(scalars) & names
        if clash:
            raise DefinitionError(
                "INVALID_DEFINITION",
                f"{function.__qualname__}: the body's fields {sorted(clash)} are also path or query "
                "parameters; rename one or embed the body (Body(embed=True))",
                path=contract_id,
            )
    else:
        for name, annotation, default, _ in bodies:
            if name in fields:
                raise DefinitionError("INVALID_DEFINITION", f"{name!r} is given twice", path=contract_id)
            fields[name] = (annotation, default)
    try:
        model = create_model(
            f"{_camel(function.__name__)}Input", __base__=base, __module__=function.__module__, **fields
        )
        if model.model_config.get("extra") != "forbid":
            model.model_config["extra"] = "forbid"
            model.model_rebuild(force=True)
    except Exception as exc:
        raise DefinitionError(
            "UNSUPPORTED_SCHEMA", f"cannot build the input of {function.__qualname__}: {exc}", path=contract_id
        ) from None
    mode = "flat" if flat else "single" if single else "embedded" if bodies else "none"
    return RouteInputs(model, tuple(scalars), tuple(name for name, *_ in bodies), mode)


def return_model(function: Callable[..., Any]) -> Any:
    """The return annotation as an output schema source, or None when it says nothing useful."""
    try:
        hint = typing.get_type_hints(function, include_extras=True).get("return")
    except Exception:
        return None
    if hint is None or hint is type(None) or hint is Any:
        return None
    if inspect.isclass(hint) and issubclass(hint, Response):
        return None
    return hint


__all__ = ["RouteInputs", "return_model", "route_inputs"]

"""Serving a FastAPI app's marked routes through the procedure pipeline, in the same process.

A call that passed the pipeline's steps runs the route itself: its own ASGI handler, on a
request made from the person's (the same cookies and headers, the app's state and the scope
its middleware set), with the validated input as the path, query and JSON body the route
reads. The route's dependencies run as they do for the app's own pages; its answer comes back
as the procedure's output, or as the typed refusal its status means. The app's ``caller``
dependency is solved the same way, on a hidden route of its own.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from functools import partial
from typing import Any
from urllib.parse import quote, urlencode

import anyio.from_thread
from fastapi import Depends, FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from pydantic import BaseModel, TypeAdapter
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Scope

from .. import AgentSurfaceError, CapabilityFailure, DefinitionError
from .._core.jsonvalue import thaw
from .._core.records import record
from ..server.app import ProcedureServer
from ..server.challenges import VerifyPresence
from ..server.config import Audit, ServerLimits
from ..server.errors import Refusal, invalid_input
from ..server.evidence import VerifyConfirmation
from ..server.procedures import Caller, ProcedureCall, ServedProcedure
from ..server.ratelimit import RateLimit
from ..server.routes import declared_by, issues_from_errors, json_output, refusal_for_status, run_asgi
from ..server.stores import InvocationStore
from ._inputs import RouteInputs

log = logging.getLogger("agentsurface.fastapi")

_CALLER = "agentsurface.caller"
# The person's request headers the route must not see from the procedure call: its body is
# ours (JSON, our length), and the pipeline's own headers are not the app's business.
_DROPPED = {b"content-length", b"content-type", b"transfer-encoding", b"x-agentsurface-channel", b"expect"}


def _utc_now() -> datetime:
    return datetime.now(UTC)


class _Answer(AgentSurfaceError):  # internal: a route's refusal, on its way out
    def __init__(self, status: int, detail: object = None, issues: list[tuple[str, str]] | None = None) -> None:
        super().__init__(status)
        self.status, self.detail, self.issues = status, detail, issues


async def _http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    raise _Answer(exc.status_code, exc.detail)


async def _validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    raise _Answer(422, None, issues_from_errors(exc.errors()))


class AgentProcedures(ProcedureServer):
    """The procedure server of ``app``'s marked routes; mount it in the same app:
    ``app.mount("/api/agent", AgentProcedures(app, caller=..., store=...))``.

    Create it once the app's routes are all included: it serves the routes marked with
    :func:`~agentsurface.fastapi.procedure` at that moment (each function on one route).
    ``caller`` is a FastAPI dependency (a function that may take ``Depends``/``Security``
    parameters, as any of the app's dependencies) returning the :class:`~agentsurface.server.Caller`,
    or None for an unknown person; raising ``HTTPException(401)`` or ``(403)`` answers
    NOT_AUTHENTICATED or NOT_AUTHORIZED. ``app.dependency_overrides`` apply to it as to the
    routes. The other options are :class:`~agentsurface.server.ProcedureServer`'s."""

    def __init__(
        self,
        app: FastAPI,
        *,
        caller: Callable[..., Any],
        store: InvocationStore,
        rate_limit: RateLimit | None = None,
        limits: ServerLimits | None = None,
        audit: Audit | None = None,
        verify_confirmation: VerifyConfirmation | None = None,
        verify_presence: VerifyPresence | None = None,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        if not isinstance(app, FastAPI):
            raise DefinitionError("INVALID_DEFINITION", f"{app!r} is not a FastAPI app")
        if not callable(caller):
            raise DefinitionError("INVALID_DEFINITION", "caller must be a FastAPI dependency (a callable)")
        self.fastapi_app = app
        self._who = APIRoute("/", _who_endpoint(caller), dependency_overrides_provider=app)
        super().__init__(
            self._served_routes(app),
            authenticate=self._caller_from_app,
            store=store,
            rate_limit=rate_limit,
            limits=limits,
            audit=audit,
            verify_confirmation=verify_confirmation,
            verify_presence=verify_presence,
            clock=clock,
        )

    # ------------------------------------------------------------------ building

    def _served_routes(self, app: FastAPI) -> list[ServedProcedure]:
        served: dict[str, ServedProcedure] = {}
        self._operations = list(_operations(app.routes))
        for found in self._operations:
            declared = declared_by(found.endpoint)
            if declared is None:
                continue
            if declared.contract.id in served:
                raise DefinitionError(
                    "DUPLICATE_CAPABILITY",
                    f"{found.endpoint.__qualname__} is the endpoint of more than one route; a procedure is one route",
                    path=declared.contract.id,
                )
            inputs = declared.route
            assert isinstance(inputs, RouteInputs)
            _check_route(found, inputs, declared.contract.output, declared.contract.id)
            served[declared.contract.id] = declared.served(partial(self._run_route, found, inputs))
        return list(served.values())

    # ------------------------------------------------------------------ the caller

    async def _caller_from_app(self, request: Request) -> Caller | None:
        scope = self._scope(request, "GET", "/", b"", [], {})
        try:
            status, _, _ = await run_asgi(self._who.app, scope, b"")
        except _Answer as answer:
            status = answer.status
            if status in (401, 403):
                raise Refusal(refusal_for_status(status, answer.detail).error) from None
        if status in (401, 403):
            raise Refusal(refusal_for_status(status).error)
        if status != 204:
            log.error("the caller dependency answered HTTP %s", status)
            raise RuntimeError("the caller dependency failed")
        found = scope.get(_CALLER)
        if found is not None and not isinstance(found, Caller):
            log.error("the caller dependency returned %r, not a Caller or None", type(found).__name__)
            raise RuntimeError("the caller dependency returned something else than a Caller")
        return found

    # ------------------------------------------------------------------ the call

    def _run_route(self, route: _Operation, inputs: RouteInputs, call: ProcedureCall, value: Any) -> Any:
        """The implementation (in the pipeline's worker thread, inside the call's transaction):
        the route, on the event loop, with the person's request."""
        if not isinstance(call.request, Request):
            raise CapabilityFailure(refusal_for_status(500).error)
        return anyio.from_thread.run(self._call_route, route, inputs, call.request, value)

    async def _call_route(self, route: _Operation, inputs: RouteInputs, request: Request, value: Any) -> Any:
        data = value.model_dump(mode="json", by_alias=True, exclude_unset=True) if isinstance(value, BaseModel) else dict(value)
        path_params = {name: data[name] for name in route.path_names if name in data}
        query = [(name, data[name]) for name in inputs.scalars if name in data and name not in route.path_names]
        if inputs.body_mode == "flat":
            body: Any = {k: v for k, v in data.items() if k not in inputs.scalars}
        elif inputs.body_mode == "single":
            body = data.get(inputs.body[0])
        elif inputs.body_mode == "embedded":
            body = {name: data[name] for name in inputs.body if name in data}
        else:
            body = None
        raw = b"" if inputs.body_mode == "none" else json.dumps(body, separators=(",", ":")).encode()
        path, raw_path = _url_path(route.path_format, path_params)
        self._check_reaches(route, path)
        scope = self._scope(request, route.method, path, raw, query, {})
        scope["raw_path"] = (scope["root_path"] + raw_path).encode()
        try:
            # Through the app's router, as a request to that URL would go: the route's prefix,
            # its router's dependencies and its own all apply (the middleware already ran).
            status, sent, payload = await run_asgi(self.fastapi_app.router, scope, raw)
        except _Answer as answer:
            raise refusal_for_status(answer.status, answer.detail, answer.issues) from None
        if scope.get("endpoint") is not route.endpoint:
            log.error("%s %s reached another route than %s", route.method, route.path_format, route.endpoint.__qualname__)
            raise refusal_for_status(500)
        if status >= 300:
            raise refusal_for_status(status, _detail(payload))
        try:
            media = next((value for name, value in sent if name.lower() == "content-type"), None)
            return json_output(payload, media)
        except ValueError as exc:
            log.error("%s answered what is not JSON: %s", route.path_format, exc)
            raise refusal_for_status(500) from None

    def _check_reaches(self, route: _Operation, path: str) -> None:
        """Refuse, before anything runs, a path whose parameters would make it another route's
        (``{"name": "x/purge"}`` reaching ``/files/{name}/purge``): an unmarked route is never
        reached through a marked one."""
        issue = [("/" + name, "must be one path segment of this route") for name in route.path_names]
        if route.path_regex is not None and not route.path_regex.match(path):
            raise CapabilityFailure(invalid_input("A path parameter does not fit this route's path.", issue))
        for other in self._operations:
            if other is route:
                return
            if other.method == route.method and other.path_regex is not None and other.path_regex.match(path):
                raise CapabilityFailure(invalid_input("A path parameter would reach another route.", issue))

    def _scope(
        self,
        request: Request,
        method: str,
        path: str,
        body: bytes,
        query: list[tuple[str, Any]],
        path_params: dict[str, Any],
    ) -> Scope:
        original = request.scope
        headers = [(k, v) for k, v in original.get("headers", []) if k.lower() not in _DROPPED]
        if body:
            headers += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        app = self.fastapi_app
        root = str(original.get("app_root_path", ""))
        handlers = {k: v for k, v in app.exception_handlers.items() if not isinstance(k, int)}
        statuses = {k: v for k, v in app.exception_handlers.items() if isinstance(k, int)}
        handlers[HTTPException] = _http_exception
        handlers[RequestValidationError] = _validation_error
        for status in (401, 403):
            statuses.pop(status, None)
        scope: Scope = {
            **original,
            "type": "http",
            "method": method,
            "root_path": root,
            "path": root + path,
            "raw_path": (root + path).encode(),
            "query_string": urlencode([(k, _query_text(v)) for k, v in query], doseq=True).encode(),
            "headers": headers,
            "path_params": path_params,
            "app": app,
            "router": app.router,
            "starlette.exception_handlers": (handlers, statuses),
        }
        return scope


def _who_endpoint(caller: Callable[..., Any]) -> Callable[..., Any]:
    async def who(request: Request, found: Any = Depends(caller)) -> Response:  # FastAPI's way
        request.scope[_CALLER] = found
        return Response(status_code=204)

    return who




@record
class _Operation:
    """A path operation of the app, wherever it is included (prefix and all)."""

    endpoint: Callable[..., Any]
    method: str
    path_format: str
    response_model: Any
    path_regex: re.Pattern[str] | None

    @property
    def path_names(self) -> tuple[str, ...]:
        return tuple(m.group(1) for m in _PATH_PARAM.finditer(self.path_format))


_PATH_PARAM = re.compile(r"{([^}:]+)(?::[^}]*)?}")


def _operations(routes: Iterable[Any]) -> Iterator[_Operation]:
    """Every path operation of ``routes``: FastAPI's own routes, and the routes of included
    routers (FastAPI 0.12x+ keeps those behind one entry, with their effective path)."""
    for route in routes:
        if isinstance(route, APIRoute):
            yield _Operation(
                route.endpoint, _method(route.methods), route.path_format, route.response_model, route.path_regex
            )
        elif callable(getattr(route, "effective_route_contexts", None)):
            for context in route.effective_route_contexts():
                original = getattr(context, "original_route", None)
                if isinstance(original, APIRoute) and context.endpoint is not None:
                    yield _Operation(
                        context.endpoint,
                        _method(context.methods),
                        context.path_format,
                        original.response_model,
                        getattr(context, "path_regex", None),
                    )


def _method(methods: Iterable[str] | None) -> str:
    found = sorted(m for m in methods or () if m != "HEAD")
    return found[0] if found else "GET"


def _url_path(path_format: str, path_params: dict[str, Any]) -> tuple[str, str]:
    """The path (decoded, as the router matches it) and its raw form."""
    path = raw = path_format
    for name, value in path_params.items():
        text = _query_text(value)
        path = path.replace("{" + name + "}", text)
        raw = raw.replace("{" + name + "}", quote(text, safe=""))
    return path, raw


def _query_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return str(value)


def _detail(payload: bytes) -> object:
    try:
        parsed = json.loads(payload)
    except ValueError:
        return None
    return parsed.get("detail") if isinstance(parsed, dict) else None


def _check_route(route: _Operation, inputs: RouteInputs, output: Any, contract_id: str) -> None:
    """The route must read what the contract's input gives it."""
    where = f"{route.method} {route.path_format}"
    missing = sorted(set(route.path_names) - set(inputs.scalars))
    if missing:
        raise DefinitionError(
            "INVALID_DEFINITION", f"{where}: the path parameters {missing} are not in the procedure's input", path=contract_id
        )
    if route.response_model is not None and route.response_model is not Any:
        if output is None:
            raise DefinitionError(
                "INVALID_DEFINITION",
                f"{where} has a response_model: annotate the function's return type with it, or pass output=",
                path=contract_id,
            )
        declared = TypeAdapter(route.response_model).json_schema(mode="validation")
        if thaw(output.json_schema) != declared:
            raise DefinitionError(
                "INVALID_DEFINITION",
                f"{where}: the route's response_model and the procedure's output schema differ",
                path=contract_id,
            )


__all__ = ["AgentProcedures"]

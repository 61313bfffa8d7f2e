"""Serving a Django project's marked views through the procedure pipeline, inside the project.

:class:`AgentViews` is a :class:`~agentsurface.server.ProcedureServer` whose ``urls`` go into
the project's URLconf: one async Django view, reached after the project's whole middleware
stack (sessions, authentication) has run. It checks the CSRF token itself (a refusal is typed
JSON, not Django's HTML page), then hands the request to the pipeline. The ``caller`` hook gets
the Django request (``request.user``); a call that passed the pipeline's steps runs the marked
view itself, in the call's worker thread, on a request made from the person's (the same
session, user, cookies and headers) with the validated input as its URL keyword arguments and
its JSON body or query string, inside ``transaction.atomic()`` (undone unless the view
answers 2xx). The view's answer is the procedure's output, or the typed refusal its status means.
"""

from __future__ import annotations

import copy
import inspect
import json
import logging
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import partial
from io import BytesIO
from typing import Any
from urllib.parse import urlencode, urlsplit

from asgiref.sync import async_to_sync, sync_to_async
from django.core.exceptions import BadRequest, PermissionDenied, SuspiciousOperation, ValidationError
from django.db import DEFAULT_DB_ALIAS, close_old_connections, transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseForbidden, QueryDict
from django.middleware.csrf import CsrfViewMiddleware
from django.shortcuts import resolve_url
from django.urls import URLPattern, URLResolver, re_path
from django.urls.exceptions import Resolver404
from django.urls.resolvers import RegexPattern
from django.utils.datastructures import MultiValueDict
from pydantic import BaseModel
from starlette.requests import Request
from starlette.types import Scope

from .. import CapabilityFailure, DefinitionError
from .._core.schemas.schema import Invalid, validate_output
from ..server.app import ProcedureServer
from ..server.challenges import VerifyPresence
from ..server.config import Audit, ServerLimits
from ..server.errors import Refusal, capability_error, invalid_input
from ..server.evidence import VerifyConfirmation
from ..server.procedures import Caller, ProcedureCall, ServedProcedure
from ..server.ratelimit import RateLimit
from ..server.routes import json_output, refusal_for_status, run_asgi
from ..server.stores import InvocationStore, Settlement
from ._views import MarkedView, marked_views, url_text, view_path

log = logging.getLogger("agentsurface.django")

_REQUEST = "agentsurface.django.request"  # the Django request, in the pipeline's ASGI scope
# The person's request headers the view must not see from the procedure call: its body is
# ours (JSON, our length), and the pipeline's own header is not the app's business.
_DROPPED_META = ("CONTENT_LENGTH", "CONTENT_TYPE", "HTTP_TRANSFER_ENCODING", "HTTP_X_AGENTSURFACE_CHANNEL", "HTTP_EXPECT")
_DETAIL_KEYS = ("detail", "error", "message")

CallerHook = Callable[[HttpRequest], Any]


def _utc_now() -> datetime:
    return datetime.now(UTC)


def user_caller(request: HttpRequest) -> Caller | None:
    """The default ``caller``: the person Django's authentication recognized (``request.user``,
    from the session cookie), with their Django permissions (``"app.codename"``), or None for
    an anonymous or inactive user. The Caller's ``data`` is the user object."""
    user = getattr(request, "user", None)
    if user is None:
        raise DefinitionError(
            "INVALID_DEFINITION", "request.user is missing: add AuthenticationMiddleware to MIDDLEWARE"
        )
    if not user.is_authenticated or not getattr(user, "is_active", True):
        return None
    return Caller(id=str(user.pk), permissions=frozenset(user.get_all_permissions()), data=user)


class _CsrfCheck(CsrfViewMiddleware):  # type: ignore[misc]  # Django is untyped
    """Django's own CSRF check, answering its reason instead of the HTML failure page."""

    def _reject(self, request: HttpRequest, reason: str) -> HttpResponse:
        return HttpResponseForbidden(reason)


def _no_response(request: HttpRequest) -> HttpResponse:  # pragma: no cover - never called
    raise AssertionError("the CSRF check has no response of its own")


class AgentViews(ProcedureServer):
    """The procedure server of the views marked with :func:`~agentsurface.django.procedure`
    under ``patterns`` (the project's ``urlpatterns``; ``include()`` is followed), served inside
    the project: ``path("api/agent/", include(agent.urls))``.

    Build it at the end of the root URLconf, after the patterns it serves::

        agent = AgentViews(urlpatterns, store=DjangoInvocationStore())
        urlpatterns += [path("api/agent/", include(agent.urls))]

    ``caller(request) -> Caller | None`` (sync or async) gets the Django request after the
    project's middleware; the default, :func:`user_caller`, is ``request.user`` with its
    permissions. It may raise ``PermissionDenied`` (NOT_AUTHORIZED) or a ``Refusal``. Every
    call must carry the CSRF token (the ``X-CSRFToken`` header, as for any of the project's
    unsafe requests). ``database`` is the alias whose ``transaction.atomic()`` holds each view
    call. The other options are :class:`~agentsurface.server.ProcedureServer`'s."""

    def __init__(
        self,
        patterns: Sequence[Any],
        *,
        store: InvocationStore,
        caller: CallerHook = user_caller,
        database: str = DEFAULT_DB_ALIAS,
        rate_limit: RateLimit | None = None,
        limits: ServerLimits | None = None,
        audit: Audit | None = None,
        verify_confirmation: VerifyConfirmation | None = None,
        verify_presence: VerifyPresence | None = None,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        if isinstance(patterns, (str, bytes)) or not isinstance(patterns, Sequence):
            raise DefinitionError("INVALID_DEFINITION", "patterns must be the project's list of URL patterns")
        if not callable(caller):
            raise DefinitionError("INVALID_DEFINITION", "caller must be a function of the Django request")
        self._caller_hook = caller
        self._database = database
        # Resolves and checks each call's path against the same patterns the project serves.
        self._resolver = URLResolver(RegexPattern(r"^/"), patterns)
        self._csrf = _CsrfCheck(_no_response)
        self._open_responses = threading.local()  # the views' responses of this thread's call
        self.views = marked_views(patterns)
        served = [view.declared.served(self._implementation(view)) for view in self.views]
        super().__init__(
            served,
            authenticate=self._caller_from_django,
            store=store,
            rate_limit=rate_limit,
            limits=limits,
            audit=audit,
            verify_confirmation=verify_confirmation,
            verify_presence=verify_presence,
            clock=clock,
        )

    @property
    def urls(self) -> list[URLPattern]:
        """The URL patterns to ``include()`` in the project's URLconf (one view, any path under it)."""
        view = self.django_view
        return [re_path(r"^(?P<rest>(?s:.*))\Z", view, name="agentsurface")]

    # ------------------------------------------------------------------ the Django view

    @property
    def django_view(self) -> Callable[..., Any]:
        async def agent_view(request: HttpRequest, rest: str = "") -> HttpResponse:
            return await self._answer(request, rest)

        agent_view.csrf_exempt = True  # type: ignore[attr-defined]  # checked in _caller_from_django, answered typed
        return agent_view

    async def _answer(self, request: HttpRequest, rest: str) -> HttpResponse:
        limit = self.limits.max_body_bytes
        try:
            body = request.read(limit + 1) if request.method not in ("GET", "HEAD") else b""
        except OSError:
            body = b""
        # The pipeline's own ASGI app (ProcedureServer's), not a subclass's entry point.
        status, headers, payload = await run_asgi(partial(ProcedureServer.__call__, self), _scope(request, rest), body)
        response = HttpResponse(payload, status=status)
        for name, value in headers:
            if name.lower() != "content-length":
                response[name] = value
        return response

    def _check_csrf(self, request: HttpRequest) -> None:
        """Django's CSRF check of the call, the token from the ``X-CSRFToken`` header only (the
        body is the envelope, never a form: Django is told it has no form fields). A session
        cookie without the token does not authenticate a call: typed NOT_AUTHENTICATED."""
        request._post = QueryDict()
        request._files = MultiValueDict()
        try:
            rejected = self._csrf.process_view(request, None, (), {})
        except (SuspiciousOperation, OSError):
            rejected = HttpResponseForbidden("unreadable request")
        if rejected is None:
            return
        log.warning("CSRF check refused a call to %s: %s", request.path, rejected.content.decode("utf-8", "replace"))
        raise Refusal(
            capability_error(
                "NOT_AUTHENTICATED",
                "The call carries no valid CSRF token for this session. Reload the page and retry.",
                reason="csrf",
            )
        )

    # ------------------------------------------------------------------ the caller

    async def _caller_from_django(self, request: Request) -> Caller | None:
        """The CSRF check, then the app's ``caller`` hook, both on the Django request (in
        Django's thread for sync code: the session and user may be read from the database)."""
        django_request = request.scope.get(_REQUEST)
        if not isinstance(django_request, HttpRequest):
            raise RuntimeError("the pipeline was reached without a Django request")
        hook = self._caller_hook
        try:
            if inspect.iscoroutinefunction(hook):
                await sync_to_async(self._check_csrf, thread_sensitive=True)(django_request)
                found = await hook(django_request)
            else:
                found = await sync_to_async(self._checked_caller, thread_sensitive=True)(django_request)
            if inspect.isawaitable(found):
                found = await found
        except PermissionDenied as exc:
            raise Refusal(refusal_for_status(403, str(exc) or None).error) from None
        return found  # type: ignore[no-any-return]  # checked by the pipeline

    def _checked_caller(self, request: HttpRequest) -> Any:
        self._check_csrf(request)
        return self._caller_hook(request)

    # ------------------------------------------------------------------ the call

    def _implementation(self, view: MarkedView) -> Callable[[ProcedureCall, Any], Any]:
        def run_view(call: ProcedureCall, value: Any) -> Any:
            return self._run_view(view, call, value)

        return run_view

    def _run_view(self, view: MarkedView, call: ProcedureCall, value: Any) -> Any:
        """The implementation (in the pipeline's worker thread, inside the store's transaction):
        the view, on a request made from the person's, inside ``transaction.atomic()``."""
        person = call.request.scope.get(_REQUEST) if isinstance(call.request, Request) else None
        if not isinstance(person, HttpRequest):
            raise CapabilityFailure(refusal_for_status(500).error)
        data = value.model_dump(mode="json", by_alias=True, exclude_unset=True) if isinstance(value, BaseModel) else dict(value)
        match, path_info = self._resolve(view, data)
        request = _inner_request(person, view, match, path_info, data)
        connection = transaction.get_connection(self._database)
        if not connection.in_atomic_block:  # inside the store's own transaction: never close it
            close_old_connections()
        with transaction.atomic(using=self._database):
            response = _call_view(match, request)
            # Closed once the call's transaction ended (closing a response ends Django's request:
            # request_finished closes the thread's obsolete connections).
            self._open_responses.__dict__.setdefault("responses", []).append(response)
            status, content_type, body = _read_response(response)
            if status >= 300:
                raise _refusal(status, body, content_type, response, request)
            try:
                output = json_output(body, content_type)
            except ValueError as exc:
                log.error("%s answered what is not JSON: %s", path_info, exc)
                raise CapabilityFailure(refusal_for_status(500).error) from None
            schema = view.declared.contract.output
            if schema is not None and isinstance(validate_output(schema, output), Invalid):
                # Undone here: once the view's writes commit, the pipeline could not undo them.
                raise RuntimeError(f"{path_info} answered output its procedure's contract does not allow")
            return output

    def _apply(self, call: Any, served: ServedProcedure, value: Any) -> Settlement:
        """The pipeline's step 7, then the end of the views' requests (in the same thread)."""
        try:
            return super()._apply(call, served, value)
        finally:
            for response in self._open_responses.__dict__.pop("responses", []):
                response.close()

    def _resolve(self, view: MarkedView, data: dict[str, Any]) -> tuple[Any, str]:
        """The view's path for this input, confirmed by resolving it to that very view with the
        same keyword arguments (a value cannot steer the call to another view)."""
        path_info = view_path(view, data)
        match = None
        if path_info is not None:
            try:
                match = self._resolver.resolve(path_info)
            except Resolver404:
                match = None
        if match is not None and match.func is view.callback and _same_arguments(view, match.kwargs, data):
            return match, path_info  # type: ignore[return-value]
        issues = [(f"/{name}", "does not fit the view's URL") for name in sorted(view.url_kwargs)]
        raise CapabilityFailure(
            invalid_input(
                "The input does not fit the view's URL; fix the values of its URL fields.",
                issues or [("/", "does not fit the view's URL")],
            )
        )


def _same_arguments(view: MarkedView, resolved: dict[str, Any], data: dict[str, Any]) -> bool:
    """The resolved URL gives the view exactly the input's URL arguments (an optional one left
    out stays out)."""
    for name in view.url_kwargs:
        sent, got = data.get(name), resolved.get(name)
        if (sent is None) != (got is None):
            return False
        pattern = next(p for p in view.chain if name in p.regex.groupindex)
        if sent is not None and url_text(pattern, name, got) != url_text(pattern, name, sent):
            return False
    return True


# ---------------------------------------------------------------------- the person's request


def _scope(request: HttpRequest, rest: str) -> Scope:
    """The pipeline's ASGI scope for the Django request ``request`` (any handler: ASGI, WSGI,
    the test client): its method, headers and client; the part under the include as its path."""
    meta = request.META
    headers: list[tuple[bytes, bytes]] = []
    for key, value in meta.items():
        if key.startswith("HTTP_"):
            name = key[5:].replace("_", "-").lower()
        elif key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            name = key.replace("_", "-").lower()
        else:
            continue
        if isinstance(value, str) and value != "":
            headers.append((name.encode("latin-1"), value.encode("latin-1", "replace")))
    path_info = request.path_info
    tail = rest if rest.startswith("/") else "/" + rest
    mount = path_info[: len(path_info) - len(rest)].rstrip("/") if rest else path_info.rstrip("/")
    root = request.META.get("SCRIPT_NAME", "") + mount
    path = root + tail
    try:
        port = int(meta.get("SERVER_PORT") or 0)
    except ValueError:
        port = 0
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method or "GET",
        "scheme": request.scheme or "http",
        "path": path,
        "raw_path": path.encode("utf-8", "surrogateescape"),
        "root_path": root,
        "query_string": str(meta.get("QUERY_STRING", "")).encode("latin-1", "replace"),
        "headers": headers,
        "client": (str(meta.get("REMOTE_ADDR") or "unknown"), int(meta.get("REMOTE_PORT") or 0)),
        "server": (str(meta.get("SERVER_NAME") or "localhost"), port),
        _REQUEST: request,
    }




def _inner_request(person: HttpRequest, view: MarkedView, match: Any, path_info: str, data: dict[str, Any]) -> HttpRequest:
    """A request for the view made from the person's: the same session, user, cookies and
    headers; the view's method and path; the input's other fields as JSON body or query."""
    method = view.inputs.method
    rest = {k: v for k, v in data.items() if k not in view.url_kwargs}
    if method == "GET":
        query = urlencode([(k, _query_text(v)) for k, v in rest.items()], doseq=True)
        raw = b""
    else:
        query = ""
        raw = json.dumps(rest, separators=(",", ":"), ensure_ascii=False).encode()
    request = copy.copy(person)
    for cached in ("_post", "_files", "_body", "GET", "POST", "_read_started", "resolver_match", "_stream", "headers"):
        request.__dict__.pop(cached, None)
    script = str(person.META.get("SCRIPT_NAME", ""))
    meta = {k: v for k, v in person.META.items() if k not in _DROPPED_META}
    meta.update(REQUEST_METHOD=method, PATH_INFO=path_info, SCRIPT_NAME=script, QUERY_STRING=query)
    if raw:
        meta.update(CONTENT_TYPE="application/json", CONTENT_LENGTH=str(len(raw)))
    request.META = meta
    request.method = method
    request.path_info = path_info
    request.path = script + path_info
    request.GET = QueryDict(query)
    request._body = raw
    request._stream = BytesIO(raw)
    request._read_started = False
    request.content_type, request.content_params = ("application/json", {}) if raw else ("", {})
    request.resolver_match = match
    return request


def _query_text(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return json.dumps(value)
    if isinstance(value, list):
        return [_query_text(item) for item in value]
    return "" if value is None else str(value)


def _call_view(match: Any, request: HttpRequest) -> HttpResponse:
    """The view itself, as Django's handler calls it (its exceptions as its handler answers them)."""
    view = match.func
    try:
        if inspect.iscoroutinefunction(view) or inspect.iscoroutinefunction(type(view).__call__):
            response = async_to_sync(view)(request, *match.args, **match.kwargs)
        else:
            response = view(request, *match.args, **match.kwargs)
        if callable(getattr(response, "render", None)) and not getattr(response, "is_rendered", True):
            response = response.render()
    except Http404 as exc:
        raise CapabilityFailure(refusal_for_status(404, str(exc) or None).error) from None
    except PermissionDenied as exc:
        raise CapabilityFailure(refusal_for_status(403, str(exc) or None).error) from None
    except ValidationError as exc:
        issues = [
            (f"/{field}" if field != "__all__" else "/", str(message)[:200])
            for field, messages in (exc.message_dict.items() if hasattr(exc, "error_dict") else [("__all__", exc.messages)])
            for message in messages
        ]
        raise CapabilityFailure(refusal_for_status(400, None, issues).error) from None
    except (BadRequest, SuspiciousOperation):
        raise CapabilityFailure(refusal_for_status(400).error) from None
    if not isinstance(response, HttpResponse) and not getattr(response, "streaming", False):
        raise TypeError(f"the view returned {type(response).__name__}, not an HttpResponse")
    return response


def _read_response(response: Any) -> tuple[int, str | None, bytes]:
    if getattr(response, "streaming", False):
        if getattr(response, "is_async", False):
            raise TypeError("the view answered an asynchronous stream")
        body = b"".join(response.streaming_content)
    else:
        body = bytes(response.content)
    return int(response.status_code), response.get("Content-Type"), body


def _refusal(status: int, body: bytes, content_type: str | None, response: Any, request: HttpRequest) -> CapabilityFailure:
    if 300 <= status < 400:
        from django.conf import settings  # a lazy object: never held at import (isinstance would set it up)

        # login_required and permission_required send the person to the login page.
        location = urlsplit(str(response.get("Location", ""))).path
        login = urlsplit(str(resolve_url(settings.LOGIN_URL))).path
        if location and location == login:
            user = getattr(request, "user", None)
            return refusal_for_status(403 if user is not None and user.is_authenticated else 401)
        return refusal_for_status(status)
    return refusal_for_status(status, _detail(body, content_type))


def _detail(body: bytes, content_type: str | None) -> object:
    kind = (content_type or "").lower()
    if "json" in kind:
        try:
            parsed = json.loads(body)
        except ValueError:
            return None
        if isinstance(parsed, dict):
            return next((parsed[k] for k in _DETAIL_KEYS if isinstance(parsed.get(k), str)), None)
        return None
    if kind.startswith("text/plain"):
        return body.decode("utf-8", "replace")
    return None


__all__ = ["AgentViews", "user_caller"]

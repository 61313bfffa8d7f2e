"""Procedures served from an app's own routes: what a framework integration shares.

``agentsurface.fastapi`` and ``agentsurface.django`` turn a route the app already runs into a
procedure: its declaration (:class:`RouteProcedure`, kept on the decorated function where the
compiler finds it), the server-side rules a ``serve()`` call would take, and the translation
of the route's HTTP answer into the closed set of typed refusals (:func:`refusal_for_status`).
The call itself goes through the same :class:`~agentsurface.server.ProcedureServer` pipeline
as any other procedure: authentication, rate limit, permissions, the envelope's limits, the
server-minted approval, idempotency by invocation id, audit.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from starlette.types import ASGIApp, Message, Scope

from .. import CapabilityFailure, DefinitionError, ProcedureContract
from .._core.contracts.procedures import ROUTE_MARKER, route_contract
from .._core.records import record
from .errors import capability_error
from .procedures import APPROVAL_LEVELS, Approval, Implementation, ServedProcedure

F = TypeVar("F", bound=Callable[..., Any])

# What a route's refusal may tell the agent of its own words: one short line of plain text.
_MAX_DETAIL = 200
_PLAIN = re.compile(f"[^\\x00-\\x1f\\x7f<>&\"`\\\\]{{1,{_MAX_DETAIL}}}")


@record
class RouteProcedure:
    """A route declared as a procedure: its contract and the server's rules for it."""

    contract: ProcedureContract
    permissions: frozenset[str]
    require_confirmation: bool
    approval: Approval
    route: Any = None  # the framework's own reading of the route (how input maps onto its request)

    def served(self, implementation: Implementation) -> ServedProcedure:
        return ServedProcedure(self.contract, implementation, self.permissions, self.require_confirmation, self.approval)


def route_rules(
    contract_id: str,
    *,
    permissions: Iterable[str],
    require_confirmation: bool,
    approval: Approval | None,
) -> tuple[frozenset[str], bool, Approval]:
    """The server-side rules of a route procedure, checked as ``serve()`` checks them."""
    perms = frozenset((permissions,)) if isinstance(permissions, str) else frozenset(permissions)
    if any(not isinstance(p, str) or not p for p in perms):
        raise DefinitionError("INVALID_DEFINITION", "permissions must be non-empty strings", path=contract_id)
    if not isinstance(require_confirmation, bool):
        raise DefinitionError("INVALID_DEFINITION", "require_confirmation must be a bool", path=contract_id)
    if approval is None:
        return perms, require_confirmation, "confirm"
    if not (callable(approval) or approval in APPROVAL_LEVELS):
        raise DefinitionError(
            "INVALID_DEFINITION", 'approval must be "confirm", "webauthn" or a function of the caller', path=contract_id
        )
    return perms, True, approval


def mark(function: F, declared: RouteProcedure) -> F:
    """Record ``declared`` on the route function (once: one function, one procedure)."""
    if route_contract(function) is not None:
        raise DefinitionError(
            "DUPLICATE_CAPABILITY", f"{function.__qualname__} already declares a procedure", path=declared.contract.id
        )
    setattr(function, ROUTE_MARKER, declared)
    return function


def declared_by(function: object) -> RouteProcedure | None:
    """The procedure a route function declares, if any."""
    declared = getattr(function, ROUTE_MARKER, None) if callable(function) else None
    return declared if isinstance(declared, RouteProcedure) else None


def described(function: Callable[..., Any], description: str | None) -> str:
    """``description``, else the first paragraph of the function's docstring, on one line."""
    if description is not None:
        return description
    doc = inspect.getdoc(function) or ""
    return doc.split("\n\n", 1)[0].replace("\n", " ").strip()


async def run_asgi(app: ASGIApp, scope: Scope, body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
    """Run an ASGI app on ``scope`` with ``body`` in one message: its status, headers (in
    order, as sent) and whole body."""
    sent = False
    status = 500
    headers: list[tuple[str, str]] = []
    chunks: list[bytes] = []

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = int(message["status"])
            headers.extend((k.decode("latin-1"), v.decode("latin-1")) for k, v in message.get("headers", []))
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    return status, headers, b"".join(chunks)


def plain_detail(detail: object) -> str | None:
    """The route's own message, when it is one short line of plain text (else None: the
    agent gets the standard message rather than markup or a dump of the app's state)."""
    if isinstance(detail, str) and _PLAIN.fullmatch(detail.strip() or "\x00"):
        return detail.strip()
    return None


_PRECONDITIONS = {404: "not-found", 409: "conflict", 410: "gone", 412: "precondition-failed", 423: "locked"}


def refusal_for_status(status: int, detail: object = None, issues: list[tuple[str, str]] | None = None) -> CapabilityFailure:
    """The typed refusal for a route's non-2xx answer (nothing was applied by a refusal; a 5xx
    is the app's failure and says nothing of why)."""
    said = plain_detail(detail)
    if status in (400, 422):
        listed = [{"path": path, "message": text} for path, text in (issues or [("/", "the app refused the input")])]
        error = capability_error("INVALID_INPUT", said or "The app refused this input.", issues=listed)  # type: ignore[arg-type]
    elif status == 401:
        error = capability_error("NOT_AUTHENTICATED", said or "The app did not recognize the caller. Ask the user to sign in.")
    elif status == 403:
        error = capability_error(
            "NOT_AUTHORIZED", said or "The app does not permit this call for the current user.", origin="server"
        )
    elif status == 429:
        error = capability_error(
            "RATE_LIMITED", "The app asks for fewer calls; wait before the next one.", reason="server-rate-limit", retryAfterMs=1000
        )
    elif status == 503:
        error = capability_error(
            "EXECUTION_FAILED",
            "The app is busy and applied nothing; retry shortly.",
            "after-delay",
            reason="server-busy",
            transient=True,
            retryAfterMs=1000,
        )
    elif status >= 500:
        error = capability_error(
            "EXECUTION_FAILED", "The server could not complete the call; nothing was applied.", reason="server-error"
        )
    else:
        reason = _PRECONDITIONS.get(status, "refused")
        error = capability_error("PRECONDITION_FAILED", said or f"The app refused this call ({reason}).", reason=reason)
    return CapabilityFailure(error)


def json_output(body: bytes, media_type: str | None) -> Any:
    """A route's 2xx answer as the procedure's output: JSON, or nothing for an empty body."""
    if not body.strip():
        return None
    if media_type is not None and "json" not in media_type.lower():
        raise ValueError(f"the route answered {media_type!r}, not JSON")
    return json.loads(body)


def issues_from_errors(errors: Iterable[Mapping[str, Any]], skip: tuple[str, ...] = ("body", "query", "path")) -> list[tuple[str, str]]:
    """A framework's validation errors (pydantic's ``loc``/``msg``) as issue pointers, never the input."""
    from .._core.pointer import json_pointer

    found: list[tuple[str, str]] = []
    for err in list(errors)[:20]:
        loc = [part for part in err.get("loc", ()) if not (isinstance(part, str) and part in skip)]
        found.append((json_pointer(loc), str(err.get("msg", "invalid"))[:_MAX_DETAIL]))
    return found


__all__ = [
    "RouteProcedure",
    "declared_by",
    "described",
    "issues_from_errors",
    "json_output",
    "mark",
    "plain_detail",
    "refusal_for_status",
    "route_rules",
    "run_asgi",
]

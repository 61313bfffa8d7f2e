"""The page side of the bridge: a procedure executor for one backend URL.

``BackendBridge`` fetches the backend manifest, restricts the page's contract manifest to what
the backend serves (refusing drift), and executes ``domain:`` calls for the registry: it sends
the invocation id and the confirmation evidence, bounds the call in time, stops it when the
registry's signal aborts, and turns every answer into an output or a typed, agent-safe error.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .. import (
    ActionContext,
    CancelSignal,
    CapabilityAuthority,
    Consumer,
    Policy,
    ProcedureContract,
    compile_manifest,
)
from .._core.errors import AgentSurfaceError, CapabilityFailure
from .._core.ids import random_id
from .._core.jsonvalue import JsonValue
from .._core.pipeline.failures import confirmation_invalid
from .agreement import (
    BackendContractError,
    ContractDisagreement,
    compare,
    manifest_disagreements,
    procedure_contracts,
)
from .callable import CallablePolicy
from .responses import (
    Presence,
    ServerChallenge,
    failure,
    minted_challenge,
    output_of,
    server_challenge,
    transport_failed,
)
from .transport import Transport, TransportError, default_transport
from .wire import (
    ManifestFormatError,
    ServedProcedureInfo,
    call_url,
    callable_url,
    challenge_url,
    manifest_url,
    parse_callable,
    parse_manifest,
)

log = logging.getLogger("agentsurface.bridge")


def _still_approved(ctx: ActionContext) -> None:
    """Before the approved write leaves the page: refuse it as stale if its preview no longer
    holds (the state it was computed from changed while the bridge answered the server)."""
    if ctx.confirmation and ctx.still_approved is not None and not ctx.still_approved():
        raise CapabilityFailure(confirmation_invalid("stale"))

Headers = Mapping[str, str] | Callable[[], Mapping[str, str]]


class BackendUnavailableError(AgentSurfaceError, RuntimeError):
    """The backend manifest could not be fetched or read (at page start: fail loudly)."""


class BackendBridge:
    """Give it as ``AgentSurfaceRegistry(procedure_executor=bridge)`` after ``await bridge.connect(...)``.

    ``headers`` (a mapping or a function returning one, e.g. the current bearer token) go with
    every request; in the page, same-origin cookies go too. ``timeout`` bounds each call in
    seconds (the registry's own procedure timeout usually fires first).

    A procedure the server serves with ``require_confirmation`` answers the first attempt of an
    approved call with a challenge it minted for this exact call; the bridge answers it with the
    person's approval (one approval per call, given in the page's dialog) and retries once.
    ``presence(procedure_id, input, challenge) -> dict`` proves a person for a challenge of
    level ``webauthn`` (a passkey assertion over ``challenge.nonce``); without it, such a call
    is refused.
    """

    def __init__(
        self,
        base_url: str,
        *,
        transport: Transport | None = None,
        headers: Headers | None = None,
        timeout: float = 30.0,
        max_response_bytes: int = 1_048_576,
        presence: Presence | None = None,
    ) -> None:
        if not isinstance(base_url, str) or not base_url:
            raise ValueError("base_url must be the backend's URL")
        if not timeout > 0:
            raise ValueError("timeout must be positive")
        self.base_url = base_url.rstrip("/")
        self._transport: Transport = transport if transport is not None else default_transport()
        self._headers = headers
        self.timeout = float(timeout)
        self.max_response_bytes = max_response_bytes
        self._presence = presence
        self.served: dict[str, ServedProcedureInfo] | None = None
        self.unserved: tuple[ContractDisagreement, ...] = ()
        self.callable: frozenset[str] | None = None
        """The procedures this caller may call, once ``load_callable()`` asked the server."""

    # ------------------------------------------------------------------ page start

    async def load_manifest(self) -> dict[str, ServedProcedureInfo]:
        url = manifest_url(self.base_url)
        try:
            response = await asyncio.wait_for(self._send("GET", url, None), self.timeout)
        except (TransportError, TimeoutError) as exc:
            raise BackendUnavailableError(f"could not fetch the backend manifest from {url}: {exc}") from exc
        if response.status != 200:
            raise BackendUnavailableError(f"the backend manifest at {url} answered HTTP {response.status}")
        try:
            self.served = parse_manifest(json.loads(response.body.decode("utf-8")))
        except (UnicodeDecodeError, ValueError) as exc:
            raise BackendUnavailableError(f"the backend manifest at {url} is unreadable: {exc}") from exc
        return self.served

    async def load_callable(self) -> frozenset[str]:
        """Ask the server which procedures this caller (this bridge's ``headers``) may call:
        ``callable``, which ``callable_policy()`` offers the agent. A caller the server does not
        authenticate may call none. Raises BackendUnavailableError when the server cannot say."""
        url = callable_url(self.base_url)
        try:
            response = await asyncio.wait_for(self._send("GET", url, None), self.timeout)
        except (TransportError, TimeoutError) as exc:
            raise BackendUnavailableError(f"could not ask {url} what this caller may call: {exc}") from exc
        if response.status == 401:
            self.callable = frozenset()
            return self.callable
        if response.status != 200:
            raise BackendUnavailableError(f"{url} answered HTTP {response.status}")
        try:
            self.callable = parse_callable(json.loads(response.body.decode("utf-8")))
        except (UnicodeDecodeError, ValueError, ManifestFormatError) as exc:
            raise BackendUnavailableError(f"the answer of {url} is unreadable: {exc}") from exc
        return self.callable

    def callable_policy(self) -> Policy:
        """A registry policy (``AgentSurfaceRegistry(policies=[...])``): a procedure this caller
        may not call (``load_callable()``) is hidden from the agent, and refused in the page with
        NOT_AUTHORIZED; view capabilities are left alone. Before ``load_callable()`` it hides
        nothing. The server still checks every call."""
        return CallablePolicy(lambda: self.callable)

    def disagreements(self, contracts: Iterable[Any]) -> list[ContractDisagreement]:
        served = self._require_manifest()
        return [d for c in procedure_contracts(contracts) for d in compare(c, served)]

    def serves(self, contract: ProcedureContract) -> bool:
        """True if the backend serves ``contract`` exactly (same effect and schemas)."""
        return not compare(contract, self._require_manifest())

    def ceiling(self, contracts: Iterable[Any]) -> dict[str, JsonValue]:
        """The page's contract manifest, limited to what the backend serves.

        Raises BackendContractError if a procedure is served with another effect or schema.
        Procedures the backend does not serve are left out (and logged): the registry then
        refuses any reference to them at registration, so they are never exposed.
        """
        items = list(contracts)
        found = self.disagreements(items)
        drift = [d for d in found if d.problem != "not-served"]
        if drift:
            raise BackendContractError(drift, self.base_url)
        self.unserved = tuple(d for d in found if d.problem == "not-served")
        missing = {d.procedure_id for d in self.unserved}
        for item in self.unserved:
            log.warning("%s", item)
        kept = [i for i in items if getattr(getattr(i, "contract", i), "id", None) not in missing]
        return compile_manifest(kept)

    async def authority(self, reviewed: CapabilityAuthority) -> CapabilityAuthority:
        """The page's authority with a backend: ``reviewed`` (the reviewed contract,
        ``authority_from_bundle()``: components and procedures alike), checked against what
        the backend serves. Fetches the backend manifest (no ``connect()`` first). Raises
        ``BackendContractError`` when a procedure is served with another effect or schema; one
        the backend does not serve is withheld (logged, listed in ``unserved``): registering a
        component that references it is refused, naming why."""
        served = await self.load_manifest()
        found = manifest_disagreements(reviewed.manifest, served)
        drift = [d for d in found if d.problem != "not-served"]
        if drift:
            raise BackendContractError(drift, self.base_url)
        self.unserved = tuple(d for d in found if d.problem == "not-served")
        for item in self.unserved:
            log.warning("%s", item)
        why = f"the backend at {self.base_url} does not serve it"
        return reviewed.withholding({d.procedure_id: why for d in self.unserved})

    async def connect(self, contracts: Iterable[Any]) -> dict[str, JsonValue]:
        """``load_manifest()`` then ``ceiling(contracts)``: a manifest of ``contracts`` alone (the
        components the page registers must be among them). A page with a reviewed contract
        takes ``await bridge.authority(authority_from_bundle())`` instead."""
        await self.load_manifest()
        return self.ceiling(contracts)

    def _require_manifest(self) -> dict[str, ServedProcedureInfo]:
        if self.served is None:
            raise BackendUnavailableError("load the backend manifest first: await bridge.load_manifest()")
        return self.served

    # ------------------------------------------------------------------ the person's own calls

    async def call(
        self,
        procedure_id: str,
        input: JsonValue,
        *,
        invocation_id: str | None = None,
        caller: str = "person",
    ) -> JsonValue:
        """Call a procedure outside the agent surface, as the app's own buttons do: the same
        wire, typed refusals and replay-by-id, a fresh invocation id unless one is given (pass
        the same one to retry safely). Raises ``CapabilityFailure`` with the typed refusal."""
        ctx = ActionContext(
            capability_id=procedure_id,
            registration_id=f"{caller}-call",
            consumer=Consumer(caller, "other"),
            invocation_id=invocation_id or random_id(f"{caller}-"),
            signal=CancelSignal(),
        )
        return await self(procedure_id, input, ctx)

    # ------------------------------------------------------------------ the executor

    async def __call__(self, procedure_id: str, effective_input: JsonValue, ctx: ActionContext) -> JsonValue:
        if self.served is not None and procedure_id not in self.served:
            raise failure("CAPABILITY_NOT_FOUND", "The backend does not serve this procedure. Refresh the tool list.")
        envelope: dict[str, Any] = {"invocationId": ctx.invocation_id, "input": effective_input}
        if ctx.confirmation:
            envelope["confirmation"] = {k: ctx.confirmation[k] for k in ("id", "approvedAt") if k in ctx.confirmation}
        served = None if self.served is None else self.served.get(procedure_id)
        if ctx.confirmation and served is not None and served.requires_confirmation:
            # The person approved this exact call in the page; the server wants that approval
            # to answer a challenge it mints for this caller, procedure and input. The
            # challenge goes back to the server only: the agent never sees it.
            asked = await self._post(procedure_id, envelope, ctx, challenge_url(self.base_url, procedure_id))
            if asked.status != 200:
                return output_of(asked)  # refused before any challenge (auth, rate limit, input): typed
            challenge = minted_challenge(asked)
            if challenge is not None:
                envelope["confirmation"] = await self._answer(procedure_id, effective_input, ctx, challenge)
            _still_approved(ctx)  # the challenge (and a passkey) took time: is the preview true?
        response = await self._post(procedure_id, envelope, ctx)
        challenge = server_challenge(response) if ctx.confirmation else None
        if challenge is not None and "challenge" not in envelope.get("confirmation", {}):
            # A server that asks for approval the manifest did not announce: answer it once.
            envelope["confirmation"] = await self._answer(procedure_id, effective_input, ctx, challenge)
            _still_approved(ctx)
            response = await self._post(procedure_id, envelope, ctx)
        return output_of(response)

    async def _answer(
        self, procedure_id: str, effective_input: JsonValue, ctx: ActionContext, challenge: ServerChallenge
    ) -> dict[str, Any]:
        assert ctx.confirmation is not None
        evidence: dict[str, Any] = {"challenge": challenge.id, "approvedAt": ctx.confirmation.get("approvedAt")}
        if "id" in ctx.confirmation:
            evidence["id"] = ctx.confirmation["id"]
        if challenge.level == "webauthn":
            if self._presence is None:
                raise failure(
                    "CONFIRMATION_REQUIRED",
                    "The server requires a passkey approval for this call, which this page cannot ask for.",
                    origin="server",
                )
            evidence["webauthn"] = await self._presence(procedure_id, effective_input, challenge)
        return evidence

    async def _post(
        self, procedure_id: str, envelope: dict[str, Any], ctx: ActionContext, url: str | None = None
    ) -> Any:
        try:
            body = json.dumps(envelope, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
        except (TypeError, ValueError):
            raise failure("INVALID_INPUT", "The input is not plain JSON.", issues=[{"path": "/", "message": "not JSON"}]) from None
        send = asyncio.ensure_future(self._send("POST", url or call_url(self.base_url, procedure_id), body))
        def stop(_reason: str) -> None:
            send.cancel()

        remove = ctx.signal.add_listener(stop)
        try:
            return await asyncio.wait_for(send, self.timeout)
        except TimeoutError:
            raise failure(
                "TIMEOUT",
                "The server did not answer in time; its effect may or may not have been applied. "
                "Verify state before repeating.",
                "no",
                timeoutMs=int(self.timeout * 1000),
                idempotent=False,
            ) from None
        except asyncio.CancelledError:
            if ctx.signal.aborted:  # the registry stopped the call: the request was aborted
                raise failure("CANCELLED", "The call was cancelled.", "no") from None
            raise
        except TransportError as exc:
            log.info("%s: transport failure: %s", procedure_id, exc)
            raise transport_failed() from None
        finally:
            remove()

    async def _send(self, method: str, url: str, body: bytes | None) -> Any:
        headers = dict(self._headers() if callable(self._headers) else (self._headers or {}))
        headers.setdefault("Accept", "application/json")
        if body is not None:
            headers["Content-Type"] = "application/json"
        return await self._transport.request(
            method, url, headers=headers, body=body, max_response_bytes=self.max_response_bytes
        )

    async def aclose(self) -> None:
        await self._transport.aclose()


__all__ = ["BackendBridge", "BackendUnavailableError", "Headers"]

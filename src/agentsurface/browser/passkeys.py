"""Passkeys in the page: register the person's passkey with the app's server, and answer a
server-minted challenge with the person's authenticator (``navigator.credentials``).

WebAuthn's browser API takes and returns binary fields as ``ArrayBuffer``; the server speaks
WebAuthn's JSON form (the same fields, base64url). This module converts both ways through
Pyodide's JS proxies, reads JS ``null`` (``userHandle``, ``authenticatorAttachment``) as ``None``,
and turns the browser's refusals (the person cancelled, no authenticator, timeout) into
:class:`PasskeyError` with the DOMException's name::

    from agentsurface.browser.passkeys import register_passkey, assert_presence

    await register_passkey("/api/agent", headers={"Authorization": f"Bearer {token}"})
    assertion = await assert_presence(options)   # options from the server's challenge

The person manages their passkeys with :func:`list_passkeys`, :func:`rename_passkey`, and, each
after a fresh assertion of a current passkey of theirs, :func:`remove_passkey`,
:func:`add_passkey` and :func:`replace_passkey`. Each raises :class:`PasskeyError` when the
browser, the person or the server says no (``reason``: the server's ``details.reason``, e.g.
``passkey-last-passkey``).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from .. import CapabilityFailure
from .._core.errors import AgentSurfaceError, error
from ..bridge.transport import TransportError
from ..bridge.wire import call_url, challenge_url
from .jsvalues import is_nullish, js_get, js_or_none

# The page's modules (js, pyodide) load on first use: this module imports under CPython too,
# where only its names and the base64url helpers are usable.

__all__ = [
    "PROCEDURE_ADD_OPTIONS",
    "PROCEDURE_ASSERTION_OPTIONS",
    "PROCEDURE_LIST",
    "PROCEDURE_OPTIONS",
    "PROCEDURE_REGISTER",
    "PROCEDURE_REMOVE",
    "PROCEDURE_RENAME",
    "PasskeyError",
    "add_passkey",
    "assert_presence",
    "create_credential",
    "list_passkeys",
    "passkey_presence",
    "passkeys_supported",
    "register_passkey",
    "remove_passkey",
    "rename_passkey",
    "replace_passkey",
]

# The server's registration procedures (agentsurface.server.passkeys; the page never imports it).
PROCEDURE_OPTIONS = "domain:passkeys.registrationOptions"
PROCEDURE_REGISTER = "domain:passkeys.register"
PROCEDURE_ASSERTION_OPTIONS = "domain:passkeys.assertionOptions"
PROCEDURE_LIST = "domain:passkeys.list"
PROCEDURE_RENAME = "domain:passkeys.rename"
PROCEDURE_REMOVE = "domain:passkeys.remove"
PROCEDURE_ADD_OPTIONS = "domain:passkeys.addOptions"
MAX_ANSWER_BYTES = 65_536


class PasskeyError(AgentSurfaceError):
    """A passkey ceremony did not complete. ``name``: the browser's DOMException name
    (``NotAllowedError``: cancelled, timed out or no presence; ``InvalidStateError``: already
    registered here; ``NotSupportedError``), ``"Unsupported"`` without WebAuthn, or the server's
    error code when it refused (``reason`` then holds its ``details.reason``)."""

    def __init__(self, name: str, message: str, reason: str | None = None) -> None:
        super().__init__(f"{name}: {message}")
        self.name = name
        self.message = message
        self.reason = reason


# ------------------------------------------------------------------------------ base64url


def b64url_encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    if not isinstance(text, str):
        raise PasskeyError("TypeError", "a binary field must be a base64url string")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _buffer(text: str) -> Any:
    """A base64url string as a fresh JS ``ArrayBuffer``."""
    import js

    raw = b64url_decode(text)
    array = js.Uint8Array.new(len(raw))
    array.assign(raw)
    return array.buffer


def _bytes(buffer: Any) -> bytes:
    """A JS ``ArrayBuffer`` (or view) as Python bytes."""
    import js

    return bytes(js.Uint8Array.new(buffer).to_bytes())


def _b64_of(buffer: Any) -> str | None:
    return None if is_nullish(buffer) else b64url_encode(_bytes(buffer))


# ------------------------------------------------------------------------------ options → JS


def _descriptors(items: Any) -> list[Any]:
    from .convert import to_js_object

    listed = []
    for item in items or []:
        entry = {**item, "id": _buffer(item["id"])}
        listed.append(to_js_object(entry))
    return listed


def creation_options_to_js(options: Mapping[str, Any]) -> Any:
    """WebAuthn's JSON creation options as ``PublicKeyCredentialCreationOptions``."""
    from .convert import to_js_object

    converted = dict(options)
    converted["challenge"] = _buffer(options["challenge"])
    converted["user"] = to_js_object({**options["user"], "id": _buffer(options["user"]["id"])})
    converted["excludeCredentials"] = _descriptors(options.get("excludeCredentials"))
    return to_js_object(converted)


def request_options_to_js(options: Mapping[str, Any]) -> Any:
    """WebAuthn's JSON request options as ``PublicKeyCredentialRequestOptions``."""
    from .convert import to_js_object

    converted = dict(options)
    converted["challenge"] = _buffer(options["challenge"])
    converted["allowCredentials"] = _descriptors(options.get("allowCredentials"))
    return to_js_object(converted)


# ------------------------------------------------------------------------------ credential → JSON


def _common(credential: Any) -> dict[str, Any]:
    from .convert import js_to_json

    extensions = credential.getClientExtensionResults()
    attachment = js_or_none(js_get(credential, "authenticatorAttachment"))
    return {
        "id": str(credential.id),
        "rawId": b64url_encode(_bytes(credential.rawId)),
        "type": str(credential.type),
        "clientExtensionResults": js_to_json(extensions) or {},
        "authenticatorAttachment": None if attachment is None else str(attachment),
    }


def registration_to_json(credential: Any) -> dict[str, Any]:
    response = credential.response
    transports: list[str] = []
    if js_get(response, "getTransports") is not None:
        transports = [str(t) for t in response.getTransports()]
    return {
        **_common(credential),
        "response": {
            "clientDataJSON": b64url_encode(_bytes(response.clientDataJSON)),
            "attestationObject": b64url_encode(_bytes(response.attestationObject)),
            "transports": transports,
        },
    }


def assertion_to_json(credential: Any) -> dict[str, Any]:
    response = credential.response
    return {
        **_common(credential),
        "response": {
            "clientDataJSON": b64url_encode(_bytes(response.clientDataJSON)),
            "authenticatorData": b64url_encode(_bytes(response.authenticatorData)),
            "signature": b64url_encode(_bytes(response.signature)),
            "userHandle": _b64_of(js_get(response, "userHandle")),  # JS null when not discoverable
        },
    }


# ------------------------------------------------------------------------------ ceremonies


def passkeys_supported() -> bool:
    """Whether this page can use passkeys (a secure context with WebAuthn); False under CPython."""
    try:
        import js
    except ImportError:
        return False
    return (
        js_get(js, "PublicKeyCredential") is not None
        and js_get(js.navigator, "credentials") is not None
        and bool(js_get(js, "isSecureContext"))
    )


def _require_support() -> None:
    if not passkeys_supported():
        raise PasskeyError("Unsupported", "this page cannot use passkeys (WebAuthn needs a secure context)")


async def _ceremony(kind: str, public_key: Any, signal: Any = None) -> Any:
    _require_support()
    import js
    from pyodide.ffi import JsException, JsProxy

    from .convert import error_kind, to_js_object

    request: dict[str, Any] = {"publicKey": public_key}
    if signal is not None:
        request["signal"] = signal
    try:
        method = js.navigator.credentials.create if kind == "create" else js.navigator.credentials.get
        credential = await method(to_js_object(request))
    except JsException as exc:
        name, message = error_kind(exc)
        raise PasskeyError(name, message) from None
    if is_nullish(credential) or not isinstance(credential, JsProxy):
        raise PasskeyError("NotAllowedError", "the authenticator returned no credential")
    return credential


async def create_credential(options: Mapping[str, Any], *, signal: Any = None) -> dict[str, Any]:
    """``navigator.credentials.create()`` for the server's JSON creation options (the
    ``publicKey`` member); returns the new credential as WebAuthn JSON for the server."""
    _require_support()
    credential = await _ceremony("create", creation_options_to_js(options), signal)
    return registration_to_json(credential)


async def assert_presence(options: Mapping[str, Any], *, signal: Any = None) -> dict[str, Any]:
    """``navigator.credentials.get()`` for the server's JSON request options (its challenge,
    rpId, allowCredentials, userVerification): the person touches (and unlocks) their
    authenticator; returns the assertion as WebAuthn JSON for the server. ``signal``: a JS
    ``AbortSignal`` that cancels the ceremony (PasskeyError ``AbortError``)."""
    _require_support()
    credential = await _ceremony("get", request_options_to_js(options), signal)
    return assertion_to_json(credential)


async def post_envelope(url: str, envelope: Mapping[str, Any], headers: Mapping[str, str]) -> dict[str, Any]:
    """POST one call's envelope; the server's JSON answer, whatever it says (a refusal too)."""
    from .fetch import PyfetchTransport

    try:
        answer = await PyfetchTransport().request(
            "POST",
            url,
            headers={**headers, "Content-Type": "application/json"},
            body=json.dumps(envelope).encode(),
            max_response_bytes=MAX_ANSWER_BYTES,
        )
        body = json.loads(answer.body)
    except (TransportError, ValueError) as exc:
        raise PasskeyError("NetworkError", f"the server did not answer: {exc}") from None
    if not isinstance(body, dict):
        raise PasskeyError("NetworkError", "the server's answer is not a JSON object")
    return body


def new_envelope(value: Any) -> dict[str, Any]:
    # secrets.token_hex(12) is os.urandom(12).hex(); the page need not compile secrets (and hmac).
    return {"invocationId": f"passkey-{os.urandom(12).hex()}", "input": value}


async def _procedure(base_url: str, procedure: str, value: Any, headers: Mapping[str, str]) -> Any:
    return output_of(await post_envelope(call_url(base_url, procedure), new_envelope(value), headers))


def output_of(body: Mapping[str, Any]) -> Any:
    """The output of an accepted call; a refusal raised as :class:`PasskeyError` (its code, and
    ``details.reason`` as ``reason``)."""
    if body.get("ok") is not True:
        raw_error = body.get("error")
        error: dict[str, Any] = raw_error if isinstance(raw_error, dict) else {}
        raw_details = error.get("details")
        details: dict[str, Any] = raw_details if isinstance(raw_details, dict) else {}
        reason = details.get("reason")
        raise PasskeyError(
            str(error.get("code", "EXECUTION_FAILED")),
            str(error.get("message", "the server refused")),
            reason if isinstance(reason, str) else None,
        )
    return body.get("output")


async def register_passkey(
    base_url: str, *, headers: Mapping[str, str] | None = None, signal: Any = None, grant: str | None = None
) -> dict[str, Any]:
    """Register the signed-in person's first passkey with the procedure server at ``base_url``
    (``/api/agent``): asks ``passkeys.registrationOptions``, runs ``navigator.credentials.create()``
    and sends the result to ``passkeys.register``. ``headers``: the page's credentials for the
    server (``Authorization``); ``grant``: the enrolment code an administrator gave a person
    they re-enrolled. Returns ``{"credentialId", "createdAt", "name"}``; raises
    :class:`PasskeyError` when the browser, the person or the server says no (a person who
    holds a passkey adds another with :func:`add_passkey`: reason ``passkey-assertion-required``)."""
    sent = dict(headers or {})
    options = await _procedure(base_url, PROCEDURE_OPTIONS, {} if grant is None else {"grant": grant}, sent)
    return await finish_registration(base_url, options, sent, signal)


async def finish_registration(base_url: str, options: Any, headers: Mapping[str, str], signal: Any) -> dict[str, Any]:
    """``navigator.credentials.create()`` for the server's options, then ``passkeys.register``."""
    public_key = options.get("publicKey") if isinstance(options, dict) else None
    if not isinstance(public_key, dict):
        raise PasskeyError("NetworkError", "the server sent no registration options")
    credential = await create_credential(public_key, signal=signal)
    registered = await _procedure(base_url, PROCEDURE_REGISTER, {"credential": credential}, headers)
    return dict(registered) if isinstance(registered, dict) else {}


def _abort_controller() -> Any:
    """A JS ``AbortController`` (its ``signal`` for a ceremony, ``abort()`` to end it)."""
    import js

    return js.AbortController.new()


def passkey_presence(
    base_url: str, *, headers: Mapping[str, str] | Callable[[], Mapping[str, str]] | None = None
) -> Callable[[str, Any, Any], Awaitable[dict[str, Any]]]:
    """The bridge's ``presence`` hook for a server challenge of level ``webauthn``: asks the
    server for the person's passkeys (``passkeys.assertionOptions``), then has the person answer
    the challenge's nonce with their authenticator (:func:`assert_presence`). When the person
    cancels (or there is no authenticator), the call fails with CONFIRMATION_INVALID, reason
    ``passkey-denied``. A call given up on while the person is at the authenticator (the agent
    cancelled it, it timed out, its component unmounted) aborts the ceremony: the browser's
    passkey prompt goes away, and the next approval is not refused as "a request is already
    pending"::

        bridge = BackendBridge("/api/agent", headers=auth, presence=passkey_presence("/api/agent", headers=auth))
    """

    async def presence(_procedure_id: str, _input: Any, challenge: Any) -> dict[str, Any]:
        sent = dict(headers() if callable(headers) else (headers or {}))
        options = await _procedure(base_url, PROCEDURE_ASSERTION_OPTIONS, {}, sent)
        public_key = options.get("publicKey") if isinstance(options, dict) else None
        if not isinstance(public_key, dict):
            raise PasskeyError("NetworkError", "the server sent no passkey options")
        ceremony = _abort_controller()
        try:
            return await assert_presence({**public_key, "challenge": str(challenge.nonce)}, signal=ceremony.signal)
        except asyncio.CancelledError:
            # The awaited JS promise does not stop with this task: the ceremony would go on in
            # the browser, for nobody, until its own timeout.
            ceremony.abort()
            raise
        except PasskeyError as refused:
            # The person cancelled, timed out or has no such authenticator here: nothing to send.
            raise CapabilityFailure(
                error(
                    "CONFIRMATION_INVALID",
                    "The user did not approve this call with their passkey; ask them again if it is still wanted.",
                    "with-confirmation",
                    reason="passkey-denied",
                )
            ) from refused

    return presence



# ------------------------------------------------------------------------------ the person's passkeys
# Listing and renaming are plain calls; removing, adding and replacing carry a fresh assertion of
# a current passkey of the person's, over a challenge the server minted for exactly that call
# (the procedure and the credential id), spent once in the call's own transaction.


async def list_passkeys(base_url: str, *, headers: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The signed-in person's passkeys: ``credentialId``, ``name``, ``createdAt``,
    ``lastUsedAt`` (``None`` until first used) and ``transports``, oldest first."""
    output = await _procedure(base_url, PROCEDURE_LIST, {}, dict(headers or {}))
    listed = output.get("passkeys") if isinstance(output, dict) else None
    if not isinstance(listed, list):
        raise PasskeyError("NetworkError", "the server sent no list of passkeys")
    return [dict(p) for p in listed if isinstance(p, dict)]


async def rename_passkey(
    base_url: str, credential_id: str, name: str, *, headers: Mapping[str, str] | None = None
) -> str:
    """Rename one of the person's passkeys; returns the name as the server kept it (control
    and bidirectional characters dropped, whitespace collapsed)."""
    output = await _procedure(base_url, PROCEDURE_RENAME, {"credentialId": credential_id, "name": name}, dict(headers or {}))
    kept = output.get("name") if isinstance(output, dict) else None
    return kept if isinstance(kept, str) else name


async def remove_passkey(
    base_url: str, credential_id: str, *, headers: Mapping[str, str] | None = None, signal: Any = None
) -> dict[str, Any]:
    """Remove one of the person's passkeys (never the last: reason ``passkey-last-passkey``)
    after the person asserts with a current one. Returns ``{"removed", "remaining"}``."""
    output = await _asserted(base_url, PROCEDURE_REMOVE, {"credentialId": credential_id}, dict(headers or {}), signal)
    return dict(output) if isinstance(output, dict) else {}


async def add_passkey(
    base_url: str, *, headers: Mapping[str, str] | None = None, signal: Any = None
) -> dict[str, Any]:
    """Register one more passkey beside the person's (up to the server's ``max_per_person``):
    an assertion of a current one, then ``navigator.credentials.create()`` for the new one."""
    sent = dict(headers or {})
    options = await _asserted(base_url, PROCEDURE_ADD_OPTIONS, {}, sent, signal)
    return await finish_registration(base_url, options, sent, signal)


async def replace_passkey(
    base_url: str, credential_id: str, *, headers: Mapping[str, str] | None = None, signal: Any = None
) -> dict[str, Any]:
    """Replace one of the person's passkeys with a new one: an assertion of a current one, a
    new credential, and the server stores the new one and removes the old in one transaction."""
    sent = dict(headers or {})
    options = await _asserted(base_url, PROCEDURE_ADD_OPTIONS, {"replaces": credential_id}, sent, signal)
    return await finish_registration(base_url, options, sent, signal)


async def _asserted(base_url: str, procedure: str, value: Any, headers: Mapping[str, str], signal: Any) -> Any:
    """The call with a fresh assertion: the server mints a challenge for exactly this call
    (``<base>/challenges/...``), the person answers its nonce, the call carries the answer."""
    envelope = new_envelope(value)
    asked = await post_envelope(challenge_url(base_url, procedure), envelope, headers)
    output_of({**asked, "output": None})  # a refusal before any challenge (auth, input): raised
    challenge = asked.get("challenge")
    if isinstance(challenge, dict):
        evidence: dict[str, Any] = {
            "challenge": str(challenge.get("id", "")),
            "approvedAt": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        }
        if challenge.get("level") == "webauthn":
            options = await _procedure(base_url, PROCEDURE_ASSERTION_OPTIONS, {}, headers)
            public_key = options.get("publicKey") if isinstance(options, dict) else None
            if not isinstance(public_key, dict):
                raise PasskeyError("NetworkError", "the server sent no passkey options")
            evidence["webauthn"] = await assert_presence(
                {**public_key, "challenge": str(challenge.get("nonce", ""))}, signal=signal
            )
        envelope["confirmation"] = evidence
    return output_of(await post_envelope(call_url(base_url, procedure), envelope, headers))


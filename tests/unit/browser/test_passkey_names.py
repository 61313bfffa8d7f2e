"""The page's passkey module under CPython: it imports without the browser, names the server's
procedures exactly, and its base64url matches WebAuthn's (no padding, URL alphabet)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url

from agentsurface import CapabilityFailure
from agentsurface.browser import passkeys as page
from agentsurface.server import passkeys as server


def test_the_page_names_the_servers_procedures() -> None:
    assert page.PROCEDURE_OPTIONS == server.PROCEDURE_OPTIONS == server.REGISTRATION_OPTIONS.id
    assert page.PROCEDURE_REGISTER == server.PROCEDURE_REGISTER == server.REGISTER.id
    assert page.PROCEDURE_ASSERTION_OPTIONS == server.PROCEDURE_ASSERTION_OPTIONS == server.ASSERTION_OPTIONS.id
    assert page.PROCEDURE_LIST == server.PROCEDURE_LIST == server.LIST.id
    assert page.PROCEDURE_RENAME == server.PROCEDURE_RENAME == server.RENAME.id
    assert page.PROCEDURE_REMOVE == server.PROCEDURE_REMOVE == server.REMOVE.id
    assert page.PROCEDURE_ADD_OPTIONS == server.PROCEDURE_ADD_OPTIONS == server.ADD_OPTIONS.id


@pytest.mark.parametrize("raw", [b"", b"\x00", b"\xfb\xff", bytes(range(256)), b"passkey"])
def test_base64url_round_trips_like_the_servers(raw: bytes) -> None:
    text = page.b64url_encode(raw)
    assert text == bytes_to_base64url(raw) and "=" not in text
    assert page.b64url_decode(text) == raw == base64url_to_bytes(text)


def test_without_a_browser_there_are_no_passkeys() -> None:
    assert page.passkeys_supported() is False
    with pytest.raises(page.PasskeyError) as refused:
        asyncio.run(page.assert_presence({"challenge": "AAAA"}))
    assert refused.value.name == "Unsupported"


class FakeController:
    """A JS AbortController's part the presence hook uses."""

    def __init__(self) -> None:
        self.signal = object()
        self.aborted = 0

    def abort(self) -> None:
        self.aborted += 1


class Nonce:
    nonce = "AAAA"


def presence_with(
    monkeypatch: pytest.MonkeyPatch, ceremony: Any
) -> tuple[Callable[[str, Any, Any], Awaitable[dict[str, Any]]], FakeController, list[Any]]:
    """``passkey_presence`` with the server's options and the browser's ceremony faked."""
    controller, signals = FakeController(), []

    async def options(*_args: Any) -> dict[str, Any]:
        return {"publicKey": {"rpId": "localhost", "allowCredentials": []}}

    async def assert_presence(public_key: Any, *, signal: Any = None) -> dict[str, Any]:
        signals.append(signal)
        return dict(await ceremony(public_key))

    monkeypatch.setattr(page, "_procedure", options)
    monkeypatch.setattr(page, "assert_presence", assert_presence)
    monkeypatch.setattr(page, "_abort_controller", lambda: controller)
    return page.passkey_presence("/api/agent"), controller, signals


def test_a_call_given_up_on_at_the_authenticator_aborts_the_ceremony(monkeypatch: pytest.MonkeyPatch) -> None:
    async def nobody_touches(_public_key: Any) -> dict[str, Any]:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    presence, controller, signals = presence_with(monkeypatch, nobody_touches)

    async def run() -> None:
        call = asyncio.ensure_future(presence("domain:x", {}, Nonce()))
        await asyncio.sleep(0.01)
        assert signals == [controller.signal] and controller.aborted == 0
        call.cancel()  # the registry gives the call up (cancelled, timed out, unmounted)
        with pytest.raises(asyncio.CancelledError):
            await call

    asyncio.run(run())
    assert controller.aborted == 1


def test_an_answered_or_refused_ceremony_is_not_aborted(monkeypatch: pytest.MonkeyPatch) -> None:
    async def touched(public_key: Any) -> dict[str, Any]:
        return {"id": "cred", "challenge": public_key["challenge"]}

    presence, controller, _ = presence_with(monkeypatch, touched)
    assert asyncio.run(presence("domain:x", {}, Nonce())) == {"id": "cred", "challenge": "AAAA"}

    async def refused(_public_key: Any) -> dict[str, Any]:
        raise page.PasskeyError("NotAllowedError", "the person said no")

    presence, denied_controller, _ = presence_with(monkeypatch, refused)
    with pytest.raises(CapabilityFailure) as failure:
        asyncio.run(presence("domain:x", {}, Nonce()))
    assert failure.value.error.code == "CONFIRMATION_INVALID"
    assert (failure.value.error.details or {})["reason"] == "passkey-denied"
    assert controller.aborted == denied_controller.aborted == 0

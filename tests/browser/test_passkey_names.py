"""The page's passkey module under CPython: it imports without the browser, names the server's
procedures exactly, and its base64url matches WebAuthn's (no padding, URL alphabet)."""

from __future__ import annotations

import asyncio

import pytest
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url

from agentsurface.browser import passkeys as page
from agentsurface.server import passkeys as server


def test_the_page_names_the_servers_procedures() -> None:
    assert page.PROCEDURE_OPTIONS == server.PROCEDURE_OPTIONS == server.REGISTRATION_OPTIONS.id
    assert page.PROCEDURE_REGISTER == server.PROCEDURE_REGISTER == server.REGISTER.id
    assert page.PROCEDURE_ASSERTION_OPTIONS == server.PROCEDURE_ASSERTION_OPTIONS == server.ASSERTION_OPTIONS.id


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

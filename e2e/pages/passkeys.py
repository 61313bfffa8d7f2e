"""Passkeys page code (runs in the page under Pyodide): the library's page-side ceremonies,
``register_passkey`` and ``assert_presence``, exposed to the test as ``window.passkeyRegister(token)``
and ``window.passkeyAssert(optionsJson, abortAfterMs?)``; both resolve to a JSON string ``{"ok": ...}``."""

import json

import js
from pyodide.ffi import create_proxy

from agentsurface.browser.passkeys import PasskeyError, assert_presence, passkeys_supported, register_passkey


def refused(error):
    return json.dumps({"ok": False, "name": error.name, "reason": error.reason, "message": error.message})


async def register(token):
    try:
        done = await register_passkey("/api/agent", headers={"Authorization": f"Bearer {token}"})
    except PasskeyError as error:
        return refused(error)
    return json.dumps({"ok": True, **done})


async def assert_(options_json, abort_after_ms=None):
    signal = None if abort_after_ms is None else js.AbortSignal.timeout(abort_after_ms)
    try:
        assertion = await assert_presence(json.loads(options_json), signal=signal)
    except PasskeyError as error:
        return refused(error)
    return json.dumps({"ok": True, "assertion": assertion})


js.window.passkeyRegister = create_proxy(register)
js.window.passkeyAssert = create_proxy(assert_)
js.window.passkeysSupported = passkeys_supported()

"""Passkeys page code (runs in the page under Pyodide): the library's page-side ceremonies,
``register_passkey`` and ``assert_presence``, exposed to the test as ``window.passkeyRegister(token, grant?)``
and ``window.passkeyAssert(optionsJson, abortAfterMs?)``, and the person's management of their
passkeys as ``window.passkeyList(token)``, ``passkeyRename(token, id, name)``,
``passkeyRemove(token, id)``, ``passkeyAdd(token)`` and ``passkeyReplace(token, id)``; each
resolves to a JSON string ``{"ok": ...}``."""

import json

import js
from pyodide.ffi import create_proxy

from agentsurface.browser.passkeys import (
    PasskeyError,
    add_passkey,
    assert_presence,
    list_passkeys,
    passkeys_supported,
    register_passkey,
    remove_passkey,
    rename_passkey,
    replace_passkey,
)

BASE = "/api/agent"


def refused(error):
    return json.dumps({"ok": False, "name": error.name, "reason": error.reason, "message": error.message})


def auth(token):
    return {"Authorization": f"Bearer {token}"}


async def answer(work):
    try:
        done = await work
    except PasskeyError as error:
        return refused(error)
    return json.dumps({"ok": True, **done} if isinstance(done, dict) else {"ok": True, "value": done})


async def register(token, grant=None):
    return await answer(register_passkey(BASE, headers=auth(token), grant=grant))


async def assert_(options_json, abort_after_ms=None):
    signal = None if abort_after_ms is None else js.AbortSignal.timeout(abort_after_ms)
    try:
        assertion = await assert_presence(json.loads(options_json), signal=signal)
    except PasskeyError as error:
        return refused(error)
    return json.dumps({"ok": True, "assertion": assertion})


async def listed(token):
    return await answer(list_passkeys(BASE, headers=auth(token)))


async def rename(token, credential_id, name):
    return await answer(rename_passkey(BASE, credential_id, name, headers=auth(token)))


async def remove(token, credential_id):
    return await answer(remove_passkey(BASE, credential_id, headers=auth(token)))


async def add(token):
    return await answer(add_passkey(BASE, headers=auth(token)))


async def replace(token, credential_id):
    return await answer(replace_passkey(BASE, credential_id, headers=auth(token)))


js.window.passkeyRegister = create_proxy(register)
js.window.passkeyAssert = create_proxy(assert_)
js.window.passkeyList = create_proxy(listed)
js.window.passkeyRename = create_proxy(rename)
js.window.passkeyRemove = create_proxy(remove)
js.window.passkeyAdd = create_proxy(add)
js.window.passkeyReplace = create_proxy(replace)
js.window.passkeysSupported = passkeys_supported()

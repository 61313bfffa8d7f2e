"""The console's passkey offer (browser only): once per person, a "Register a passkey" button in
the top bar. With a passkey registered, the server asks every destructive approval of this
person (their own, or their agent's calls) to be signed by it; without one, a server-minted
challenge answered by the dialog is enough.

The button shows only where passkeys can work: a secure page at ``http://localhost:PORT`` (the
demo's relying party id is ``localhost``; ``127.0.0.1`` cannot be one).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import js

from agentsurface import CapabilityFailure
from agentsurface.bridge import BackendBridge
from agentsurface.browser.passkeys import (
    PROCEDURE_ASSERTION_OPTIONS,
    PasskeyError,
    passkeys_supported,
    register_passkey,
)

from .dom import h, listen, replace_children
from .model import ConsoleState

RP_ID = "localhost"
_tasks: set[asyncio.Future[None]] = set()


async def has_passkey(bridge: BackendBridge) -> bool:
    """Whether the person registered one already (the server lists their passkeys)."""
    options = await bridge.call(PROCEDURE_ASSERTION_OPTIONS, {})
    public_key = options.get("publicKey") if isinstance(options, dict) else None
    allowed = public_key.get("allowCredentials") if isinstance(public_key, dict) else None
    return bool(allowed)


def _registered(slot: Any) -> None:
    replace_children(slot, h("span", {"class": "passkey-ok", "id": "passkey-registered"}, "Passkey registered"))


async def offer_passkey(
    slot: Any,
    bridge: BackendBridge,
    base_url: str,
    headers: Callable[[], Mapping[str, str]],
    state: ConsoleState,
) -> None:
    """Fill ``slot`` (the top bar's passkey place) with the person's passkey status or offer."""
    if slot is None or not passkeys_supported() or str(js.location.hostname) != RP_ID:
        return
    try:
        registered = await has_passkey(bridge)
    except CapabilityFailure:
        return  # the server offers no passkeys (or refused): nothing to offer
    if registered:
        _registered(slot)
        return
    button = h("button", {"id": "passkey-register", "class": "ghost", "type": "button"}, "Register a passkey")

    async def register() -> None:
        button.disabled = True
        try:
            await register_passkey(base_url, headers=headers())
        except PasskeyError as refused:
            button.disabled = False
            state.tell(f"No passkey registered: {refused.message}", "error")
            return
        _registered(slot)
        state.tell("Passkey registered: destructive approvals now ask for it.", "ok")

    def clicked(_event: Any) -> None:
        task = asyncio.ensure_future(register())
        _tasks.add(task)
        task.add_done_callback(_tasks.discard)

    listen(button, "click", clicked)
    replace_children(slot, button)

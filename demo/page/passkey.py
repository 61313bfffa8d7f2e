"""The console's passkeys (browser only), in the top bar. Without one, a "Register a passkey"
button (and, for a person an administrator re-enrolled, a field for the enrolment code they were
given). With one, a "Passkeys (N)" disclosure: the person's passkeys, each with its name
(renamed in place), when it was created and last used, and its buttons to replace or remove it,
and a button to add one. Removing, replacing and adding ask the person's authenticator first:
the server wants a fresh assertion of a current passkey for exactly that step.

With a passkey registered, the server asks every destructive approval of this person (their
own, or their agent's calls) to be signed by it; without one, a server-minted challenge answered
by the dialog is enough.

The offer shows only where passkeys can work: a secure page at ``http://localhost:PORT`` (the
demo's relying party id is ``localhost``; ``127.0.0.1`` cannot be one).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import js

from agentsurface import CapabilityFailure
from agentsurface.browser.passkeys import (
    PasskeyError,
    add_passkey,
    list_passkeys,
    passkeys_supported,
    register_passkey,
    remove_passkey,
    rename_passkey,
    replace_passkey,
)

from .dom import h, listen, replace_children
from .model import ConsoleState

RP_ID = "localhost"
MAX_NAME = 64
_tasks: set[asyncio.Future[None]] = set()


def _when(iso: Any) -> str:
    """An ISO time as the person reads it (UTC, to the minute)."""
    return f"{iso[:16].replace('T', ' ')} UTC" if isinstance(iso, str) and len(iso) >= 16 else "never"


def _short(credential_id: str) -> str:
    return credential_id if len(credential_id) <= 12 else f"{credential_id[:6]}…{credential_id[-4:]}"


def _soon(work: Callable[[], Awaitable[None]]) -> Callable[[Any], None]:
    def clicked(_event: Any) -> None:
        task = asyncio.ensure_future(work())
        _tasks.add(task)
        task.add_done_callback(_tasks.discard)

    return clicked


class PasskeyPanel:
    """The top bar's passkey place, redrawn from the server's list after every step."""

    def __init__(self, slot: Any, base_url: str, headers: Callable[[], Mapping[str, str]], state: ConsoleState) -> None:
        self.slot, self.base_url, self.headers, self.state = slot, base_url, headers, state
        self.open = False

    async def refresh(self) -> None:
        listed = await list_passkeys(self.base_url, headers=self.headers())
        if listed:
            self._draw_list(listed)
        else:
            self._draw_offer()

    async def _step(self, button: Any, work: Awaitable[Any], done: str) -> None:
        """One step of the person's: its button busy meanwhile, the outcome told, the list redrawn."""
        button.disabled = True
        try:
            await work
        except PasskeyError as refused:
            button.disabled = False
            self.state.tell(f"Passkeys: {refused.message}", "error")
            if refused.reason == "passkey-grant-required":
                self._draw_offer(grant=True)
            return
        self.state.tell(done, "ok")
        await self.refresh()  # the list stays open if the person had it open

    # ------------------------------------------------------------------ no passkey yet

    def _draw_offer(self, grant: bool = False) -> None:
        button = h("button", {"id": "passkey-register", "class": "ghost", "type": "button"}, "Register a passkey")
        if not grant:
            listen(button, "click", _soon(lambda: self._step(
                button,
                register_passkey(self.base_url, headers=self.headers()),
                "Passkey registered: destructive approvals now ask for it.",
            )))
            replace_children(self.slot, button)
            return
        # Re-enrolled by an administrator: the code they handed over, and nothing else, lets in.
        code = h("input", {"id": "passkey-grant", "type": "text", "autocomplete": "off", "spellcheck": "false",
                           "aria-describedby": "passkey-grant-hint", "maxlength": "64"})
        label = h("label", {"for": "passkey-grant"}, "Enrolment code")
        hint = h("span", {"id": "passkey-grant-hint", "class": "sr-only"},
                 "The code your administrator gave you to register a new passkey")
        button.textContent = "Register with code"

        async def enrol() -> None:
            await self._step(
                button,
                register_passkey(self.base_url, headers=self.headers(), grant=str(code.value).strip() or None),
                "Passkey registered: destructive approvals now ask for it.",
            )

        listen(button, "click", _soon(enrol))
        replace_children(self.slot, h("div", {"class": "passkey-grant"}, label, code, hint, button))

    # ------------------------------------------------------------------ the person's passkeys

    def _draw_list(self, listed: list[dict[str, Any]]) -> None:
        items = [self._item(p) for p in listed]
        add = h("button", {"id": "passkey-add", "type": "button"}, "Add a passkey")
        listen(add, "click", _soon(lambda: self._step(
            add, add_passkey(self.base_url, headers=self.headers()), "Passkey added."
        )))
        summary = h("summary", {"id": "passkey-registered"}, f"Passkeys ({len(listed)})")
        panel = h(
            "div",
            {"class": "passkey-panel", "role": "region", "aria-label": "Your passkeys"},
            h("ul", {"id": "passkey-list", "class": "passkey-list"}, items),
            h("p", {"class": "hint"}, "Removing, replacing or adding one asks your passkey first."),
            add,
        )
        details = h("details", {"id": "passkeys", "class": "passkeys", "open": self.open}, summary, panel)
        listen(details, "toggle", lambda _e: setattr(self, "open", bool(details.open)))
        replace_children(self.slot, details)

    def _item(self, passkey: dict[str, Any]) -> Any:
        credential_id = str(passkey.get("credentialId", ""))
        name = str(passkey.get("name", "")) or "Passkey"
        field = h("input", {"type": "text", "class": "passkey-name", "value": name, "maxlength": str(MAX_NAME),
                            "aria-label": f"Name of passkey {name}", "autocomplete": "off"})
        rename = h("button", {"type": "button", "class": "ghost", "aria-label": f"Save the name of {name}"}, "Save")
        replace = h("button", {"type": "button", "aria-label": f"Replace {name}"}, "Replace")
        remove = h("button", {"type": "button", "class": "danger", "aria-label": f"Remove {name}"}, "Remove")

        async def renamed() -> None:
            await self._step(
                rename, rename_passkey(self.base_url, credential_id, str(field.value), headers=self.headers()),
                "Passkey renamed.",
            )

        def on_key(event: Any) -> None:
            if str(event.key) == "Enter":
                _soon(renamed)(event)

        listen(rename, "click", _soon(renamed))
        listen(field, "keydown", on_key)
        listen(replace, "click", _soon(lambda: self._step(
            replace, replace_passkey(self.base_url, credential_id, headers=self.headers()), "Passkey replaced."
        )))
        listen(remove, "click", _soon(lambda: self._step(
            remove, remove_passkey(self.base_url, credential_id, headers=self.headers()), "Passkey removed."
        )))
        meta = (f"Created {_when(passkey.get('createdAt'))} · last used {_when(passkey.get('lastUsedAt'))}"
                f" · id {_short(credential_id)}")
        return h(
            "li",
            {"class": "passkey-item", "dataset": {"credential": credential_id}},
            h("div", {"class": "passkey-row"}, field, rename),
            h("div", {"class": "passkey-meta"}, meta),
            h("div", {"class": "passkey-actions"}, replace, remove),
        )


async def offer_passkey(
    slot: Any,
    base_url: str,
    headers: Callable[[], Mapping[str, str]],
    state: ConsoleState,
) -> None:
    """Fill ``slot`` (the top bar's passkey place) with the person's passkeys or the offer of one."""
    if slot is None or not passkeys_supported() or str(js.location.hostname) != RP_ID:
        return
    try:
        await PasskeyPanel(slot, base_url, headers, state).refresh()
    except (PasskeyError, CapabilityFailure):
        return  # the server offers no passkeys (or refused): nothing to offer

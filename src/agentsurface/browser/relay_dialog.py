"""The pairing dialog: the first time a page of this origin meets the relay, the person is asked,
in the page, whether the agent program at that loopback address may use the page's tools, and
types the code the relay printed. Without the code nothing is paired: a site cannot pair itself
with a relay the person never saw, nor a local program with a page the person never saw."""

from __future__ import annotations

import asyncio
from typing import Any

import js

from .proxies import destroy, make_proxy

CLASS = "agentsurface-relay-pairing"
_STYLE = f"""
dialog.{CLASS} {{ max-width: 30rem; border: 1px solid #9ca3af; border-radius: 8px; padding: 1.25rem;
  font: 15px/1.45 system-ui, sans-serif; color: #111827; background: #ffffff; }}
dialog.{CLASS}::backdrop {{ background: rgb(17 24 39 / 0.45); }}
dialog.{CLASS} h2 {{ font-size: 1.1rem; margin: 0 0 0.5rem; }}
dialog.{CLASS} code {{ background: #f3f4f6; padding: 0 0.25rem; border-radius: 4px; }}
dialog.{CLASS} input {{ font: inherit; font-size: 1.2rem; letter-spacing: 0.15em; width: 9rem; padding: 0.25rem; }}
dialog.{CLASS} .actions {{ display: flex; gap: 0.5rem; justify-content: flex-end; margin-top: 1rem; }}
dialog.{CLASS} button {{ font: inherit; padding: 0.35rem 0.9rem; }}
dialog.{CLASS} .attempts {{ color: #b91c1c; min-height: 1.2em; }}
"""


def _element(tag: str, text: str = "", **attributes: str) -> Any:
    element = js.document.createElement(tag)
    if text:
        element.textContent = text
    for name, value in attributes.items():
        element.setAttribute(name.replace("_", "-"), value)
    return element


def _build(relay: str, origin: str, attempts: int) -> tuple[Any, Any, Any, Any, Any]:
    dialog = _element("dialog", **{"class": CLASS, "aria_labelledby": f"{CLASS}-title"})
    style = _element("style", _STYLE)
    title = _element("h2", "Let an AI agent on this computer use this page?", id=f"{CLASS}-title")
    what = _element("p")
    what.append("A program on this computer, the agentsurface relay at ")
    what.append(_element("code", relay))
    what.append(f", asks to connect to this page ({origin}). The agent it serves could then use the "
                "actions this page offers it; actions that need your approval still ask you here.")
    how = _element("p", "Type the pairing code the relay printed (in the terminal or log of "
                        "`agentsurface mcp --relay`). If you did not start it, choose Don't connect.")
    form = _element("form", method="dialog")
    label = _element("label", "Pairing code ")
    field = _element("input", inputmode="numeric", autocomplete="off", name="code", maxlength="9")
    label.append(field)
    note = _element("p", "" if attempts >= 3 else f"Wrong code. {attempts} tries left.", **{"class": "attempts"})
    actions = _element("div", **{"class": "actions"})
    decline = _element("button", "Don't connect", type="button", value="decline")
    connect = _element("button", "Connect", type="submit", value="connect")
    actions.append(decline, connect)
    form.append(label, note, actions)
    dialog.append(style, title, what, how, form)
    return dialog, form, field, decline, connect


async def ask_pairing_code(relay: str, origin: str, attempts: int) -> str | None:
    """The code the person typed, or None when they declined (or closed the dialog)."""
    dialog, form, field, decline, _connect = _build(relay, origin, attempts)
    answer: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()

    def settle(value: str | None) -> None:
        if not answer.done():
            answer.set_result(value)

    def on_submit(event: Any) -> None:
        event.preventDefault()
        settle(str(field.value))

    listeners = [
        (form, "submit", make_proxy(on_submit)),
        (decline, "click", make_proxy(lambda _event: settle(None))),
        (dialog, "cancel", make_proxy(lambda _event: settle(None))),  # Escape
    ]
    for target, kind, handler in listeners:
        target.addEventListener(kind, handler)
    js.document.body.append(dialog)
    dialog.showModal()
    field.focus()
    try:
        return await answer
    finally:
        for target, kind, handler in listeners:
            target.removeEventListener(kind, handler)
            destroy(handler)
        dialog.close()
        dialog.remove()

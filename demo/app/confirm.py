"""The host's confirmation dialog (browser only): one pending request at a time, decided by a
real click of the person.

Guards against approving something the person never saw:
- input protection: whenever the dialog starts showing a request (first open, or the next one
  after a decision), its buttons stay disabled for ``INPUT_PROTECTION_MS``, as browsers'
  permission prompts do, and the change is announced to assistive technology;
- a click counts only for the request its pointer press began on;
- after the dialog closes, a transparent shield swallows clicks for ``CLOSE_SHIELD_MS``, so the
  second click of a double-click never lands on the page underneath.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import js
from pyodide.ffi import create_proxy

from agent_surface import PendingConfirmation

from .dom import by_id, closest, data, h, listen, replace_children

INPUT_PROTECTION_MS = 700
CLOSE_SHIELD_MS = 700

Decided = Callable[[bool, PendingConfirmation], None]


class ConfirmDialog:
    def __init__(self, registry: Any, on_decided: Decided) -> None:
        self.registry = registry
        self.on_decided = on_decided
        self.box = by_id("confirm")
        self.live = by_id("confirm-live")
        self.shield = by_id("click-shield")
        self._shown: str | None = None  # the confirmation id on screen
        self._armed_at = 0.0  # performance.now() from which the buttons accept input
        self._pressed: str | None = None  # the confirmation id a pointer press began on
        self._shield_until = 0.0
        self._arm = create_proxy(lambda *_: self._enable_buttons())
        self._unshield = create_proxy(lambda *_: self._drop_shield())
        listen(self.box, "pointerdown", self._on_pointerdown)
        listen(self.box, "click", self._on_click)
        listen(self.shield, "click", lambda event: event.preventDefault())
        registry.confirmations.subscribe(lambda _pending: self.render())
        js.setInterval(create_proxy(lambda *_: self.tick()), 1000)

    # ------------------------------------------------------------------ input

    def _armed(self) -> bool:
        return bool(js.performance.now() >= self._armed_at)

    def _on_pointerdown(self, _event: Any) -> None:
        self._pressed = self._shown if self._armed() else None

    def _on_click(self, event: Any) -> None:
        button = closest(event, "button[data-decision]")
        decision, cid = data(button, "decision"), data(button, "cid")
        if decision not in ("approve", "deny") or not cid:
            return  # a click on the text, the backdrop or a gap
        # Only a real user gesture counts: a script's element.click() or dispatchEvent() is not
        # trusted, so page code (or an agent driving the DOM with scripts) cannot approve.
        if not event.isTrusted:
            self._warn("Ignored a click that did not come from the user.")
            return
        if cid != self._shown or not self._armed():
            return
        by_keyboard = event.detail == 0  # Enter/Space on the focused button: no pointer press
        pressed, self._pressed = self._pressed, None
        if not by_keyboard and pressed != cid:
            self._warn("Ignored a click that began on another request.")
            return
        pending = self.registry.confirmations.get(cid)
        approved = decision == "approve"
        if self.registry.confirmations.resolve(cid, approved=approved) and pending is not None:
            self.on_decided(approved, pending)

    def _warn(self, text: str) -> None:
        warning = by_id("confirm-warning")
        if warning is not None:
            warning.textContent = text

    # ------------------------------------------------------------------ rendering

    def render(self) -> None:
        pending = self.registry.confirmations.pending()
        if not pending:
            if self._shown is not None:
                self._raise_shield()
            self._shown = None
            self.box.hidden = True
            replace_children(self.box)
            return
        item: PendingConfirmation = pending[0]
        switched = item.confirmation_id != self._shown
        if switched:  # a different request under the person's pointer: protect, announce
            previous, self._shown = self._shown, item.confirmation_id
            self._pressed = None
            self._armed_at = float(js.performance.now()) + INPUT_PROTECTION_MS
            js.setTimeout(self._arm, INPUT_PROTECTION_MS)
            lead = "Another request replaced the previous one" if previous else "An agent asks for your approval"
            self.live.textContent = f"{lead}: {item.summary}"
        self.box.hidden = False
        locked = not self._armed()
        replace_children(self.box, self._modal(item, len(pending), locked))
        if switched:
            by_id("confirm-modal").focus()  # not a button: a held Enter must not approve
        self.tick()

    def _modal(self, item: PendingConfirmation, count: int, locked: bool) -> Any:
        def button(decision: str, label: str, style: str) -> Any:
            attrs = {
                "class": style,
                "id": f"confirm-{decision}",
                "dataset": {"decision": decision, "cid": item.confirmation_id},
                "disabled": locked,
            }
            return h("button", attrs, label)

        return h(
            "div",
            {
                "class": "modal",
                "id": "confirm-modal",
                "role": "dialog",
                "aria-modal": "true",
                "aria-labelledby": "confirm-title",
                "aria-describedby": "confirm-summary",
                "tabindex": "-1",
            },
            h("h2", {"id": "confirm-title"}, "An agent asks for your approval"),
            h("p", {"class": "summary", "id": "confirm-summary"}, item.summary),
            h(
                "div",
                {"class": "meta"},
                h("span", {"class": f"badge effect {item.effect}"}, item.effect),
                h("span", {"class": "capability"}, item.capability_id),
                h("span", {"class": "countdown", "id": "confirm-countdown", "dataset": {"expires": item.expires_at}}),
            ),
            h("p", {"class": "label"}, "Exactly this input will be sent:"),
            h("pre", {"class": "input", "tabindex": "0", "aria-label": "Input"}, json.dumps(item.input, indent=2)),
            h("p", {"id": "confirm-warning", "class": "warning"}),
            h("div", {"class": "actions"}, button("deny", "Deny", "danger"), button("approve", "Approve", "primary")),
            h("p", {"class": "hint"}, f"{count - 1} more waiting" if count > 1 else None),
        )

    def _enable_buttons(self) -> None:
        if not self._armed():  # a newer request restarted the protection
            return
        for button_id in ("confirm-approve", "confirm-deny"):
            button = by_id(button_id)
            if button is not None and data(button, "cid") == self._shown:
                button.disabled = False

    def _raise_shield(self) -> None:
        self._shield_until = float(js.performance.now()) + CLOSE_SHIELD_MS
        self.shield.hidden = False
        js.setTimeout(self._unshield, CLOSE_SHIELD_MS)

    def _drop_shield(self) -> None:
        if js.performance.now() >= self._shield_until:  # not an earlier close's timer
            self.shield.hidden = True

    def tick(self) -> None:
        countdown = by_id("confirm-countdown")
        expires_at = data(countdown, "expires")
        if countdown is None or expires_at is None:
            return
        try:
            expires = datetime.fromisoformat(expires_at.replace("Z", "+00:00"))
        except ValueError:
            return
        left = max(0, int((expires - datetime.now(UTC)).total_seconds()))
        countdown.textContent = f"expires in {left // 60}:{left % 60:02d}"
        if left == 0:
            self.registry.confirmations.pending()  # lets the store expire it now

"""The confirmation dialog's DOM (browser only): its elements, listeners, focus handling, timers
and click shield, rendering what ``agentsurface.page.dialog`` decides and reporting the
person's gestures back to it. Every string is set as text: nothing is ever parsed as HTML."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import js
from pyodide.ffi import create_once_callable

from .jsvalues import attribute, closest, is_nullish, js_get, js_or_none
from .proxies import destroy, make_proxy

PREFIX = "agentsurface-confirm"
STYLE_ID = f"{PREFIX}-style"
BUTTONS = "button[data-decision]"


class Row(Protocol):
    """One row of a preview (``agentsurface.page.dialog.PreviewRow``)."""

    @property
    def row(self) -> str: ...
    @property
    def field(self) -> str: ...
    @property
    def before(self) -> str: ...
    @property
    def after(self) -> str: ...


class Shown(Protocol):
    """The texts of one request (``agentsurface.page.dialog.ShownRequest``)."""

    @property
    def title(self) -> str: ...
    @property
    def summary(self) -> str: ...
    @property
    def capability(self) -> str: ...
    @property
    def effect(self) -> str: ...
    @property
    def input_text(self) -> str: ...
    @property
    def waiting(self) -> int: ...
    @property
    def locked(self) -> bool: ...
    @property
    def expires_in(self) -> str: ...
    @property
    def preview(self) -> tuple[Row, ...]: ...
    @property
    def preview_note(self) -> str: ...
    @property
    def preview_caption(self) -> str: ...


class Pending(Protocol):
    @property
    def confirmation_id(self) -> str: ...


Press = Callable[..., None]
Activate = Callable[..., Any]
Escape = Callable[..., Any]


class DomDialogView:
    """The dialog's elements, created once under ``parent`` (default ``document.body``)."""

    def __init__(self, *, parent: Any = None, css: str = "", close_shield_ms: float = 700) -> None:
        self.document = js.document
        self.close_shield_ms = close_shield_ms
        self._proxies: list[Any] = []
        self._listeners: list[tuple[Any, str, Any]] = []
        self._press: Press | None = None
        self._activate: Activate | None = None
        self._escape: Escape | None = None
        self._tick: Callable[[], None] | None = None
        self._shown: str | None = None
        self._return_focus: Any = None
        self._interval: Any = None
        self._shield_until = 0.0
        self._install_style(css)
        host = self.document.body if is_nullish(parent) else parent
        self.root = self._el("div", {"class": f"{PREFIX}-backdrop", "id": PREFIX, "hidden": ""})
        self.box = self._el(
            "div",
            {
                "class": PREFIX,
                "id": f"{PREFIX}-dialog",
                "role": "dialog",
                "aria-modal": "true",
                "aria-labelledby": f"{PREFIX}-title",
                "aria-describedby": f"{PREFIX}-summary",
                "tabindex": "-1",
            },
        )
        self.title = self._el("h2", {"id": f"{PREFIX}-title"})
        self.summary = self._el("p", {"id": f"{PREFIX}-summary", "class": f"{PREFIX}-summary"})
        meta = self._el("p", {"class": f"{PREFIX}-meta"})
        self.effect = self._el("span", {"id": f"{PREFIX}-effect", "class": f"{PREFIX}-effect"})
        self.capability = self._el("span", {"id": f"{PREFIX}-capability", "class": f"{PREFIX}-capability"})
        self.countdown_el = self._el("span", {"id": f"{PREFIX}-countdown", "class": f"{PREFIX}-countdown"})
        meta.append(self.effect, " ", self.capability, " ", self.countdown_el)
        # What the call will change (a capability's preview): a table, scrollable on its own.
        self.preview = self._el(
            "div",
            {
                "id": f"{PREFIX}-preview",
                "class": f"{PREFIX}-preview",
                "role": "region",
                "tabindex": "0",
                "aria-labelledby": f"{PREFIX}-preview-caption",
                "hidden": "",
            },
        )
        table = self._el("table", {"class": f"{PREFIX}-preview-table"})
        self.preview_caption = self._el("caption", {"id": f"{PREFIX}-preview-caption"})
        head_row = self._el("tr", {})
        for text in ("Row", "Field", "Before", "After"):
            cell = self._el("th", {"scope": "col"})
            cell.textContent = text
            head_row.append(cell)
        head = self._el("thead", {})
        head.append(head_row)
        self.preview_rows = self._el("tbody", {"id": f"{PREFIX}-preview-rows"})
        table.append(self.preview_caption, head, self.preview_rows)
        self.preview_note = self._el("p", {"id": f"{PREFIX}-preview-note", "class": f"{PREFIX}-preview-note"})
        self.preview.append(table, self.preview_note)
        label = self._el("p", {"id": f"{PREFIX}-input-label", "class": f"{PREFIX}-label"})
        label.textContent = "Exactly this input will be sent:"
        self.input = self._el(
            "pre",
            {
                "id": f"{PREFIX}-input",
                "class": f"{PREFIX}-input",
                "role": "region",
                "tabindex": "0",
                "aria-labelledby": f"{PREFIX}-input-label",
            },
        )
        self.warning = self._el(
            "p", {"id": f"{PREFIX}-warning", "class": f"{PREFIX}-warning", "aria-live": "polite"}
        )
        # Optional: why the person denies, in their words (the agent gets it as theirs).
        self.reason_label = self._el("label", {"for": f"{PREFIX}-reason", "class": f"{PREFIX}-label"})
        self.reason_label.textContent = "If you deny, why? (optional, the agent reads it)"
        self.reason = self._el(
            "input",
            {
                "type": "text",
                "id": f"{PREFIX}-reason",
                "class": f"{PREFIX}-reason",
                "maxlength": "200",
                "autocomplete": "off",
            },
        )
        actions = self._el("div", {"class": f"{PREFIX}-actions"})
        self.deny = self._button("deny", "Deny")
        self.approve = self._button("approve", "Approve")
        actions.append(self.deny, self.approve)
        self.waiting = self._el("p", {"id": f"{PREFIX}-waiting", "class": f"{PREFIX}-waiting"})
        self.box.append(
            self.title, self.summary, meta, self.preview, label, self.input, self.warning, self.reason_label,
            self.reason, actions, self.waiting,
        )
        self.root.append(self.box)
        self.shield = self._el("div", {"id": f"{PREFIX}-shield", "class": f"{PREFIX}-shield", "hidden": ""})
        self.live = self._el(
            "div",
            {
                "id": f"{PREFIX}-live",
                "class": f"{PREFIX}-sr-only",
                "role": "status",
                "aria-live": "assertive",
            },
        )
        host.append(self.root, self.shield, self.live)

    # ------------------------------------------------------------------ building

    def _el(self, tag: str, attrs: dict[str, str]) -> Any:
        element = self.document.createElement(tag)
        for key, value in attrs.items():
            element.setAttribute(key, value)
        return element

    def _button(self, decision: str, label: str) -> Any:
        button = self._el(
            "button",
            {
                "type": "button",
                "id": f"{PREFIX}-{decision}",
                "class": f"{PREFIX}-{decision}",
                "data-decision": decision,
            },
        )
        button.textContent = label
        return button

    def _install_style(self, css: str) -> None:
        if not css or not is_nullish(self.document.getElementById(STYLE_ID)):
            return
        style = self._el("style", {"id": STYLE_ID})
        style.textContent = css
        self.document.head.append(style)

    def _listen(self, target: Any, event: str, handler: Callable[[Any], None], capture: bool = False) -> None:
        proxy = make_proxy(handler)
        self._proxies.append(proxy)
        self._listeners.append((target, event, proxy))
        target.addEventListener(event, proxy, capture)

    # ------------------------------------------------------------------ wiring

    def connect(self, *, press: Press, activate: Activate, escape: Escape, tick: Callable[[], None]) -> None:
        """Report gestures to the dialog's rules (called once, by ``ConfirmationDialog``)."""
        self._press, self._activate, self._escape, self._tick = press, activate, escape, tick
        self._listen(self.root, "pointerdown", self._on_pointerdown)
        self._listen(self.root, "mousedown", self._on_mousedown)
        self._listen(self.root, "click", self._on_click)
        self._listen(self.document, "keydown", self._on_keydown, capture=True)
        for kind in ("pointerdown", "mousedown", "pointerup", "mouseup", "click", "dblclick", "contextmenu"):
            self._listen(self.shield, kind, self._swallow)
        if self._shown is not None:  # a request was already shown when the dialog was installed
            self._start_ticking()

    def close(self) -> None:
        """Remove the elements and listeners and free every proxy this view made."""
        self._stop_ticking()
        for target, event, proxy in self._listeners:
            target.removeEventListener(event, proxy, event == "keydown")
        for proxy in self._proxies:
            destroy(proxy)
        self._listeners.clear()
        self._proxies.clear()
        for element in (self.root, self.shield, self.live):
            element.remove()

    # ------------------------------------------------------------------ events

    def _on_pointerdown(self, event: Any) -> None:
        if self._press is not None:
            cid = attribute(closest(event, BUTTONS), "data-cid")
            self._press(cid, trusted=bool(js_get(event, "isTrusted")))

    def _on_mousedown(self, event: Any) -> None:
        target = js_get(event, "target")
        if target is not None and bool(self.root.isSameNode(target)):
            event.preventDefault()  # a press on the backdrop keeps focus inside the dialog

    def _on_click(self, event: Any) -> None:
        button = closest(event, BUTTONS)
        decision, cid = attribute(button, "data-decision"), attribute(button, "data-cid")
        if self._activate is None or decision is None or cid is None:
            return  # a click on the text, the backdrop or a gap
        keyboard = js_get(event, "detail") == 0  # Enter/Space or assistive technology: no press
        self._activate(
            decision, cid, trusted=bool(js_get(event, "isTrusted")), keyboard=keyboard, reason=self._reason()
        )

    def _reason(self) -> str | None:
        value = js_get(self.reason, "value")
        return value if isinstance(value, str) and value.strip() else None

    def _on_keydown(self, event: Any) -> None:
        if self._shown is None:
            return
        key = js_get(event, "key")
        if key == "Escape":
            event.preventDefault()
            if self._escape is not None:
                self._escape(
                    trusted=bool(js_get(event, "isTrusted")), repeat=bool(js_get(event, "repeat")),
                    reason=self._reason(),
                )
        elif key == "Tab":
            event.preventDefault()
            self._cycle_focus(backwards=bool(js_get(event, "shiftKey")))
        elif key in ("Enter", " ") and js_get(event, "repeat"):
            event.preventDefault()  # a held key never activates a button

    def _swallow(self, event: Any) -> None:
        event.preventDefault()
        event.stopPropagation()

    def _cycle_focus(self, *, backwards: bool) -> None:
        """Tab stays inside the dialog: the preview (when shown), the input, the reason, Deny and
        Approve (when enabled), in a ring."""
        shown = [] if self.preview.hidden else [self.preview]
        ring = [*shown, self.input, self.reason] + [b for b in (self.deny, self.approve) if not b.disabled]
        active = js_or_none(self.document.activeElement)
        index = next(
            (i for i, element in enumerate(ring) if active is not None and element.isSameNode(active)), None
        )
        if index is None:
            target = ring[-1] if backwards else ring[0]
        else:
            target = ring[(index + (-1 if backwards else 1)) % len(ring)]
        target.focus()

    # ------------------------------------------------------------------ DialogView

    def now_ms(self) -> float:
        return float(js.performance.now())

    def call_later(self, ms: float, callback: Callable[[], None]) -> None:
        js.setTimeout(create_once_callable(lambda *_: callback()), ms)

    def show(self, item: Pending, view: Shown) -> None:
        cid = item.confirmation_id
        switched = cid != self._shown
        if self._shown is None:  # opening: remember where the person was
            self._return_focus = js_or_none(self.document.activeElement)
            self._start_ticking()
        self._shown = cid
        if switched:
            self.title.textContent = view.title
            self.summary.textContent = view.summary
            self.effect.textContent = f"Effect: {view.effect}"
            self.effect.setAttribute("data-effect", view.effect)
            self.capability.textContent = view.capability
            self.input.textContent = view.input_text
            self._show_preview(view)
            self.warning.textContent = ""
            self.reason.value = ""  # words meant for another request never carry over
            for button in (self.deny, self.approve):
                button.setAttribute("data-cid", cid)
                button.disabled = view.locked
            self.box.setAttribute("data-cid", cid)
        self.countdown_el.textContent = view.expires_in
        self.waiting.textContent = f"{view.waiting} more waiting" if view.waiting else ""
        self.root.hidden = False
        if switched:
            self.box.focus()  # the dialog itself, not a button: a held Enter must not approve

    def _show_preview(self, view: Shown) -> None:
        rows = []
        for change in view.preview:
            tr = self._el("tr", {})
            for text in (change.row, change.field, change.before, change.after):
                cell = self._el("td", {})
                cell.textContent = text  # plain text, never HTML
                tr.append(cell)
            rows.append(tr)
        self.preview_rows.replaceChildren(*rows)
        self.preview_note.textContent = view.preview_note
        self.preview_caption.textContent = view.preview_caption
        self.preview.hidden = not rows

    def unlock(self, confirmation_id: str) -> None:
        for button in (self.deny, self.approve):
            if attribute(button, "data-cid") == confirmation_id:
                button.disabled = False

    def hide(self) -> None:
        self._shown = None
        self._stop_ticking()
        self.root.hidden = True
        self.box.removeAttribute("data-cid")
        self.reason.value = ""
        for button in (self.deny, self.approve):
            button.removeAttribute("data-cid")
            button.disabled = True
        self._raise_shield()
        target, self._return_focus = self._return_focus, None
        if target is not None and bool(js_get(target, "isConnected")) and js_get(target, "focus") is not None:
            target.focus()

    def announce(self, text: str) -> None:
        self.live.textContent = text

    def warn(self, text: str) -> None:
        self.warning.textContent = text

    def countdown(self, text: str) -> None:
        self.countdown_el.textContent = text

    # ------------------------------------------------------------------ timers

    def _start_ticking(self) -> None:
        if self._interval is None and self._tick is not None:
            tick = self._tick
            proxy = make_proxy(lambda *_: tick())
            self._interval = (js.setInterval(proxy, 1000), proxy)

    def _stop_ticking(self) -> None:
        if self._interval is not None:
            handle, proxy = self._interval
            js.clearInterval(handle)
            destroy(proxy)
            self._interval = None

    def _raise_shield(self) -> None:
        self._shield_until = self.now_ms() + self.close_shield_ms
        self.shield.hidden = False
        self.call_later(self.close_shield_ms, self._drop_shield)

    def _drop_shield(self) -> None:
        if self.now_ms() >= self._shield_until:  # not an earlier close's timer
            self.shield.hidden = True

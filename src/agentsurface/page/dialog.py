"""The drop-in confirmation dialog: which pending confirmation the person sees, when its buttons
accept input, and which of the person's gestures count as a decision.

One line installs it in a page (``ConfirmationDialog(registry)``); it lists
``registry.confirmations`` and resolves them, so it serves every path at once: the host's own
wait (Chromium's ``document.modelContext``) and, as ``dialog.confirm``, the WebMCP adapter's
``confirm`` hook that the draft shape runs inside ``client.requestUserInteraction``.

What it refuses, so that nobody approves something the person never saw:
- an untrusted activation (``event.isTrusted`` false: a script's ``element.click()`` or
  ``dispatchEvent``, an agent driving the DOM) never decides anything;
- input protection: whenever the request shown changes (first open, or the next one after a
  decision), nothing is accepted for ``INPUT_PROTECTION_MS`` and the change is announced;
- a pointer click counts only for the request its press began on (the second click of a
  double-click on Approve never approves the request that replaced the first);
- after the dialog closes, the view swallows clicks for ``CLOSE_SHIELD_MS`` so they never fall
  through to the page underneath;
- a request with a preview (what the call will change, as a table) is approved only if its
  preview still holds when the person presses Approve: if the state changed since it was shown,
  the request ends stale, the dialog closes, and the change is announced (``on_outdated``).

The DOM side (elements, listeners, focus, timers) is ``agentsurface.browser.dialog_dom``; this
module holds the rules and runs on CPython too, against any :class:`DialogView`.
"""

from __future__ import annotations

import json
import sys
import unicodedata
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal, Protocol

from .._compat import package_data
from .._core.jsonvalue import JsonValue
from .._core.pipeline.confirmation import PendingConfirmation
from .._core.preview import Preview
from .._core.records import record
from .._core.registry.registry import AgentSurfaceRegistry

__all__ = [
    "CLOSE_SHIELD_MS",
    "INPUT_PROTECTION_MS",
    "ConfirmationDialog",
    "Decided",
    "DialogView",
    "Outdated",
    "PreviewRow",
    "ShownRequest",
    "Verdict",
    "cell_text",
    "format_input",
]

INPUT_PROTECTION_MS = 700  # like browsers' permission prompts: long enough to notice a change
CLOSE_SHIELD_MS = 700

Decision = Literal["approve", "deny"]
# What became of one gesture (kept in ``ConfirmationDialog.verdicts`` for the page and tests).
Verdict = Literal[
    "approved",  # resolved: approved
    "denied",  # resolved: denied
    "untrusted",  # not a user gesture: ignored
    "protected",  # during input protection: ignored
    "other-request",  # the press began on another request (or before the protection ended)
    "stale",  # for a request no longer shown or no longer pending
    "outdated",  # Approve pressed, but the state the preview was computed from changed: refused
]
Decided = Callable[[bool, PendingConfirmation], None]
Outdated = Callable[[PendingConfirmation], None]

# The longest text of one preview cell on screen (the whole value is in the preview's digest).
MAX_CELL_CHARS = 120
OUTDATED_TEXT = (
    "Not applied: what this request would change has changed since it was shown to you. "
    "The agent was told; it may ask again."
)


@record
class PreviewRow:
    """One row of the preview table, as the person reads it (plain text)."""

    row: str
    field: str
    before: str
    after: str


class DialogView(Protocol):
    """What the dialog needs from a rendering (the browser's is ``browser.dialog_dom``)."""

    def now_ms(self) -> float:
        """A monotonic clock in milliseconds (``performance.now()`` in the page)."""
        ...

    def call_later(self, ms: float, callback: Callable[[], None]) -> None:
        """Run ``callback`` once after ``ms`` milliseconds."""
        ...

    def show(self, item: PendingConfirmation, view: ShownRequest) -> None:
        """Open (or update) the dialog on ``item``; a new ``item`` moves focus into the dialog
        itself, never onto a button."""
        ...

    def unlock(self, confirmation_id: str) -> None:
        """The buttons of ``confirmation_id`` (if it is still on screen) accept input now."""
        ...

    def hide(self) -> None:
        """Close the dialog, shield the page from the closing click, give focus back."""
        ...

    def announce(self, text: str) -> None:
        """Tell assistive technology (an assertive live region)."""
        ...

    def warn(self, text: str) -> None:
        """Say inside the dialog why a gesture was ignored."""
        ...

    def countdown(self, text: str) -> None:
        """Show the time left before the request expires."""
        ...

    def close(self) -> None:
        """Remove the rendering from the page and free what it holds."""
        ...


@record
class ShownRequest:
    """The texts and state one rendering of a request needs (all plain text, never HTML)."""

    title: str
    summary: str
    capability: str
    effect: str
    input_text: str
    waiting: int  # how many more requests queue behind this one
    locked: bool  # input protection still running
    expires_in: str
    preview: tuple[PreviewRow, ...] = ()  # what the call will change (empty: no preview)
    preview_note: str = ""  # e.g. "and 12 more changes not shown"
    preview_caption: str = ""  # e.g. "What will change (7 changes)"

    @classmethod
    def of(cls, item: PendingConfirmation, waiting: int, locked: bool, expires_in: str) -> ShownRequest:
        rows, note = preview_rows(item.preview)
        return cls(
            title="An agent asks for your approval",
            summary=visible(item.summary, keep=LINE_BREAK),
            capability=item.capability_id,
            effect=item.effect,
            input_text=format_input(item.input),
            waiting=waiting,
            locked=locked,
            expires_in=expires_in,
            preview=rows,
            preview_note=note,
            preview_caption=preview_caption(item.preview),
        )


def preview_rows(preview: Preview | None) -> tuple[tuple[PreviewRow, ...], str]:
    """A preview as table rows of plain text, and the note on what is not shown."""
    if preview is None:
        return (), ""
    rows = tuple(
        PreviewRow(cell_text(c.row), cell_text(c.field), cell_text(c.before), cell_text(c.after))
        for c in preview.changes
    )
    hidden = preview.not_shown
    note = f"and {hidden} more change{'s' if hidden != 1 else ''} not shown" if hidden else ""
    return rows, note


def preview_caption(preview: Preview | None) -> str:
    """The preview table's caption, with how many changes there are in all."""
    if preview is None:
        return ""
    return f"What will change ({preview.total} change{'s' if preview.total != 1 else ''})"


# Characters that show as nothing or move the text around them: controls, format characters
# (bidi overrides and isolates, zero-width ones), surrogates, private use, unassigned.
_HIDDEN = ("Cc", "Cf", "Cs", "Co", "Cn")
LINE_BREAK = "\n"  # kept where a text's layout has lines (the input's JSON, the summary)


def visible(text: str, keep: str = "") -> str:
    """``text`` with every character that could disguise it (a right-to-left override that
    reverses "0001-ved" into "dev-1000", a zero-width space) shown as a visible ``\\uXXXX``
    escape, except those in ``keep`` (line breaks of a layout): what the agent sent is what the
    person reads."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(
        f"\\u{ord(ch):04x}" if ch not in keep and unicodedata.category(ch) in _HIDDEN else ch for ch in text
    )


def cell_text(value: JsonValue) -> str:
    """One preview value as the person reads it: a string as itself, anything else as compact
    JSON; hidden characters made visible (:func:`visible`); at most ``MAX_CELL_CHARS``
    characters."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ": "))
    shown = visible(text[: MAX_CELL_CHARS * 2])
    if len(shown) > MAX_CELL_CHARS or len(text) > MAX_CELL_CHARS * 2:
        shown = shown[: MAX_CELL_CHARS - 1] + "…"
    return shown


def format_input(value: JsonValue) -> str:
    """The exact effective input as the person reads it: indented JSON, keys in their order,
    hidden characters as JSON's own ``\\uXXXX`` escapes (the text is still the same JSON)."""
    return visible(json.dumps(value, indent=2, ensure_ascii=False), keep=LINE_BREAK)


def countdown_text(seconds_left: float) -> str:
    left = max(0, int(seconds_left))
    return f"Expires in {left // 60}:{left % 60:02d}"


def _expires_at(item: PendingConfirmation) -> float | None:
    try:
        return datetime.fromisoformat(item.expires_at.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class ConfirmationDialog:
    """Shows ``registry.confirmations.pending()`` one at a time (oldest first) and turns the
    person's gestures into ``resolve()`` calls, under the rules in this module's docstring."""

    def __init__(
        self,
        registry: AgentSurfaceRegistry,
        view: DialogView | None = None,
        *,
        parent: Any = None,
        on_decided: Decided | None = None,
        input_protection_ms: float = INPUT_PROTECTION_MS,
        close_shield_ms: float = CLOSE_SHIELD_MS,
        on_outdated: Outdated | None = None,
    ) -> None:
        """Add the confirmation dialog to the page (under ``parent``, default ``document.body``) and
        keep it in step with ``registry.confirmations``. In the browser (Pyodide) it draws itself;
        elsewhere pass a ``view`` (a ``DialogView``: a test double, another toolkit). Pass the result's
        ``confirm`` to ``WebMCPAdapter(confirm=...)`` so the draft WebMCP shape prompts in it.

        Its optional "If you deny, why?" field gives a denial the person's words: the registry keeps
        them sanitized (one line of plain text, at most 200 characters), the agent's
        ``CONFIRMATION_INVALID`` carries them as ``details.personSaid``, and the audit's
        ``confirmation-denied`` event as its ``detail``.

        A request whose capability declares a preview shows it as a table (row, field, before,
        after). If the state it was computed from changed by the time the person presses Approve,
        nothing is approved: the request ends stale (the agent gets ``CONFIRMATION_INVALID``
        with reason ``stale``), the dialog closes, assistive technology is told, and
        ``on_outdated(pending)`` lets the page say so too."""
        dom_view = None
        if view is None:
            if sys.platform != "emscripten":
                raise RuntimeError("ConfirmationDialog draws itself only in the browser: pass view= elsewhere")
            from ..browser.dialog_dom import DomDialogView

            view = dom_view = DomDialogView(parent=parent, css=_dialog_css(), close_shield_ms=close_shield_ms)
        self.registry = registry
        self.view = view
        self.on_decided = on_decided
        self.on_outdated = on_outdated
        self.input_protection_ms = input_protection_ms
        self.verdicts: list[Verdict] = []  # every gesture's fate, oldest first (bounded)
        self.prompts = 0  # how many times the adapter's confirm hook opened this dialog
        self._shown: str | None = None  # the confirmation id on screen
        self._armed_at = 0.0  # view.now_ms() from which the shown request accepts input
        self._pressed: str | None = None  # the request a pointer press began on
        self._announced = ""  # what render() last told assistive technology
        self._unsubscribe: Callable[[], None] | None = registry.confirmations.subscribe(
            lambda _pending: self.render()
        )
        self.render()
        if dom_view is not None:
            dom_view.connect(press=self.press, activate=self.activate, escape=self.escape, tick=self.tick)

    # ------------------------------------------------------------------ state

    @property
    def shown(self) -> str | None:
        """The confirmation id on screen, or None when the dialog is closed."""
        return self._shown

    def armed(self) -> bool:
        """Whether the shown request accepts input (its input protection is over)."""
        return self._shown is not None and self.view.now_ms() >= self._armed_at

    def close(self) -> None:
        """Stop following the registry and remove the dialog from the page."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
            self._shown = None
            self.view.close()

    # ------------------------------------------------------------------ the person's gestures

    def press(self, confirmation_id: str | None, *, trusted: bool) -> None:
        """A pointer press began (on a button of ``confirmation_id``, or elsewhere: None)."""
        ok = trusted and confirmation_id is not None and confirmation_id == self._shown and self.armed()
        self._pressed = confirmation_id if ok else None

    def activate(
        self, decision: str, confirmation_id: str, *, trusted: bool, keyboard: bool, reason: str | None = None
    ) -> Verdict:
        """A button was activated: by a pointer click (``keyboard`` False: the press must have
        begun on this request) or by the keyboard or assistive technology (``keyboard`` True).
        ``reason``: what the person typed in the dialog's "why" field (kept only for a denial,
        sanitized by the registry, given to the agent as the person's words)."""
        pressed, self._pressed = self._pressed, None
        if decision not in ("approve", "deny"):
            return self._record("stale")
        # Only the person's own gesture counts: page scripts and agents driving the DOM make
        # untrusted events, and the dialog exists so that they cannot approve.
        if not trusted:
            self.view.warn("Ignored an action that did not come from you.")
            return self._record("untrusted")
        if confirmation_id != self._shown:
            return self._record("stale")
        if not self.armed():
            return self._record("protected")
        if not keyboard and pressed != confirmation_id:
            self.view.warn("Ignored a click that began on another request.")
            return self._record("other-request")
        return self._decide(confirmation_id, decision == "approve", reason)

    def escape(self, *, trusted: bool, repeat: bool = False, reason: str | None = None) -> Verdict | None:
        """Escape denies the shown request (not a held key, not during input protection)."""
        if self._shown is None:
            return None
        if not trusted:
            return self._record("untrusted")
        if repeat or not self.armed():
            return self._record("protected")
        return self._decide(self._shown, False, reason)

    def _decide(self, confirmation_id: str, approved: bool, reason: str | None = None) -> Verdict:
        pending = self.registry.confirmations.get(confirmation_id)
        said = None if approved else reason
        confirmations = self.registry.confirmations
        if not confirmations.resolve(confirmation_id, approved=approved, reason=said):
            self.render()
            return self._record("stale")
        if approved and confirmations.status(confirmation_id) == "stale":
            # The preview no longer held: nothing was approved (the store closed the request);
            # one announcement says so and names the request shown next, if any.
            self.view.announce(f"{OUTDATED_TEXT} {self._announced}" if self._shown is not None else OUTDATED_TEXT)
            if pending is not None and self.on_outdated is not None:
                self.on_outdated(pending)
            return self._record("outdated")
        if pending is not None and self.on_decided is not None:
            self.on_decided(approved, pending)
        return self._record("approved" if approved else "denied")

    def _record(self, verdict: Verdict) -> Verdict:
        self.verdicts.append(verdict)
        del self.verdicts[:-100]
        return verdict

    # ------------------------------------------------------------------ rendering

    def render(self) -> None:
        """Show the oldest pending request, or close; called on every change of the pending set."""
        pending = self.registry.confirmations.pending()
        if not pending:
            if self._shown is not None:
                self._shown, self._pressed = None, None
                self.view.hide()
            return
        item = pending[0]
        if item.confirmation_id != self._shown:  # a different request: protect, announce
            previous, self._shown = self._shown, item.confirmation_id
            self._pressed = None
            self._armed_at = self.view.now_ms() + self.input_protection_ms
            cid = item.confirmation_id
            self.view.call_later(self.input_protection_ms, lambda: self._unlock(cid))
            lead = (
                "Another request replaced the previous one" if previous else "An agent asks for your approval"
            )
            self._announced = f"{lead}: {visible(item.summary, keep=LINE_BREAK)}"
            self.view.announce(self._announced)
        self.view.show(item, ShownRequest.of(item, len(pending) - 1, not self.armed(), self._time_left(item)))

    def _unlock(self, confirmation_id: str) -> None:
        if confirmation_id == self._shown and self.armed():  # not replaced meanwhile
            self.view.unlock(confirmation_id)

    def _time_left(self, item: PendingConfirmation) -> str:
        expires = _expires_at(item)
        return "" if expires is None else countdown_text(expires - self.registry.now())

    def tick(self) -> None:
        """Once a second: refresh the countdown; an expired request goes (the store expires it)."""
        if self._shown is None:
            return
        item = self.registry.confirmations.get(self._shown)
        if item is None:
            self.render()
            return
        self.view.countdown(self._time_left(item))
        expires = _expires_at(item)
        if expires is not None and expires <= self.registry.now():
            self.registry.confirmations.pending()  # lets the store expire it (and notify us)

    # ------------------------------------------------------------------ the adapter's hook

    async def confirm(self, pending: PendingConfirmation, client: Any = None) -> bool:
        """The WebMCP adapter's ``confirm`` hook (``WebMCPAdapter(confirm=dialog.confirm)``):
        runs inside the agent client's ``requestUserInteraction`` while the person decides in this
        same dialog, and answers whether they approved. The decision itself is the registry's
        (the dialog resolves the record), so the call ends with one result either way."""
        self.prompts += 1
        self.render()
        outcome = await self.registry.confirmations.wait_for(pending.confirmation_id)
        return outcome == "approved"


def _dialog_css() -> str:
    """The dialog's stylesheet, read beside this module (from a wheel, a directory or the page's
    zip) with its loader: importlib.resources would cost the page ~0.1 s to compile on the way to
    its first tool."""
    data = package_data(__package__ or "agentsurface.page", "dialog.css")
    if data is None:
        raise OSError("agentsurface.page's loader cannot read dialog.css")
    return data.decode("utf-8")

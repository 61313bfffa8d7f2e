"""The confirmation dialog's rules on CPython (agentsurface.page.dialog), against a recording
view with its own millisecond clock; the real DOM is covered by e2e/test_page_dialog.py."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from agentsurface import AgentComponent, Change, PendingConfirmation, action
from agentsurface.page.dialog import (
    INPUT_PROTECTION_MS,
    ConfirmationDialog,
    PreviewRow,
    ShownRequest,
    cell_text,
    format_input,
)
from agentsurface.testing import create_test_surface
from agentsurface.testing.harness import TestSurface


class Vault(AgentComponent, type="bank.vault", description="The vault"):
    def __init__(self) -> None:
        self.opened: list[str] = []

    @action("Open a drawer of the vault", confirmation="required")
    def open_drawer(self, drawer: str) -> str:
        self.opened.append(drawer)
        return drawer


class RecordingView:
    """A DialogView that records what it was told and runs timers on its own manual clock."""

    def __init__(self) -> None:
        self.ms = 0.0
        self.timers: list[tuple[float, Callable[[], None]]] = []
        self.shown: list[tuple[str, ShownRequest]] = []
        self.unlocked: list[str] = []
        self.hidden = 0
        self.announced: list[str] = []
        self.warnings: list[str] = []
        self.countdowns: list[str] = []
        self.disposed = False

    def now_ms(self) -> float:
        return self.ms

    def call_later(self, ms: float, callback: Callable[[], None]) -> None:
        self.timers.append((self.ms + ms, callback))

    def advance(self, ms: float) -> None:
        self.ms += ms
        due = [t for t in self.timers if t[0] <= self.ms]
        self.timers = [t for t in self.timers if t[0] > self.ms]
        for _, callback in sorted(due, key=lambda t: t[0]):
            callback()

    def show(self, item: PendingConfirmation, view: ShownRequest) -> None:
        self.shown.append((item.confirmation_id, view))

    def unlock(self, confirmation_id: str) -> None:
        self.unlocked.append(confirmation_id)

    def hide(self) -> None:
        self.hidden += 1

    def announce(self, text: str) -> None:
        self.announced.append(text)

    def warn(self, text: str) -> None:
        self.warnings.append(text)

    def countdown(self, text: str) -> None:
        self.countdowns.append(text)

    def close(self) -> None:
        self.disposed = True


@pytest.fixture
def vault() -> Vault:
    return Vault()


@pytest.fixture
def surface(vault: Vault) -> TestSurface:
    surface = create_test_surface(contracts=[Vault])
    surface.mount(vault)
    return surface


async def request(surface: TestSurface, drawer: str) -> str:
    """The agent asks; the registry answers CONFIRMATION_REQUIRED with a pending record."""
    result = await surface.invoke("view:bank.vault.openDrawer", {"drawer": drawer})
    assert result.error is not None and result.error.code == "CONFIRMATION_REQUIRED"
    assert result.error.details is not None
    cid = result.error.details["confirmationId"]
    assert isinstance(cid, str)
    return cid


def status(surface: TestSurface, cid: str) -> str | None:
    return next(
        (p.confirmation_id for p in surface.registry.confirmations.pending() if p.confirmation_id == cid),
        None,
    )


async def test_shows_the_oldest_pending_request_with_its_exact_input_and_queue(surface: TestSurface) -> None:
    view = RecordingView()
    dialog = ConfirmationDialog(surface.registry, view)
    assert dialog.shown is None and view.shown == []
    first = await request(surface, "<b>gold</b>")
    second = await request(surface, "silver")
    assert dialog.shown == first
    cid, shown = view.shown[-1]
    assert cid == first and shown.waiting == 1 and shown.locked
    assert shown.input_text == format_input({"drawer": "<b>gold</b>"}) == '{\n  "drawer": "<b>gold</b>"\n}'
    assert shown.capability == "view:bank.vault.openDrawer" and shown.effect == "local-state"
    assert shown.expires_in.startswith("Expires in ")
    assert view.announced == [f"An agent asks for your approval: {shown.summary}"]
    assert second != first


async def test_an_untrusted_activation_never_decides(surface: TestSurface, vault: Vault) -> None:
    view = RecordingView()
    dialog = ConfirmationDialog(surface.registry, view)
    cid = await request(surface, "gold")
    view.advance(INPUT_PROTECTION_MS)
    assert dialog.activate("approve", cid, trusted=False, keyboard=True) == "untrusted"
    dialog.press(cid, trusted=False)
    assert dialog.activate("approve", cid, trusted=False, keyboard=False) == "untrusted"
    assert dialog.escape(trusted=False) == "untrusted"
    assert status(surface, cid) == cid and vault.opened == []
    assert view.warnings == ["Ignored an action that did not come from you."] * 2


async def test_input_protection_holds_every_gesture_until_it_ends(surface: TestSurface) -> None:
    view = RecordingView()
    dialog = ConfirmationDialog(surface.registry, view)
    cid = await request(surface, "gold")
    view.advance(INPUT_PROTECTION_MS - 1)
    assert view.unlocked == []
    dialog.press(cid, trusted=True)
    assert dialog.activate("approve", cid, trusted=True, keyboard=False) == "protected"
    assert dialog.activate("approve", cid, trusted=True, keyboard=True) == "protected"
    assert dialog.escape(trusted=True) == "protected"
    view.advance(1)
    assert view.unlocked == [cid] and status(surface, cid) == cid
    dialog.press(cid, trusted=True)
    assert dialog.activate("approve", cid, trusted=True, keyboard=False) == "approved"
    assert surface.registry.confirmations.pending() == [] and view.hidden == 1


async def test_a_double_click_approves_only_the_request_it_began_on(surface: TestSurface) -> None:
    view = RecordingView()
    decided: list[tuple[bool, Any]] = []
    dialog = ConfirmationDialog(
        surface.registry, view, on_decided=lambda ok, p: decided.append((ok, p.input))
    )
    first = await request(surface, "gold")
    second = await request(surface, "silver")
    view.advance(INPUT_PROTECTION_MS)
    dialog.press(first, trusted=True)
    assert dialog.activate("approve", first, trusted=True, keyboard=False) == "approved"
    # The dialog now shows the second request; the double-click's second press and click land
    # on its Approve at once: protected, and never counted.
    assert dialog.shown == second and view.announced[-1].startswith("Another request replaced")
    dialog.press(second, trusted=True)
    assert dialog.activate("approve", second, trusted=True, keyboard=False) == "protected"
    view.advance(INPUT_PROTECTION_MS)
    # A click whose press began before the protection ended does not count either.
    assert dialog.activate("approve", second, trusted=True, keyboard=False) == "other-request"
    assert status(surface, second) == second
    assert decided == [(True, {"drawer": "gold"})]


async def test_a_press_on_one_request_never_counts_for_the_next(surface: TestSurface) -> None:
    view = RecordingView()
    dialog = ConfirmationDialog(surface.registry, view, input_protection_ms=0)
    first = await request(surface, "gold")
    second = await request(surface, "silver")
    dialog.press(first, trusted=True)
    surface.registry.confirmations.resolve(first, approved=False)  # decided elsewhere meanwhile
    assert dialog.shown == second
    assert dialog.activate("approve", second, trusted=True, keyboard=False) == "other-request"
    assert dialog.activate("approve", first, trusted=True, keyboard=True) == "stale"
    assert status(surface, second) == second


async def test_keyboard_activation_and_escape(surface: TestSurface) -> None:
    view = RecordingView()
    dialog = ConfirmationDialog(surface.registry, view)
    first = await request(surface, "gold")
    second = await request(surface, "silver")
    view.advance(INPUT_PROTECTION_MS)
    assert dialog.activate("approve", first, trusted=True, keyboard=True) == "approved"
    assert dialog.escape(trusted=True) == "protected"  # the next request is new on screen
    view.advance(INPUT_PROTECTION_MS)
    assert dialog.escape(trusted=True, repeat=True) == "protected"  # a held key
    assert dialog.escape(trusted=True) == "denied"
    assert status(surface, second) is None and dialog.shown is None
    assert dialog.escape(trusted=True) is None  # closed: nothing to deny


async def test_a_denial_keeps_the_persons_words_and_an_approval_drops_them(surface: TestSurface) -> None:
    view = RecordingView()
    dialog = ConfirmationDialog(surface.registry, view)
    confirmations = surface.registry.confirmations
    first = await request(surface, "gold")
    second = await request(surface, "silver")
    third = await request(surface, "bronze")
    view.advance(INPUT_PROTECTION_MS)
    assert dialog.activate("deny", first, trusted=True, keyboard=True, reason="Not\nthe gold\u202e") == "denied"
    assert confirmations.reason_of(first) == "Not the gold"  # one line, no bidi override
    view.advance(INPUT_PROTECTION_MS)
    assert dialog.activate("approve", second, trusted=True, keyboard=True, reason="ignored") == "approved"
    assert confirmations.reason_of(second) is None
    view.advance(INPUT_PROTECTION_MS)
    assert dialog.escape(trusted=True, reason="escape too") == "denied"
    assert confirmations.reason_of(third) == "escape too"


async def test_expiry_countdown_and_expiry_close_the_dialog(surface: TestSurface) -> None:
    view = RecordingView()
    dialog = ConfirmationDialog(surface.registry, view)
    await request(surface, "gold")
    ttl = view.shown[-1][1].expires_in
    surface.clock.advance(61)
    dialog.tick()
    assert view.countdowns[-1] != ttl and view.countdowns[-1].startswith("Expires in ")
    surface.clock.advance(3600)
    dialog.tick()
    assert dialog.shown is None and view.hidden == 1


async def test_the_confirm_hook_answers_with_the_persons_decision(surface: TestSurface) -> None:
    view = RecordingView()
    dialog = ConfirmationDialog(surface.registry, view)
    cid = await request(surface, "gold")
    pending = surface.registry.confirmations.get(cid)
    assert pending is not None
    answer = asyncio.ensure_future(dialog.confirm(pending, None))
    await asyncio.sleep(0)
    assert not answer.done() and dialog.prompts == 1
    view.advance(INPUT_PROTECTION_MS)
    dialog.press(cid, trusted=True)
    dialog.activate("approve", cid, trusted=True, keyboard=False)
    assert await asyncio.wait_for(answer, 1) is True

    denied = await request(surface, "silver")
    pending = surface.registry.confirmations.get(denied)
    assert pending is not None
    answer = asyncio.ensure_future(dialog.confirm(pending, None))
    view.advance(INPUT_PROTECTION_MS)
    dialog.escape(trusted=True)
    assert await asyncio.wait_for(answer, 1) is False


async def test_close_stops_following_the_registry(surface: TestSurface) -> None:
    view = RecordingView()
    dialog = ConfirmationDialog(surface.registry, view)
    dialog.close()
    assert view.disposed
    await request(surface, "gold")
    assert view.shown == [] and dialog.shown is None


def test_input_text_is_the_exact_value_not_markup() -> None:
    value: Any = {"name": "<img src=x onerror=alert(1)>", "n": 1.5, "ok": None, "list": ["é"]}
    text = format_input(value)
    assert "<img src=x onerror=alert(1)>" in text and '"é"' in text


async def test_hidden_characters_in_the_input_and_summary_cannot_disguise_them(surface: TestSurface) -> None:
    """An agent's "dev-\u202e1000" reads "dev-0001" on screen; the dialog shows the override
    itself, in the input (as JSON's own escape: still the same JSON) and in the summary the app
    built from it. Letters of right-to-left scripts stay as they are."""
    view = RecordingView()
    ConfirmationDialog(surface.registry, view)
    sneaky = "dev-\u202e1000\u200b שלום"
    await request(surface, sneaky)
    _cid, shown = view.shown[-1]
    assert "\u202e" not in shown.input_text and "\u200b" not in shown.input_text
    assert "dev-\\u202e1000\\u200b שלום" in shown.input_text
    assert json.loads(shown.input_text) == {"drawer": sneaky}
    assert sneaky not in shown.summary and "\\u202e" in shown.summary
    assert format_input({"a": "x\ny"}) == '{\n  "a": "x\\ny"\n}'  # the layout's line breaks stay


# --------------------------------------------------------------------------- previews (issue 39.3)


class Racks(AgentComponent, type="dc.racks", description="Server racks"):
    def __init__(self, count: int = 2) -> None:
        self.power = {f"r{i}": "on" for i in range(count)}
        self.switched: list[list[str]] = []

    @action("Power racks off", confirmation="required")
    def power_off(self, racks: list[str]) -> None:
        self.switched.append(racks)

    @power_off.preview
    def what_power_off_changes(self, racks: list[str]) -> list[Change]:
        return [Change(r, "power", self.power[r], "off") for r in racks]


async def racks_request(racks: Racks, names: list[str]) -> tuple[TestSurface, str]:
    surface = create_test_surface(contracts=[Racks])
    surface.mount(racks)
    result = await surface.invoke("view:dc.racks.powerOff", {"racks": names})
    assert result.error is not None and result.error.details is not None
    cid = result.error.details["confirmationId"]
    assert isinstance(cid, str)
    return surface, cid


async def test_the_preview_is_shown_as_rows_of_plain_text() -> None:
    racks = Racks(60)
    racks.power["r1"] = "on\u202e ffo"  # a bidi override cannot disguise a value
    surface, _cid = await racks_request(racks, [f"r{i}" for i in range(60)])
    view = RecordingView()
    ConfirmationDialog(surface.registry, view)
    _, shown = view.shown[-1]
    assert shown.preview[0] == PreviewRow("r0", "power", "on", "off")
    assert shown.preview[1].before == "on\\u202e ffo"
    assert len(shown.preview) == 50 and shown.preview_note == "and 10 more changes not shown"
    assert shown.preview_caption == "What will change (60 changes)"


def test_cell_text_is_plain_bounded_and_shows_hidden_characters() -> None:
    assert cell_text("online") == "online"
    assert cell_text(None) == "null" and cell_text(3) == "3" and cell_text({"a": [1, "é"]}) == '{"a": [1,"é"]}'
    assert cell_text("a\u200bb\x07") == "a\\u200bb\\u0007"
    long = cell_text("x" * 10_000)
    assert len(long) == 120 and long.endswith("…")
    assert cell_text("<b>bold</b>") == "<b>bold</b>"  # text, never parsed (the DOM sets textContent)


async def test_approve_on_an_outdated_preview_approves_nothing_and_says_so() -> None:
    racks = Racks()
    surface, cid = await racks_request(racks, ["r0", "r1"])
    view = RecordingView()
    decided: list[bool] = []
    outdated: list[PendingConfirmation] = []
    dialog = ConfirmationDialog(
        surface.registry, view, on_decided=lambda ok, p: decided.append(ok), on_outdated=outdated.append
    )
    view.advance(INPUT_PROTECTION_MS)
    racks.power["r1"] = "off"  # changed while the person reads the dialog
    dialog.press(cid, trusted=True)
    assert dialog.activate("approve", cid, trusted=True, keyboard=False) == "outdated"
    assert surface.registry.confirmations.status(cid) == "stale"
    assert view.hidden == 1 and dialog.shown is None
    assert view.announced[-1].startswith("Not applied: what this request would change has changed")
    assert decided == [] and [p.confirmation_id for p in outdated] == [cid]
    retry = await surface.invoke("view:dc.racks.powerOff", {"racks": ["r0", "r1"]}, confirmation_id=cid)
    assert retry.error is not None and retry.error.details == {"reason": "stale"}
    assert racks.switched == []


async def test_an_outdated_approve_with_another_request_waiting_announces_both() -> None:
    racks = Racks()
    surface, first = await racks_request(racks, ["r0"])
    second_result = await surface.invoke("view:dc.racks.powerOff", {"racks": ["r1"]})
    assert second_result.error is not None
    view = RecordingView()
    dialog = ConfirmationDialog(surface.registry, view)
    view.advance(INPUT_PROTECTION_MS)
    racks.power["r0"] = "off"
    assert dialog.activate("approve", first, trusted=True, keyboard=True) == "outdated"
    assert dialog.shown != first and dialog.shown is not None
    assert view.announced[-1].startswith("Not applied: ")
    assert "Another request replaced the previous one: " in view.announced[-1]

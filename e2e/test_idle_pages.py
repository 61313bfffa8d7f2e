"""Every page we ship or test against, left alone once ready: it must stay silent.

Timers, idle-time imports and periodic redraws run while nobody looks; an error they raise every
second would never show in a test that clicks and leaves. All the pages are opened at once (each
in its own context, booting in parallel), and each idles IDLE_S seconds after it is ready. Then
none may have had an uncaught error, a console error or a PyScript error box since it was ready
(the conftest guard also fails the test on anything during boot).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pytest

IDLE_S = 20.0
STATUS_READY = "() => document.getElementById('status')?.textContent === 'ready'"
PYSCRIPT_READY = "() => (document.getElementById('out')?.textContent || '').startsWith('hello')"


@dataclass(frozen=True)
class IdlePage:
    name: str
    path: str
    variant: str
    ready: str  # a JS predicate
    demo: bool = False  # served by the demo backend (API + static files) instead of the plain server
    then: str | None = None  # JS run once ready, to reach the state that idles
    until: str | None = None  # JS predicate: that state is reached (the idle starts there)


# The agent asks to disable the offline devices in Milan and the person leaves the confirmation
# dialog open (its expiry countdown ticks every second). The call stays pending: nothing changes.
DEMO_READY = "() => document.body.dataset.ready === 'true'"
DEMO_PENDING_CONFIRMATION = """async () => {
    const mc = document.modelContext;
    const tool = async (name) => {
        for (let i = 0; i < 200; i++) {
            const found = (await mc.getTools()).find((t) => t.name === name);
            if (found) return found;
            await new Promise((resolve) => setTimeout(resolve, 50));
        }
        throw new Error(`no tool ${name}`);
    };
    await mc.executeTool(await tool('view_devices__filters__setFilters'), {status: 'offline', city: 'Milan'});
    await mc.executeTool(await tool('view_devices__table__selectVisible'), {});
    // As an agent does: a surface changing under the call (CAPABILITY_NOT_FOUND, retry after-refresh)
    // is listed again and the call retried; one still running after a second waits for the person.
    for (let attempt = 0; ; attempt++) {
        window.idleCall = mc.executeTool(await tool('domain_devices__disable'), {reason: 'left idle'});
        const early = await Promise.race([window.idleCall, new Promise((r) => setTimeout(() => r(null), 1000))]);
        if (early === null || attempt >= 10 || !JSON.stringify(early).includes('CAPABILITY_NOT_FOUND')) break;
        await new Promise((r) => setTimeout(r, 100));
    }
    // Nobody answers: the dialog just stays open. Should the call end instead, its outcome is kept
    // for the test's message (a call refused before any dialog would otherwise be a bare timeout).
    window.idleCall.then(
        (result) => { window.idleOutcome = JSON.stringify(result); },
        (error) => { window.idleOutcome = String(error); },
    );
}"""
DIALOG_OPEN = (
    "() => { const b = document.getElementById('agentsurface-confirm-approve'); return !!b && b.offsetParent !== null; }"
)


PAGES = [
    IdlePage("demo console", "/index.html", "webmcp", DEMO_READY, demo=True),
    IdlePage(
        "demo console, confirmation open",
        "/index.html",
        "webmcp",
        DEMO_READY,
        demo=True,
        then=DEMO_PENDING_CONFIRMATION,
        until=DIALOG_OPEN,
    ),
    IdlePage("adapter, native", "/e2e/pages/adapter.html", "webmcp", STATUS_READY),
    IdlePage("adapter, polyfill", "/e2e/pages/adapter-polyfill.html", "plain", STATUS_READY),
    IdlePage("adapter, provideContext", "/e2e/pages/adapter-provide.html", "plain", STATUS_READY),
    IdlePage("smoke, native", "/e2e/pages/smoke.html", "webmcp", STATUS_READY),
    IdlePage("smoke, polyfill", "/e2e/pages/smoke-polyfill.html", "plain", STATUS_READY),
    IdlePage("PyScript", "/e2e/pages/pyscript.html", "plain", PYSCRIPT_READY),
    IdlePage("PyScript, micropip", "/e2e/pages/pyscript-micropip.html", "plain", PYSCRIPT_READY),
]


def _problems(run: Any) -> list[str]:
    """What the page has reported so far (console errors, page errors) and its PyScript error boxes."""
    boxes = run.page.evaluate("() => [...document.querySelectorAll('.py-error')].map((e) => e.textContent)")
    return [*run.console_errors, *(f"PyScript error box: {text}" for text in boxes)]


def test_every_page_stays_silent_when_left_idle(open_page: Any, demo_url: str) -> None:
    runs = [
        (spec, open_page(spec.path, variant=spec.variant, base=demo_url if spec.demo else None))
        for spec in PAGES
    ]

    ready_at: dict[str, float] = {}
    at_ready: dict[str, list[str]] = {}
    for spec, run in runs:  # they boot in parallel; wait for each in turn
        run.page.wait_for_function(spec.ready, timeout=180_000)
        if spec.then is not None:
            run.page.evaluate(spec.then)
        if spec.until is not None:
            # Also stops waiting when the pending call ended (the dialog never came), saying how.
            run.page.wait_for_function(f"() => ({spec.until})() || window.idleOutcome !== undefined", timeout=60_000)
            reached = run.page.evaluate(spec.until)
            assert reached, f"{spec.name}: the call ended before its dialog: {run.page.evaluate('window.idleOutcome')}"
        ready_at[spec.name] = time.monotonic()
        at_ready[spec.name] = _problems(run)
    assert len(ready_at) == len(PAGES)

    # Each page idles at least IDLE_S after its own ready moment (the last one to be ready decides).
    # Sleep through Playwright so that events keep being dispatched meanwhile.
    pump = runs[0][1].page
    while (left := max(ready_at.values()) + IDLE_S - time.monotonic()) > 0:
        pump.wait_for_timeout(min(left, 1.0) * 1000)

    noisy = {}
    for spec, run in runs:
        since_ready = list((Counter(_problems(run)) - Counter(at_ready[spec.name])).elements())
        if since_ready or at_ready[spec.name]:
            noisy[spec.name] = {"since ready": since_ready, "during boot": at_ready[spec.name]}
        assert run.external_requests == [], spec.name
    if noisy:
        pytest.fail(f"pages were not silent (idle {IDLE_S:.0f} s after ready): {noisy}", pytrace=False)

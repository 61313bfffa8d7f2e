"""The devices console is usable with assistive technology and the keyboard: axe-core (injected by
the test, never loaded by the page) finds no serious or critical violation, idle, with a device's
drawer open and with the person's confirmation dialog open. Screenshots go to e2e/artifacts/."""

from __future__ import annotations

from typing import Any

from a11y import axe_violations, describe_violations
from test_console import ARTIFACTS, START_CALL, call, console_server, open_console

__all__ = ["console_server"]  # the fresh-backend fixture, shared with test_console


def screenshot(run: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    run.page.screenshot(path=str(ARTIFACTS / f"a11y-{name}.png"))


def test_the_idle_console_has_no_serious_or_critical_accessibility_violation(
    open_page: Any, console_server: str
) -> None:
    run = open_console(open_page, console_server)
    screenshot(run, "idle")
    violations = axe_violations(run.page)
    assert not violations, describe_violations(violations)


def test_the_console_with_a_devices_drawer_open_has_no_serious_or_critical_accessibility_violation(
    open_page: Any, console_server: str
) -> None:
    run = open_console(open_page, console_server)
    run.page.click("#rows tr[data-id='dev-0003'] .name")
    run.page.wait_for_selector("#drawer:not([hidden]) h2")
    screenshot(run, "drawer")
    violations = axe_violations(run.page)
    assert not violations, describe_violations(violations)


def test_the_idle_page_does_not_load_axe(open_page: Any, console_server: str) -> None:
    run = open_console(open_page, console_server)
    assert run.page.evaluate("() => typeof window.axe") == "undefined"
    assert not run.page.evaluate(
        "() => performance.getEntriesByType('resource').some((e) => e.name.includes('axe'))"
    )


def test_the_console_with_the_confirmation_dialog_open_has_no_serious_or_critical_accessibility_violation(
    open_page: Any, console_server: str
) -> None:
    run = open_console(open_page, console_server)
    # The agent selects the offline devices in Milan and asks to disable them: the page asks the person.
    call(run, "view_devices__filters__setFilters", {"status": "offline", "city": "Milan"})
    call(run, "view_devices__table__selectVisible", {})
    run.page.wait_for_function(
        "async () => (await document.modelContext.getTools()).some((t) => t.name === 'domain_devices__disable')"
    )
    run.page.evaluate(START_CALL, ["domain_devices__disable", {"reason": "maintenance"}])
    run.page.wait_for_selector("#agentsurface-confirm-approve:not([disabled])")  # after the input protection
    assert "Disable 7 device(s)" in run.page.inner_text("#agentsurface-confirm-dialog")
    screenshot(run, "confirmation")
    violations = axe_violations(run.page)
    assert not violations, describe_violations(violations)

"""The devices console's passkeys end to end in Chromium 156, with Chrome's virtual authenticator:
the person registers a passkey once from the console's top bar (a real click), and from then on
the server asks for it.

The console is opened at ``http://localhost:PORT``: the demo's relying party id is ``localhost``
(WebAuthn refuses IP addresses), so on ``127.0.0.1`` the console offers no passkey at all.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
OPERATOR = "demo-acme-operator"


@pytest.fixture
def console(web_dist: Path) -> Iterator[tuple[Any, str]]:
    """A fresh demo backend (seeded in-memory database); its base URL at localhost."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from demo.backend import start_demo_server

    server, url = start_demo_server(ROOT, port=0)
    yield server, url.replace("127.0.0.1", "localhost")
    server.shutdown()
    server.server_close()


def add_virtual_authenticator(run: Any) -> tuple[Any, str]:
    cdp = run.context.new_cdp_session(run.page)
    cdp.send("WebAuthn.enable", {"enableUI": False})
    added = cdp.send(
        "WebAuthn.addVirtualAuthenticator",
        {
            "options": {
                "protocol": "ctap2",
                "transport": "internal",
                "hasResidentKey": True,
                "hasUserVerification": True,
                "isUserVerified": True,
                "automaticPresenceSimulation": True,
            }
        },
    )
    return cdp, str(added["authenticatorId"])


def open_console(open_page: Any, base: str, token: str = OPERATOR) -> Any:
    run = open_page(f"/index.html?token={token}", variant="webmcp", base=base)
    run.page.wait_for_function("() => document.body.dataset.ready === 'true'")
    return run


def person_passkeys(server: Any) -> list[tuple[str, str]]:
    return list(
        server.store.invocations.run(
            lambda db: [tuple(r) for r in db.execute("SELECT person, transports FROM agent_surface_passkeys")]
        )
    )


def test_the_person_registers_a_passkey_once_from_the_console(open_page: Any, console: tuple[Any, str]) -> None:
    server, base = console
    run = open_console(open_page, base)
    cdp, authenticator = add_virtual_authenticator(run)
    button = run.page.locator("#passkey-register")
    button.wait_for()
    assert button.inner_text() == "Register a passkey"
    button.click()  # the person's click
    run.page.wait_for_selector("#passkey-registered")
    run.page.wait_for_function("() => document.getElementById('notice').textContent.includes('Passkey registered')")
    assert person_passkeys(server) == [("acme\x1fu-acme-operator", '["internal"]')]
    held = cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator})["credentials"]
    assert len(held) == 1 and held[0]["rpId"] == "localhost"

    # Once per person: reloaded, the console shows the passkey, and offers no second one.
    run.page.reload()
    run.page.wait_for_function("() => document.body.dataset.ready === 'true'")
    run.page.wait_for_selector("#passkey-registered")
    assert run.page.locator("#passkey-register").count() == 0
    assert len(person_passkeys(server)) == 1


def test_no_passkey_offer_where_passkeys_cannot_work(open_page: Any, console: tuple[Any, str]) -> None:
    _server, base = console
    run = open_console(open_page, base.replace("localhost", "127.0.0.1"))
    run.page.wait_for_timeout(300)
    assert run.page.locator("#passkey-slot").inner_text() == ""

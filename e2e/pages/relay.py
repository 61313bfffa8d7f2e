"""The relay's e2e page: runs in the page under Pyodide, on a Chromium without WebMCP.

``?app=notes`` or ``?app=ledger`` picks the app (each origin of the test runs one); both also
offer the same ``page.info`` observation, so the relay has a name two tabs share.
``?relay=PORT`` is the relay's port. The page opts in with ``connect_relay`` and installs the
drop-in confirmation dialog; ``window.relayPage.state()`` reports what the test checks.
"""

import json
import time
from urllib.parse import parse_qs

import js
from pyodide.ffi import create_proxy

from agentsurface import (
    AgentComponent,
    AgentSurfaceRegistry,
    CapabilityAuthority,
    action,
    compile_manifest,
    observation,
)
from agentsurface.adapters.model_context import ToolCall
from agentsurface.page.dialog import ConfirmationDialog
from agentsurface.page.relay import connect_relay

query = {k: v[0] for k, v in parse_qs(str(js.location.search)[1:]).items()}
APP = query.get("app", "notes")


class Info(AgentComponent, type="page.info", description="About this page."):
    @observation("The page's app and origin.")
    def about(self) -> list[str]:
        return [APP, str(js.location.origin)]


class Notes(AgentComponent, type="notes.board", description="A board of notes."):
    def __init__(self) -> None:
        self.notes: list[str] = ["first"]

    @observation("The notes on the board.")
    def list_notes(self) -> list[str]:
        return list(self.notes)

    @action("Pin a note to the board.", confirmation="required")
    def pin_note(self, text: str) -> int:
        self.notes.append(text)
        return len(self.notes)


class Ledger(AgentComponent, type="ledger.book", description="A ledger of payments."):
    def __init__(self) -> None:
        self.payments: list[int] = []

    @observation("The payments so far.")
    def list_payments(self) -> list[int]:
        return list(self.payments)

    @action("Record a payment.", confirmation="required")
    def record_payment(self, cents: int) -> int:
        self.payments.append(cents)
        return sum(self.payments)


app = Notes() if APP == "notes" else Ledger()
registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([Info, type(app)])))
registry.register(Info())
registry.register(app)
dialog = ConfirmationDialog(registry)
relay = await connect_relay(registry, port=int(query["relay"]))  # noqa: F704


def state() -> str:
    return json.dumps(
        {
            "status": relay.status,
            "source": relay.source,
            "refusal": relay.refusal,
            "tools": relay.tool_names,
            "failures": relay.socket.failures,
            "welcomes": relay.socket.welcomes,
            "welcomedMs": relay.socket.first_welcome_ms,
            "data": app.notes if isinstance(app, Notes) else app.payments,
        }
    )


async def time_calls(name: str, count: int) -> str:
    """The same tool called in the page, through the adapter's execute as the relay's calls
    are (benchmarks/bench_relay.py compares the two): milliseconds per call, each the mean of ten."""
    tool = relay.context.tool(name)
    assert tool is not None, name
    times = []
    for _ in range(int(count) // 10):  # in tens: the page's clock is too coarse for one call
        begin = time.perf_counter()
        for _ in range(10):
            await tool.execute({}, ToolCall())
        times.append((time.perf_counter() - begin) * 100)
    return json.dumps(times)


proxies = [create_proxy(state), create_proxy(time_calls)]
js.window.relayPage = js.Object.new()
js.window.relayPage.state = proxies[0]
js.window.relayPage.timeCalls = proxies[1]

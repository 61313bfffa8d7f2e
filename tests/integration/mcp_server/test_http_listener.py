"""``agentsurface mcp --http`` on real loopback sockets, with a stand-in page: read deadlines and
a connection cap (the procedure server's uvicorn configuration), malformed bodies answered 4xx,
the argument guard, the session cap and what a session costs, and a client gone mid-body."""

from __future__ import annotations

import io
import json
import logging
import re
import socket
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest

from agentsurface.mcp_server.http import ListenerLimits, serve_http
from tests._shared.mcp_server.fake_page import INITIALIZED, FakeLink, fake_bridge, initialize, tools_call

ACCEPT = "application/json, text/event-stream"


@dataclass
class Listener:
    port: int
    token: str
    link: FakeLink
    stop: Callable[[], bool]  # True once the listener has stopped (within 10 s)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def headers(self, **more: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}", "Accept": ACCEPT, "Content-Type": "application/json", **more}

    def raw(self, data: bytes, *, wait: float = 5.0) -> bytes:
        """What the listener answers to ``data`` sent on a fresh connection, until it closes it."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=wait) as sock:
            if data:
                sock.sendall(data)
            received = b""
            while chunk := sock.recv(65536):
                received += chunk
            return received

    def head(self, content_length: int) -> bytes:
        return (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nAuthorization: Bearer {self.token}\r\n"
            f"Content-Type: application/json\r\nAccept: {ACCEPT}\r\nContent-Length: {content_length}\r\n\r\n"
        ).encode()


Start = Callable[..., Listener]


class PageClosed(Exception):
    pass


@pytest.fixture
def start() -> Iterator[Start]:
    """Serve a stand-in page with ``serve_http`` (the command's own code) in a thread, until
    the page "fails to open" (how the listener stops by itself, in order)."""
    stops: list[tuple[threading.Event, threading.Thread]] = []

    def started(**limits: Any) -> Listener:
        bridge, link = fake_bridge()
        out = io.StringIO()
        stop = threading.Event()

        async def open_until_stopped() -> None:
            while not stop.is_set():
                await anyio.sleep(0.02)
            raise PageClosed("the test is over")

        link.open = open_until_stopped  # type: ignore[method-assign]
        thread = threading.Thread(
            target=anyio.run, args=(lambda: serve_http(bridge, 0, out=out, limits=ListenerLimits(**limits)),),
            daemon=True,
        )
        thread.start()
        stops.append((stop, thread))
        deadline = time.monotonic() + 10
        while "token" not in out.getvalue():
            assert thread.is_alive() and time.monotonic() < deadline, out.getvalue()
            time.sleep(0.02)
        text = out.getvalue()
        port = re.search(r"127\.0\.0\.1:(\d+)/mcp", text)
        token = re.search(r"token (\S+)", text)
        assert port and token

        def stopped() -> bool:
            stop.set()
            thread.join(timeout=10)
            return not thread.is_alive()

        return Listener(int(port.group(1)), token.group(1), link, stopped)

    yield started
    for stop, thread in stops:
        stop.set()
        thread.join(timeout=10)
        assert not thread.is_alive(), "the listener did not stop"


def rpc(response: httpx.Response) -> dict[str, Any]:
    """The one JSON-RPC message of a POST's answer (JSON, or one SSE ``message`` event)."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:") and line[5:].strip()]
        return dict(json.loads(data[-1]))
    return dict(response.json())


def open_session(client: httpx.Client, listener: Listener) -> str:
    opened = client.post(listener.url, headers=listener.headers(), json=initialize())
    assert opened.status_code == 200, opened.text
    session = opened.headers["mcp-session-id"]
    done = client.post(listener.url, headers=listener.headers(**{"mcp-session-id": session}), json=INITIALIZED)
    assert done.status_code == 202, done.text
    return session


# ------------------------------------------------------------------ stalled connections


def test_a_connection_sending_nothing_or_half_its_headers_is_closed(start: Start) -> None:
    listener = start(header_timeout=0.5, body_timeout=0.5)
    began = time.monotonic()
    assert listener.raw(b"") == b""  # closed by the listener, not by our 5 s timeout
    assert listener.raw(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bea") == b""
    assert time.monotonic() - began < 4


def test_half_a_body_with_the_token_gets_a_typed_408(start: Start) -> None:
    listener = start(header_timeout=0.5, body_timeout=0.5)
    answer = listener.raw(listener.head(200) + b'{"jsonrpc": "2.0", "id": 1, "met')
    status, _, body = answer.partition(b"\r\n\r\n")
    assert status.startswith(b"HTTP/1.1 408"), answer[:200]
    assert json.loads(body)["error"]["details"]["reason"] == "request-timeout"


def test_connections_past_the_cap_get_a_typed_503(start: Start) -> None:
    listener = start(max_connections=3)
    held = [socket.create_connection(("127.0.0.1", listener.port), timeout=5) for _ in range(3)]
    try:
        time.sleep(0.2)
        answer = listener.raw(b"")
        assert answer.startswith(b"HTTP/1.1 503"), answer[:200]
        assert json.loads(answer.partition(b"\r\n\r\n")[2])["error"]["details"]["reason"] == "server-busy"
    finally:
        for sock in held:
            sock.close()
    time.sleep(0.2)
    with httpx.Client() as client:  # room again once they are gone
        open_session(client, listener)


# ------------------------------------------------------------------ malformed bodies

TOO_DEEP = b"[" * 20_000 + b"]" * 20_000
MARKUP = "<b>x</b>"


@pytest.mark.parametrize(
    ("body", "content_type", "status", "code"),
    [
        (b'{"jsonrpc": "2.0", "id": 1, "method": "ping\xff\xfe"}', "application/json", 400, -32700),
        (TOO_DEEP, "application/json", 400, -32700),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": ' + b"[" * 100 + b"]" * 100 + b"}", "application/json", 400, -32700),
        (f'{{"jsonrpc": "2.0", "id": 1, "method": "ping", "{MARKUP}": 1, "{MARKUP}": 2}}'.encode(), "application/json", 400, -32700),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": NaN}}', "application/json", 400, -32700),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', "application/json", 400, -32700),
        (f'{{"jsonrpc": "1.0", "{MARKUP}": "{MARKUP}"}}'.encode(), "application/json", 400, -32600),
        (f'[{{"jsonrpc": "2.0", "id": 1, "method": "{MARKUP}"}}]'.encode(), "application/json", 400, -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}', "text/plain", 415, -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "' + b"y" * 70_000 + b'"}}', "application/json", 413, -32600),
    ],
    ids=["not-utf8", "nested-20000", "nested-past-limit", "duplicate-key", "nan", "truncated", "not-jsonrpc",
         "batch", "content-type", "too-large"],
)
def test_malformed_bodies_get_a_4xx_json_rpc_error(
    start: Start, body: bytes, content_type: str, status: int, code: int
) -> None:
    listener = start()
    with httpx.Client() as client:
        answer = client.post(listener.url, headers=listener.headers(**{"Content-Type": content_type}), content=body)
        assert answer.status_code == status, answer.text[:300]
        error = answer.json()["error"]
        assert error["code"] == code and error["data"]["code"] == "INVALID_INPUT"
        assert MARKUP not in answer.text
        open_session(client, listener)  # and the listener still serves


# ------------------------------------------------------------------ the argument guard


def test_non_object_arguments_get_the_typed_result_over_http(start: Start) -> None:
    listener = start()
    with httpx.Client() as client:
        session = {"mcp-session-id": open_session(client, listener)}
        refused = rpc(client.post(listener.url, headers=listener.headers(**session), json=tools_call(2, [1])))
        assert "error" not in refused, refused  # not the SDK's -32602
        assert refused["result"]["isError"] is True
        assert refused["result"]["structuredContent"]["code"] == "INVALID_INPUT"
        done = rpc(client.post(listener.url, headers=listener.headers(**session), json=tools_call(3, {"a": 1})))
        assert done["result"]["structuredContent"] == {"a": 1}
    assert listener.link.calls == [("echo", {"a": 1})]


# ------------------------------------------------------------------ sessions


def test_sessions_past_the_cap_get_503_until_one_ends(start: Start) -> None:
    listener = start(max_sessions=3)
    with httpx.Client() as client:
        sessions = [open_session(client, listener) for _ in range(3)]
        refused = client.post(listener.url, headers=listener.headers(), json=initialize())
        assert refused.status_code == 503 and "mcp-session-id" not in refused.headers
        ended = client.delete(listener.url, headers=listener.headers(**{"mcp-session-id": sessions[0]}))
        assert ended.status_code == 200
        open_session(client, listener)


def test_the_default_session_cap_bounds_the_listeners_memory(start: Start) -> None:
    """Sessions opened until the listener refuses one: what they cost together (Python
    allocations, measured) stays within a few megabytes."""
    listener = start()
    opened = 0
    with httpx.Client() as client:
        open_session(client, listener)  # warm: the first session imports and caches
        tracemalloc.start()
        try:
            before = tracemalloc.take_snapshot()
            while opened < 1_000:
                answer = client.post(listener.url, headers=listener.headers(), json=initialize())
                if answer.status_code == 503:
                    break
                assert answer.status_code == 200, answer.text
                opened += 1
            time.sleep(0.2)
            after = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
    total = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    print(f"{opened + 1} open sessions: {total / 2**20:.1f} MiB, {total / opened / 1024:.1f} KiB each")
    assert opened + 1 == ListenerLimits().max_sessions
    assert total < 16 * 2**20


# ------------------------------------------------------------------ a client gone mid-body


@contextmanager
def uvicorn_logs() -> Iterator[list[logging.LogRecord]]:
    """uvicorn's own log (its "uvicorn" logger does not propagate to the root one)."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logger = logging.getLogger("uvicorn.error")
    logger.addHandler(handler)
    try:
        yield records
    finally:
        logger.removeHandler(handler)


def test_a_client_gone_mid_body_is_one_log_line(start: Start, caplog: pytest.LogCaptureFixture) -> None:
    listener = start()
    with (
        caplog.at_level(logging.INFO),
        uvicorn_logs() as uvicorn_records,
        socket.create_connection(("127.0.0.1", listener.port), timeout=5) as sock,
    ):
        sock.sendall(listener.head(500) + b'{"jsonrpc": "2.0", "id": 1, "me')
        time.sleep(0.3)
        sock.close()
        time.sleep(0.5)
    seen = {id(r): r for r in [*caplog.records, *uvicorn_records]}
    records = [r for r in seen.values() if r.levelno >= logging.WARNING]
    assert [r.getMessage()[:40] for r in records] == ["a request's body did not arrive in full "]
    assert records[0].exc_info is None


def test_a_page_that_cannot_be_opened_stops_the_listener_in_order(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    bridge, link = fake_bridge()

    async def fails() -> None:
        await anyio.sleep(0.3)  # the listener is up by then
        raise PageClosed("no browser")

    link.open = fails  # type: ignore[method-assign]
    with caplog.at_level(logging.INFO):
        anyio.run(lambda: serve_http(bridge, 0, out=io.StringIO()))
    assert isinstance(bridge.failed, PageClosed)
    assert not [r.getMessage() for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    err = capfd.readouterr().err  # uvicorn logs to stderr by its own handler
    assert "could not open" in err and "Traceback" not in err, err


def test_an_open_event_stream_does_not_hold_the_listener_up(start: Start) -> None:
    listener = start()
    with httpx.Client() as client:
        session = {"mcp-session-id": open_session(client, listener)}
        headers = listener.headers(**session, Accept="text/event-stream")
        with client.stream("GET", listener.url, headers=headers, timeout=30) as stream:
            assert stream.status_code == 200
            began = time.monotonic()
            assert listener.stop(), "an open event stream held the listener up"
            assert time.monotonic() - began < 8


# ------------------------------------------------------------------ resumable streams


def sse_events(lines: Iterator[str]) -> Iterator[dict[str, str]]:
    """The SSE events of a stream's lines, as they arrive (field → value)."""
    event: dict[str, str] = {}
    for line in lines:
        if not line:
            if event:
                yield event
            event = {}
            continue
        name, _, value = line.partition(":")
        if name:  # not a comment (a keep-alive ping)
            event[name] = value.removeprefix(" ")


def test_a_dropped_stream_is_resumed_with_last_event_id(start: Start) -> None:
    listener = start()
    answered = threading.Event()
    echo = listener.link.call

    async def slow(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        while not answered.is_set():  # until the client has dropped its stream
            await anyio.sleep(0.02)
        return await echo(name, arguments)

    listener.link.call = slow  # type: ignore[method-assign]
    version = "2025-11-25"  # the first with priming events
    with httpx.Client(timeout=30) as client:
        opened = client.post(listener.url, headers=listener.headers(), json={
            **initialize(), "params": {**initialize()["params"], "protocolVersion": version}})
        session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": version}
        client.post(listener.url, headers=listener.headers(**session), json=INITIALIZED)
        with client.stream("POST", listener.url, headers=listener.headers(**session), json=tools_call(2, {"a": 1})) as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")
            priming = next(sse_events(stream.iter_lines()))
        # The stream dropped after its priming event: an id, a retry, no message.
        assert priming["id"] and priming["retry"] == "1000" and not priming.get("data")
        answered.set()
        headers = listener.headers(**session, **{"Accept": "text/event-stream", "Last-Event-ID": priming["id"]})
        message: dict[str, Any] = {}
        for _ in range(50):  # as a client does: again after `retry` while the answer is not in yet
            with client.stream("GET", listener.url, headers=headers) as resumed:
                assert resumed.status_code == 200
                for event in sse_events(resumed.iter_lines()):
                    if event.get("data"):
                        message = json.loads(event["data"])
                        break
            if message:
                break
            time.sleep(int(priming["retry"]) / 1000)
        assert message["id"] == 2 and message["result"]["structuredContent"] == {"a": 1}
        assert event["id"] and event["id"] != priming["id"]


def first_event(client: httpx.Client, listener: Listener, opened_on: str, header: str) -> dict[str, str]:
    """The first SSE event of a tools/call in a session opened on ``opened_on`` whose request
    names ``header`` as its protocol version."""
    init = initialize()
    opened = client.post(listener.url, headers=listener.headers(), json={
        **init, "params": {**init["params"], "protocolVersion": opened_on}})
    session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": header}
    client.post(listener.url, headers=listener.headers(**session), json=INITIALIZED)
    with client.stream("POST", listener.url, headers=listener.headers(**session), json=tools_call(2, {"a": 1})) as stream:
        return next(sse_events(stream.iter_lines()))


def test_streams_are_primed_by_the_version_the_session_was_opened_on(start: Start) -> None:
    listener = start()
    with httpx.Client(timeout=30) as client:
        # Opened on 2025-11-25: primed, even when a request names an older version (as the
        # official conformance suite's client does).
        for header in ("2025-11-25", "2025-03-26"):
            primed = first_event(client, listener, "2025-11-25", header)
            assert primed["id"] and primed["retry"] == "1000" and not primed.get("data"), header
        # Opened on an older version: its client may not parse a priming event, so none.
        plain = first_event(client, listener, "2025-06-18", "2025-06-18")
        assert json.loads(plain["data"])["result"]["structuredContent"] == {"a": 1}

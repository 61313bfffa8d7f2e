"""What every app inherits from the library's server and its ``server_config``/``run`` defaults,
each checked from outside: real sockets against a real uvicorn on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.types import ASGIApp

from agentsurface._core.limits import DEFAULT_LIMITS
from agentsurface.server import RateLimit, ServerLimits
from agentsurface.server.running import server_config
from tests._shared.server.domain import DISABLE, NOTE, make_server
from tests._shared.server.helpers import error_of, new_id


@contextmanager
def safely_served(app: ASGIApp, **options: Any) -> Iterator[tuple[str, int]]:
    config = server_config(app, port=0, log_level="warning", lifespan="off", **options)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield "127.0.0.1", port
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def closed_within(sock: socket.socket, seconds: float) -> tuple[bool, bytes]:
    """Whether the server closed ``sock`` within ``seconds``, and what it sent before."""
    sock.settimeout(seconds)
    received = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return True, received
            received += chunk
    except TimeoutError:
        return False, received
    except ConnectionResetError:
        return True, received


@pytest.fixture
def app(tmp_path: Path) -> Any:
    return make_server(tmp_path / "app.sqlite3")


def envelope(body: dict[str, Any]) -> bytes:
    return json.dumps(body).encode()


# ---------------------------------------------------------------- slow clients


def test_a_connection_that_sends_nothing_or_half_its_headers_is_closed(app: Any) -> None:
    with safely_served(app, header_timeout=0.5) as (host, port):
        silent = socket.create_connection((host, port))
        half = socket.create_connection((host, port))
        half.sendall(b"POST /procedures/notes.add HTTP/1.1\r\nHost: x\r\nContent-Type: appl")
        started = time.monotonic()
        assert closed_within(silent, 3)[0]
        assert closed_within(half, 3)[0]
        assert time.monotonic() - started < 3
        silent.close()
        half.close()


def test_half_a_declared_body_gets_a_typed_408_and_the_connection_closes(app: Any) -> None:
    with safely_served(app, body_timeout=0.7) as (host, port):
        sock = socket.create_connection((host, port))
        sock.sendall(
            b"POST /procedures/notes.add HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer tok-alice\r\n"
            b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"invoc"
        )
        closed, answer = closed_within(sock, 5)
        sock.close()
    assert closed
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408")
    error = json.loads(body)["error"]
    assert error["code"] == "EXECUTION_FAILED" and error["details"]["transient"] is True


def test_past_the_connection_bound_new_connections_are_refused_at_once(app: Any) -> None:
    with safely_served(app, max_connections=4, header_timeout=5) as (host, port):
        held = [socket.create_connection((host, port)) for _ in range(4)]
        time.sleep(0.2)
        extra = socket.create_connection((host, port))
        closed, answer = closed_within(extra, 2)
        assert closed and answer.startswith(b"HTTP/1.1 503")
        assert json.loads(answer.partition(b"\r\n\r\n")[2])["error"]["details"]["transient"] is True
        for s in [*held, extra]:
            s.close()
        time.sleep(0.2)
        # Once they are gone, calls are served again.
        reply = httpx.get(f"http://{host}:{port}/.well-known/agentsurface/procedures", timeout=5)
        assert reply.status_code == 200


# ---------------------------------------------------------------- what the answers repeat


def test_unknown_envelope_fields_are_not_echoed_verbatim(app: Any) -> None:
    odd = "<img src=x onerror=alert(1)>\n" + "A" * 300
    with safely_served(app) as (host, port):
        reply = httpx.post(
            f"http://{host}:{port}/procedures/notes.add",
            content=envelope({"invocationId": new_id(), "input": {"text": "x"}, odd: 1, "typo": 2}),
            headers={"Authorization": "Bearer tok-alice", "Content-Type": "application/json"},
        )
    assert reply.status_code == 400
    assert "onerror" not in reply.text and "AAAA" not in reply.text
    issues = error_of(reply)["details"]["issues"]
    assert issues == [{"path": "/typo", "message": "unknown field"}]


def test_an_encoded_control_character_in_a_procedure_path_gets_the_typed_404(app: Any) -> None:
    mounted = Starlette(routes=[app.mount("/api/agent")])
    for target, base in ((app, ""), (mounted, "/api/agent")):
        with safely_served(target) as (host, port):
            for name in ("notes%0Aadd", "notes.add%00", "%0D%0Aevil"):
                reply = httpx.post(
                    f"http://{host}:{port}{base}/procedures/{name}",
                    content=envelope({"invocationId": new_id(), "input": {}}),
                    headers={"Authorization": "Bearer tok-alice", "Content-Type": "application/json"},
                )
                assert reply.status_code == 404, (base, name, reply.text)
                assert reply.headers["content-type"] == "application/json"
                assert error_of(reply)["code"] == "CAPABILITY_NOT_FOUND"


def test_a_trailing_slash_is_not_redirected_to_a_location_built_from_host(app: Any) -> None:
    with safely_served(app) as (host, port):
        for method, path in (("POST", "/procedures/notes.add/"), ("GET", "/.well-known/agentsurface/procedures/")):
            reply = httpx.request(
                method, f"http://{host}:{port}{path}", follow_redirects=False,
                headers={"Host": "evil.example", "Authorization": "Bearer tok-alice"},
            )
            assert reply.status_code == 404 and "location" not in reply.headers
            assert error_of(reply)["code"] == "CAPABILITY_NOT_FOUND"


# ---------------------------------------------------------------- forwarded headers


def test_x_forwarded_for_does_not_pick_the_anonymous_budget_unless_the_proxy_is_named(tmp_path: Path) -> None:
    def statuses(**options: Any) -> list[int]:
        server = make_server(tmp_path / f"{len(options)}.sqlite3", rate_limit=RateLimit(burst=2, per_second=0.01))
        with safely_served(server, **options) as (host, port):
            return [
                httpx.post(
                    f"http://{host}:{port}/procedures/notes.add",
                    content=b"{}",
                    headers={"X-Forwarded-For": f"203.0.113.{n}", "Content-Type": "application/json"},
                ).status_code
                for n in range(4)
            ]

    assert statuses() == [401, 401, 429, 429]  # one budget: the real peer's
    assert statuses(trusted_proxies=["127.0.0.1"]) == [401] * 4  # behind a named proxy: the client's


# ---------------------------------------------------------------- retention and approvals


def test_invocation_records_past_their_retention_are_pruned_in_the_background(tmp_path: Path) -> None:
    path = tmp_path / "app.sqlite3"
    server = make_server(path, limits=ServerLimits(retention=timedelta(seconds=1), prune_every=0.2))
    headers = {"Authorization": "Bearer tok-alice", "Content-Type": "application/json"}
    with safely_served(server) as (host, port):
        url = f"http://{host}:{port}/procedures/notes.add"
        old = new_id()
        assert httpx.post(url, content=envelope({"invocationId": old, "input": {"text": "a"}}), headers=headers).is_success
        assert server.store.run(lambda db: db.execute("SELECT count(*) FROM agentsurface_invocations").fetchone()[0]) == 1
        time.sleep(2.2)  # past the retention (records hold whole seconds)
        httpx.post(url, content=envelope({"invocationId": new_id(), "input": {"text": "b"}}), headers=headers)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            ids = server.store.run(
                lambda db: [r[0] for r in db.execute("SELECT invocation_id FROM agentsurface_invocations")]
            )
            if old not in ids:
                break
            time.sleep(0.1)
    assert old not in ids and len(ids) == 1


def test_the_servers_approval_window_is_the_pages(app: Any) -> None:
    limits = ServerLimits()
    assert limits.confirmation_max_age == DEFAULT_LIMITS.confirmation_ttl == 120
    assert limits.clock_skew <= 30
    headers = {"Authorization": "Bearer tok-alice", "Content-Type": "application/json"}
    with safely_served(app) as (host, port):
        def disable(age: float) -> httpx.Response:
            at = (datetime.now(UTC) - timedelta(seconds=age)).strftime("%Y-%m-%dT%H:%M:%SZ")
            url, ident = f"http://{host}:{port}/procedures/devices.disable", new_id()
            asked = httpx.post(url, content=envelope({"invocationId": ident, "input": {"deviceIds": ["acme-1"]}}),
                               headers=headers)
            assert asked.status_code == 428
            evidence = {"id": "cnf_1", "approvedAt": at, "challenge": asked.json()["challenge"]["id"]}
            return httpx.post(
                url,
                content=envelope({"invocationId": ident, "input": {"deviceIds": ["acme-1"]}, "confirmation": evidence}),
                headers=headers,
            )

        assert error_of(disable(130))["code"] == "CONFIRMATION_INVALID"  # the page dropped it already
        assert error_of(disable(-90))["code"] == "CONFIRMATION_INVALID"  # far in the future
        assert disable(100).status_code == 200  # still inside the page's window
    assert DISABLE.id and NOTE.id


def test_a_flood_of_refused_anonymous_calls_is_not_a_database_write_each(tmp_path: Path) -> None:
    path = tmp_path / "app.sqlite3"
    server = make_server(path, rate_limit=RateLimit(burst=5, per_second=0.01))
    def counting(db: Any) -> None:
        db.execute("CREATE TABLE writes (n INTEGER)")
        for event in ("INSERT", "UPDATE"):
            db.execute(f"CREATE TRIGGER count_{event} AFTER {event} ON agentsurface_rate_limits"
                       " BEGIN INSERT INTO writes VALUES (1); END")

    server.store.run(counting)
    with safely_served(server) as (host, port), httpx.Client() as http:
        statuses = [
            http.post(f"http://{host}:{port}/procedures/notes.add", content=b"{}",
                      headers={"Content-Type": "application/json"}).status_code
            for _ in range(200)
        ]
    assert statuses[:5] == [401] * 5 and set(statuses[5:]) == {429}
    server.flush_refusals()

    def count(sql: str) -> int:
        return int(server.store.run(lambda db: db.execute(sql).fetchone()[0]))

    assert count("SELECT count(*) FROM writes") <= 5  # the shared bucket is asked only while it could allow
    rows = server.store.run(lambda db: db.execute("SELECT outcome FROM audit").fetchall())
    assert len(rows) <= 4  # one record per code and window, plus the flushed counts

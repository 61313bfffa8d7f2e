"""Bodies that parse as JSON text but cannot be stored or sent back as Unicode (lone surrogates from
``\\ud800`` escapes, numbers that overflow to infinity), and bodies that cannot be decoded at all,
get a typed 400 INVALID_INPUT and their audit row; the connection is never dropped."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from demo.server.backend import DemoServer, start_demo_server

from .helpers import FIXED_NOW, Client, assert_error, audit_rows, devices_table, envelope

# (id, procedure, raw body sent straight to the backend)
UNDECODABLE: list[tuple[str, str, bytes]] = [
    ("surrogate-in-filter", "devices.query", b'{"text": "\\ud800"}'),
    ("low-surrogate-in-filter", "devices.query", b'{"city": "Mil\\udfffan"}'),
    ("surrogate-in-reason", "devices.disable", b'{"deviceIds": ["dev-0003"], "reason": "\\ud800"}'),
    ("surrogate-in-name", "devices.rename", b'{"deviceId": "dev-0003", "name": "a\\udc00b"}'),
    ("surrogate-in-key", "devices.query", b'{"\\ud800": 1}'),
    ("surrogate-nested", "devices.disable", b'{"deviceIds": ["\\ud800"]}'),
    ("surrogate-pair-reversed", "devices.query", b'{"text": "\\udc00\\ud800"}'),
    ("invalid-utf8", "devices.query", b'{"text": "\xed\xa0\x80"}'),
    ("nan-literal", "devices.query", b'{"limit": NaN}'),
    ("infinity-literal", "devices.query", b'{"limit": Infinity}'),
    ("minus-infinity-literal", "devices.query", b'{"limit": -Infinity}'),
    ("overflowing-number", "devices.disable", b'{"deviceIds": ["dev-0003"], "reason": 1e400}'),
    ("duplicate-key", "devices.query", b'{"text": "a", "text": "b"}'),
]


@pytest.mark.parametrize(("procedure", "raw"), [u[1:] for u in UNDECODABLE], ids=[u[0] for u in UNDECODABLE])
def test_undecodable_body_gets_a_typed_400_and_an_audit_row(
    client: Client, server: DemoServer, procedure: str, raw: bytes
) -> None:
    before = devices_table(server)
    rows_before = len(audit_rows(server))
    error = assert_error(client.call(procedure, raw=envelope(raw)), 400, "INVALID_INPUT")
    assert error["details"]["issues"]
    assert devices_table(server) == before
    rows = audit_rows(server)
    assert len(rows) == rows_before + 1
    assert (rows[-1]["operation"], rows[-1]["outcome"], rows[-1]["http_status"]) == (procedure, "INVALID_INPUT", 400)
    assert rows[-1]["input"] is None  # it never parsed into storable text
    assert client.session().status == 200  # and the server is still fine


def test_surrogate_from_a_viewer_is_refused_by_role_and_audited(client: Client, server: DemoServer) -> None:
    """The role check runs before the body is read; the refused body is not kept since it is not text."""
    reply = client.call("devices.disable", raw=envelope(b'{"deviceIds": ["dev-0003"], "reason": "\\ud800"}'),
                        token="demo-acme-viewer")
    assert_error(reply, 403, "NOT_AUTHORIZED")
    row = audit_rows(server)[-1]
    assert (row["outcome"], row["input"]) == ("NOT_AUTHORIZED", None)


def test_well_formed_escapes_still_work(client: Client) -> None:
    """A surrogate pair escaping one astral character is valid Unicode text and is accepted."""
    reply = client.call("devices.rename", raw=envelope(b'{"deviceId": "dev-0003", "name": "Sensor \\ud83c\\udf3f"}'))
    assert reply.status == 200, reply.text
    assert reply.output["device"]["name"] == "Sensor \U0001f33f"


@pytest.fixture
def broken() -> Iterator[DemoServer]:
    """A running server whose database has gone away."""
    srv, _ = start_demo_server(clock=lambda: FIXED_NOW)
    srv.store.close()
    yield srv
    srv.shutdown()
    srv.server_close()


def test_an_unexpected_failure_still_gets_a_typed_500(broken: DemoServer) -> None:
    """A defect (here: the database is gone) is answered with EXECUTION_FAILED, never an exception
    that would drop the connection: on the app's own reads and the devices procedures alike."""
    client = Client(broken)
    for reply in (client.session(), client.call("devices.query", {})):
        error = assert_error(reply, 500, "EXECUTION_FAILED")
        assert error["retry"] == "no" and error["details"]["reason"] == "server-error"

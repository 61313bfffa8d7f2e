"""devices.query (also the page's listing) and devices.rename behave, scoped to the caller's tenant."""

from __future__ import annotations

from demo.server.backend import DemoServer

from .helpers import AGENT, GLOBEX_OPERATOR, Client, assert_error, assert_issue, audit_rows, devices_table


def ids(reply_json: dict[str, object]) -> list[str]:
    devices = reply_json["devices"]
    assert isinstance(devices, list)
    return [d["id"] for d in devices]


def test_query_filters_combine(client: Client) -> None:
    body = client.call("devices.query", {"city": "Milan", "status": "offline"}).output
    assert body["total"] == 7 and len(body["devices"]) == 7
    assert all(d["city"] == "Milan" and d["status"] == "offline" for d in body["devices"])
    assert set(body["devices"][0]) == {"id", "name", "model", "city", "status", "lastSeen", "disabledReason",
                                       "updatedAt"}


def test_query_city_is_case_insensitive_and_nulls_mean_no_filter(client: Client) -> None:
    assert client.call("devices.query", {"city": "mILAN", "status": None, "text": None}).output["total"] == 30


def test_query_text_matches_model_name_id_and_city(client: Client) -> None:
    by_model = client.call("devices.query", {"text": "sps30", "limit": 200}).output
    assert by_model["total"] > 0 and all(d["model"] == "Sensirion SPS30" for d in by_model["devices"])
    assert ids(client.call("devices.query", {"text": "dev-0017"}).output) == ["dev-0017"]
    assert client.call("devices.query", {"text": "Navigli"}).output["total"] > 0
    assert client.call("devices.query", {"text": "%"}).output["total"] == 0  # LIKE wildcards are literal


def test_query_limit_and_total(client: Client) -> None:
    body = client.call("devices.query", {"limit": 5}).output
    assert body["total"] == 120 and ids(body) == [f"dev-{n:04d}" for n in range(1, 6)]
    assert len(client.call("devices.query", {}).output["devices"]) == 50  # the default limit


def test_query_is_tenant_scoped(client: Client) -> None:
    globex = client.call("devices.query", {"city": "Milan", "status": "offline"}, token=GLOBEX_OPERATOR).output
    assert globex["total"] == 3 and all(int(i[4:]) > 120 for i in ids(globex))


def test_the_pages_listing_is_the_whole_tenant(client: Client) -> None:
    """The page lists the devices with devices.query itself (its largest page holds the tenant)."""
    body = client.call("devices.query", {"limit": 200, "city": "", "text": "  "}).output  # blank: no filter
    assert body["total"] == len(body["devices"]) == 120
    assert client.call("devices.query", {"text": "Lambrate", "city": "milan"}).output["total"] >= 3


def test_rename(client: Client, server: DemoServer) -> None:
    reply = client.call("devices.rename", {"deviceId": "dev-0003", "name": "  CityLife station (north)  "},
                        invocation_id="inv-rename", headers=AGENT)
    assert reply.status == 200
    device = reply.output["device"]
    assert device["id"] == "dev-0003" and device["name"] == "CityLife station (north)"
    assert device["updatedAt"] == "2026-11-02T10:00:00Z"
    stored = server.store.fetch_all("SELECT name FROM devices WHERE id = 'dev-0003'")[0][0]
    assert stored == "CityLife station (north)"
    entry = audit_rows(server)[-1]
    assert (entry["operation"], entry["outcome"], entry["invocation_id"]) == ("devices.rename", "ok", "inv-rename")
    assert entry["channel"] == "agent"


def test_rename_unknown_device(client: Client, server: DemoServer) -> None:
    before = devices_table(server)
    error = assert_error(client.call("devices.rename", {"deviceId": "dev-9999", "name": "x"}), 409,
                         "PRECONDITION_FAILED")
    assert error["details"] == {"reason": "unknown-device"}
    assert_issue(assert_error(client.call("devices.rename", {"deviceId": "nope", "name": "x"}), 400,
                              "INVALID_INPUT"), "/deviceId")
    assert devices_table(server) == before

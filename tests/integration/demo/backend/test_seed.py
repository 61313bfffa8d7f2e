"""The seeded data is deterministic and has the facts a demo script relies on."""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

from demo.server.backend import start_demo_server
from demo.server.db import DEFAULT_DB_PATH, open_store
from demo.server.seed import FACTS, MODELS, USERS, open_seeded_store, seed_store

from .helpers import FIXED_NOW, Client

ROOT = Path(__file__).resolve().parents[4]


def rows(path: str | Path = ":memory:", now: datetime = FIXED_NOW) -> list[tuple[object, ...]]:
    store = open_seeded_store(path, now=now)
    try:
        return [tuple(r) for r in store.fetch_all("SELECT * FROM devices ORDER BY id")]
    finally:
        store.close()


def test_seeding_is_deterministic() -> None:
    assert rows() == rows()


def test_seed_facts() -> None:
    store = open_seeded_store(":memory:")
    count = {
        tuple(r)[:3]: r[3]
        for r in store.fetch_all("SELECT tenant, city, status, COUNT(*) FROM devices GROUP BY 1, 2, 3")
    }
    by_tenant = Counter[str]()
    for (tenant, _, _), n in count.items():
        by_tenant[tenant] += n
    assert by_tenant == {"acme": FACTS.acme_devices, "globex": FACTS.globex_devices} == {"acme": 120, "globex": 30}
    assert count[("acme", "Milan", "offline")] == FACTS.acme_milan_offline == 7
    assert count[("globex", "Milan", "offline")] == 3  # so a tenant leak in a city filter would show
    assert {city for (tenant, city, _) in count if tenant == "acme"} == {
        "Milan", "Turin", "Rome", "Naples", "Berlin", "Paris"}
    assert sum(n for (t, _, s), n in count.items() if t == "acme" and s == "offline") == FACTS.acme_offline
    assert sum(n for (t, _, s), n in count.items() if t == "acme" and s == "disabled") == FACTS.acme_disabled
    ids = {t: [r[0] for r in store.fetch_all("SELECT id FROM devices WHERE tenant = ? ORDER BY id", (t,))]
           for t in ("acme", "globex")}
    assert ids["acme"][0] == FACTS.first_acme_id and ids["globex"][0] == FACTS.first_globex_id
    assert ids["acme"] == [f"dev-{n:04d}" for n in range(1, 121)]
    assert ids["globex"] == [f"dev-{n:04d}" for n in range(121, 151)]
    store.close()


def parse(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_devices_look_real() -> None:
    store = open_seeded_store(":memory:", now=FIXED_NOW)
    devices = [dict(r) for r in store.fetch_all("SELECT * FROM devices")]
    store.close()
    assert {d["model"] for d in devices} <= {m for m, _ in MODELS}
    assert len({d["model"] for d in devices}) >= 5
    for d in devices:
        seen = parse(d["last_seen"])
        age = FIXED_NOW - seen
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", d["last_seen"])
        if d["status"] == "online":
            assert age <= timedelta(minutes=10)
        else:
            assert age >= timedelta(hours=3)
        assert (d["disabled_reason"] is not None) == (d["status"] == "disabled")
        assert d["name"]


def test_users_and_tokens() -> None:
    store = open_seeded_store(":memory:")
    stored = {r["id"]: dict(r) for r in store.fetch_all("SELECT * FROM users")}
    store.close()
    assert {u.token for u in USERS} >= {"demo-acme-operator", "demo-acme-viewer", "demo-globex-operator"}
    for user in USERS:
        assert stored[user.id]["tenant"] == user.tenant and stored[user.id]["role"] == user.role
        assert user.token not in str(stored[user.id])  # stored as a digest only
    for tenant in ("acme", "globex"):
        assert {u.role for u in USERS if u.tenant == tenant} == {"viewer", "operator", "admin"}


def ages(devices: list[dict[str, str]], now: datetime) -> dict[str, timedelta]:
    return {d["id"]: now - parse(d["last_seen"]) for d in devices}


def test_seeded_ages_count_back_from_the_current_time() -> None:
    """Without an injected clock, online devices were last seen minutes ago, not weeks ago."""
    before = datetime.now(UTC)
    store = open_seeded_store(":memory:")
    after = datetime.now(UTC)
    online = [parse(r[0]) for r in store.fetch_all("SELECT last_seen FROM devices WHERE status = 'online'")]
    store.close()
    assert online
    for seen in online:
        assert before - timedelta(minutes=10, seconds=1) <= seen <= after


def test_seeding_under_an_injected_clock_is_deterministic_and_relative_to_it() -> None:
    later = FIXED_NOW + timedelta(days=400, hours=5)
    early, late = rows(now=FIXED_NOW), rows(now=later)
    assert early == rows(now=FIXED_NOW)
    assert [r[:6] for r in early] == [r[:6] for r in late]  # same devices, same statuses
    assert [parse(str(r[6])) + timedelta(days=400, hours=5) for r in early] == [parse(str(r[6])) for r in late]


def test_server_with_a_clock_serves_recent_online_devices(tmp_path: Path) -> None:
    later = FIXED_NOW + timedelta(days=28)
    server, _ = start_demo_server(tmp_path, clock=lambda: later)
    try:
        reply = Client(server).call("devices.query", {"status": "online", "limit": 200})
    finally:
        server.shutdown()
        server.server_close()
    devices = reply.output["devices"]
    assert devices
    assert all(timedelta(0) < later - parse(d["lastSeen"]) <= timedelta(minutes=10) for d in devices)


def test_reopening_a_database_later_keeps_the_seeded_ages(tmp_path: Path) -> None:
    path = tmp_path / "devices.sqlite3"
    store = open_seeded_store(path, now=FIXED_NOW)
    seeded = ages([dict(r) for r in store.fetch_all("SELECT id, last_seen FROM devices")], FIXED_NOW)
    store.close()
    later = FIXED_NOW + timedelta(days=28, minutes=3)
    reopened = open_seeded_store(path, now=later)
    assert ages([dict(r) for r in reopened.fetch_all("SELECT id, last_seen FROM devices")], later) == seeded
    reopened.close()
    earlier = open_seeded_store(path, now=FIXED_NOW)  # a clock that went back moves nothing
    assert ages([dict(r) for r in earlier.fetch_all("SELECT id, last_seen FROM devices")], later) == seeded
    earlier.close()


def test_database_seeded_before_the_clock_was_recorded_is_brought_up_to_date(tmp_path: Path) -> None:
    """Files seeded by earlier versions were relative to 2026-11-02T09:00Z and recorded no clock."""
    path = tmp_path / "devices.sqlite3"
    legacy = datetime(2026, 11, 2, 9, 0, 0, tzinfo=UTC)
    store = open_seeded_store(path, now=legacy)
    store.run(lambda tx: tx.execute("DELETE FROM meta"))
    store.close()
    later = legacy + timedelta(days=28)
    reopened = open_seeded_store(path, now=later)
    online = [parse(r[0]) for r in reopened.fetch_all("SELECT last_seen FROM devices WHERE status = 'online'")]
    reopened.close()
    assert all(later - seen <= timedelta(minutes=10) for seen in online)


def test_file_database_is_created_seeded_once_and_reset(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "devices.sqlite3"
    store = open_seeded_store(path, now=FIXED_NOW)
    store.run(lambda tx: tx.execute("UPDATE devices SET name = 'changed' WHERE id = 'dev-0001'"))
    store.close()
    assert path.exists()
    reopened = open_store(path)
    assert seed_store(reopened, FIXED_NOW) is False  # already seeded: kept as is
    assert reopened.fetch_all("SELECT name FROM devices WHERE id = 'dev-0001'")[0][0] == "changed"
    reopened.close()
    assert rows(path) != rows()
    reset = open_seeded_store(path, reset=True, now=FIXED_NOW)
    reset.close()
    assert rows(path) == rows()


def test_file_database_is_in_wal_mode(tmp_path: Path) -> None:
    store = open_seeded_store(tmp_path / "devices.sqlite3", now=FIXED_NOW)
    try:
        assert store.fetch_all("PRAGMA journal_mode")[0][0] == "wal"
    finally:
        store.close()


def test_default_database_lives_in_an_ignored_folder() -> None:
    assert DEFAULT_DB_PATH.parent == ROOT / "demo" / "data"
    assert "demo/data/" in (ROOT / ".gitignore").read_text().splitlines()

"""The seeded data is deterministic and has the facts a demo script relies on."""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

from demo.db import DEFAULT_DB_PATH, open_store
from demo.seed import FACTS, MODELS, REFERENCE_TIME, USERS, open_seeded_store, seed_store

ROOT = Path(__file__).resolve().parents[2]


def rows(path: str | Path = ":memory:") -> list[tuple[object, ...]]:
    store = open_seeded_store(path)
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


def test_devices_look_real() -> None:
    store = open_seeded_store(":memory:")
    devices = [dict(r) for r in store.fetch_all("SELECT * FROM devices")]
    store.close()
    assert {d["model"] for d in devices} <= {m for m, _ in MODELS}
    assert len({d["model"] for d in devices}) >= 5
    for d in devices:
        seen = datetime.fromisoformat(d["last_seen"].replace("Z", "+00:00"))
        age = REFERENCE_TIME - seen
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


def test_file_database_is_created_seeded_once_and_reset(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "devices.sqlite3"
    store = open_seeded_store(path)
    with store.transaction() as tx:
        tx.execute("UPDATE devices SET name = 'changed' WHERE id = 'dev-0001'")
    store.close()
    assert path.exists()
    reopened = open_store(path)
    assert seed_store(reopened) is False  # already seeded: kept as is
    assert reopened.fetch_all("SELECT name FROM devices WHERE id = 'dev-0001'")[0][0] == "changed"
    reopened.close()
    assert rows(path) != rows()
    reset = open_seeded_store(path, reset=True)
    reset.close()
    assert rows(path) == rows()


def test_default_database_lives_in_an_ignored_folder() -> None:
    assert DEFAULT_DB_PATH.parent == ROOT / "demo" / "data"
    assert "demo/data/" in (ROOT / ".gitignore").read_text().splitlines()

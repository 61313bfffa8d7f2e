"""Deterministic demo data: two tenants, their users (with fixed demo tokens) and their devices.

The same rows come out for the same seeding instant (a fixed random seed and fixed per-city
counts; times are ages before that instant), so a demo script and the tests can rely on the facts
in :data:`FACTS`. The instant is the current time unless a clock is injected: online devices read
"last seen a few minutes ago", not weeks ago.

The devices are simulated, so their ages are kept as seeded: reopening a database later moves every
``last_seen`` forward by the time that passed (see :func:`keep_ages_current`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from .db import DEFAULT_DB_PATH, Role, Status, Store, Tx, hash_token, iso_seconds, open_store

RANDOM_SEED = 20261102
CLOCK_KEY = "devices-clock"
"""Meta key: the instant the devices' ``last_seen`` ages are counted from."""
LEGACY_CLOCK = datetime(2026, 11, 2, 9, 0, 0, tzinfo=UTC)
"""What databases seeded before the clock was recorded were seeded relative to."""

TENANTS: tuple[tuple[str, str], ...] = (
    ("acme", "Acme Air Monitoring"),
    ("globex", "Globex Environmental"),
)


@dataclass(frozen=True, slots=True)
class DemoUser:
    id: str
    name: str
    tenant: str
    role: Role
    token: str


USERS: tuple[DemoUser, ...] = (
    DemoUser("u-acme-admin", "Alice Moretti", "acme", "admin", "demo-acme-admin"),
    DemoUser("u-acme-operator", "Marco Bianchi", "acme", "operator", "demo-acme-operator"),
    DemoUser("u-acme-viewer", "Giulia Conti", "acme", "viewer", "demo-acme-viewer"),
    DemoUser("u-globex-admin", "Hannah Weber", "globex", "admin", "demo-globex-admin"),
    DemoUser("u-globex-operator", "Lukas Schmidt", "globex", "operator", "demo-globex-operator"),
    DemoUser("u-globex-viewer", "Claire Dubois", "globex", "viewer", "demo-globex-viewer"),
)
TOKENS: dict[str, str] = {u.token: u.id for u in USERS}


@dataclass(frozen=True, slots=True)
class CityPlan:
    city: str
    devices: int
    offline: int
    disabled: int = 0


# Per tenant, in id order: acme owns dev-0001..dev-0120, globex dev-0121..dev-0150.
PLAN: dict[str, tuple[CityPlan, ...]] = {
    "acme": (
        CityPlan("Milan", 30, offline=7),
        CityPlan("Turin", 18, offline=3, disabled=1),
        CityPlan("Rome", 24, offline=4),
        CityPlan("Naples", 14, offline=2),
        CityPlan("Berlin", 18, offline=3),
        CityPlan("Paris", 16, offline=2, disabled=1),
    ),
    "globex": (
        CityPlan("Milan", 8, offline=3),
        CityPlan("Berlin", 12, offline=2, disabled=1),
        CityPlan("Paris", 10, offline=1),
    ),
}

DISTRICTS: dict[str, tuple[str, ...]] = {
    "Milan": ("Navigli", "Brera", "Isola", "Porta Romana", "Città Studi", "Lambrate", "Bicocca", "CityLife"),
    "Turin": ("San Salvario", "Lingotto", "Vanchiglia", "Crocetta", "Aurora", "Borgo Po"),
    "Rome": ("Trastevere", "Prati", "Testaccio", "EUR", "Monti", "San Lorenzo", "Ostiense"),
    "Naples": ("Chiaia", "Vomero", "Posillipo", "Fuorigrotta", "Sanità"),
    "Berlin": ("Mitte", "Kreuzberg", "Prenzlauer Berg", "Neukölln", "Charlottenburg", "Friedrichshain"),
    "Paris": ("Le Marais", "Montmartre", "Belleville", "Bastille", "La Défense", "Batignolles"),
}
PLACEMENTS = ("rooftop", "school gate", "bus stop", "park", "street lamp", "courtyard", "balcony", "station")
MODELS: tuple[tuple[str, int], ...] = (  # (model, weight)
    ("Sensirion SPS30", 5),
    ("AirQ Pro 2", 4),
    ("Wiseair Arianna", 4),
    ("PurpleAir Flex", 3),
    ("Clarity Node-S", 2),
    ("Airly PM+", 2),
    ("Aeroqual AQS 1", 1),
)
DISABLED_REASONS = ("Sensor drift beyond calibration; awaiting replacement", "Site under renovation")


@dataclass(frozen=True, slots=True)
class SeedFacts:
    """What a demo script may rely on after a fresh seed."""

    acme_devices: int = sum(p.devices for p in PLAN["acme"])
    globex_devices: int = sum(p.devices for p in PLAN["globex"])
    acme_milan_offline: int = 7
    acme_offline: int = sum(p.offline for p in PLAN["acme"])
    acme_disabled: int = sum(p.disabled for p in PLAN["acme"])
    first_acme_id: str = "dev-0001"
    first_globex_id: str = "dev-0121"


FACTS = SeedFacts()


def _device_rows(rng: random.Random, tenant: str, first_number: int, now: datetime) -> list[tuple[object, ...]]:
    slots: list[tuple[str, Status]] = []
    offline: list[Status] = ["offline"]
    disabled: list[Status] = ["disabled"]
    online: list[Status] = ["online"]
    for plan in PLAN[tenant]:
        statuses = offline * plan.offline + disabled * plan.disabled
        statuses += online * (plan.devices - plan.offline - plan.disabled)
        slots += [(plan.city, status) for status in statuses]
    rng.shuffle(slots)
    models = [m for m, _ in MODELS]
    weights = [w for _, w in MODELS]
    seen_names: dict[str, int] = {}
    rows: list[tuple[object, ...]] = []
    for offset, (city, status) in enumerate(slots):
        base = f"{rng.choice(DISTRICTS[city])} {rng.choice(PLACEMENTS)}"
        seen_names[base] = seen_names.get(base, 0) + 1
        name = base if seen_names[base] == 1 else f"{base} {seen_names[base]}"
        if status == "online":
            last_seen = now - timedelta(seconds=rng.randint(20, 600))
        elif status == "offline":
            last_seen = now - timedelta(minutes=rng.randint(3 * 60, 9 * 24 * 60))
        else:
            last_seen = now - timedelta(days=rng.randint(12, 40), minutes=rng.randint(0, 1439))
        updated_at = min(last_seen, now - timedelta(days=rng.randint(1, 60)))
        rows.append((
            f"dev-{first_number + offset:04d}",
            tenant,
            name,
            rng.choices(models, weights)[0],
            city,
            status,
            iso_seconds(last_seen),
            rng.choice(DISABLED_REASONS) if status == "disabled" else None,
            "online" if status == "disabled" else None,  # what `enable` restores
            iso_seconds(updated_at),
        ))
    return rows


def seed(tx: Tx, now: datetime) -> None:
    """Insert the demo data into an empty database, with ages counted back from ``now``."""
    rng = random.Random(RANDOM_SEED)
    tx.executemany("INSERT INTO tenants (id, name) VALUES (?, ?)", TENANTS)
    tx.executemany(
        "INSERT INTO users (id, name, tenant, role, token_sha256) VALUES (?, ?, ?, ?, ?)",
        [(u.id, u.name, u.tenant, u.role, hash_token(u.token)) for u in USERS],
    )
    number = 1
    for tenant, _ in TENANTS:
        rows = _device_rows(rng, tenant, number, now)
        tx.executemany(
            "INSERT INTO devices (id, tenant, name, model, city, status, last_seen, disabled_reason,"
            " status_before_disable, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        number += len(rows)
    tx.set_meta(CLOCK_KEY, iso_seconds(now))


def keep_ages_current(tx: Tx, now: datetime) -> None:
    """Move every ``last_seen`` forward by the time passed since the devices' clock (never back)."""
    recorded = tx.meta(CLOCK_KEY)
    since = LEGACY_CLOCK if recorded is None else _parse_iso(recorded)
    elapsed = now.replace(microsecond=0) - since
    if elapsed <= timedelta(0):
        return
    rows = tx.execute("SELECT id, last_seen FROM devices").fetchall()
    tx.executemany(
        "UPDATE devices SET last_seen = ? WHERE id = ?",
        [(iso_seconds(_parse_iso(row["last_seen"]) + elapsed), row["id"]) for row in rows],
    )
    tx.set_meta(CLOCK_KEY, iso_seconds(now))


def _parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _utc_now() -> datetime:
    return datetime.now(UTC)


def seed_store(store: Store, now: datetime | None = None) -> bool:
    """Seed ``store`` if it holds no data yet, else bring its ages up to ``now`` (default: the
    current time). Returns whether it seeded."""
    moment = now if now is not None else _utc_now()

    def seed_or_age(tx: Tx) -> bool:
        if tx.execute("SELECT 1 FROM tenants LIMIT 1").fetchone() is not None:
            keep_ages_current(tx, moment)
            return False
        seed(tx, moment)
        return True

    return store.run(seed_or_age)


def open_seeded_store(
    path: str | Path = DEFAULT_DB_PATH, *, reset: bool = False, now: datetime | None = None
) -> Store:
    """Open the database at ``path`` (``":memory:"`` for a private one), seeding it on first use.

    ``now`` (default: the current time) is the instant the seeded ages are counted back from.
    """
    store = open_store(path, reset=reset)
    try:
        seed_store(store, now)
    except BaseException:
        store.close()
        raise
    return store

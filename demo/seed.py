"""Deterministic demo data: two tenants, their users (with fixed demo tokens) and their devices.

The same rows come out on every run (a fixed random seed, a fixed reference time and fixed
per-city counts), so a demo script and the tests can rely on the facts in :data:`FACTS`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from .db import DEFAULT_DB_PATH, Role, Status, Store, Tx, hash_token, iso, open_store

RANDOM_SEED = 20261102
REFERENCE_TIME = datetime(2026, 11, 2, 9, 0, 0, tzinfo=UTC)
"""'Now' for the seeded data: every ``last_seen`` is relative to this instant."""

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


def _device_rows(rng: random.Random, tenant: str, first_number: int) -> list[tuple[object, ...]]:
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
            last_seen = REFERENCE_TIME - timedelta(seconds=rng.randint(20, 600))
        elif status == "offline":
            last_seen = REFERENCE_TIME - timedelta(minutes=rng.randint(3 * 60, 9 * 24 * 60))
        else:
            last_seen = REFERENCE_TIME - timedelta(days=rng.randint(12, 40), minutes=rng.randint(0, 1439))
        updated_at = min(last_seen, REFERENCE_TIME - timedelta(days=rng.randint(1, 60)))
        rows.append((
            f"dev-{first_number + offset:04d}",
            tenant,
            name,
            rng.choices(models, weights)[0],
            city,
            status,
            iso(last_seen),
            rng.choice(DISABLED_REASONS) if status == "disabled" else None,
            "online" if status == "disabled" else None,  # what `enable` restores
            iso(updated_at),
        ))
    return rows


def seed(tx: Tx) -> None:
    """Insert the demo data into an empty database."""
    rng = random.Random(RANDOM_SEED)
    tx.executemany("INSERT INTO tenants (id, name) VALUES (?, ?)", TENANTS)
    tx.executemany(
        "INSERT INTO users (id, name, tenant, role, token_sha256) VALUES (?, ?, ?, ?, ?)",
        [(u.id, u.name, u.tenant, u.role, hash_token(u.token)) for u in USERS],
    )
    number = 1
    for tenant, _ in TENANTS:
        rows = _device_rows(rng, tenant, number)
        tx.executemany(
            "INSERT INTO devices (id, tenant, name, model, city, status, last_seen, disabled_reason,"
            " status_before_disable, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        number += len(rows)


def seed_store(store: Store) -> bool:
    """Seed ``store`` if it holds no data yet. Returns whether it seeded."""
    with store.transaction() as tx:
        if tx.execute("SELECT 1 FROM tenants LIMIT 1").fetchone() is not None:
            return False
        seed(tx)
        return True


def open_seeded_store(path: str | Path = DEFAULT_DB_PATH, *, reset: bool = False) -> Store:
    """Open the database at ``path`` (``":memory:"`` for a private one), seeding it on first use."""
    store = open_store(path, reset=reset)
    seed_store(store)
    return store

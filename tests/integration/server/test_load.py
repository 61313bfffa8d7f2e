"""A small, bounded run of benchmarks/bench_server_load.py against a real uvicorn on 127.0.0.1:
correctness under concurrency and rate limiting (no lost or doubled write, every retry a replay,
no error but RATE_LIMITED), never timing."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from agentsurface.server import RateLimit
from tests._shared.server.live import serving

BENCH = Path(__file__).resolve().parents[3] / "benchmarks" / "bench_server_load.py"


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_server_load", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


async def test_concurrent_clients_under_a_rate_limit_lose_and_double_nothing(tmp_path: Path) -> None:
    bench = load_bench()
    db_path = tmp_path / "load.sqlite3"
    # A tight limit (well under what even a loaded machine serves per caller), so that some calls
    # are refused with RATE_LIMITED and sent again.
    app = bench.make_app(db_path, RateLimit(burst=2, per_second=8))
    with serving(app) as base:
        tally, _ = await bench.run_load(base, clients=12, calls=30, deadline=60)
    assert bench.verify(tally, db_path) == []
    assert tally.errors == []
    assert tally.rate_limited > 0
    assert len(tally.acknowledged) == 12 * 24  # 8 new writes in every 10 calls
    assert tally.replays == tally.retries == 12 * 3

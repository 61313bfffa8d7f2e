"""Invocation benchmarks on the BENCHMARKS.md workloads (a script, not a test).

    .venv/bin/python benchmarks/bench_invoke.py [--min-time 0.5] [--json] [--cpu]

Each row: warm up, then time batches with ``time.perf_counter`` until at least ``--min-time``
seconds and 10 batches are collected; the figure is the median ms/op over batches. The
ratio to the TypeScript reference comes only from a run beside it:
``python3 ../shared/tools/perf_side_by_side.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
from typing import Any

from workload import SIDE_BY_SIDE, add_clock_option, median_ms_async, populated, use_clock

from agentsurface import authenticated, rate_limit
from agentsurface._core.jsonvalue import canonical_json, digest


def digest_payload() -> dict[str, Any]:
    return {
        "rows": [
            {
                "id": f"device_{i}",
                "name": f"Device {i}",
                "status": "online" if i % 2 else "offline",
                "tags": ["a", "b", "c"],
            }
            for i in range(400)
        ]
    }


async def run(min_time: float) -> list[dict[str, Any]]:
    ids = itertools.count()
    rows: list[dict[str, Any]] = []

    registry = populated(10)

    async def action_invoke() -> None:
        result = await registry.invoke(
            {
                "capabilityId": "view:bench.widget.poke",
                "instanceId": "w0",
                "input": {"ids": ["a"]},
                "invocationId": f"inv_{next(ids)}",
            }
        )
        assert result.ok, result

    rows.append({"row": "action invoke", "ms": await median_ms_async(action_invoke, min_time)})

    guarded = populated(
        1,
        context=lambda: {"user": {"id": "u"}},
        policies=[authenticated(), rate_limit(limit=1_000_000_000, window=60.0)],
    )

    async def guarded_invoke() -> None:
        result = await guarded.invoke(
            {
                "capabilityId": "view:bench.widget.poke",
                "instanceId": "w0",
                "input": {"ids": ["a"]},
                "invocationId": f"inv_{next(ids)}",
            }
        )
        assert result.ok, result

    rows.append({"row": "action invoke, 2 policies", "ms": await median_ms_async(guarded_invoke, min_time)})

    async def observation_invoke() -> None:
        result = await registry.invoke({"capabilityId": "view:bench.widget.readState", "instanceId": "w0"})
        assert result.ok and result.output == {"n": 0}, result

    rows.append({"row": "observation invoke", "ms": await median_ms_async(observation_invoke, min_time)})

    payload = digest_payload()
    size = len(canonical_json(payload))

    async def request_digest() -> None:
        digest(payload)

    rows.append(
        {
            "row": "request digest at ~32 kB",
            "ms": await median_ms_async(request_digest, min_time),
            "chars": size,
        }
    )
    registry.close()
    guarded.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-time", type=float, default=0.5, help="seconds of timed batches per row")
    parser.add_argument("--json", action="store_true", help="print JSON rows instead of a table")
    add_clock_option(parser)
    args = parser.parse_args(argv)
    clock = use_clock(args.cpu)
    rows = asyncio.run(run(args.min_time))
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"Python {sys.version.split()[0]} ({sys.implementation.name}), median of batches, ms/op ({clock})")
    print(f"{'workload':<28} {'ours':>10}")
    for row in rows:
        note = f"  ({row['chars']:,} chars)" if "chars" in row else ""
        print(f"{row['row']:<28} {row['ms']:>10.4f}{note}")
    print(SIDE_BY_SIDE)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

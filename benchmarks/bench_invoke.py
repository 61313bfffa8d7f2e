"""Invocation benchmarks on the BENCHMARKS.md workloads (a script, not a test).

    .venv/bin/python benchmarks/bench_invoke.py [--min-time 0.5] [--json] [--cpu]

Each row: warm up, then time batches with ``time.perf_counter`` until at least ``--min-time``
seconds and 10 batches are collected; the figure is the median ms/op over batches. The
reference figures are the TypeScript implementation's (Node 20, vitest bench) as recorded in
../shared/BENCHMARKS.md, runs A / B / C; the ratio is ours over run C (issue 11's target: at most
1.5x). Those figures come from another run, so read the ratio as a guide, not a precise comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
from typing import Any

from workload import add_clock_option, median_ms_async, populated, ratio, use_clock

from agent_surface import authenticated, rate_limit
from agent_surface._core.jsonvalue import canonical_json, digest

# ms/op, run A / run B / run C (BENCHMARKS.md); the ratio is ours / run C
REFERENCE: dict[str, tuple[float, float, float]] = {
    "action invoke": (0.112, 0.090, 0.125),
    "action invoke, 2 policies": (0.121, 0.134, 0.149),
    "observation invoke": (0.067, 0.048, 0.066),
    "request digest at ~32 kB": (3.67, 4.25, 4.49),
}


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
    for row in rows:
        row["reference"] = list(REFERENCE[row["row"]])
        row["ratio"] = ratio(row["row"], row["ms"], REFERENCE)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"Python {sys.version.split()[0]} ({sys.implementation.name}), median of batches, ms/op ({clock})")
    print(f"{'workload':<28} {'ours':>10} {'reference A / B / C':>23} {'ours/C':>7}")
    for row in rows:
        ref_a, ref_b, ref_c = row["reference"]
        note = f"  ({row['chars']:,} chars)" if "chars" in row else ""
        print(
            f"{row['row']:<28} {row['ms']:>10.4f} {ref_a:>6.3f} / {ref_b:<6.3f}/ {ref_c:<6.3f} {row['ratio']:>6.2f}x{note}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Core benchmark: registry lifecycle and snapshot, on the workload of shared/BENCHMARKS.md.

Run: ``.venv/bin/python benchmarks/bench_core.py [--min-time 0.5] [--cpu]``.

Each row is timed with ``time.perf_counter``: a warm-up, then a calibration that sizes one
batch to roughly ``--batch-ms`` milliseconds, then several batches; the figure is the median
per-operation time over the batches. Ratios to the TypeScript reference come only from a run
beside it on the same machine: ``python3 ../shared/tools/perf_side_by_side.py`` runs the
reference's bench and these scripts back to back (figures from another day do not compare).

Workload ``definition(i)``: component type ``bench.widget``, instance ``w{i}``, observation
``readState`` (output ``{n: number}``, read returns ``{n: i}``) and action ``poke`` (input
``{ids: string[]}``, effect ``local-state``, does nothing), both with raw JSON schemas. The
contract is static (declared once and approved by the authority, as a compiled contract is);
binding it to ``w{i}`` with live handlers happens inside the timed region, as the reference
creates its definition objects inside its timed region.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from workload import (
    AUTHORITY,
    SIDE_BY_SIDE,
    add_clock_option,
    definition,
    median_ms,
    populated,
    use_clock,
)

from agentsurface import AgentSurfaceRegistry

# ----------------------------------------------------------------------------- workloads


def create_and_dispose() -> None:
    AgentSurfaceRegistry(authority=AUTHORITY).close()


def register_unregister(count: int) -> Callable[[], None]:
    def run() -> None:
        registry = AgentSurfaceRegistry(authority=AUTHORITY, environment="production")
        handles = [registry.register(definition(i)) for i in range(count)]
        for handle in handles:
            handle.close()
        registry.close()

    return run


def snapshot_of(registry: AgentSurfaceRegistry) -> Callable[[], None]:
    def run() -> None:
        registry.snapshot()

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-time", type=float, default=0.5, help="seconds of timed batches per row")
    add_clock_option(parser)
    args = parser.parse_args()
    clock = use_clock(args.cpu)

    r100 = populated(100)
    snapshot_of(r100)()  # warm: descriptors are built at registration, the first call pays imports
    rows: list[tuple[str, Callable[[], None]]] = [
        ("create registry", create_and_dispose),
        ("register+unregister 10", register_unregister(10)),
        ("register+unregister 100", register_unregister(100)),
        ("register+unregister 1000", register_unregister(1000)),
        ("snapshot at 100", snapshot_of(r100)),
    ]
    print(
        f"agentsurface core benchmark — Python {sys.version.split()[0]}, median ms/op over batches ({clock})"
    )
    print(f"{'workload':<26} {'ours ms/op':>11}")
    for name, fn in rows:
        print(f"{name:<26} {median_ms(fn, args.min_time):>11.4f}")
    print(SIDE_BY_SIDE)

if __name__ == "__main__":
    main()

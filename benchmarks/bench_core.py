"""Core benchmark: registry lifecycle and snapshot, on the workload of shared/BENCHMARKS.md.

Run: ``.venv/bin/python benchmarks/bench_core.py [--min-time 0.5] [--cpu]``.

Each row is timed with ``time.perf_counter``: a warm-up, then a calibration that sizes one
batch to roughly ``--batch-ms`` milliseconds, then several batches; the figure is the median
per-operation time over the batches. The reference columns are the TypeScript implementation's
figures recorded in BENCHMARKS.md (Node 20, runs A / B / C, same kind of machine); the ratio is
ours over run C (issue 11's target: at most 1.5x). The reference was not re-run in this session.

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
    TARGET_RATIO,
    add_clock_option,
    definition,
    median_ms,
    populated,
    ratio,
    use_clock,
)

from agent_surface import AgentSurfaceRegistry

# ----------------------------------------------------------------------------- workloads


def create_and_dispose() -> None:
    AgentSurfaceRegistry(authority=AUTHORITY).close()


def register_unregister(count: int) -> Callable[[], None]:
    def run() -> None:
        registry = AgentSurfaceRegistry(authority=AUTHORITY, environment="production")
        handles = [registry.register(definition(i)) for i in range(count)]
        for handle in handles:
            handle.unregister()
        registry.close()

    return run


def snapshot_of(registry: AgentSurfaceRegistry) -> Callable[[], None]:
    def run() -> None:
        registry.snapshot()

    return run


REFERENCE_MS = {  # BENCHMARKS.md, run A / run B / run C
    "create registry": (0.0029, 0.0037, 0.0042),
    "register+unregister 10": (0.42, 0.31, 0.67),
    "register+unregister 100": (3.35, 2.81, 4.7),
    "register+unregister 1000": (34.7, 35.3, 57.0),
    "snapshot at 100": (0.29, 0.16, 0.32),
}


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
        f"agent-surface core benchmark — Python {sys.version.split()[0]}, median ms/op over batches ({clock})"
    )
    print(f"{'workload':<26} {'ours ms/op':>11} {'ref A / B / C ms/op':>24} {'ours/C':>8}")
    for name, fn in rows:
        ours = median_ms(fn, args.min_time)
        ref_a, ref_b, ref_c = REFERENCE_MS[name]
        print(
            f"{name:<26} {ours:>11.4f} {ref_a:>7.4g} / {ref_b:<6.4g} / {ref_c:<6.4g} "
            f"{ratio(name, ours, REFERENCE_MS):>7.2f}x"
        )
    print(
        f"ratio = ours / ref C (target <= {TARGET_RATIO}x); the reference (TypeScript, Node 20) was "
        "recorded in BENCHMARKS.md, not re-run in this session."
    )


if __name__ == "__main__":
    main()

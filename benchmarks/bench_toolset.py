"""Toolset projection benchmarks on the BENCHMARKS.md workloads (a script, not a test).

    .venv/bin/python benchmarks/bench_toolset.py [--min-time 0.5] [--json] [--cpu]

Rows:
- "direct tools at 40" / "direct tools at 300": create a toolset (embedded topology) over
  ``populated(n)``, call ``tools()`` once, dispose it. The registry is built once, outside the
  timed operation, as in the reference benchmark.
- meta tool-block size: bytes of the serialized provider definitions (name, description, input
  schema; compact JSON, sorted keys) of a meta-mode toolset over 10 and 1000 capabilities
  (``populated(5)`` and ``populated(500)``), next to the direct catalog of the same surface.

Timing: warm up, then batches of about 20 ms timed with ``time.perf_counter`` until at least
``--min-time`` seconds and 10 batches; the figure is the median ms/op over batches. The ratio
to the TypeScript reference comes only from a run beside it:
``python3 ../shared/tools/perf_side_by_side.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from workload import SIDE_BY_SIDE, add_clock_option, median_ms, populated, use_clock

from agentsurface import AgentSurfaceRegistry, Consumer
from agentsurface.toolset import AgentTool, AgentToolset

CONSUMER = Consumer("bench", "embedded")


def block_bytes(tools: list[AgentTool]) -> int:
    """Bytes of the provider tool block: the serialized definitions."""
    text = json.dumps([t.definition() for t in tools], sort_keys=True, separators=(",", ":"))
    return len(text.encode("utf-8"))


def direct_rows(min_time: float) -> list[dict[str, Any]]:
    rows = []
    for count in (40, 300):
        registry = populated(count)

        def project(registry: AgentSurfaceRegistry = registry, count: int = count) -> None:
            toolset = AgentToolset(registry, consumer=CONSUMER, topology="embedded")
            tools = toolset.tools()
            toolset.close()
            assert len(tools) == 2 * count

        sample = AgentToolset(registry, consumer=CONSUMER, topology="embedded").tools()
        suffixed = sum(1 for t in sample if "_at_w" in t.name)
        rows.append(
            {
                "row": f"direct tools at {count}",
                "ms": median_ms(project, min_time),
                "tools": len(sample),
                "suffixed": suffixed,
            }
        )
        registry.close()
    return rows


def size_rows() -> list[dict[str, Any]]:
    rows = []
    for capabilities in (10, 1000):
        registry = populated(capabilities // 2)
        meta = AgentToolset(registry, consumer=CONSUMER, topology="embedded", mode="meta")
        direct = AgentToolset(registry, consumer=CONSUMER, topology="embedded")
        rows.append(
            {
                "row": f"meta tool block at {capabilities} capabilities",
                "meta_bytes": block_bytes(meta.tools()),
                "direct_bytes": block_bytes(direct.tools()),
            }
        )
        registry.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--min-time", type=float, default=0.5, help="seconds of timed batches per row")
    parser.add_argument("--json", action="store_true", help="print JSON rows instead of a table")
    add_clock_option(parser)
    args = parser.parse_args(argv)
    clock = use_clock(args.cpu)
    timed = direct_rows(args.min_time)
    sizes = size_rows()
    if args.json:
        print(json.dumps({"timed": timed, "sizes": sizes}, indent=2))
        return 0
    print(f"Python {sys.version.split()[0]} ({sys.implementation.name}), median of batches, ms/op ({clock})")
    print(f"{'workload':<24} {'ours':>10}")
    for row in timed:
        note = f"  ({row['tools']} tools, {row['suffixed']} _at_w-suffixed)"
        print(f"{row['row']:<24} {row['ms']:>10.4f}{note}")
    print(SIDE_BY_SIDE)
    print()
    print(f"{'tool block (bytes)':<38} {'meta':>8} {'direct':>10}")
    for row in sizes:
        print(f"{row['row']:<38} {row['meta_bytes']:>8,} {row['direct_bytes']:>10,}")
    small, large = sizes[0]["meta_bytes"], sizes[-1]["meta_bytes"]
    print(f"meta block at 1000 / at 10 capabilities: {large / small:.2f}x (constant by design)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

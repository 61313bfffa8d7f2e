"""The shared benchmark workload of ../shared/BENCHMARKS.md and the timing helpers.

``definition(i)``: component type ``bench.widget``, instance ``w{i}``; observation ``readState``
(output ``{n: number}``, read returns ``{n: i}``) and action ``poke`` (input ``{ids: string[]}``,
effect ``local-state``, does nothing), with raw JSON schemas. The contract is declared once and
approved by the authority, as a compiled contract is; binding it to ``w{i}`` is per call.

Timing: warm up, size batches to about 20 ms, then time batches with ``time.perf_counter`` (or
``time.process_time`` with ``--cpu``; garbage collection paused inside a synchronous batch) until
``min_time`` seconds and 10 batches; the figure is the median ms/op. The scripts print our
figures only: absolute times vary 20-80 % between runs on a shared machine, so a ratio to the
TypeScript reference means something only when both ran in the same run
(``../shared/tools/perf_side_by_side.py``).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from agentsurface import AgentSurfaceRegistry, CapabilityAuthority, compile_manifest
from agentsurface.lowlevel import ActionContract, ComponentBinding, ComponentContract, ObservationContract

OUTPUT_SCHEMA = {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}
INPUT_SCHEMA = {
    "type": "object",
    "properties": {"ids": {"type": "array", "items": {"type": "string"}}},
    "required": ["ids"],
    "additionalProperties": False,
}
WIDGET = ComponentContract(
    type="bench.widget",
    description="bench widget",
    observations={"readState": ObservationContract("read", output=OUTPUT_SCHEMA)},
    actions={"poke": ActionContract("poke", effect="local-state", input=INPUT_SCHEMA)},
)
AUTHORITY = CapabilityAuthority.from_manifest(compile_manifest([WIDGET]))
BATCH_SECONDS = 0.02
# What batches are timed with: wall time by default (as the reference's figures are); CPU time
# of this process with --cpu, steadier when other work shares the machine.
_clock: Callable[[], float] = time.perf_counter


def add_clock_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cpu", action="store_true", help="time batches with process CPU time (a shared, busy machine)"
    )


def use_clock(cpu: bool) -> str:
    """Select the batch clock; returns its name for the header line."""
    global _clock
    _clock = time.process_time if cpu else time.perf_counter
    return "CPU time" if cpu else "wall time"


def _poke(value: object, ctx: object) -> None:
    return None


def definition(i: int) -> ComponentBinding:
    """Component ``w{i}``: readState returns ``{n: i}``, poke does nothing."""
    return WIDGET.bind(
        instance_id=f"w{i}", observations={"readState": lambda ctx: {"n": i}}, actions={"poke": _poke}
    )


def populated(n: int, **options: Any) -> AgentSurfaceRegistry:
    """A production registry with ``definition(0..n-1)`` registered."""
    registry = AgentSurfaceRegistry(authority=AUTHORITY, environment="production", **options)
    for i in range(n):
        registry.register(definition(i))
    return registry


SIDE_BY_SIDE = (
    "ratios to the reference: python3 ../shared/tools/perf_side_by_side.py "
    "(runs the reference's bench beside these scripts, in one run)"
)


def median_ms(op: Callable[[], Any], min_time: float) -> float:
    """Median milliseconds per call of ``op`` over timed batches."""

    def batch(n: int) -> float:
        start = _clock()
        for _ in range(n):
            op()
        return _clock() - start

    return _median(batch, min_time)


async def median_ms_async(op: Callable[[], Awaitable[Any]], min_time: float) -> float:
    """Median milliseconds per awaited call of ``op`` over timed batches."""
    loop_samples: list[float] = []

    async def batch(n: int) -> float:
        start = _clock()
        for _ in range(n):
            await op()
        return _clock() - start

    n, spent = 1, 0.0
    while spent < BATCH_SECONDS:
        spent = await batch(n)
        n *= 2
    size = max(1, int(BATCH_SECONDS / (spent / (n // 2))))
    warm_until = time.perf_counter() + min(0.25, min_time / 2)
    while time.perf_counter() < warm_until:
        await batch(size)
    total = 0.0
    while total < min_time or len(loop_samples) < 10:
        # GC stays on here: asyncio futures form reference cycles, and pausing collection makes
        # the batches slower (2-3x measured), not steadier.
        elapsed = await batch(size)
        total += elapsed
        loop_samples.append(elapsed / size)
    return statistics.median(loop_samples) * 1000


def _median(batch: Callable[[int], float], min_time: float) -> float:
    n, spent = 1, 0.0
    while spent < BATCH_SECONDS:  # warm up while sizing batches to about 20 ms
        spent = batch(n)
        n *= 2
    size = max(1, int(BATCH_SECONDS / (spent / (n // 2))))
    warm_until = time.perf_counter() + min(0.25, min_time / 2)
    while time.perf_counter() < warm_until:
        batch(size)
    samples: list[float] = []
    total = 0.0
    while total < min_time or len(samples) < 10:
        with _gc_paused():
            elapsed = batch(size)
        total += elapsed
        samples.append(elapsed / size)
    return statistics.median(samples) * 1000


class _gc_paused:
    """Collections would otherwise land on whichever batch happens to trigger them."""

    def __enter__(self) -> None:
        self._enabled = gc.isenabled()
        gc.collect()
        gc.disable()

    def __exit__(self, *_: object) -> None:
        if self._enabled:
            gc.enable()

"""Disposal settles every call it interrupts with the one shut-down answer (CANCELLED, retry
"no", as the reference settles disposal), whether the call was running or still queued."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agentsurface._core.errors import surface_shut_down
from agentsurface.lowlevel import ActionContract, ComponentContract, ObservationContract

from .helpers import Gate, assert_matrix_compliant, make_registry, spin

SRC = Path(__file__).resolve().parents[4] / "src" / "agentsurface"


async def test_disposal_answers_running_and_queued_calls_with_the_shut_down_error() -> None:
    gate, read_gate = Gate(), Gate()
    contract = ComponentContract(
        type="stop.widget",
        description="shutdown fixture",
        observations={"peek": ObservationContract("peek", output={"type": "number"})},
        actions={"run": ActionContract("run", input={"type": "object"})},
    )
    registry = make_registry([contract])

    async def run(value: Any, ctx: Any) -> None:
        await gate.run()

    async def peek(ctx: Any) -> Any:
        return await read_gate.run()

    registry.register(contract.bind(observations={"peek": peek}, actions={"run": run}))
    running = asyncio.ensure_future(registry.invoke({"capabilityId": "view:stop.widget.run", "input": {}}))
    queued = asyncio.ensure_future(registry.invoke({"capabilityId": "view:stop.widget.run", "input": {}}))
    reading = asyncio.ensure_future(registry.invoke({"capabilityId": "view:stop.widget.peek"}))
    await spin()
    assert gate.entered == 1 and read_gate.entered == 1
    registry.close()
    expected = surface_shut_down()
    assert (expected.code, expected.retry) == ("CANCELLED", "no")
    for future in (running, queued, reading):
        result = assert_matrix_compliant(await asyncio.wait_for(future, 1))
        assert result.error == expected
    assert gate.entered == 1  # the queued call never ran


def test_the_shut_down_answer_is_built_in_one_place() -> None:
    # Guard: no adapter or toolset spells its own "shut down" result (they drifted apart once,
    # one saying retry "no" and the other "yes").
    spelled = [
        path.relative_to(SRC).as_posix()
        for path in sorted(SRC.rglob("*.py"))
        if "shut down" in path.read_text(encoding="utf-8").lower()
    ]
    assert spelled == ["_core/errors.py"]

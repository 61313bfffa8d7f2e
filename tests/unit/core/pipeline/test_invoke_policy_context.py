"""The invoke phase's policy context copies every field of the resolution's context."""

from __future__ import annotations

import dataclasses
import time

from agentsurface._core.consumer import Consumer
from agentsurface._core.pipeline.invoke_policy import with_effective_input
from agentsurface._core.policies.base import PolicyContext


def test_every_field_is_carried_and_only_the_input_changes() -> None:
    ctx = PolicyContext(
        consumer=Consumer(id="agent-1"),
        capability_id="view:t.widget.poke",
        kind="action",
        effect="local-state",
        component_type="t.widget",
        instance_id="w1",
        registration_id="reg_1",
        origin="https://app.example",
        host={"user": {"id": "u"}},
        now=time.time,
        internal={"k": 1},
        invocation_id="inv_1",
        environment="test",
    )
    copied = with_effective_input(ctx, {"ids": ["a"]})
    assert copied == dataclasses.replace(ctx, effective_input={"ids": ["a"]})
    for field in dataclasses.fields(PolicyContext):
        if field.name != "effective_input":
            assert getattr(copied, field.name) is getattr(ctx, field.name), field.name

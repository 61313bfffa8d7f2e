"""Phase 4, authorization: the pre-input policy hooks (they never see agent input)."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable

from ..errors import CapabilityFailure
from ..policies.base import HookResult, PolicyContext
from . import failures
from .call import Call, Wait
from .failures import PhaseRefusal

log = logging.getLogger("agentsurface")

Hook = Callable[[PolicyContext], HookResult]


def authorize(call: Call) -> Wait:
    if not call.target.entry.policies:
        return None  # most calls: no coroutine to run
    return _authorize(call)


async def _authorize(call: Call) -> None:
    target = call.target
    ctx = target.policy
    assert ctx is not None  # resolution builds it for a capability with policies
    for policy, _scope in target.entry.policies:
        await run_hook(policy.on_authorize, ctx, policy.name)


async def run_hook(hook: Hook, ctx: PolicyContext, name: str) -> None:
    """Run one policy hook; a typed refusal passes through, anything else fails closed."""
    try:
        outcome = hook(ctx)
        if outcome is not None and inspect.isawaitable(outcome):  # None: most hooks, no ABC check
            await outcome
    except CapabilityFailure as exc:
        raise PhaseRefusal(exc.error) from None
    except Exception:
        log.exception("policy %s failed; refusing the call", name)
        raise PhaseRefusal(failures.policy_failed()) from None

"""Phase 8, admission: a slot in the action queue of the call's group, or in the observation pool."""

from __future__ import annotations

import asyncio

from ..registrations.entries import ActionEntry, QueueGroup
from . import failures
from .call import Call, Wait
from .execution import abort_error
from .failures import PhaseRefusal
from .queues import QueueFull, Release


def admit(call: Call) -> Wait:
    if call.cancelled_before_start:
        raise PhaseRefusal(failures.cancelled_before_start())
    target = call.target
    pipeline = call.pipeline
    group = target.entry.queue_group(target.reg.registration_id, pipeline.registry.limits)
    if group is None:
        release = pipeline.observations.try_acquire(call.consumer._key)  # Consumer.key
    else:
        release = pipeline.actions.try_acquire(group.key, group.max_active)
    if target.reg.status == "active":
        navigation = isinstance(target.entry, ActionEntry) and target.entry.navigation
        target.reg.inflight.add(call.signal if navigation else call.settle)
    if release is None:
        return _wait(call, group, pipeline.registry.now())
    _admitted(call, release, None)
    return None


def _admitted(call: Call, release: Release, waited_from: float | None) -> None:
    # A slot taken at once waited no time (``None``: no clock read for it).
    call.queue_wait = 0.0 if waited_from is None else call.pipeline.registry.now() - waited_from
    if call.target.reg.status != "active":
        release()
        raise PhaseRefusal(failures.unmounted_before_run())
    call.release = release


async def _wait(call: Call, group: QueueGroup | None, waited_from: float) -> None:
    pipeline = call.pipeline
    if group is None:
        acquire = pipeline.observations.acquire(call.consumer.key)
    else:
        acquire = pipeline.actions.acquire(group.key, group.max_active, group.depth)
    task = asyncio.ensure_future(acquire)

    def stop_waiting(_reason: str) -> None:
        task.cancel()

    remove = call.signal.add_listener(stop_waiting)
    try:
        release = await task
    except QueueFull:
        call.untrack()
        raise PhaseRefusal(failures.queue_full(pipeline.registry.limits.action_timeout)) from None
    except asyncio.CancelledError:
        call.untrack()
        current = asyncio.current_task()
        if current is not None and current.cancelling():  # our caller was cancelled
            task.cancel()
            raise
        # The wait itself ended: a signal fired, or disposal drained the queue.
        raise PhaseRefusal(abort_error(call, call.signal.reason or "cancelled", during_execution=False)) from None
    finally:
        remove()
    _admitted(call, release, waited_from)

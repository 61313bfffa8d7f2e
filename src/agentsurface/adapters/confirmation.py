"""Completing a confirmation inside one WebMCP call: prompt through the browser's
``requestUserInteraction`` when the host opted in, otherwise wait for the host's own UI, and
give up when the adapter stops or the browser cancels the call."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

from .._core.consumer import Consumer
from .._core.contracts.context import CancelSignal
from .._core.errors import error
from .._core.pipeline.confirmation import PendingConfirmation
from .._core.pipeline.failures import confirmation_invalid
from .._core.pipeline.invocation import Invocation, InvocationResult
from .._core.records import record
from .._core.registry.registry import AgentSurfaceRegistry
from .model_context import ToolCall

ConfirmHook = Callable[[PendingConfirmation, Any], Any]
Diagnose = Callable[[str], None]


@record
class InCallConfirmation:
    """What completing a confirmation needs from the adapter that received the call."""

    registry: AgentSurfaceRegistry
    consumer: Consumer | None
    stopped: CancelSignal  # aborted by the adapter's stop()
    confirm: ConfirmHook | None
    diagnose: Diagnose

    async def complete(self, request: Invocation, first: InvocationResult, call: ToolCall) -> InvocationResult:
        """The call's outcome once the user decided: the retried invocation (approved, or expired:
        that restarts the cycle), CONFIRMATION_INVALID when denied (never retried), ``first``
        when the adapter stopped (nothing executes), or CANCELLED when the browser gave up."""
        assert first.error is not None and first.error.details is not None
        cid = first.error.details.get("confirmationId")
        if not isinstance(cid, str):
            return first
        confirmations = self.registry.confirmations
        # The wait ends when the user decides, when the adapter stops, or when the browser
        # cancels the call (shape B's signal): a cancelled call must not hang until the TTL.
        give_up = CancelSignal()
        removers = [self.stopped.add_listener(give_up.abort)]
        if call.signal is not None:
            removers.append(call.signal.add_listener(give_up.abort))
        try:
            if self.confirm is not None and call.request_user_interaction is not None:
                pending = confirmations.get(cid)
                if pending is not None:
                    await self._prompt(cid, pending, call, give_up)
            outcome = None
            if not give_up.aborted:
                try:
                    outcome = await confirmations.wait_for(cid, signal=give_up)
                except asyncio.CancelledError:
                    if not give_up.aborted:
                        raise
        finally:
            for remove in removers:
                remove()
        if self.stopped.aborted:
            return first  # stop() while waiting: nothing executes
        if give_up.aborted:
            # Nobody will hear this request's answer: its dialog closes, and a late approval
            # applies nothing.
            confirmations.withdraw(cid)
            return InvocationResult(
                "error",
                first.invocation_id,
                request.capability_id,
                self.registry.version,
                error=error("CANCELLED", "The invocation was cancelled.", "yes"),
            )
        if outcome in ("stale", "denied"):
            # Final, never retried. Stale: the person approved while the state the request was
            # previewed from had changed; a retry would only meet the spoiled approval. Denied:
            # retrying would answer with whatever phase fails first (a surface change since:
            # STALE_CAPABILITY, "refresh and retry"), inviting the agent to ask the person
            # again. The store has audited both.
            said = confirmations.reason_of(cid) if outcome == "denied" else None
            return InvocationResult(
                "error",
                first.invocation_id,
                request.capability_id,
                self.registry.version,
                error=confirmation_invalid(outcome, said),
            )
        retry = dataclasses.replace(request, confirmation_id=cid, invocation_id=first.invocation_id)
        return await self.registry.invoke(retry, consumer=self.consumer, signal=call.signal)

    async def _prompt(
        self, cid: str, pending: PendingConfirmation, call: ToolCall, give_up: CancelSignal
    ) -> None:
        """Run the host's confirm UI through requestUserInteraction; on failure fall back to waiting."""
        confirm, request_user_interaction = self.confirm, call.request_user_interaction
        assert confirm is not None and request_user_interaction is not None
        hook_tasks: list[asyncio.Future[Any]] = []

        async def ui() -> Any:
            answer = confirm(pending, call.client)
            if not inspect.isawaitable(answer):
                return answer
            # Its own task: in the browser the client calls ui() from JS, so cancelling the
            # prompt below would not reach the host's dialog; cancelling this task does.
            task = asyncio.ensure_future(answer)
            hook_tasks.append(task)
            return await task

        prompt = asyncio.ensure_future(request_user_interaction(ui))
        gave_up = asyncio.ensure_future(give_up.wait())
        # The host's own confirmation UI (or the TTL) may settle the record while the prompt is
        # open: then the call proceeds on that outcome instead of waiting for the prompt.
        settled = asyncio.ensure_future(self.registry.confirmations.wait_for(cid))
        try:
            await asyncio.wait({prompt, gave_up, settled}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gave_up.cancel()
            if not settled.done():
                settled.cancel()
            if not prompt.done():
                # Stopped, cancelled or decided elsewhere with the dialog open: its late answer
                # must not count, and the host's dialog is told to close (cancelled).
                prompt.add_done_callback(_ignore_outcome)
                prompt.cancel()
            for task in hook_tasks:
                if not task.done():
                    task.add_done_callback(_ignore_outcome)
                    task.cancel()
        if not prompt.done() or prompt.cancelled():
            return  # cancelled above (a task is only marked cancelled once it has run again)
        try:
            answer = prompt.result()
        except Exception as exc:
            self.diagnose(f"confirm hook failed ({exc}); waiting for the host's confirmation UI")
            return
        if not give_up.aborted:  # an answer racing stop()/cancel does not count either
            self.registry.confirmations.resolve(cid, approved=bool(answer))


def _ignore_outcome(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()  # retrieved, so asyncio does not log it as never retrieved

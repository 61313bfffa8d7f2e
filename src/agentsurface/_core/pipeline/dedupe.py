"""Invocation identity: ``(consumer key, invocation id)`` dedupe with join-in-flight and a
bounded (LRU + TTL) cache of terminal results; reuse for a different request conflicts."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..jsonvalue import digest
from ..records import record
from .invocation import MISSING, Invocation, InvocationResult


class LazyFingerprint:
    """The fingerprint of a call whose id the registry minted, or whose id was unused when it
    came, digested only if another caller presents that id (most never do: a minted id is first
    known from the call's own result, and an agent reuses an id only to retry).

    It digests the request's fingerprint material over ``copied``, a private plain copy of its
    input (``plain_copy``; ``MISSING`` for none), so nothing the caller or the handler does later
    changes it. The material is built only then too."""

    __slots__ = ("_copied", "_request", "_text")

    def __init__(self, request: Invocation, copied: Any) -> None:
        self._request: Invocation | None = request
        self._copied = copied
        self._text: str | None = None

    def __str__(self) -> str:
        if self._text is None:
            assert self._request is not None
            material = self._request.fingerprint_material()
            material.pop("input", None)
            if self._copied is not MISSING and self._copied is not None:  # as fingerprint_material
                material["input"] = self._copied
            self._text = digest(material)
            self._request = self._copied = None
        return self._text


Fingerprint = str | LazyFingerprint


@record(frozen=False)
class _Terminal:
    fingerprint: Fingerprint
    result: InvocationResult
    stored_at: float


@record(frozen=False)
class _InFlight:
    fingerprint: Fingerprint
    # Made when the first caller joins: a future settled with nobody waiting still costs a
    # callback of the loop (in Pyodide, a JS task).
    future: asyncio.Future[InvocationResult] | None = None


class DedupeCache:
    __slots__ = ("_inflight", "_now", "_size", "_terminal", "_ttl")

    def __init__(self, size: int, ttl: float, now: Callable[[], float]) -> None:
        self._size = size
        self._ttl = ttl
        self._now = now
        self._terminal: OrderedDict[str, _Terminal] = OrderedDict()
        self._inflight: dict[str, _InFlight] = {}

    def lookup(
        self, key: str, fingerprint: str
    ) -> tuple[str, InvocationResult | asyncio.Future[InvocationResult] | None]:
        """``("new", None)``, ``("join", future)``, ``("cached", result)`` or ``("conflict", None)``."""
        flight = self._inflight.get(key)
        if flight is not None:
            if str(flight.fingerprint) != fingerprint:
                return ("conflict", None)
            if flight.future is None:
                flight.future = asyncio.get_running_loop().create_future()
            return ("join", flight.future)
        self._prune()
        record = self._terminal.get(key)
        if record is None:
            return ("new", None)
        if str(record.fingerprint) != fingerprint:
            return ("conflict", None)
        self._terminal.move_to_end(key)
        return ("cached", record.result)

    def unused(self, key: str) -> bool:
        """Whether no call holds ``key`` and no result is cached under it (``lookup`` would
        answer ``"new"`` whatever the fingerprint)."""
        if key in self._inflight:
            return False
        self._prune()
        return key not in self._terminal

    def begin(self, key: str, fingerprint: Fingerprint) -> None:
        self._inflight[key] = _InFlight(fingerprint)

    def finish(
        self,
        key: str,
        fingerprint: Fingerprint,
        result: InvocationResult,
        cacheable: bool,
        at: float | None = None,
    ) -> asyncio.Future[InvocationResult] | None:
        """Record the terminal result (stored ``at``, default now); returns the future joined
        callers wait on, if any joined."""
        flight = self._inflight.pop(key, None)
        joined = None if flight is None else flight.future
        if not cacheable or self._size <= 0:
            return joined
        terminal = self._terminal
        if key in terminal:
            terminal.move_to_end(key)
        terminal[key] = _Terminal(fingerprint, result, self._now() if at is None else at)
        if len(terminal) > self._size:
            terminal.popitem(last=False)  # one in, at most one out
        return joined

    def _prune(self) -> None:
        now = self._now()
        while self._terminal:
            oldest = next(iter(self._terminal.values()))
            if now - oldest.stored_at < self._ttl:
                return
            self._terminal.popitem(last=False)

    def __len__(self) -> int:
        return len(self._terminal)

    @property
    def inflight(self) -> int:
        return len(self._inflight)

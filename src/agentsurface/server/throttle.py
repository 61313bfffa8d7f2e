"""Audit sampling for refusals that arrive at wire speed (unknown callers, spent budgets)."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any, TypeVar

R = TypeVar("R")


class RefusalSampler:
    """Lets one refusal per (code, caller key) and window through to the audit; counts the rest.

    ``admit`` returns the record to audit now (its ``repeats`` set to the refusals held back
    before it), or None to hold this one back. ``drain`` returns one summary record per key with
    refusals held back (``repeats`` = held - 1: the record stands for itself and its repeats),
    so every refusal is counted exactly once. Memory is bounded.
    """

    CODES = frozenset({"NOT_AUTHENTICATED", "RATE_LIMITED"})
    WINDOW_SECONDS = 60.0
    MAX_KEYS = 10_000

    def __init__(self, window: float = WINDOW_SECONDS) -> None:
        self._window = window
        self._seen: dict[tuple[str, str], list[Any]] = {}  # key -> [window start, held, last held record]
        self._lock = threading.Lock()

    def admit(self, code: str, key: str, now: float, record: R) -> R | None:
        with self._lock:
            entry = self._seen.get((code, key))
            if entry is not None and now - entry[0] < self._window:
                entry[1] += 1
                entry[2] = record
                return None
            if len(self._seen) >= self.MAX_KEYS:
                self._seen = {k: v for k, v in self._seen.items() if v[1] or now - v[0] < self._window}
                if len(self._seen) >= self.MAX_KEYS:
                    self._seen.clear()  # held-back counts are lost only under a flood of distinct keys
            held = 0 if entry is None else int(entry[1])
            self._seen[(code, key)] = [now, 0, None]
        return dataclasses.replace(record, repeats=held) if held else record  # type: ignore[type-var]

    def drain(self) -> list[Any]:
        with self._lock:
            out = []
            for entry in self._seen.values():
                if entry[1]:
                    out.append(dataclasses.replace(entry[2], repeats=entry[1] - 1))
                    entry[1], entry[2] = 0, None
            return out

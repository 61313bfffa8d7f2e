"""Audit sampling for refusals that arrive at wire speed (unknown callers, spent budgets)."""

from __future__ import annotations

import threading


class RefusalSampler:
    """Lets one refusal per (code, caller key) and window through to the audit; counts the rest.

    ``admit`` returns None for a refusal not to audit, else how many like it were held back
    since the last one audited (the audit record's ``repeats``). Memory is bounded.
    """

    CODES = frozenset({"NOT_AUTHENTICATED", "RATE_LIMITED"})
    WINDOW_SECONDS = 60.0
    MAX_KEYS = 10_000

    def __init__(self, window: float = WINDOW_SECONDS) -> None:
        self._window = window
        self._seen: dict[tuple[str, str], tuple[float, int]] = {}  # key -> (window start, held back)
        self._lock = threading.Lock()

    def admit(self, code: str, key: str, now: float) -> int | None:
        with self._lock:
            entry = self._seen.get((code, key))
            if entry is not None and now - entry[0] < self._window:
                self._seen[(code, key)] = (entry[0], entry[1] + 1)
                return None
            if len(self._seen) >= self.MAX_KEYS:
                self._seen = {k: v for k, v in self._seen.items() if now - v[0] < self._window}
                if len(self._seen) >= self.MAX_KEYS:
                    self._seen.clear()
            self._seen[(code, key)] = (now, 0)
            return 0 if entry is None else entry[1]

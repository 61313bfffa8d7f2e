"""The origins the person paired with the relay, and pairings under way.

A pairing gives one origin a secret (256 bits) that its tabs keep in their own localStorage and
prove with a challenge-response on every later connection. The store is a JSON file only the
person can read (0600, in a 0700 folder of the platform's config dir): it holds secrets.

Pairing needs the short code the relay prints on stderr, typed in the page's dialog, so neither
a local program nor another site can pair itself without the person. Attempts are limited: a few
codes per pairing, a few pairings per minute, one under way per origin.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable
from dataclasses import field
from pathlib import Path

from ..._core.records import record
from ...adapters.relay_protocol import is_secret, new_code, new_secret

CODE_ATTEMPTS = 3
PAIRINGS_PER_WINDOW = 5
WINDOW_S = 60.0
PAIRING_TTL_S = 300.0
# Failed pairings (all tries wrong) an origin may have, and all origins together, before pairing
# stops until the relay restarts: a guesser gets at most 3 x 10 tries of a million per run.
FAILURES_PER_ORIGIN = 3
FAILURES_IN_ALL = 10


def default_store_path() -> Path:
    """``relay-pairings.json`` in the platform's per-user config folder."""
    if sys.platform == "win32":
        base = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "agentsurface" / "relay-pairings.json"


class PairingStore:
    """Origin → secret, persisted after every change."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._secrets: dict[str, str] = self._load()

    def _load(self) -> dict[str, str]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise ValueError(f"cannot read the relay's pairings in {self.path}: {exc}") from exc
        origins = raw.get("origins") if isinstance(raw, dict) else None
        if not isinstance(origins, dict):
            raise ValueError(f"{self.path} is not a pairings file (no 'origins' object)")
        return {o: s for o, s in origins.items() if isinstance(o, str) and is_secret(s)}

    def secret(self, origin: str) -> str | None:
        return self._secrets.get(origin)

    @property
    def origins(self) -> list[str]:
        return sorted(self._secrets)

    def pair(self, origin: str) -> str:
        """A fresh secret for ``origin`` (replacing any earlier one), saved before it is given."""
        secret = new_secret()
        self._secrets[origin] = secret
        self._save()
        return secret

    def forget(self, origin: str) -> bool:
        found = self._secrets.pop(origin, None) is not None
        if found:
            self._save()
        return found

    def _save(self) -> None:
        folder = self.path.parent
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        text = json.dumps({"origins": self._secrets}, indent=2, sort_keys=True)
        # Written whole beside it, 0600 from the start, then moved over: never half a file, and
        # never a moment where another user could read it (mkstemp makes it 0600).
        handle, temporary = tempfile.mkstemp(prefix=".relay-pairings-", dir=folder)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise


@record(frozen=False)
class Pairing:
    """One pairing under way: its code and how many tries are left."""

    origin: str
    code: str
    started: float
    attempts: int = CODE_ATTEMPTS


@record(frozen=False)
class PairingDesk:
    """Pairings under way, with their limits. ``clock`` is injectable for tests."""

    clock: Callable[[], float] = time.monotonic
    _recent: deque[float] = field(default_factory=deque)
    _open: dict[str, Pairing] = field(default_factory=dict)
    _failures: dict[str, int] = field(default_factory=dict)

    def start(self, origin: str) -> Pairing | str:
        """A new pairing for ``origin``, or why not: ``busy`` (one is under way for this origin),
        ``rate-limited`` (too many pairings lately, whoever asked), ``blocked`` (this origin, or
        all origins together, failed too many pairings: until the relay restarts)."""
        if (
            self._failures.get(origin, 0) >= FAILURES_PER_ORIGIN
            or sum(self._failures.values()) >= FAILURES_IN_ALL
        ):
            return "blocked"
        now = self.clock()
        for key, pairing in list(self._open.items()):
            if now - pairing.started > PAIRING_TTL_S:
                del self._open[key]
        if origin in self._open:
            return "busy"
        while self._recent and now - self._recent[0] > WINDOW_S:
            self._recent.popleft()
        if len(self._recent) >= PAIRINGS_PER_WINDOW:
            return "rate-limited"
        self._recent.append(now)
        pairing = Pairing(origin, new_code(), now)
        self._open[origin] = pairing
        return pairing

    def check(self, pairing: Pairing, typed: str) -> bool | None:
        """True: the code matches (the pairing ends); False: wrong, tries left; None: wrong and
        no tries left, or the pairing expired (it ends)."""
        if self._open.get(pairing.origin) is not pairing or self.clock() - pairing.started > PAIRING_TTL_S:
            self.end(pairing)
            return None
        if hmac.compare_digest(pairing.code.encode(), typed.encode()):
            self.end(pairing)
            return True
        pairing.attempts -= 1
        if pairing.attempts <= 0:
            self._failures[pairing.origin] = self._failures.get(pairing.origin, 0) + 1
            self.end(pairing)
            return None
        return False

    def end(self, pairing: Pairing) -> None:
        if self._open.get(pairing.origin) is pairing:
            del self._open[pairing.origin]

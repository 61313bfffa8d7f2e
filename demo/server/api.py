"""The demo's hooks into the library's procedure server: who is calling, and the audit log.

The app has no routes of its own: its reads (``session.describe``, ``devices.query``) are
procedures like the rest (``demo.server.procedures``), served by one
:class:`~agentsurface.server.ProcedureServer`.

- Authentication: ``Authorization: Bearer <token>`` names a user of the database. The page's agent
  bridge marks its calls with ``X-AgentSurface-Channel: agent``: the agent acting for a user is
  its own caller (own rate-limit budget, own invocation ids), so the agent never starves the
  person's buttons. Either way the tenant and permissions come from the database, never the page.
- Audit: every call, accepted or refused, gets one row, written in the call's own transaction
  when it changed something. Refused anonymous calls and a user's 429s are counted, not listed:
  one row per caller, outcome and operation per minute, whose ``attempts`` says how many calls it
  stands for, counted in memory and added to the row when the window ends or on ``flush`` (so
  such calls cannot grow the database, or write to it, at wire speed).
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import replace

from starlette.requests import Request

from agentsurface.bridge import CHANNEL_HEADER
from agentsurface.server import Caller, CallRecord, RateLimit

from .db import AuditEntry, Store, Tx, iso_seconds
from .procedures import PERMISSIONS, SERVED, Channel, Session

TOKEN = re.compile(r"[A-Za-z0-9._~+/=-]{1,256}")
SERVED_NAMES = frozenset(p.id.removeprefix("domain:") for p in SERVED)
DEFAULT_RATE_LIMIT = RateLimit(burst=60, per_second=1.0)


# ---------------------------------------------------------------------------------------- identity


class Authenticator:
    """The procedure server's ``authenticate`` hook: the bearer token names the user; the
    channel header says whether the person or their agent is calling (two callers)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def session(self, headers: Mapping[str, str]) -> Session | None:
        scheme, _, token = headers.get("authorization", "").strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not TOKEN.fullmatch(token):
            return None
        principal = self._store.run(lambda tx: tx.principal_by_token(token))
        if principal is None:
            return None
        channel: Channel = "agent" if headers.get(CHANNEL_HEADER.lower(), "").lower() == "agent" else "person"
        return Session(principal, channel)

    def __call__(self, request: Request) -> Caller | None:
        session = self.session(request.headers)
        return None if session is None else caller_of(session)


def caller_of(session: Session) -> Caller:
    who = session.principal
    return Caller(
        id=who.user_id if session.channel == "person" else f"{who.user_id}~agent",
        tenant=who.tenant,
        permissions=PERMISSIONS[who.role],
        data=session,
    )


# ---------------------------------------------------------------------------------------- audit


class AnonymousRefusals:
    """Folds refused calls into one audit row per (user, outcome, operation) per window.

    The first refusal of a window writes a row; later ones are counted in memory and added to its
    ``attempts`` when the window ends or on :meth:`flush`. Operations are the served procedures'
    names (unknown ones share one), so the rows per window are bounded.
    """

    WINDOW_SECONDS = 60.0
    UNKNOWN_ROUTE = "unknown-route"

    def __init__(self, monotonic: Callable[[], float]) -> None:
        self._monotonic = monotonic
        self._window_start: float | None = None
        self._rows: dict[tuple[str | None, str, str], int] = {}  # (user, outcome, operation) -> row id
        self._pending: dict[int, int] = {}  # row id -> attempts not yet added to it
        self._lock = threading.Lock()

    def record(self, tx: Tx, entry: AuditEntry, known_route: bool) -> None:
        operation = entry.operation if known_route else self.UNKNOWN_ROUTE
        key = (entry.user_id, entry.outcome, operation)
        with self._lock:  # two threads never open two rows for one key
            now = self._monotonic()
            if self._window_start is None or now - self._window_start >= self.WINDOW_SECONDS:
                self._write_pending(tx)
                self._window_start, self._rows = now, {}
            row_id = self._rows.get(key)
            if row_id is None:
                self._rows[key] = tx.audit(replace(entry, operation=operation, input=None))
            else:
                self._pending[row_id] = self._pending.get(row_id, 0) + entry.attempts

    def flush(self, tx: Tx) -> None:
        """Add the attempts counted in memory to their rows."""
        with self._lock:
            self._write_pending(tx)

    def _write_pending(self, tx: Tx) -> None:
        for row_id, attempts in self._pending.items():
            tx.count_attempt(row_id, attempts)
        self._pending = {}


class AuditLog:
    """Writes audit rows: the procedure server's ``audit`` hook (:meth:`procedure_call`)."""

    def __init__(self, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._anonymous = AnonymousRefusals(monotonic)

    def write(self, tx: Tx, entry: AuditEntry, *, authenticated: bool, known_route: bool) -> None:
        if authenticated and entry.outcome != "RATE_LIMITED":
            tx.audit(entry)
        else:
            self._anonymous.record(tx, entry, known_route)

    def flush(self, tx: Tx) -> None:
        """Write the counts of folded refusals now (the server's upkeep does this each minute)."""
        self._anonymous.flush(tx)

    def procedure_call(self, record: CallRecord, conn: sqlite3.Connection) -> None:
        """The procedure server's hook: in the call's own transaction when it was applied."""
        session = record.caller.data if record.caller is not None else None
        assert session is None or isinstance(session, Session)
        operation = record.procedure_id.removeprefix("domain:")
        entry = AuditEntry(
            at=iso_seconds(record.at),
            operation=operation,
            outcome=record.outcome,
            http_status=record.status,
            user_id=session.principal.user_id if session else None,
            tenant=session.principal.tenant if session else None,
            input=record.input,
            reason="replayed" if record.replayed else record.reason,
            invocation_id=record.invocation_id,
            confirmation_id=record.confirmation_id,
            attempts=1 + record.repeats,
            channel=session.channel if session else None,
        )
        self.write(Tx(conn), entry, authenticated=session is not None, known_route=operation in SERVED_NAMES)

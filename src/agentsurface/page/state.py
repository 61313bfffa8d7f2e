"""Observable app state: a ``State`` notifies every listener when one of its attributes is
assigned, so the page layer can re-evaluate availability without the app asking."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger("agentsurface")

_listeners: list[Callable[[], None]] = []


def on_state_change(listener: Callable[[], None]) -> Callable[[], None]:
    """Call ``listener`` after any ``State`` attribute assignment (or ``changed()``); returns
    the unsubscribe function. Page surfaces subscribe while they are open."""
    _listeners.append(listener)

    def unsubscribe() -> None:
        if listener in _listeners:
            _listeners.remove(listener)

    return unsubscribe


def notify_state_changed() -> None:
    """Tell every listener that app state changed (for state kept outside a ``State``)."""
    for listener in list(_listeners):
        try:
            listener()
        except Exception:
            log.exception("a state-change listener raised")


class State:
    """Base class for the state your components read in ``when()`` and ``describe()``.

    Assigning an attribute notifies the open page surfaces, which re-evaluate availability on
    the next event-loop turn (many assignments in one turn cost one re-evaluation). Mutating a
    value in place (``state.items.append(x)``) is invisible to Python's attribute protocol:
    assign a new value, or call ``changed()`` after the mutation.

    ::

        class Board(State):
            def __init__(self) -> None:
                self.strokes: list[str] = []
                self.locked = False

        board = Board()
        board.locked = True        # availability that reads board.locked follows, no sync call
    """

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        notify_state_changed()

    def __delattr__(self, name: str) -> None:
        object.__delattr__(self, name)
        notify_state_changed()

    def changed(self) -> None:
        """Say that this state changed in place."""
        notify_state_changed()

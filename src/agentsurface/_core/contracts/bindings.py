"""Live bindings of view capabilities, and the mint that proves a binding was made here.

A binding supplies handlers and live state at mount time and cannot change its contract.
Only bindings minted by ``ComponentContract.bind()`` and ``ProcedureContract.reference()``
are accepted by a registry.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import DefinitionError
from ..policies.base import Policy
from ..records import record

Handler = Callable[..., Any]
# Bindings minted by ``bind()``/``reference()``; the registry refuses anything else. A private
# weak set, so the proof cannot be copied onto a hand-made object through public attributes.
# (A set of weak references rather than a WeakSet: a C-level lookup on every registration.)
_MINTED: set[weakref.ref[Any]] = set()


def is_minted(binding: object) -> bool:
    try:
        return weakref.ref(binding) in _MINTED
    except TypeError:
        return False


@record(hot=True, eq=False)
class ObservationBinding:
    read: Handler
    when: Callable[[], bool] | None = None
    unavailable_reason: str | Callable[[], str] | None = None
    policies: Sequence[Policy] = ()


@record(hot=True, eq=False)
class ActionBinding:
    execute: Handler
    when: Callable[[], bool] | None = None
    unavailable_reason: str | Callable[[], str] | None = None
    precondition: Callable[..., Any] | None = None
    policies: Sequence[Policy] = ()
    # ``(value, ReadContext) -> changes``: what an approved call will change (shown in the
    # dialog, recomputed just before the handler runs; agentsurface._core.preview).
    preview: Callable[..., Any] | None = None


def check_policies(policies: Sequence[Policy], where: str) -> tuple[Policy, ...]:
    out = tuple(policies)
    for policy in out:
        if not isinstance(policy, Policy):
            raise DefinitionError("INVALID_DEFINITION", f"{policy!r} is not a Policy", path=where)
    return out


def check_live_options(
    where: str, unavailable_reason: object, policies: Sequence[Policy], **callables: object
) -> None:
    """Checked at bind time: a non-callable when() would otherwise only surface later,
    silently, as a "when-error" in every snapshot."""
    for attr, value in callables.items():
        if value is not None and not callable(value):
            raise DefinitionError("INVALID_DEFINITION", f"{attr} must be callable, got {value!r}", path=where)
    if unavailable_reason is not None and not (isinstance(unavailable_reason, str) or callable(unavailable_reason)):
        raise DefinitionError(
            "INVALID_DEFINITION",
            f"unavailable_reason must be a string or a callable, got {unavailable_reason!r}",
            path=where,
        )
    check_policies(policies, where)


def mint(binding: object) -> None:
    """Mark ``binding`` as made by this library (the registry accepts nothing else)."""
    _MINTED.add(weakref.ref(binding, _MINTED.discard))

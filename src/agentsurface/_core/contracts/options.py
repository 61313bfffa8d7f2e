"""The options an author gives each kind of capability, each declared once.

The decorators take them as ``**options: Unpack[ActionOptions]`` and hand them to the contract
unchanged, so a type checker checks the keywords of ``@action(...)`` as it checks
``ActionContract(...)``, and an option left out takes the contract's own default. A shared
option (``output``, ``meta``, the governance fields) is declared once, in the base that every
kind carrying it inherits. ``tests/unit/core/contracts/test_options.py`` holds each set to its
contract's fields (names and the types the constructor takes).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ForwardRef, TypedDict, TypeVar

from .fields import Concurrency, SchemaSource
from .kinds import AuditLevel, ConfirmationLevel, ViewEffect

F = TypeVar("F", bound=Callable[..., Any])


class _Described(TypedDict, total=False):
    """What every kind of capability may say of itself besides its description."""

    output: SchemaSource
    """The output schema: a type hint or pydantic model, a JSON Schema mapping."""
    meta: Mapping[str, Any] | None
    """Free JSON the contract and its descriptors carry (at most 2 KiB serialized)."""
    untrusted_output: bool
    """The output may carry text the app does not vouch for (mail, web pages): the tool says so
    to the agent (``untrustedContentHint``)."""


class _Timed(TypedDict, total=False):
    timeout: float | None
    """Seconds a call may run (default: the registry's limit for the kind)."""


class _Governed(TypedDict, total=False):
    """Governance of a capability that changes something; None takes the effect's default."""

    idempotent: bool | None
    """Calling it twice does what calling it once does."""
    reversible: bool | None
    """What it did can be undone."""
    confirmation: ConfirmationLevel | None
    """The confirmation floor: ``never``, ``optional`` or ``required``."""
    audit: AuditLevel | None
    """What the audit records of a call: ``none``, ``metadata`` or ``full``."""


class ObservationOptions(_Described, _Timed, total=False):
    """The options of ``@observation(...)``, the fields of
    :class:`~agentsurface.lowlevel.ObservationContract` after ``description``."""


class ActionOptions(_Described, _Timed, _Governed, total=False):
    """The options of ``@action(...)``, the fields of
    :class:`~agentsurface.lowlevel.ActionContract` after ``description``."""

    effect: ViewEffect
    """``local-state`` (the default) or ``navigation``."""
    input: SchemaSource
    """The input schema (an object schema); the decorator reads the method's parameters when
    it is not given."""
    concurrency: Concurrency | None
    """How calls queue (None: one at a time per instance)."""


class RouteProcedureOptions(_Described, _Governed, total=False):
    """The options of a framework route's ``procedure(...)`` that are the
    :class:`~agentsurface.ProcedureContract`'s own (its input comes from the route)."""

    policies: Sequence[str]
    """Names of the policies each reference to it must attach (the authority refuses a
    registration without them)."""


def spelled_out(options: type, contract: type, **defaults: Any) -> Callable[[F], F]:
    """Give a decorator taking ``**options: Unpack[options]`` the signature that names them:
    each key a keyword-only parameter, in the contract's field order, with the field's default
    (``defaults`` overrides one where the decorator's own default means something else), after
    the decorator's own parameters. ``help()``, ``inspect.signature`` and the unknown-keyword
    check read it."""
    hints = options.__annotations__
    fields = [f for f in dataclasses.fields(contract) if f.name in hints]
    if len(fields) != len(hints):  # the options' test says which (tests/unit/core/contracts)
        raise TypeError(f"{options.__name__} names options that are not fields of {contract.__name__}")
    spelled = [
        inspect.Parameter(
            f.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=defaults.get(f.name, inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default),
            annotation=_text(hints[f.name]),
        )
        for f in fields
    ]

    def spell(fn: F) -> F:
        signature = inspect.signature(fn)
        own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
        fn.__signature__ = signature.replace(parameters=[*own, *spelled])  # type: ignore[attr-defined]
        return fn

    return spell


def _text(hint: object) -> object:
    # A TypedDict keeps a postponed annotation as a ForwardRef: show its text, as inspect shows
    # the decorator's own postponed annotations.
    return hint.__forward_arg__ if isinstance(hint, ForwardRef) else hint

"""Records: the one way the library makes its data classes.

``@record`` is ``dataclasses.dataclass`` told what the class needs rather than how to build it:
frozen or not (``frozen=False`` for a record changed in place), whether it is made on a hot path
(``hot=True``: per call, per mount, per audit event), and ``eq``/``order``/``weakref`` as
dataclasses takes them. It picks one of three strategies from that.

What building one record costs, in µs, on the project's 2-core machine: CPython 3.11.7, and the
page's Pyodide (CPython 3.14.2 in WebAssembly, run by Node), positional arguments, best of 7
(``benchmarks/bench_records.py`` measures it again); and an instance's bytes in CPython:

=====================================  ==================  ==================  ==============
strategy                               CPython 5 / 13      Pyodide 5 / 13      bytes 5 / 13
=====================================  ==================  ==================  ==============
frozen, slots (dataclasses' own)       0.56 / 1.26         1.36 / 2.98         72 / 136
frozen, ``__dict__`` + fast init       0.32 / 0.49         0.98 / 1.44         240 / 520
mutable, slots (dataclasses' own)      0.11 / 0.16         0.29 / 0.41         72 / 136
=====================================  ==================  ==================  ==============

Why each is picked:

- ``frozen=False``: mutable slots, the cheapest to build and the smallest; nothing to choose.
- frozen, ``hot=True``: a frozen dataclass's ``__init__`` sets each field through
  ``object.__setattr__`` (its own ``__setattr__`` refuses), one Python-level call per field.
  The fast ``__init__`` written here fills the instance's ``__dict__`` in one ``update`` that
  ``__setattr__`` never sees: the class stays frozen and costs 1.4-2.6x less to build, for
  3-4x the memory. Such a record may hold ``derived`` values (computed once, kept in that dict).
- frozen, not hot: slots, the smallest instance; building it costs a fraction of a microsecond
  more, which only a hot path notices.

A record's generated code is compiled through ``agentsurface._compat.generated_code`` (in the
page, code the build compiled ahead), only while the record is being made.
"""

from __future__ import annotations

import dataclasses
import weakref as _weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, overload

from .._compat import exec_generated, generated_code

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:
    from typing import dataclass_transform  # 3.11 takes frozen_default in **kwargs (3.12 names it)

T = TypeVar("T")
V = TypeVar("V")

Strategy = Literal["frozen slots", "frozen dict + fast init", "mutable slots"]

# Which strategy made each record class (``strategy_of``): weak, so a class made in a test goes.
_MADE: _weakref.WeakKeyDictionary[type, Strategy] = _weakref.WeakKeyDictionary()


@overload
def record(cls: type[T], /) -> type[T]: ...
@overload
def record(
    *, frozen: bool = True, hot: bool = False, eq: bool = True, order: bool = False, weakref: bool = False
) -> Callable[[type[T]], type[T]]: ...
@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def record(
    cls: type[T] | None = None,
    /,
    *,
    frozen: bool = True,
    hot: bool = False,
    eq: bool = True,
    order: bool = False,
    weakref: bool = False,
) -> type[T] | Callable[[type[T]], type[T]]:
    """Make ``cls`` a record (a dataclass) with the strategy its needs pick (see the module).

    ``frozen``: instances refuse assignment (the default); ``hot``: made on a hot path, so built
    as fast as a frozen class can be (a ``__dict__``); ``eq``/``order``: as dataclasses;
    ``weakref``: instances can be weakly referenced (always true of a hot record)."""

    def make(cls: type[T]) -> type[T]:
        return _make(cls, frozen=frozen, hot=hot, eq=eq, order=order, weakref=weakref)

    return make if cls is None else make(cls)


def _make(cls: type[T], *, frozen: bool, hot: bool, eq: bool, order: bool, weakref: bool) -> type[T]:
    strategy: Strategy = "mutable slots" if not frozen else "frozen dict + fast init" if hot else "frozen slots"
    if strategy != "frozen dict + fast init" and any(isinstance(v, derived) for v in vars(cls).values()):
        raise TypeError(f"{cls.__qualname__}: a derived value needs a frozen hot record (it is kept in __dict__)")
    with generated_code():
        if strategy == "frozen dict + fast init":
            made = dataclasses.dataclass(frozen=True, eq=eq, order=order)(cls)
            _fast_init(made)
        else:
            made = dataclasses.dataclass(frozen=frozen, slots=True, eq=eq, order=order, weakref_slot=weakref)(cls)
    _MADE[made] = strategy
    return made


def strategy_of(cls: type) -> Strategy | None:
    """How ``record`` made ``cls``; None for a class it did not make (its subclasses included)."""
    return _MADE.get(cls)


class _Factory:
    """The default of a field made by a factory (shown as the dataclass shows it)."""

    def __repr__(self) -> str:
        return "<factory>"


_NO_VALUE = _Factory()


def _fast_init(cls: type[T]) -> None:
    """Replace a frozen dict dataclass's ``__init__`` with one that fills ``__dict__`` in one step.

    Generated from the class's own fields, so the signature, defaults, default factories,
    keyword-only fields and ``__post_init__`` are the dataclass's."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    generated = cls.__init__.__code__  # dataclasses' own: one parameter per init field and InitVar
    params = generated.co_varnames[1 : generated.co_argcount + generated.co_kwonlyargcount]
    if set(params) != {f.name for f in fields if f.init}:  # an InitVar is a parameter, not a field
        raise TypeError(f"a hot record cannot have InitVar fields ({cls.__qualname__})")

    namespace: dict[str, Any] = {"_NO_VALUE": _NO_VALUE}
    positional: list[str] = []
    keyword_only: list[str] = []
    filled: list[str] = []
    factories: list[str] = []
    for f in fields:
        if f.default is not dataclasses.MISSING:
            namespace[f"_default_{f.name}"] = f.default
            param = f"{f.name}=_default_{f.name}"
        elif f.default_factory is not dataclasses.MISSING:
            namespace[f"_factory_{f.name}"] = f.default_factory
            param = f"{f.name}=_NO_VALUE"
            factories.append(
                f"    if {f.name} is _NO_VALUE:\n        {f.name} = _factory_{f.name}()\n"
                if f.init
                else f"    {f.name} = _factory_{f.name}()\n"
            )
        else:
            param = f.name
            if not f.init:  # no value to give it: the dataclass leaves it unset too
                continue
        if f.init:
            (keyword_only if f.kw_only else positional).append(param)
        elif f.default is not dataclasses.MISSING:
            factories.append(f"    {f.name} = _default_{f.name}\n")
        filled.append(f"{f.name}={f.name}")
    signature = ", ".join(["self", *positional, *(["*", *keyword_only] if keyword_only else [])])
    body = "".join(factories) + f"    self.__dict__.update({', '.join(filled)})\n"
    if hasattr(cls, "__post_init__"):
        body += "    self.__post_init__()\n"
    exec_generated(f"def __init__({signature}):\n{body}", namespace)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = cls.__init__.__doc__
    init.__annotations__ = dict(cls.__init__.__annotations__)  # help() and inspect show the same signature
    cls.__init__ = init  # type: ignore[method-assign]


class derived(Generic[T, V]):
    """A read-only value of a frozen hot record, computed on first read and kept in the
    instance's ``__dict__`` (read after that as a plain attribute, with no call).

    ``functools.cached_property`` does the same, but on Python 3.11 it takes a lock on every
    first read (and an entry's values are mostly read once or twice). Only for values that
    cannot change: the instance is frozen. ``record`` refuses it on a record without a dict."""

    __slots__ = ("_compute", "_name")

    def __init__(self, compute: Callable[[T], V]) -> None:
        self._compute = compute
        self._name = compute.__name__

    def __set_name__(self, owner: type[T], name: str) -> None:
        self._name = name

    @overload
    def __get__(self, instance: None, owner: type[T] | None = None) -> derived[T, V]: ...
    @overload
    def __get__(self, instance: T, owner: type[T] | None = None) -> V: ...
    def __get__(self, instance: T | None, owner: type[T] | None = None) -> V | derived[T, V]:
        if instance is None:
            return self
        value = instance.__dict__[self._name] = self._compute(instance)
        return value


__all__ = ["derived", "record", "strategy_of"]

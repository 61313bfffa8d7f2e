"""Authoring keywords checked with a "did you mean": ``@action(confirmaton=...)`` names the
keyword it meant instead of Python's bare ``TypeError``.

The check runs only when the call fails to bind, so a correct call pays nothing but the call.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def unknown_keywords_error(what: str, given: Iterable[str], accepted: Iterable[str]) -> TypeError:
    """``what`` got keywords it does not accept: name each, with the closest accepted one."""
    import difflib  # only on the error path: off the page's start-up imports
    names = [name for name in accepted if not name.startswith("_")]
    wrong = []
    for name in given:
        close = difflib.get_close_matches(name, names, n=1)
        wrong.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    plural = "s" if len(wrong) > 1 else ""
    listed = ", ".join(f"{name}=" for name in names)
    return TypeError(f"{what} got unknown keyword{plural} {', '.join(wrong)}; it accepts {listed}")


def keywords_checked(what: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Wrap ``fn`` so an unknown keyword raises :func:`unknown_keywords_error` (the wrapped
    signature and type stay ``fn``'s)."""

    def wrap(fn: Callable[P, R]) -> Callable[P, R]:
        signature = inspect.signature(fn)
        accepted = [
            name
            for name, parameter in signature.parameters.items()
            if parameter.kind in (parameter.KEYWORD_ONLY, parameter.POSITIONAL_OR_KEYWORD) and name != "self"
        ]

        @functools.wraps(fn)
        def checked(*args: P.args, **kwargs: P.kwargs) -> R:
            unknown = [name for name in kwargs if name not in accepted]
            if unknown:
                raise unknown_keywords_error(what, unknown, accepted) from None
            return fn(*args, **kwargs)

        return checked

    return wrap


def check_keywords(cls: type[Any], what: str | None = None) -> None:
    """Check the keywords of ``cls(...)`` (a dataclass's generated ``__init__``)."""
    init: Any = cls.__init__
    cls.__init__ = keywords_checked(what or f"{cls.__name__}()")(init)

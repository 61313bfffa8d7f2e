"""Old public names kept for one release: each use warns with the name to use instead."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def warn_renamed(old: str, new: str, *, stacklevel: int = 3) -> None:
    warnings.warn(f"{old} is deprecated; use {new}", DeprecationWarning, stacklevel=stacklevel)


def renamed(target: Callable[P, R], old: str, new: str) -> Callable[P, R]:
    """A callable that warns, then calls ``target`` (signature and types unchanged)."""

    @functools.wraps(target)
    def alias(*args: P.args, **kwargs: P.kwargs) -> R:
        warn_renamed(old, new)
        return target(*args, **kwargs)

    alias.__doc__ = f"Deprecated: use ``{new}``."
    return alias


def module_getattr(module: str, moved: Mapping[str, tuple[str, Callable[[], Any]]]) -> Callable[[str], Any]:
    """A module ``__getattr__`` serving deprecated names: ``{old: (new spelling, loader)}``."""

    def __getattr__(name: str) -> Any:
        entry = moved.get(name)
        if entry is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warn_renamed(f"{module}.{name}", entry[0])
        return entry[1]()

    return __getattr__

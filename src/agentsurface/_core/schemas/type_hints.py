"""The type hints a capability may use, checked in Python terms before pydantic sees them.

An agent sends and receives JSON, so a hint must describe JSON data: ``str``, ``int``,
``float``, ``bool``, ``None``, ``Literal[...]``, enums, ``datetime``/``date``/``UUID``, ``list[X]``
(also ``Sequence[X]``, ``tuple[X, ...]``), ``X | None`` and unions, ``Annotated[X, Field(...)]``,
pydantic models and dataclasses made of these, and ``set[X]``/``frozenset[X]`` as a method
parameter (repeated items are refused: never silently dropped). Everything else is refused at
class definition with a message naming what to write instead (docs/guides/capabilities.md lists them).

Internal module: ``vet_hint`` is called by the authoring API and the contract fields.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import datetime
import enum
import pathlib
import sys
import types
import typing
from typing import Annotated, Any, Literal, Union

from ..errors import DefinitionError

_SCALARS: frozenset[Any] = frozenset(
    {str, int, float, bool, type(None), None, datetime.datetime, datetime.date, object}
)
# Scalars too, looked up where their module is loaded: a hint can only be uuid.UUID once its
# author imported that module, and importing it here would cost every page (a page compiles
# uuid from source: ~60 ms in Chromium) for hints most never write.
_SCALARS_BY_MODULE = (("uuid", "UUID"),)
_SEQUENCES: frozenset[Any] = frozenset(
    {list, collections.abc.Sequence, collections.abc.MutableSequence, typing.Sequence}
)
_SETS: frozenset[Any] = frozenset(
    {set, frozenset, collections.abc.Set, collections.abc.MutableSet, typing.AbstractSet}
)
_CALLABLES: frozenset[Any] = frozenset({collections.abc.Callable, typing.Callable})
_MAPPINGS: frozenset[Any] = frozenset(
    {dict, collections.abc.Mapping, collections.abc.MutableMapping, typing.Mapping}
)

DICT_ADVICE = (
    "an agent's JSON object needs named fields: use a pydantic model with those fields, or "
    "list[Entry] where Entry is a model with key and value fields"
)
TUPLE_ADVICE = (
    "use list[X] for several values of one type (or tuple[X, ...]), or a pydantic model with "
    "named fields for a fixed group of values"
)
_ADVICE: dict[Any, str] = {
    bytes: "JSON has no bytes: use str (for example base64 text) and decode it in the method",
    bytearray: "JSON has no bytes: use str (for example base64 text) and decode it in the method",
    memoryview: "JSON has no bytes: use str (for example base64 text) and decode it in the method",
    complex: "use two float parameters, or a pydantic model with real and imag fields",
    datetime.time: "use str (an ISO 8601 time such as '14:30') and parse it in the method",
    datetime.timedelta: "use int or float (a number of seconds) and make the timedelta in the method",
}
CALLABLE_ADVICE = (
    "an agent sends JSON data, never code: take a str (or a Literal[...] of the allowed names) "
    "and pick the function in the method"
)
# Refused: pydantic takes a JSON number (a float: 0.1 is not exact) or any text (" 1_0 " is 10)
# for a Decimal, and a page's compiled JSON-Schema check could not tell which text is a number.
DECIMAL_ADVICE = (
    "an agent's JSON number is a float and pydantic would take loose text (' 1_0 ' is 10): use "
    "int (an amount in cents), or Annotated[str, Field(pattern=r'^-?[0-9]+(\\.[0-9]+)?$')] and make "
    "the Decimal in the method"
)
SET_IN_MODEL_ADVICE = (
    "a set inside a model would silently drop items an agent repeats: use list[X] there, or make "
    "the set a parameter of the method (repeated items are then refused)"
)


def type_name(hint: Any) -> str:
    """A hint as a Python developer writes it: ``dict[str, str]``, ``Path``, ``Callable``."""
    if hint is None or hint is type(None):
        return "None"
    if isinstance(hint, type) and not typing.get_args(hint):
        return hint.__qualname__
    text = repr(hint)
    for prefix in ("typing.", "collections.abc.", "pathlib.", "datetime.", "uuid.", "decimal."):
        text = text.replace(prefix, "")
    return text


def _refuse(what: str, hint: Any, advice: str) -> DefinitionError:
    return DefinitionError("UNSUPPORTED_SCHEMA", f"{what}: {type_name(hint)} is not supported; {advice}")


class _UniqueItems:
    """Marks a set parameter validated as a JSON array whose repeated items are refused (so a
    re-check accepts it); its JSON Schema says ``uniqueItems``."""

    def __repr__(self) -> str:
        return "unique items"

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> Any:
        schema = handler(core_schema)
        schema["uniqueItems"] = True
        return schema


UNIQUE_ITEMS = _UniqueItems()


def _strict_set(hint: Any, item: Any) -> Any:
    """``set[X]`` as an agent's input: a list of X, each validated as JSON, then a set (or a
    frozenset) when no item repeats; a repeated item is INVALID_INPUT, never dropped."""
    from pydantic import AfterValidator, PlainSerializer  # on first use: off the start-up path

    make = frozenset if typing.get_origin(hint) is frozenset or hint is frozenset else set

    def unique(items: list[Any]) -> Any:
        made = make(items)
        if len(made) != len(items):
            raise ValueError("items must be unique; an item repeats an earlier one")
        return made

    return Annotated[list[item], UNIQUE_ITEMS, AfterValidator(unique), PlainSerializer(list)]


def vet_hint(hint: Any, *, what: str, input: bool) -> Any:
    """The hint to build the schema from, or DefinitionError(UNSUPPORTED_SCHEMA) saying in Python
    terms what to write instead. ``what`` names the place ("parameter 'tags'", "the return
    annotation"); ``input`` is True where an agent's data arrives (a set then refuses repeats)."""
    return _Vetter(input).vet(hint, what)


class _Vetter:
    def __init__(self, input: bool) -> None:
        self.input = input
        self.seen: set[int] = set()

    def vet(self, hint: Any, what: str, *, in_model: bool = False) -> Any:
        if _is_scalar(hint) or hint is Any:
            return hint
        origin = typing.get_origin(hint)
        args = typing.get_args(hint)
        if origin is Annotated:
            base, *metadata = args
            if any(m is UNIQUE_ITEMS for m in metadata):
                return hint
            vetted = self.vet(base, what, in_model=in_model)
            return hint if vetted is base else Annotated[(vetted, *metadata)]
        if origin is Literal:
            return hint
        if origin is Union or origin is types.UnionType:
            vetted_args = tuple(self.vet(a, what, in_model=in_model) for a in args)
            if all(v is a for v, a in zip(vetted_args, args, strict=True)):
                return hint
            return Union[vetted_args]  # noqa: UP007 - built from a tuple of hints
        if _among(origin, _SEQUENCES) or _among(hint, _SEQUENCES):
            if args:
                item = self.vet(args[0], what, in_model=in_model)
                return hint if item is args[0] else list[item]  # type: ignore[valid-type]
            return hint
        if origin is tuple or hint is tuple:
            if args and not (len(args) == 2 and args[1] is Ellipsis):
                raise _refuse(what, hint, TUPLE_ADVICE)
            if args:
                self.vet(args[0], what, in_model=in_model)
            return hint
        if _among(origin, _SETS) or _among(hint, _SETS):
            item = self.vet(args[0], what, in_model=in_model) if args else Any
            if not self.input:
                return hint
            if in_model:
                raise _refuse(what, hint, SET_IN_MODEL_ADVICE)
            return _strict_set(hint, item)
        if _among(origin, _MAPPINGS) or _among(hint, _MAPPINGS):
            if args and not (args[1] is Any or args[1] is object):
                raise _refuse(what, hint, DICT_ADVICE)
            return hint
        if _among(origin, _CALLABLES) or _among(hint, _CALLABLES):
            raise _refuse(what, hint, CALLABLE_ADVICE)
        if isinstance(hint, type):
            return self._class(hint, what)
        return hint  # a TypeVar, a string annotation...: pydantic decides, and says why

    def _class(self, hint: type, what: str) -> Any:
        if hint in _ADVICE:
            raise _refuse(what, hint, _ADVICE[hint])
        if hint.__module__ in ("decimal", "_decimal", "_pydecimal") and hint.__name__ == "Decimal":
            raise _refuse(what, hint, DECIMAL_ADVICE)
        if issubclass(hint, pathlib.PurePath):
            raise _refuse(what, hint, "use str and make the Path in the method (an agent sends text)")
        if issubclass(hint, enum.Enum) or hint.__module__.split(".")[0] in ("pydantic", "pydantic_core"):
            return hint
        if issubclass(hint, (str, int, float)):
            return hint
        fields = _fields(hint)
        if fields is None:
            raise _refuse(
                what,
                hint,
                f"an agent sends JSON: declare {hint.__qualname__} as a pydantic model "
                f"(class {hint.__qualname__}(BaseModel): ...) or a dataclass, with typed fields",
            )
        if id(hint) in self.seen:  # a recursive model: checked once
            return hint
        self.seen.add(id(hint))
        for name, field_hint in fields.items():
            self.vet(field_hint, f"{what}: field {hint.__qualname__}.{name}", in_model=True)
        return hint


def _is_scalar(hint: Any) -> bool:
    if _among(hint, _SCALARS):
        return True
    for module_name, class_name in _SCALARS_BY_MODULE:
        module = sys.modules.get(module_name)
        if module is not None and hint is getattr(module, class_name, None):
            return True
    return False


def _among(hint: Any, group: frozenset[Any]) -> bool:
    try:
        return hint in group
    except TypeError:  # an unhashable hint (Annotated metadata): in no group
        return False


def _fields(cls: type) -> dict[str, Any] | None:
    """The typed fields of a pydantic model, dataclass or TypedDict; None for a plain class."""
    model_fields = getattr(cls, "model_fields", None)
    if isinstance(model_fields, dict) and hasattr(cls, "model_json_schema"):
        return {name: info.annotation for name, info in model_fields.items()}
    if dataclasses.is_dataclass(cls) or typing.is_typeddict(cls):
        try:
            return typing.get_type_hints(cls, include_extras=True)
        except Exception:  # unresolvable names: pydantic will say which
            return {}
    return None

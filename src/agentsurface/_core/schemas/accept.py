"""A raw JSON Schema compiled once into a plain-Python acceptance check for the common keywords.

The check answers only "certainly valid": whenever it says no (or the schema uses a keyword it
does not compile: ``format``, ``uniqueItems``, ``multipleOf``, ``$ref``...), the full
``jsonschema`` validator decides and writes the issues. So it can be conservative (a float that
is a whole number is left to jsonschema as an ``integer``; ``enum`` accepts only strings and
null), but it must never accept a value the Draft 2020-12 validator would reject. Values reach
it as plain JSON (``to_json_value``): dict, list, str, int, float, bool, None; a keyword applies
to the same Python types as in jsonschema (``isinstance`` of dict, list, str).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ..jsonvalue import NotJsonError, find_lone_surrogate, to_json_value

Accept = Callable[[Any], bool]

UNPROVEN: Any = object()  # what proven_json answers for a value its check does not prove


def proven_json(value: Any, accepts: Accept | None) -> Any:
    """``value`` as plain JSON when the compiled check ``accepts`` proves it valid, else ``UNPROVEN``."""
    try:
        plain = to_json_value(value)
    except (NotJsonError, TypeError, ValueError):
        return UNPROVEN
    if accepts is None or not accepts(plain) or find_lone_surrogate(plain) is not None:
        return UNPROVEN
    return plain
_NOT_NUMBERS = (str, dict, list, type(None))

ANNOTATIONS = frozenset({"description", "default", "examples", "title", "deprecated"})  # never constrain a value
_EXACT_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
    "number": (int, float),  # type(True) is bool, so booleans are not numbers here
    "integer": (int,),
}


def compile_accept(schema: Any) -> Accept | None:
    """The acceptance check of ``schema``, or None when it uses a keyword left to jsonschema."""
    if not isinstance(schema, Mapping):
        return None
    keywords = schema.keys() - ANNOTATIONS
    if schema.get("type") == "object" and keywords <= _OBJECT_KEYWORDS:
        return _object(schema)
    if schema.get("type") == "array" and keywords <= _ARRAY_KEYWORDS and "items" in keywords:
        return _array(schema)
    checks: list[Accept] = []
    for keyword, constraint in schema.items():
        if keyword in ANNOTATIONS:
            continue
        compiler = _KEYWORDS.get(keyword)
        check = None if compiler is None else compiler(constraint, schema)
        if check is None:
            return None
        checks.append(check)
    if len(checks) == 1:
        return checks[0]
    every = tuple(checks)

    def accept(value: Any) -> bool:
        for check in every:  # noqa: SIM110 (a loop, not all(genexpr): no generator per value)
            if not check(value):
                return False
        return True

    return accept


# The common shapes, checked by one function each (what the keyword checks combined would
# answer, in one pass and without a call per keyword).
_OBJECT_KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties"})
_ARRAY_KEYWORDS = frozenset({"type", "items", "minItems", "maxItems"})


def _object(schema: Mapping[str, Any]) -> Accept | None:
    declared = schema.get("properties", {})
    required = schema.get("required", ())
    additional = schema.get("additionalProperties", True)
    if (
        not isinstance(declared, Mapping)
        or not isinstance(required, (list, tuple))
        or not all(isinstance(n, str) for n in required)
        or type(additional) is not bool
    ):
        return None
    subs = _compiled_properties(declared)
    if subs is None:
        return None
    names = tuple(required)
    closed = additional is False
    lookup = subs.get

    def accept(value: Any) -> bool:
        if type(value) is not dict:
            return False
        for name in names:
            if name not in value:
                return False
        for key, item in value.items():
            check = lookup(key)
            if check is None:
                if closed:
                    return False
            elif not check(item):
                return False
        return True

    return accept


def _array(schema: Mapping[str, Any]) -> Accept | None:
    sub = compile_accept(schema["items"])
    at_least, at_most = schema.get("minItems", 0), schema.get("maxItems")
    if sub is None or type(at_least) is not int or at_least < 0:
        return None
    if at_most is not None and (type(at_most) is not int or at_most < 0):
        return None
    longest = -1 if at_most is None else at_most

    def accept(value: Any) -> bool:
        if type(value) is not list or len(value) < at_least or (longest >= 0 and len(value) > longest):
            return False
        for item in value:  # noqa: SIM110 (no generator per value)
            if not sub(item):
                return False
        return True

    return accept


def _type(constraint: Any, schema: Mapping[str, Any]) -> Accept | None:
    names = [constraint] if isinstance(constraint, str) else constraint
    if not isinstance(names, (list, tuple)) or not all(
        isinstance(n, str) and n in _EXACT_TYPES for n in names
    ):
        return None
    exact = frozenset(t for n in names for t in _EXACT_TYPES[n])
    return lambda value: type(value) in exact


def _compiled_properties(declared: Mapping[str, Any]) -> dict[str, Accept] | None:
    """Each property's check, or None when one of them is left to jsonschema."""
    subs: dict[str, Accept] = {}
    for name, sub in declared.items():
        check = compile_accept(sub)
        if check is None:
            return None
        subs[name] = check
    return subs


def _properties(constraint: Any, schema: Mapping[str, Any]) -> Accept | None:
    if not isinstance(constraint, Mapping):
        return None
    subs = _compiled_properties(constraint)
    if subs is None:
        return None
    items = tuple(subs.items())

    def accept(value: Any) -> bool:
        if not isinstance(value, dict):  # where jsonschema applies it: dicts
            return True
        return all(check(value[name]) for name, check in items if name in value)

    return accept


def _required(constraint: Any, schema: Mapping[str, Any]) -> Accept | None:
    if not isinstance(constraint, (list, tuple)) or not all(isinstance(n, str) for n in constraint):
        return None
    names = tuple(constraint)
    return lambda value: not isinstance(value, dict) or all(n in value for n in names)


def _additional(constraint: Any, schema: Mapping[str, Any]) -> Accept | None:
    declared = schema.get("properties", {})
    if not isinstance(declared, Mapping) or "patternProperties" in schema:
        return None
    known = frozenset(declared)
    if constraint is True:
        return lambda value: True
    if constraint is False:
        return lambda value: not isinstance(value, dict) or known.issuperset(value)
    sub = compile_accept(constraint)
    if sub is None:
        return None
    return lambda value: (
        not isinstance(value, dict) or all(sub(v) for k, v in value.items() if k not in known)
    )


def _items(constraint: Any, schema: Mapping[str, Any]) -> Accept | None:
    if "prefixItems" in schema:
        return None
    sub = compile_accept(constraint)
    if sub is None:
        return None
    return lambda value: not isinstance(value, list) or all(sub(item) for item in value)


def _size(
    kind: type[list[Any]] | type[str], at_least: bool
) -> Callable[[Any, Mapping[str, Any]], Accept | None]:
    def compile_(constraint: Any, schema: Mapping[str, Any]) -> Accept | None:
        if type(constraint) is not int or constraint < 0:
            return None
        if at_least:
            return lambda value: not isinstance(value, kind) or len(value) >= constraint
        return lambda value: not isinstance(value, kind) or len(value) <= constraint

    return compile_


def _bound(holds: Callable[[Any, Any], bool]) -> Callable[[Any, Mapping[str, Any]], Accept | None]:
    def compile_(constraint: Any, schema: Mapping[str, Any]) -> Accept | None:
        if type(constraint) not in (int, float):
            return None

        # Booleans are not numbers to jsonschema; any other non-plain number is left to it.
        def accept(value: Any) -> bool:
            kind = type(value)
            if kind in (int, float):
                return holds(value, constraint)
            if kind is bool or kind in _NOT_NUMBERS:
                return True
            import numbers  # only for values that are not plain JSON (off the page's start-up path)

            return not isinstance(value, numbers.Number)

        return accept

    return compile_


def _pattern(constraint: Any, schema: Mapping[str, Any]) -> Accept | None:
    if not isinstance(constraint, str):
        return None
    try:
        search = re.compile(constraint).search  # what jsonschema does: re.search
    except re.error:
        return None
    return lambda value: not isinstance(value, str) or search(value) is not None


def _enum(constraint: Any, schema: Mapping[str, Any]) -> Accept | None:
    if not isinstance(constraint, (list, tuple)):
        return None
    # Strings and null compare the same way in JSON and Python; anything else is left to
    # jsonschema (1 == True == 1.0 in Python, not in JSON).
    strings = frozenset(m for m in constraint if type(m) is str)
    null = any(m is None for m in constraint)
    return lambda value: (type(value) is str and value in strings) or (null and value is None)


def _const(constraint: Any, schema: Mapping[str, Any]) -> Accept | None:
    return _enum([constraint], schema)


def _any_of(constraint: Any, schema: Mapping[str, Any]) -> Accept | None:
    if not isinstance(constraint, (list, tuple)) or not constraint:
        return None
    subs = [compile_accept(sub) for sub in constraint]
    if any(sub is None for sub in subs):
        return None
    checks = tuple(sub for sub in subs if sub is not None)
    return lambda value: any(check(value) for check in checks)


_KEYWORDS: dict[str, Callable[[Any, Mapping[str, Any]], Accept | None]] = {
    "type": _type,
    "properties": _properties,
    "required": _required,
    "additionalProperties": _additional,
    "items": _items,
    "minItems": _size(list, True),
    "maxItems": _size(list, False),
    "minLength": _size(str, True),
    "maxLength": _size(str, False),
    "minimum": _bound(lambda value, limit: value >= limit),
    "maximum": _bound(lambda value, limit: value <= limit),
    "exclusiveMinimum": _bound(lambda value, limit: value > limit),
    "exclusiveMaximum": _bound(lambda value, limit: value < limit),
    "pattern": _pattern,
    "enum": _enum,
    "const": _const,
    "anyOf": _any_of,
}

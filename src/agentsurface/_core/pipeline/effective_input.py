"""Phase 5, effective input: plain-JSON and size checks, locked and bound fields, validation."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from ..jsonvalue import JsonValue, NotJsonError, json_size, shallow_json_bound, to_json_value
from ..pointer import ROOT, json_pointer
from ..registrations.entries import ActionEntry, ObservationEntry
from ..schemas.accept import UNPROVEN
from ..schemas.schema import Invalid, Issue, JsonSchemaSchema, Schema
from . import failures
from .call import UNCOPIED, Call
from .failures import PhaseRefusal
from .invocation import MISSING

log = logging.getLogger("agentsurface")

MAX_INPUT_BYTES = 262_144
MAX_INPUT_DEPTH = 32
# The largest input a cached result keeps as itself, for a fingerprint digested only if asked
# for (dedupe.LazyFingerprint); a larger one is digested when its call settles.
LAZY_FINGERPRINT_BYTES = 4096


def build(call: Call) -> None:
    raw = call.request.input
    copied = call.plain_input
    if copied is not UNCOPIED:  # identity copied it: plain JSON, not too deep
        # (An empty input, or a number, is never too large: no need to encode it. Nor is a
        # small shallow one: its bound serves, as no larger than the size it stands for.)
        size = 0
        if raw is not MISSING and (copied or type(copied) is str):
            size = shallow_json_bound(copied)
            if not 0 <= size <= LAZY_FINGERPRINT_BYTES:
                size = json_size(copied)
        call.small_input = size <= LAZY_FINGERPRINT_BYTES
        if size > MAX_INPUT_BYTES:
            raise PhaseRefusal(failures.invalid_input([Issue(ROOT, f"input exceeds {MAX_INPUT_BYTES} bytes")]))
    elif raw is not MISSING:
        try:
            raw = to_json_value(raw, max_depth=MAX_INPUT_DEPTH)
        except NotJsonError as exc:
            raise PhaseRefusal(failures.invalid_input([Issue(json_pointer(exc.parts), exc.reason)])) from None
        if json_size(raw) > MAX_INPUT_BYTES:
            raise PhaseRefusal(failures.invalid_input([Issue(ROOT, f"input exceeds {MAX_INPUT_BYTES} bytes")]))
    entry = call.target.entry
    if isinstance(entry, ActionEntry):
        _validate(call, entry.contract.input, {} if raw in (MISSING, None) else raw)
    elif isinstance(entry, ObservationEntry):
        if raw not in (MISSING, None, {}):
            raise PhaseRefusal(failures.invalid_input([Issue(ROOT, "observations take no input")]))
        call.value, call.effective = None, None
    else:
        ref = entry.reference
        agent = {} if raw in (MISSING, None) else raw
        if not isinstance(agent, dict):
            raise PhaseRefusal(failures.invalid_input([Issue(ROOT, "expected an object")]))
        locked = sorted(f for f in ref.locked_fields if f in agent)
        if locked:
            raise PhaseRefusal(failures.locked_fields(locked))
        merged = dict(agent)
        if ref.bind is not None:
            bound = call.bound = _bind(ref.bind, ref.bound_fields)
            for name in ref.bound_fields:
                if name in ref.locked_fields or name not in agent:
                    merged[name] = bound[name]
        _validate(call, ref.contract.input, merged)


def _bind(bind: Callable[[], Mapping[str, Any]], fields: tuple[str, ...]) -> dict[str, JsonValue]:
    """The view's current values for the bound fields, exactly those keys."""
    try:
        bound = to_json_value(bind())
    except Exception:
        log.exception("procedure binding failed")
        raise PhaseRefusal(failures.binding_failed()) from None
    if not isinstance(bound, dict) or set(bound) != set(fields):
        log.error(
            "procedure binding returned keys %s, expected %s",
            sorted(bound) if isinstance(bound, dict) else bound,
            fields,
        )
        raise PhaseRefusal(failures.binding_failed())
    return bound


def _validate(call: Call, schema: Schema, value: JsonValue) -> None:
    if type(schema) is JsonSchemaSchema:  # the common valid value, proven without a result built
        proven = schema.proven(value)  # a copy of its own: the handler may keep it
        if proven is not UNPROVEN:
            call.value = call.effective = proven
            return
    outcome = schema.validate(value)
    if isinstance(outcome, Invalid):
        raise PhaseRefusal(failures.invalid_input(outcome.issues))
    call.value, call.effective = outcome.value, outcome.json

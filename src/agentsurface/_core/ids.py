"""Canonical identifiers: plane, component type, capability name, instance id.

Grammar (reference doc 01):
    capability-id   = plane ":" component-type "." capability-name
    component-type  = segment *( "." segment ); segment = [a-z][a-z0-9-]*
    capability-name = [a-z][A-Za-z0-9]*            (camelCase, no dots, no underscores)
    instance-id     = [A-Za-z0-9_-]+
For ``domain:`` ids the part after the prefix is the backend's procedure path and is opaque
(``domain:ping``, ``domain:devices.disable_all``): non-empty, no whitespace or control characters,
and the whole id within the 128-char cap. Paths the wire encoding cannot carry verbatim get a
hashed wire name (see ``agentsurface.wire_names``), never a refusal.
"""

from __future__ import annotations

import os
import re
import string
import threading
from typing import Literal

from .errors import DefinitionError
from .records import record

Plane = Literal["view", "domain"]

MAX_ID_LENGTH = 128
DEFAULT_INSTANCE_ID = "default"

_SEGMENT = r"[a-z][a-z0-9-]*"
_COMPONENT_TYPE_RE = re.compile(rf"{_SEGMENT}(?:\.{_SEGMENT})*")
_CAPABILITY_NAME_RE = re.compile(r"[a-z][A-Za-z0-9]*")
_INSTANCE_ID_RE = re.compile(r"[A-Za-z0-9_-]+")


@record
class CapabilityId:
    """A parsed id; ``str()`` gives the canonical form back.

    A ``view:`` id has a component type and a capability name. A ``domain:`` id is opaque: its
    ``component_type`` is empty and ``name`` holds the whole procedure path (see ``path``).
    """

    plane: Plane
    component_type: str
    name: str

    @property
    def path(self) -> str:
        """Everything after ``plane:``."""
        return f"{self.component_type}.{self.name}" if self.plane == "view" else self.name

    def __str__(self) -> str:
        return f"{self.plane}:{self.path}"


# Ids already parsed: the same few ids are checked on every catalog and call, and whether a
# string is valid never changes. Bounded (cleared when full); a miss runs the full check.
_PARSED_IDS: dict[str, CapabilityId] = {}
_VALID_INSTANCE_IDS: set[str] = set()
_MEMO_LIMIT = 8192


def _check_length(value: str, what: str) -> None:
    if len(value) > MAX_ID_LENGTH:
        raise DefinitionError(
            "INVALID_ID", f"{what} {value[:40]!r}... is {len(value)} chars; the limit is 128"
        )


def validate_component_type(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise DefinitionError("INVALID_ID", f"component type must be a non-empty string, got {value!r}")
    _check_length(value, "component type")
    if "_" in value:
        raise DefinitionError(
            "INVALID_ID",
            f"component type {value!r} contains '_': underscores are reserved for wire names",
        )
    if not _COMPONENT_TYPE_RE.fullmatch(value):
        raise DefinitionError(
            "INVALID_ID",
            f"component type {value!r} must be dot-separated lowercase segments "
            "([a-z][a-z0-9-]*), e.g. 'devices.table'",
        )
    return value


def validate_capability_name(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise DefinitionError("INVALID_ID", f"capability name must be a non-empty string, got {value!r}")
    _check_length(value, "capability name")
    if "_" in value:
        raise DefinitionError(
            "INVALID_ID",
            f"capability name {value!r} contains '_': use camelCase (underscores are reserved "
            "for wire names)",
        )
    if not _CAPABILITY_NAME_RE.fullmatch(value):
        raise DefinitionError(
            "INVALID_ID",
            f"capability name {value!r} must be camelCase starting with a lowercase letter, "
            "letters and digits only, e.g. 'selectRows'",
        )
    return value


def validate_instance_id(value: object) -> str:
    if type(value) is str and value in _VALID_INSTANCE_IDS:
        return value
    checked = _check_instance_id(value)
    if type(checked) is str:
        if len(_VALID_INSTANCE_IDS) >= _MEMO_LIMIT:
            _VALID_INSTANCE_IDS.clear()
        _VALID_INSTANCE_IDS.add(checked)
    return checked


def _check_instance_id(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise DefinitionError("INVALID_ID", f"instance id must be a non-empty string, got {value!r}")
    _check_length(value, "instance id")
    if not _INSTANCE_ID_RE.fullmatch(value):
        raise DefinitionError(
            "INVALID_ID",
            f"instance id {value!r} may contain only letters, digits, '-' and '_'",
        )
    return value


def validate_procedure_path(value: object) -> str:
    """A backend procedure path: opaque, but printable and free of whitespace."""
    if not isinstance(value, str) or not value:
        raise DefinitionError("INVALID_ID", f"procedure path must be a non-empty string, got {value!r}")
    _check_length(value, "procedure path")
    for char in value:
        # isprintable() is false for control, format and surrogate code points; a path with
        # those, or with whitespace, cannot be told apart from its neighbours by a reader.
        if char.isspace() or not char.isprintable():
            raise DefinitionError(
                "INVALID_ID",
                f"procedure path {value!r} contains {char!r}: whitespace and control characters "
                "are not allowed",
            )
    return value


def format_capability_id(plane: Plane, component_type: str, name: str) -> str:
    """Build ``plane:type.name``; validates every part and the 128-char cap."""
    if plane == "view":
        validate_component_type(component_type)
        validate_capability_name(name)
        value = f"view:{component_type}.{name}"
    elif plane == "domain":
        # The two parts are joined into one opaque path, e.g. ("devices", "disable").
        value = f"domain:{validate_procedure_path(f'{component_type}.{name}')}"
    else:
        raise DefinitionError("INVALID_ID", f"plane must be 'view' or 'domain', got {plane!r}")
    _check_length(value, "capability id")
    return value


def parse_capability_id(value: object) -> CapabilityId:
    """Parse a canonical capability id; raises DefinitionError naming the bad part."""
    if type(value) is str:
        hit = _PARSED_IDS.get(value)
        if hit is not None:
            return hit
    parsed = _parse_capability_id(value)
    if type(value) is str:
        if len(_PARSED_IDS) >= _MEMO_LIMIT:
            _PARSED_IDS.clear()
        _PARSED_IDS[value] = parsed
    return parsed


def _parse_capability_id(value: object) -> CapabilityId:
    if not isinstance(value, str) or not value:
        raise DefinitionError("INVALID_ID", f"capability id must be a non-empty string, got {value!r}")
    _check_length(value, "capability id")
    plane, sep, rest = value.partition(":")
    if not sep:
        raise DefinitionError(
            "INVALID_ID", f"capability id {value!r} has no plane prefix ('view:' or 'domain:')"
        )
    if plane not in ("view", "domain"):
        raise DefinitionError(
            "INVALID_ID", f"capability id {value!r} has plane {plane!r}; expected 'view' or 'domain'"
        )
    if plane == "domain":
        return CapabilityId("domain", "", validate_procedure_path(rest))
    component_type, dot, name = rest.rpartition(".")
    if not dot or not component_type:
        raise DefinitionError(
            "INVALID_ID",
            f"capability id {value!r} needs a component type and a capability name "
            "separated by '.', e.g. 'view:devices.table.selectRows'",
        )
    validate_component_type(component_type)
    validate_capability_name(name)
    return CapabilityId("view", component_type, name)


def parse_procedure_id(value: object) -> str:
    """Validate a ``domain:<path>`` id and return it unchanged."""
    parsed = parse_capability_id(value)
    if parsed.plane != "domain":
        raise DefinitionError("PLANE_VIOLATION", f"procedure id {value!r} must use the 'domain:' plane")
    return str(value)


def is_valid_capability_id(value: object) -> bool:
    try:
        parse_capability_id(value)
    except DefinitionError:
        return False
    return True


_BASE62 = (string.digits + string.ascii_letters).encode("ascii")
# Bytes 0..247 map onto the 62 characters four times over; 248..255 are dropped, so every
# character stays equally likely (rejection sampling, done by bytes.translate in C).
_TO_BASE62 = bytes(_BASE62[b % 62] for b in range(256))
_UNEVEN_TAIL = bytes(range(248, 256))


_POOL_BYTES = 4096
# Uniformly random base62 characters; those before ``_taken`` were handed out. Threads share it
# (the server runs procedures in worker threads): the lock keeps every id drawn once.
_pool = b""
_taken = 0
_pool_lock = threading.Lock()


def forget_pool() -> None:
    """Drop the characters drawn so far: a process that shares this memory with another (a forked
    worker, a page booted from a memory snapshot) must never hand out the same ids."""
    global _pool, _taken, _pool_lock
    _pool, _taken, _pool_lock = b"", 0, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=forget_pool)


def random_id(prefix: str, length: int = 22) -> str:
    """``prefix`` + ``length`` uniformly random base62 characters from the OS CSPRNG.

    The characters come from a pool filled 4 kB at a time (one system call serves a few
    hundred ids); each is handed out once."""
    global _pool, _taken
    with _pool_lock:
        if len(_pool) - _taken < length:
            fresh = b""
            while len(fresh) < length:
                # os.urandom is what secrets.token_bytes returns (importing secrets costs ~11 ms in the page)
                fresh += os.urandom(_POOL_BYTES).translate(_TO_BASE62, _UNEVEN_TAIL)
            _pool, _taken = fresh, 0
        start = _taken
        _taken = start + length
        chars = _pool[start : start + length]
    return prefix + chars.decode("ascii")

"""Provider-safe tool names for capabilities, and the catalog map that reverses them.

Model providers accept tool names of 1-64 characters from ``[A-Za-z0-9_-]``. A canonical
capability id (``view:devices.table.selectRows``) is projected onto that alphabet by a reversible
rule (reference doc 09, "Wire names"):

* ``:`` becomes ``_`` and every ``.`` becomes ``__``
  (``view:devices.table.selectRows`` -> ``view_devices__table__selectRows``);
* a capability that several live instances expose in one catalog gets ``_at_<instanceId>``
  appended (instance ids are already in the provider alphabet, so they are appended verbatim);
* a name that would exceed 64 characters keeps a prefix and ends in ``_0_`` + a base-36 hash of
  the full identity (54 + 3 + 7 = 64 characters);
* a ``domain:`` id the rule cannot carry faithfully (its opaque path holds ``_``, which would
  make ``domain:a_.b`` and ``domain:a._b`` meet, or a character outside the provider alphabet)
  gets the hashed form too, with the prefix's foreign characters replaced by ``-``;
* when two entries of one catalog still end up with the same name, both are re-encoded with a
  longer hash (2 more characters per level), so the result depends only on the set of entries.

The names, the hash (32-bit FNV-1a over UTF-16 code units, re-seeded per 7 characters) and the
escalation rule are those of the TypeScript implementation, so both emit identical catalogs for
every id it can name (it has no rule for characters outside the alphabet).

Only ``WireNameCatalog.wire_name_map()`` reverses a name reliably. ``decode_wire_name`` is a
convenience for plain names: it answers ``None`` for anything it cannot prove, never a wrong id.
WebMCP's own name rule (1-128 characters of ``[A-Za-z0-9_.-]``) is a superset of the provider
rule, so every name emitted here is also a valid WebMCP tool name.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType

from ._core.ids import is_valid_capability_id, parse_capability_id, validate_instance_id
from ._core.records import record

__all__ = [
    "MAX_WIRE_NAME_LENGTH",
    "WIRE_NAME_RE",
    "WireNameCatalog",
    "WireNameEntry",
    "assign_wire_names",
    "decode_wire_name",
    "encode_capability_id",
    "encode_wire_name",
    "is_wire_name",
]

MAX_WIRE_NAME_LENGTH = 64
"""The provider budget for a tool name."""

WIRE_NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""The provider alphabet and length (use with ``fullmatch``)."""

# Ends every hashed name. A faithful encoding may contain the text too (``domain:a.0.b`` ->
# ``domain_a__0__b``), but never as a lone "_" before the hash digits: the decoder tells them
# apart by re-encoding, not by looking for the marker.
_SHORTENED_MARKER = "_0_"
_INSTANCE_MARKER = "_at_"
_BASE_HASH_LENGTH = 7
_HASH_GROWTH_PER_LEVEL = 2
# Hash lengths up to 7 + 2 * 8 = 23 still leave a 38-character readable prefix.
_MAX_LEVEL = 8
# Collision rounds before the rank tie-break; the same bound as the TypeScript assigner.
_ESCALATION_ROUNDS = 3

_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def _base36(value: int) -> str:
    digits: list[str] = []
    while True:
        value, rem = divmod(value, 36)
        digits.append(_BASE36[rem])
        if value == 0:
            return "".join(reversed(digits))


def _fnv1a_utf16(text: str, seed: int) -> int:
    # JavaScript hashes UTF-16 code units (charCodeAt); doing the same keeps names identical to
    # the TypeScript implementation for any input, not just ASCII.
    units = text.encode("utf-16-le")
    value = seed
    for i in range(0, len(units), 2):
        value ^= units[i] | (units[i + 1] << 8)
        value = (value * _FNV_PRIME) & 0xFFFFFFFF
    return value


def _hash36(text: str, length: int) -> str:
    """``length`` base-36 characters: FNV-1a rounds, each re-seeded and padded to 7 characters."""
    out = ""
    round_ = 0
    while len(out) < length:
        out += _base36(_fnv1a_utf16(text, _FNV_OFFSET ^ round_)).rjust(_BASE_HASH_LENGTH, "0")
        round_ += 1
    return out[:length]


# What a faithful (unhashed) encoding may contain, before ":" and "." are replaced: one ":"
# (the plane's), since only the first is replaced (``domain::`` must not become ``domain_:``).
_FAITHFUL_ID_RE = re.compile(r"[A-Za-z0-9.-]+:[A-Za-z0-9.-]+")
_FOREIGN_CHAR_RE = re.compile(r"[^A-Za-z0-9_-]")


def _faithful(capability_id: str) -> bool:
    """Whether the plain rule carries ``capability_id`` injectively and within the alphabet."""
    return _FAITHFUL_ID_RE.fullmatch(capability_id) is not None


def _raw_encoding(capability_id: str, instance_id: str | None) -> str:
    encoded = capability_id.replace(":", "_", 1).replace(".", "__")
    return encoded if instance_id is None else f"{encoded}{_INSTANCE_MARKER}{instance_id}"


def encode_wire_name(capability_id: str, instance_id: str | None = None, *, level: int = 0) -> str:
    """The wire name of ``capability_id``, qualified by ``instance_id`` when one is given.

    Pass ``instance_id`` only when several live instances expose the capability in the same
    catalog. ``level`` > 0 forces the hashed form with a longer hash; it is how
    :func:`assign_wire_names` separates colliding entries. Prefer that function whenever a whole
    catalog is at hand: uniqueness is a property of the catalog, not of one name.

    Raises ``DefinitionError`` for a capability id or instance id outside the id grammar, and
    ``ValueError`` for a level outside ``0..8``.
    """
    parse_capability_id(capability_id)
    if instance_id is not None:
        validate_instance_id(instance_id)
    if not 0 <= level <= _MAX_LEVEL:
        raise ValueError(f"level must be between 0 and {_MAX_LEVEL}, got {level!r}")
    return _encode(capability_id, instance_id, level)


def _encode(capability_id: str, instance_id: str | None, level: int) -> str:
    """:func:`encode_wire_name` for inputs already validated."""
    raw = _raw_encoding(capability_id, instance_id)
    if level == 0 and len(raw) <= MAX_WIRE_NAME_LENGTH and _faithful(capability_id):
        return raw
    hash_length = _BASE_HASH_LENGTH + _HASH_GROWTH_PER_LEVEL * level
    keep = MAX_WIRE_NAME_LENGTH - len(_SHORTENED_MARKER) - hash_length
    # The hash covers the instance and the level, so qualified and escalated names differ too.
    digest = _hash36(f"{capability_id}#{instance_id or ''}#{level}", hash_length)
    prefix = _FOREIGN_CHAR_RE.sub("-", raw[:keep])  # only a reading aid: the hash identifies
    return f"{prefix}{_SHORTENED_MARKER}{digest}"


def encode_capability_id(capability_id: str) -> str:
    """The plain (unqualified) wire name of a canonical capability id.

    ``view:devices.table.selectRows`` -> ``view_devices__table__selectRows``; ids whose encoding
    exceeds 64 characters are shortened with a hash suffix. Raises ``DefinitionError`` for an id
    outside the grammar.
    """
    return encode_wire_name(capability_id)


def decode_wire_name(name: str) -> str | None:
    """The canonical capability id a plain wire name encodes, or ``None``.

    ``None`` for shortened, instance-qualified and every other name that is not the exact
    encoding of a grammar-valid id: the answer is returned only when re-encoding it reproduces
    ``name`` byte for byte, and the encoding is injective, so it is never a plausible wrong id.
    Reverse emitted names with :meth:`WireNameCatalog.wire_name_map` instead.
    """
    plane, sep, rest = name.partition("_")
    if not sep or plane not in ("view", "domain"):
        return None
    path = rest.replace("__", ".")
    # Refused like the TypeScript decoder does: long underscore runs and empty segments, where
    # the opaque domain plane makes a name ambiguous between implementations.
    if "___" in rest or "" in path.split("."):
        return None
    candidate = f"{plane}:{path}"
    # Any "_" left over came from a marker or an odd underscore run, never from a "." .
    if "_" in candidate or not is_valid_capability_id(candidate):
        return None
    return candidate if _encode(candidate, None, 0) == name else None


def is_wire_name(name: object) -> bool:
    """True when ``name`` fits the provider rule: 1-64 characters of ``[A-Za-z0-9_-]``."""
    return isinstance(name, str) and WIRE_NAME_RE.fullmatch(name) is not None


@record
class WireNameEntry:
    """One tool of a catalog to be named.

    ``capability_id`` is the canonical id. ``instance_id`` and ``registration_id`` say which live
    target the tool addresses; they travel back through the map. ``repeated`` is true when the
    capability has several live instances or references in this catalog: the name is then
    qualified with ``_at_<instance_id>``, so ``instance_id`` is required.
    """

    capability_id: str
    instance_id: str | None = None
    registration_id: str | None = None
    repeated: bool = False

    def __post_init__(self) -> None:
        parse_capability_id(self.capability_id)
        if self.instance_id is not None:
            validate_instance_id(self.instance_id)
        if self.repeated and self.instance_id is None:
            raise ValueError(
                f"entry for {self.capability_id!r} is repeated but has no instance_id to qualify it"
            )

    @property
    def qualifier(self) -> str | None:
        """The instance id that goes into the name, if any."""
        return self.instance_id if self.repeated else None

    def _sort_key(self) -> tuple[str, bool, str, bool, str]:
        # Leads with the TypeScript key ("id#qualifier"), so ranks agree with it; the rest
        # orders entries the TypeScript key cannot tell apart.
        return (
            f"{self.capability_id}#{self.qualifier or ''}",
            self.instance_id is not None,
            self.instance_id or "",
            self.registration_id is not None,
            self.registration_id or "",
        )


class WireNameCatalog:
    """The names assigned to one catalog, and the authoritative way back from a name."""

    __slots__ = ("_by_entry", "_by_name", "entries", "names")

    def __init__(self, entries: tuple[WireNameEntry, ...], names: tuple[str, ...]) -> None:
        self.entries = entries
        """The entries, in the order they were given."""
        self.names = names
        """The emitted names, aligned with ``entries``."""
        # Both ways are indexed when first asked for: most catalogs are read for their names.
        self._by_name: Mapping[str, WireNameEntry] | None = None
        self._by_entry: Mapping[WireNameEntry, str] | None = None

    def wire_name_map(self) -> Mapping[str, WireNameEntry]:
        """Wire name -> entry (capability id, instance id, registration id); read-only."""
        by_name = self._by_name
        if by_name is None:
            by_name = self._by_name = MappingProxyType(dict(zip(self.names, self.entries, strict=True)))
        return by_name

    def resolve(self, name: str) -> WireNameEntry | None:
        """The entry a provider's tool name addresses, or ``None`` if this catalog never emitted it."""
        return self.wire_name_map().get(name)

    def name_of(self, entry: WireNameEntry) -> str:
        """The name emitted for ``entry``; ``KeyError`` if it is not in this catalog."""
        by_entry = self._by_entry
        if by_entry is None:
            by_entry = self._by_entry = MappingProxyType(dict(zip(self.entries, self.names, strict=True)))
        return by_entry[entry]

    def __len__(self) -> int:
        return len(self.names)

    def __iter__(self) -> Iterator[tuple[str, WireNameEntry]]:
        return iter(zip(self.names, self.entries, strict=True))

    def __repr__(self) -> str:
        return f"WireNameCatalog({len(self)} names)"


# Names of recent catalogs, by the identities of their entries: catalogs projected from an
# unchanged snapshot reuse their entry objects, so naming them again is a lookup. Names depend
# only on the entries' values, and entries are frozen.
_RECENT: dict[tuple[int, ...], tuple[tuple[WireNameEntry, ...], tuple[str, ...]]] = {}
_RECENT_LIMIT = 16


def assign_wire_names(entries: Iterable[WireNameEntry]) -> WireNameCatalog:
    """Name every entry of one catalog: unique, at most 64 characters, order-independent.

    Entries whose names coincide are all re-encoded one hash level up, for up to three rounds;
    entries still colliding then get a rank suffix within the sorted colliding set. Every step
    depends only on the set of entries, so the same catalog always gets the same names
    whatever order it arrives in. Raises ``ValueError`` for an entry given twice.
    """
    items = tuple(entries)
    key = tuple(map(id, items))
    hit = _RECENT.get(key)
    if hit is not None:
        return WireNameCatalog(items, hit[1])
    names = _assign(items)
    _RECENT[key] = (items, names)  # holding the entries keeps the ids in the key theirs
    if len(_RECENT) > _RECENT_LIMIT:
        del _RECENT[next(iter(_RECENT))]
    return WireNameCatalog(items, names)


def _assign(items: tuple[WireNameEntry, ...]) -> tuple[str, ...]:
    if len(set(items)) != len(items):
        raise ValueError("duplicate wire-name entries: each entry must address one distinct tool")
    levels = dict.fromkeys(items, 0)
    names = [_entry_name(entry, 0) for entry in items]
    for round_ in range(_ESCALATION_ROUNDS + 1):
        colliding = _colliding(items, names)
        if not colliding:
            break
        if round_ == _ESCALATION_ROUNDS:
            names = _rank_colliding(items, names, colliding)
            break
        for entry in colliding:
            levels[entry] += 1
        names = [_entry_name(entry, levels[entry]) for entry in items]
    return _settle(items, names)


def _entry_name(entry: WireNameEntry, level: int) -> str:
    # Entries validate their ids on construction.
    return _encode(entry.capability_id, entry.qualifier, level)


def _colliding(items: tuple[WireNameEntry, ...], names: list[str]) -> set[WireNameEntry]:
    holders: defaultdict[str, list[WireNameEntry]] = defaultdict(list)
    for entry, name in zip(items, names, strict=True):
        holders[name].append(entry)
    return {entry for group in holders.values() if len(group) > 1 for entry in group}


def _suffixed(base: str, suffix: str) -> str:
    return f"{base[: MAX_WIRE_NAME_LENGTH - len(suffix)]}{suffix}"


def _rank_colliding(
    items: tuple[WireNameEntry, ...], names: list[str], colliding: set[WireNameEntry]
) -> list[str]:
    # Ranks are distinct by construction, which ends the escalation whatever the hash does.
    ranks = {entry: rank for rank, entry in enumerate(sorted(colliding, key=WireNameEntry._sort_key))}
    return [
        _suffixed(_entry_name(entry, _ESCALATION_ROUNDS), f"{_SHORTENED_MARKER}{ranks[entry]}")
        if entry in ranks
        else name
        for entry, name in zip(items, names, strict=True)
    ]


def _settle(items: tuple[WireNameEntry, ...], names: list[str]) -> tuple[str, ...]:
    """Guarantee uniqueness even where rank suffixes meet a crafted instance id.

    A no-op unless the rank tie-break produced a name some other entry already holds (only a
    deliberately chosen instance id can arrange that). Entries are visited in sorted order, so
    the outcome still depends only on the set.
    """
    if len(set(names)) == len(names):
        return tuple(names)
    final = dict(zip(items, names, strict=True))
    taken: set[str] = set()
    for entry in sorted(items, key=WireNameEntry._sort_key):
        name = final[entry]
        counter = 0
        while name in taken:
            name = _suffixed(final[entry], f"{_SHORTENED_MARKER}x{counter}")
            counter += 1
        taken.add(name)
        final[entry] = name
    return tuple(final[entry] for entry in items)

"""Consumers: the identified agent-side clients of a surface."""

from __future__ import annotations

from dataclasses import field
from typing import Literal, TypeAlias

from .records import record

ConsumerKind: TypeAlias = Literal["embedded", "webmcp", "mcp-bridge", "test", "other"]
CONSUMER_KINDS: frozenset[str] = frozenset({"embedded", "webmcp", "mcp-bridge", "test", "other"})


@record
class Consumer:
    id: str
    kind: ConsumerKind = "embedded"
    grants: tuple[str, ...] = ()
    _key: str = field(init=False, repr=False, compare=False)  # ``key``, built once

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise ValueError("consumer id must be a non-empty string")
        if not isinstance(self.kind, str) or self.kind not in CONSUMER_KINDS:
            raise ValueError(f"consumer kind must be one of {sorted(CONSUMER_KINDS)}, got {self.kind!r}")
        # A bare string would become a tuple of characters ("admin" -> 'a', 'd', ...).
        if isinstance(self.grants, str) or not isinstance(self.grants, (list, tuple, set, frozenset)):
            raise TypeError(f"consumer grants must be a list of strings, got {self.grants!r}")
        if not all(isinstance(g, str) for g in self.grants):
            raise TypeError(f"consumer grants must be strings, got {self.grants!r}")
        object.__setattr__(self, "grants", tuple(self.grants))
        object.__setattr__(self, "_key", f"{self.kind}:{self.id}")

    @property
    def key(self) -> str:
        """Normalized identity used for policy and idempotency: ``kind:id``."""
        return self._key


ANONYMOUS = Consumer("anonymous", "embedded")

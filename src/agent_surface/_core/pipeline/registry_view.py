"""What the pipeline needs from the registry: a narrow, read-only view (two of its reading
methods are underscored: the registry's internals, not its public API)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from ..clock import Clock
from ..limits import Limits
from ..registrations.registration import Registration, Tombstone


class RegistryView(Protocol):
    """The registry as the pipeline sees it. Events go through the event bus the registry
    hands the pipeline, so nothing here can change the registry."""

    limits: Limits
    clock: Clock
    now: Callable[[], float]

    @property
    def surface_id(self) -> str: ...

    @property
    def revision(self) -> int:
        """The surface version as an integer (``version`` is its decimal string)."""
        ...

    def host_context(self) -> Mapping[str, Any]: ...

    def _holding(self, capability_id: str) -> Sequence[Registration]: ...

    def tombstone(self, registration_id: str) -> Tombstone | None: ...

    def _tombstone_holding(self, capability_id: str, instance_id: str | None) -> Tombstone | None: ...

"""What the pipeline needs from the registry: a narrow, read-only view (its resolution index
and one reading method are underscored: the registry's internals, not its public API)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from ..clock import Clock
from ..limits import Limits
from ..registrations.registration import Registration, Tombstone


class HolderIndex(Protocol):
    """Capability id -> the live registrations holding it, in snapshot order."""

    def holding(self, capability_id: str) -> Sequence[Registration]:
        """A copy: the caller may keep it while registrations come and go."""
        ...

    def sole(self, capability_id: str) -> Registration | None:
        """The only live registration holding ``capability_id``; None if none or several."""
        ...

    def sole_at(self, capability_id: str, instance_id: str) -> Registration | None:
        """The only live registration holding ``capability_id`` on ``instance_id``; None if
        none or several."""
        ...


class RegistryView(Protocol):
    """The registry as the pipeline sees it. Events go through the event bus the registry
    hands the pipeline, so nothing here can change the registry."""

    limits: Limits
    clock: Clock
    now: Callable[[], float]

    @property
    def _holders(self) -> HolderIndex: ...

    @property
    def surface_id(self) -> str: ...

    @property
    def revision(self) -> int:
        """The surface version as an integer (``version`` is its decimal string)."""
        ...

    def host_context(self) -> Mapping[str, Any]: ...

    def tombstone(self, registration_id: str) -> Tombstone | None: ...

    def _tombstone_holding(self, capability_id: str, instance_id: str | None) -> Tombstone | None: ...

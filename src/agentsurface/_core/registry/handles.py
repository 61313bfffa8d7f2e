"""Registration handles: what ``register()`` returns, and the live updates a registration allows."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Literal, Protocol

from ..events import SurfaceEvent
from ..registrations.registration import Registration

log = logging.getLogger("agentsurface")


class _Owner(Protocol):
    """What a handle asks of the registry that issued it (the registry, structurally)."""

    @property
    def environment(self) -> str: ...

    def _update(
        self, reg: Registration, enabled: bool | None, overrides: Mapping[str, Any] | None
    ) -> None: ...

    def _bump(self, events: list[SurfaceEvent]) -> None: ...

    def _unregister(self, reg: Registration) -> None: ...


class RegistrationHandle:
    """What ``register()`` returns: the registration id, its status, and the few live updates
    a registration allows. A rejected registration gets a dead handle whose calls do nothing."""

    __slots__ = ("_reg", "_registry", "registration_id")

    def __init__(self, registry: _Owner, registration_id: str, reg: Registration | None) -> None:
        self._registry = registry
        self._reg = reg
        self.registration_id = registration_id

    @property
    def status(self) -> Literal["active", "rejected", "unregistered"]:
        return "rejected" if self._reg is None else self._reg.status

    def update(
        self,
        *,
        enabled: bool | None = None,
        availability: Mapping[str, Any] | None = None,
    ) -> None:
        """Push ``enabled`` and per-capability availability overrides (by name or id).

        An override is ``{"available": bool, "reason": str}``, ``(bool, reason)`` or a bool;
        ``None`` clears it. Anything structural needs close() and a new register().
        """
        if self._live("update"):
            assert self._reg is not None
            self._registry._update(self._reg, enabled, availability)

    def invalidate(self) -> None:
        """Bump the surface version without changing anything."""
        if self._live("invalidate"):
            self._registry._bump([])

    def close(self) -> None:
        """End the registration: its tools leave the surface (nothing happens a second time)."""
        if self._reg is not None and self._reg.status == "active":
            self._registry._unregister(self._reg)

    def _live(self, what: str) -> bool:
        if self._reg is None or self._reg.status != "active":
            if self._registry.environment == "development":
                log.warning("%s() on a %s registration does nothing", what, self.status)
            return False
        return True

    def __repr__(self) -> str:
        return f"<RegistrationHandle {self.registration_id} {self.status}>"

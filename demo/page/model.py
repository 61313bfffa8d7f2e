"""The console's view state: devices loaded from the backend, filters, selection, drawer, route.

Pure Python (no browser): the UI renders it, the agent surface reads and changes it, and the
CPython tests drive it through the testing harness.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from agentsurface.page import State

from ..shared.values import Status

Route = Literal["devices", "activity"]
ROUTES: tuple[Route, ...] = ("devices", "activity")
STATUSES: tuple[Status, ...] = ("online", "offline", "disabled")
NoticeTone = Literal["ok", "info", "error"]  # error: the server refused the person's own action


@dataclass(frozen=True, slots=True)
class Device:
    id: str
    name: str
    model: str
    city: str
    status: Status
    last_seen: str

    @classmethod
    def from_api(cls, row: dict[str, Any]) -> Device:
        return cls(
            id=str(row["id"]),
            name=str(row["name"]),
            model=str(row["model"]),
            city=str(row["city"]),
            status=row["status"],
            last_seen=str(row.get("lastSeen") or row.get("last_seen") or ""),
        )

    def row(self) -> dict[str, str]:
        return {
            "id": self.id,
            "name": self.name,
            "model": self.model,
            "city": self.city,
            "status": self.status,
            "lastSeen": self.last_seen,
        }


@dataclass(frozen=True, slots=True)
class Filters:
    status: Status | None = None
    city: str | None = None
    text: str | None = None

    def matches(self, device: Device) -> bool:
        if self.status is not None and device.status != self.status:
            return False
        if self.city is not None and device.city.casefold() != self.city.casefold():
            return False
        if self.text:
            needle = self.text.casefold()
            return any(
                needle in value.casefold() for value in (device.id, device.name, device.model, device.city)
            )
        return True

    def to_json(self) -> dict[str, str | None]:
        return {"status": self.status, "city": self.city, "text": self.text}


class ConsoleState(State):
    """The view state. A ``State``: every assignment tells the page, which re-evaluates the
    agent's availability (coalesced per event-loop turn) and re-renders (once per animation
    frame); nobody calls ``sync_availability()``. Lists are replaced, never mutated in place."""

    def __init__(self) -> None:
        self.devices: list[Device] = []
        self.filters = Filters()
        self.selected: list[str] = []
        self.drawer: str | None = None
        self.route: Route = "devices"
        self.notice: str | None = None  # a one-line message for the person ("7 devices disabled")
        self.notice_tone: NoticeTone = "ok"

    # ---- derived
    def visible(self) -> list[Device]:
        return [d for d in self.devices if self.filters.matches(d)]

    def device(self, device_id: str) -> Device | None:
        return next((d for d in self.devices if d.id == device_id), None)

    def cities(self) -> list[str]:
        return sorted({d.city for d in self.devices})

    # ---- changes
    def set_devices(self, devices: list[Device]) -> None:
        self.devices = devices
        known = {d.id for d in devices}
        self.selected = [i for i in self.selected if i in known]
        if self.drawer is not None and self.drawer not in known:
            self.drawer = None

    def upsert(self, rows: list[Device], notice: str | None = None) -> None:
        by_id = {d.id: d for d in rows}
        self.devices = [by_id.pop(d.id, d) for d in self.devices] + list(by_id.values())
        visible = {d.id for d in self.visible()}
        self.selected = [i for i in self.selected if i in visible]  # selection follows what is shown
        if notice is not None:
            self.notice, self.notice_tone = notice, "ok"

    def tell(self, notice: str, tone: NoticeTone) -> None:
        self.notice, self.notice_tone = notice, tone

    def set_filters(self, filters: Filters) -> None:
        self.filters = filters
        self.notice = None
        visible = {d.id for d in self.visible()}
        self.selected = [i for i in self.selected if i in visible]  # selection follows what is shown

    def select(self, ids: list[str], mode: Literal["replace", "add", "remove"] = "replace") -> None:
        if mode == "replace":
            chosen = list(dict.fromkeys(ids))
        elif mode == "add":
            chosen = list(dict.fromkeys([*self.selected, *ids]))
        else:
            chosen = [i for i in self.selected if i not in set(ids)]
        self.selected = chosen

    def open_drawer(self, device_id: str | None) -> None:
        self.drawer = device_id

    def go(self, route: Route) -> None:
        self.route = route

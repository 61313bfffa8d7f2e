"""The devices procedures: the one source of truth of their contracts, served by the server.

The backend serves them (``demo.server.procedures``); ``agentsurface snapshot`` writes their
JSON Schemas into the reviewed ``demo/page/contract.json`` (``agentsurface check`` holds the two
together), and the page references them from there (``procedures_from_contract``: bound to what the person has
on screen), without importing this module or pydantic on its way to its first tool. A call is
checked twice: in the page before it leaves (the compiled JSON-Schema check, and these very
models, imported then, for a value it cannot prove valid) and on the server, which trusts nothing
the page sent. ``bridge.connect()`` refuses a page whose contracts differ from the server's. The
page also lists the devices with ``devices.query`` for itself; its other own read,
``session.describe``, lives in ``session.py``, outside the agent's surface.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from agentsurface import ProcedureContract

from .values import Status

# Control characters and bidirectional overrides never reach the database (or a person's screen).
_UNSAFE = r"\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069"
SAFE_TEXT = f"^[^{_UNSAFE}]*$"
NOT_BLANK_SAFE_TEXT = f"^[^{_UNSAFE}]*[^\\s{_UNSAFE}][^{_UNSAFE}]*$"
DEVICE_ID = r"^dev-[0-9]{4,8}$"
MAX_DEVICE_IDS = 100

DeviceId = Annotated[str, Field(pattern=DEVICE_ID, max_length=12, description="A device id like dev-0001.")]
DeviceIds = Annotated[list[DeviceId], Field(min_length=1, max_length=MAX_DEVICE_IDS)]
Filter = Annotated[str, Field(max_length=80, pattern=SAFE_TEXT)]


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")  # an unknown property is refused, not ignored


class QueryInput(_Input):
    status: Status | None = None
    city: Filter | None = None
    text: Filter | None = Field(None, description="Matched against id, name, model and city.")
    limit: int = Field(50, ge=1, le=200)


class RenameInput(_Input):
    deviceId: DeviceId
    name: str = Field(min_length=1, max_length=80, pattern=NOT_BLANK_SAFE_TEXT)


class DisableInput(_Input):
    deviceIds: DeviceIds = Field(description="Bound to the table selection.")
    reason: str | None = Field(None, max_length=200, pattern=SAFE_TEXT, description="Why, for the audit log.")


class EnableInput(_Input):
    deviceIds: DeviceIds


class DeviceRow(BaseModel):
    id: str
    name: str
    model: str
    city: str
    status: Status
    lastSeen: str
    disabledReason: str | None
    updatedAt: str


class QueryOutput(BaseModel):
    devices: list[DeviceRow]
    total: int


class RenameOutput(BaseModel):
    device: DeviceRow


class DisableOutput(BaseModel):
    disabled: int
    alreadyDisabled: int
    devices: list[DeviceRow]


class EnableOutput(BaseModel):
    enabled: int
    alreadyEnabled: int
    devices: list[DeviceRow]


QUERY = ProcedureContract(
    id="domain:devices.query",
    description="Search all devices of the tenant on the server (not only the ones on screen).",
    effect="server-query",
    input=QueryInput,
    output=QueryOutput,
)

RENAME = ProcedureContract(
    id="domain:devices.rename",
    description="Rename the device open in the details drawer.",
    effect="server-mutation",
    input=RenameInput,
    output=RenameOutput,
)

DISABLE = ProcedureContract(
    id="domain:devices.disable",
    description="Disable devices so they stop reporting. The devices are the ones selected in the table.",
    effect="destructive",
    input=DisableInput,
    output=DisableOutput,
)

ENABLE = ProcedureContract(
    id="domain:devices.enable",
    description="Enable disabled devices again; each gets back the status it had before.",
    effect="server-mutation",
    input=EnableInput,
    output=EnableOutput,
)

PROCEDURES = (QUERY, RENAME, DISABLE, ENABLE)

__all__ = [
    "DISABLE",
    "ENABLE",
    "PROCEDURES",
    "QUERY",
    "RENAME",
    "DeviceRow",
    "DisableInput",
    "DisableOutput",
    "EnableInput",
    "EnableOutput",
    "QueryInput",
    "QueryOutput",
    "RenameInput",
    "RenameOutput",
    "Status",
]

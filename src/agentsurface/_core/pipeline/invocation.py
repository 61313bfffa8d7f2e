"""Invocation requests and results (results are values, never exceptions)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

from ..errors import ErrorPayload
from ..jsonvalue import JsonValue
from ..records import record


class _Missing:
    """No input was supplied (distinct from JSON ``null``)."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Final = _Missing()


# Both are made on every call: hot records (see records).
@record(hot=True)
class Invocation:
    """One call: which capability, on which target, with what input and evidence."""

    capability_id: str
    input: Any = MISSING
    invocation_id: str | None = None
    instance_id: str | None = None
    registration_id: str | None = None
    surface_id: str | None = None
    surface_version: str | None = None
    confirmation_id: str | None = None

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Invocation:
        """Build from the wire form (camelCase keys, as adapters and agents send it)."""
        get = value.get
        return cls(  # positional: made on every call, and a third cheaper than by keyword
            get("capabilityId", ""),
            get("input", MISSING),
            get("invocationId"),
            get("instanceId"),
            get("registrationId"),
            get("surfaceId"),
            get("surfaceVersion"),
            get("confirmationId"),
        )

    def fingerprint_material(self) -> dict[str, Any]:
        material: dict[str, Any] = {
            "capabilityId": self.capability_id,
            "registrationId": self.registration_id,
            "instanceId": self.instance_id,
            "surfaceId": self.surface_id,
            "surfaceVersion": self.surface_version,
            "confirmationId": self.confirmation_id,
        }
        if self.input is not MISSING:
            material["input"] = self.input
        return {k: v for k, v in material.items() if v is not None}


@record(hot=True)
class InvocationResult:
    status: Literal["ok", "error"]
    invocation_id: str
    capability_id: str
    surface_version: str
    output: JsonValue = None
    error: ErrorPayload | None = None
    surface_changed: bool = False

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def code(self) -> str | None:
        return None if self.error is None else self.error.code

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {
            "status": self.status,
            "invocationId": self.invocation_id,
            "capabilityId": self.capability_id,
            "surfaceVersion": self.surface_version,
        }
        if self.status == "ok":
            if self.output is not None:
                out["output"] = self.output
        else:
            assert self.error is not None
            out["error"] = self.error.to_json()
        if self.surface_changed:
            out["surfaceChanged"] = True
        return out


@record
class PreconditionFailure:
    """Return (or raise via CapabilityFailure) from a precondition to refuse the call."""

    message: str
    details: Mapping[str, JsonValue] | None = None

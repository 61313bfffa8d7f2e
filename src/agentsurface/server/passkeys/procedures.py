"""The passkey procedures served beside the app's own: their three contracts
(``passkeys.registrationOptions``, ``passkeys.register``, ``passkeys.assertionOptions``),
:func:`passkey_procedures`, and how a :class:`RegistrationRefused` becomes the caller's typed error."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from ... import CapabilityFailure, ProcedureContract
from ..errors import capability_error
from ..procedures import Caller, ProcedureCall, ServedProcedure, serve
from .checks import RegistrationRefused

PROCEDURE_OPTIONS = "domain:passkeys.registrationOptions"
PROCEDURE_REGISTER = "domain:passkeys.register"
PROCEDURE_ASSERTION_OPTIONS = "domain:passkeys.assertionOptions"


class _NoInput(BaseModel):
    model_config = ConfigDict(extra="forbid")


REGISTRATION_OPTIONS = ProcedureContract(
    id=PROCEDURE_OPTIONS,
    description="Start registering a passkey for the calling person: the options for navigator.credentials.create().",
    effect="server-query",
    input=_NoInput,
)
REGISTER = ProcedureContract(
    id=PROCEDURE_REGISTER,
    description="Finish registering a passkey: the authenticator's answer to navigator.credentials.create().",
    effect="server-mutation",
    input={
        "type": "object",
        "properties": {"credential": {"type": "object"}},
        "required": ["credential"],
        "additionalProperties": False,
    },
)

ASSERTION_OPTIONS = ProcedureContract(
    id=PROCEDURE_ASSERTION_OPTIONS,
    description=(
        "The calling person's passkeys for navigator.credentials.get() (rpId, allowCredentials, "
        "userVerification); the page adds the server's challenge."
    ),
    effect="server-query",
    input=_NoInput,
)


class _Registered(Protocol):
    @property
    def credential_id(self) -> str: ...

    @property
    def created_at(self) -> str: ...


class PasskeyService(Protocol):
    """What the procedures ask of :class:`~agentsurface.server.passkeys.Passkeys`."""

    def registration_options(self, caller: Caller, db: Any = None) -> dict[str, Any]: ...

    def register(self, caller: Caller, credential: Mapping[str, Any] | str, db: Any = None) -> _Registered: ...

    def request_options(self, caller: Caller, db: Any = None) -> dict[str, Any]: ...


def passkey_procedures(passkeys: PasskeyService) -> list[ServedProcedure]:
    """The passkey procedures to serve beside the app's own: the two steps of registration and
    the person's request options (the page's ``passkey_presence`` reads them)."""

    def options(call: ProcedureCall, _value: Any) -> dict[str, Any]:
        return {"publicKey": _refusing(lambda: passkeys.registration_options(call.caller, call.db))}

    def register(call: ProcedureCall, value: Any) -> dict[str, Any]:
        credential = value.get("credential") if isinstance(value, dict) else None
        if not isinstance(credential, dict):
            raise _failure(RegistrationRefused("malformed", "The credential must be an object."))
        registered = _refusing(lambda: passkeys.register(call.caller, credential, call.db))
        return {"credentialId": registered.credential_id, "createdAt": registered.created_at}

    def assertion_options(call: ProcedureCall, _value: Any) -> dict[str, Any]:
        return {"publicKey": passkeys.request_options(call.caller, call.db)}

    return [
        serve(REGISTRATION_OPTIONS, options),
        serve(REGISTER, register),
        serve(ASSERTION_OPTIONS, assertion_options),
    ]


def _refusing(work: Callable[[], Any]) -> Any:
    try:
        return work()
    except RegistrationRefused as refused:
        raise _failure(refused) from None


def _failure(refused: RegistrationRefused) -> Exception:
    if refused.reason == "not-allowed":
        return CapabilityFailure(
            capability_error("NOT_AUTHORIZED", "This caller may not register a passkey.", origin="server")
        )
    return CapabilityFailure(
        capability_error(
            "PRECONDITION_FAILED",
            f"The passkey registration was refused ({refused.reason}). Start the registration again.",
            reason=f"passkey-{refused.reason}",
        )
    )


__all__ = [
    "ASSERTION_OPTIONS",
    "PROCEDURE_ASSERTION_OPTIONS",
    "PROCEDURE_OPTIONS",
    "PROCEDURE_REGISTER",
    "REGISTER",
    "REGISTRATION_OPTIONS",
    "PasskeyService",
    "passkey_procedures",
]

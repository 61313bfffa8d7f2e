"""The passkey procedures served beside the app's own: their contracts (registration:
``passkeys.registrationOptions``, ``passkeys.register``, ``passkeys.assertionOptions``; the
person's management: ``passkeys.list``, ``passkeys.rename``, ``passkeys.remove``,
``passkeys.addOptions``; the administrator's ``passkeys.reenrol``), :func:`passkey_procedures`,
and how a refusal (:class:`RegistrationRefused`, :class:`ManagementRefused`) becomes the caller's
typed error.

Which step needs what, and why:

- listing and renaming: the person's session (low risk: a name is a label the person reads);
- removing one, adding one beside theirs, replacing one: a fresh assertion of a current passkey
  of the same person (``approval="webauthn"``: a challenge minted for this call, its procedure
  and credential id, short-lived and spent once), so a stolen session cannot take the person's
  passkeys away or slip its own authenticator in;
- re-enrolment of a person who lost every passkey: an administrator's procedure
  (``admin_permission``) with the administrator's own approval, never the person's session.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from ... import CapabilityFailure, ProcedureContract
from ..errors import capability_error, invalid_input
from ..procedures import Caller, ProcedureCall, ServedProcedure, serve
from .checks import MAX_CREDENTIAL_ID, ManagementRefused, RegistrationRefused
from .names import MAX_NAME

PROCEDURE_OPTIONS = "domain:passkeys.registrationOptions"
PROCEDURE_REGISTER = "domain:passkeys.register"
PROCEDURE_ASSERTION_OPTIONS = "domain:passkeys.assertionOptions"
PROCEDURE_LIST = "domain:passkeys.list"
PROCEDURE_RENAME = "domain:passkeys.rename"
PROCEDURE_REMOVE = "domain:passkeys.remove"
PROCEDURE_ADD_OPTIONS = "domain:passkeys.addOptions"
PROCEDURE_REENROL = "domain:passkeys.reenrol"

_CREDENTIAL_ID: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": 4 * MAX_CREDENTIAL_ID}


class _NoInput(BaseModel):
    model_config = ConfigDict(extra="forbid")


REGISTRATION_OPTIONS = ProcedureContract(
    id=PROCEDURE_OPTIONS,
    description=(
        "Start registering the calling person's first passkey (with the administrator's enrolment "
        "code after a re-enrolment): the options for navigator.credentials.create()."
    ),
    effect="server-query",
    input={
        "type": "object",
        "properties": {"grant": {"type": "string", "minLength": 1, "maxLength": 64}},
        "additionalProperties": False,
    },
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


LIST = ProcedureContract(
    id=PROCEDURE_LIST,
    description="The calling person's passkeys: id, name, created, last used.",
    effect="server-query",
    input=_NoInput,
)
RENAME = ProcedureContract(
    id=PROCEDURE_RENAME,
    description=f"Rename one of the calling person's passkeys (plain text, at most {MAX_NAME} characters).",
    effect="server-mutation",
    input={
        "type": "object",
        "properties": {"credentialId": _CREDENTIAL_ID, "name": {"type": "string", "minLength": 1, "maxLength": 256}},
        "required": ["credentialId", "name"],
        "additionalProperties": False,
    },
)
REMOVE = ProcedureContract(
    id=PROCEDURE_REMOVE,
    description="Remove one of the calling person's passkeys (never the last); needs a fresh assertion of a current one.",
    effect="destructive",
    input={
        "type": "object",
        "properties": {"credentialId": _CREDENTIAL_ID},
        "required": ["credentialId"],
        "additionalProperties": False,
    },
)
ADD_OPTIONS = ProcedureContract(
    id=PROCEDURE_ADD_OPTIONS,
    description=(
        "Start registering one more passkey, or a replacement of one (replaces), for a person who "
        "holds one; needs a fresh assertion of a current one."
    ),
    effect="server-mutation",
    input={
        "type": "object",
        "properties": {"replaces": _CREDENTIAL_ID},
        "additionalProperties": False,
    },
)
REENROL = ProcedureContract(
    id=PROCEDURE_REENROL,
    description=(
        "An administrator re-enrols a person who lost every passkey: their passkeys are revoked and "
        "a single-use, short-lived enrolment code is issued for them."
    ),
    effect="destructive",
    input={
        "type": "object",
        "properties": {"person": {"type": "string", "minLength": 1, "maxLength": 256}},
        "required": ["person"],
        "additionalProperties": False,
    },
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


class _Listed(Protocol):
    def to_json(self) -> dict[str, Any]: ...


class _Reenrolled(Protocol):
    @property
    def code(self) -> str: ...

    @property
    def expires_at(self) -> str: ...

    @property
    def removed(self) -> int: ...


class PasskeyManager(PasskeyService, Protocol):
    """What the management procedures ask besides (the same :class:`Passkeys`)."""

    @property
    def config(self) -> Any: ...

    def registration_options(
        self, caller: Caller, db: Any = None, *, grant: str | None = None
    ) -> dict[str, Any]: ...

    def addition_options(self, caller: Caller, replaces: str | None = None, db: Any = None) -> dict[str, Any]: ...

    def listing(self, caller: Caller, db: Any = None) -> Sequence[_Listed]: ...

    def rename(self, caller: Caller, credential_id: str, name: str, db: Any = None) -> str: ...

    def remove_own(self, caller: Caller, credential_id: str, db: Any = None) -> int: ...

    def reenrol(self, admin: Caller, name: str, db: Any = None) -> _Reenrolled: ...

    def level(self, caller: Caller) -> Any: ...


def passkey_procedures(passkeys: PasskeyManager) -> list[ServedProcedure]:
    """The passkey procedures to serve beside the app's own: the two steps of registration,
    the person's request options (the page's ``passkey_presence`` reads them), the person's
    management of their passkeys and the administrator's re-enrolment."""

    def options(call: ProcedureCall, value: Any) -> dict[str, Any]:
        grant = value.get("grant") if isinstance(value, dict) else None
        return {"publicKey": _refusing(lambda: passkeys.registration_options(call.caller, call.db, grant=grant))}

    def register(call: ProcedureCall, value: Any) -> dict[str, Any]:
        credential = value.get("credential") if isinstance(value, dict) else None
        if not isinstance(credential, dict):
            raise _failure(RegistrationRefused("malformed", "The credential must be an object."))
        registered = _refusing(lambda: passkeys.register(call.caller, credential, call.db))
        return {"credentialId": registered.credential_id, "createdAt": registered.created_at}

    def assertion_options(call: ProcedureCall, _value: Any) -> dict[str, Any]:
        return {"publicKey": passkeys.request_options(call.caller, call.db)}

    config = passkeys.config

    def managing(caller: Caller) -> None:
        if not config.may_manage(caller):
            raise CapabilityFailure(
                capability_error("NOT_AUTHORIZED", "This caller may not manage passkeys.", origin="server")
            )

    def listed(call: ProcedureCall, _value: Any) -> dict[str, Any]:
        managing(call.caller)
        return {"passkeys": [p.to_json() for p in passkeys.listing(call.caller, call.db)]}

    def rename(call: ProcedureCall, value: dict[str, Any]) -> dict[str, Any]:
        managing(call.caller)
        name = _managed(lambda: passkeys.rename(call.caller, value["credentialId"], value["name"], call.db))
        return {"credentialId": value["credentialId"], "name": name}

    def remove(call: ProcedureCall, value: dict[str, Any]) -> dict[str, Any]:
        managing(call.caller)
        left = _managed(lambda: passkeys.remove_own(call.caller, value["credentialId"], call.db))
        return {"removed": value["credentialId"], "remaining": left}

    def add_options(call: ProcedureCall, value: dict[str, Any]) -> dict[str, Any]:
        managing(call.caller)
        replaces = value.get("replaces")
        return {"publicKey": _refusing(lambda: passkeys.addition_options(call.caller, replaces, call.db))}

    def reenrol(call: ProcedureCall, value: dict[str, Any]) -> dict[str, Any]:
        done = _managed(lambda: passkeys.reenrol(call.caller, value["person"], call.db))
        return {"person": value["person"], "code": done.code, "expiresAt": done.expires_at, "removed": done.removed}

    return [
        serve(REGISTRATION_OPTIONS, options),
        serve(REGISTER, register),
        serve(ASSERTION_OPTIONS, assertion_options),
        serve(LIST, listed),
        serve(RENAME, rename),
        # The server checks a fresh assertion of the person's passkey over a challenge bound to
        # this call (procedure and credential id) before these run: ``verify_presence``.
        serve(REMOVE, remove, approval="webauthn"),
        serve(ADD_OPTIONS, add_options, approval="webauthn"),
        # The administrator's own approval: their passkey if they have one, else the dialog's
        # answer to a server-minted challenge.
        serve(REENROL, reenrol, permissions={config.admin_permission}, approval=passkeys.level),
    ]


def _managed(work: Callable[[], Any]) -> Any:
    try:
        return work()
    except ManagementRefused as refused:
        if refused.reason == "not-allowed":
            raise CapabilityFailure(
                capability_error("NOT_AUTHORIZED", str(refused), origin="server")
            ) from None
        if refused.reason == "bad-name":
            raise CapabilityFailure(invalid_input(str(refused), [("/name", str(refused))])) from None
        raise CapabilityFailure(
            capability_error("PRECONDITION_FAILED", str(refused), reason=f"passkey-{refused.reason}")
        ) from None


def _refusing(work: Callable[[], Any]) -> Any:
    try:
        return work()
    except RegistrationRefused as refused:
        raise _failure(refused) from None


# Refusals a new ceremony does not cure: their own message says what to do instead.
_NOT_RETRIED = ("assertion-required", "grant-required", "grant-invalid", "grant-expired", "unknown-passkey", "limit")


def _failure(refused: RegistrationRefused) -> Exception:
    if refused.reason == "not-allowed":
        return CapabilityFailure(
            capability_error("NOT_AUTHORIZED", "This caller may not register a passkey.", origin="server")
        )
    message = (
        str(refused)
        if refused.reason in _NOT_RETRIED
        else f"The passkey registration was refused ({refused.reason}). Start the registration again."
    )
    return CapabilityFailure(capability_error("PRECONDITION_FAILED", message, reason=f"passkey-{refused.reason}"))


__all__ = [
    "ADD_OPTIONS",
    "ASSERTION_OPTIONS",
    "LIST",
    "PROCEDURE_ADD_OPTIONS",
    "PROCEDURE_ASSERTION_OPTIONS",
    "PROCEDURE_LIST",
    "PROCEDURE_OPTIONS",
    "PROCEDURE_REENROL",
    "PROCEDURE_REGISTER",
    "PROCEDURE_REMOVE",
    "PROCEDURE_RENAME",
    "REENROL",
    "REGISTER",
    "REGISTRATION_OPTIONS",
    "REMOVE",
    "RENAME",
    "PasskeyManager",
    "PasskeyService",
    "passkey_procedures",
]

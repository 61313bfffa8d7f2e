"""The pure checks over parsed WebAuthn data (client data, origin, RP id hash, flags) and the typed
reasons they answer with (:data:`AssertionReason`, :data:`RegistrationReason`, :class:`RegistrationRefused`).

The prechecks name what ``webauthn`` would refuse anyway, whose exceptions carry only text; none of
them touches the store or verifies a signature (that is :mod:`.service`)."""

from __future__ import annotations

import hashlib
import secrets
from typing import Any, Literal, TypeAlias

from webauthn.helpers import (
    base64url_to_bytes,
    parse_attestation_object,
    parse_authenticator_data,
    parse_client_data_json,
)
from webauthn.helpers.structs import ClientDataType

from ..._core.errors import AgentSurfaceError
from .config import PasskeyConfig, origin_allowed

# Why an assertion was refused (the server's audit and tests; never the challenge itself).
AssertionReason: TypeAlias = Literal[
    "malformed",            # not a WebAuthn assertion (JSON shape, encodings, client data, authenticator data)
    "unknown-credential",   # no passkey with this credential id is registered
    "foreign-credential",   # the passkey is registered, to another person
    "wrong-type",           # the client data is not a navigator.credentials.get() ceremony
    "challenge-mismatch",   # signed over another challenge than the server's
    "wrong-origin",         # made on an origin the app does not list
    "wrong-rp",             # made for another relying party id
    "user-not-present",     # the authenticator did not see a person (UP flag clear)
    "user-not-verified",    # user verification required, not performed (UV flag clear)
    "counter",              # the sign counter did not move forward: a replay or a cloned authenticator
    "signature",            # the signature does not verify with the registered public key
]
RegistrationReason: TypeAlias = Literal[
    "malformed",
    "no-ceremony",          # no pending registration for this person (or it was already used)
    "expired",              # the registration challenge expired
    "challenge-mismatch",
    "wrong-origin",
    "wrong-rp",
    "user-not-present",
    "user-not-verified",
    "already-registered",   # this credential id is registered already
    "limit",                # the person holds max_per_person passkeys already
    "not-allowed",          # may_register refused this caller
    "rejected",             # the library refused the attestation for another reason
    "assertion-required",   # the person has a passkey: another one needs an assertion of it
    "grant-required",       # an administrator reset the person's passkeys: enrol with their grant
    "grant-invalid",        # no grant of this person has this code
    "grant-expired",        # the grant's time is over: the administrator issues another
    "unknown-passkey",      # the passkey to replace is not (or no longer) one of the person's
]
ManagementReason: TypeAlias = Literal[
    "not-allowed",          # may_manage refused this caller
    "unknown-passkey",      # no passkey of the person has this id (another person's looks the same)
    "last-passkey",         # removing it would leave the person without a passkey: replace it
    "bad-name",             # empty once cleaned, or longer than MAX_NAME
    "unknown-person",       # the administrator's name for the person resolves to nobody they manage
    "self-reenrol",         # an administrator re-enrolling themselves: another administrator does it
]

MAX_CREDENTIAL_ID = 1023  # bytes of a credential id (WebAuthn: at most 1023)


class RegistrationRefused(AgentSurfaceError, ValueError):
    def __init__(self, reason: RegistrationReason, message: str) -> None:
        super().__init__(message)
        self.reason: RegistrationReason = reason


class ManagementRefused(AgentSurfaceError, ValueError):
    """A passkey management step refused (listing, renaming, removal, re-enrolment)."""

    def __init__(self, reason: ManagementReason, message: str) -> None:
        super().__init__(message)
        self.reason: ManagementReason = reason


def credential_id_bytes(text: Any) -> bytes | None:
    """The bytes of a base64url credential id, or ``None`` when it is not one (or is too long)."""
    if not isinstance(text, str) or not text or len(text) > 4 * MAX_CREDENTIAL_ID:
        return None
    try:
        return base64url_to_bytes(text)
    except (ValueError, TypeError):
        return None


def client_checks(
    client_data_json: bytes, kind: ClientDataType, challenge: bytes, config: PasskeyConfig
) -> Literal["malformed", "wrong-type", "challenge-mismatch", "wrong-origin"] | None:
    try:
        client = parse_client_data_json(client_data_json)
    except Exception:
        return "malformed"
    if client.type != kind:
        return "wrong-type"
    if not secrets.compare_digest(client.challenge, challenge):
        return "challenge-mismatch"
    if not origin_allowed(config, client.origin):
        return "wrong-origin"
    return None


def origins_for(config: PasskeyConfig, client_data_json: bytes) -> list[str]:
    """The origins to hand the library: the client's own once :func:`origin_allowed` said yes
    (the library compares exactly), else the configured ones (and it refuses)."""
    try:
        origin = parse_client_data_json(client_data_json).origin
    except Exception:
        return list(config.origins)
    return [origin] if origin_allowed(config, origin) else list(config.origins)


def _rp_hash(config: PasskeyConfig) -> bytes:
    return hashlib.sha256(config.rp_id.encode("utf-8")).digest()


def _flag_checks(
    authenticator_data: bytes, config: PasskeyConfig
) -> Literal["malformed", "wrong-rp", "user-not-present", "user-not-verified"] | None:
    try:
        data = parse_authenticator_data(authenticator_data)
    except Exception:
        return "malformed"
    if not secrets.compare_digest(data.rp_id_hash, _rp_hash(config)):
        return "wrong-rp"
    if not data.flags.up:
        return "user-not-present"
    if config.user_verification == "required" and not data.flags.uv:
        return "user-not-verified"
    return None


def assertion_precheck(parsed: Any, challenge: bytes, config: PasskeyConfig) -> AssertionReason | None:
    """Typed reasons for what the library would refuse anyway (its exceptions carry only text)."""
    response = parsed.response
    reason = client_checks(response.client_data_json, ClientDataType.WEBAUTHN_GET, challenge, config)
    if reason is not None:
        return reason
    return _flag_checks(response.authenticator_data, config)


def registration_precheck(parsed: Any, challenge: bytes, config: PasskeyConfig) -> RegistrationReason | None:
    response = parsed.response
    reason = client_checks(response.client_data_json, ClientDataType.WEBAUTHN_CREATE, challenge, config)
    if reason is not None:
        return "malformed" if reason == "wrong-type" else reason
    try:
        data = parse_attestation_object(response.attestation_object).auth_data
    except Exception:
        return "malformed"
    if not secrets.compare_digest(data.rp_id_hash, _rp_hash(config)):
        return "wrong-rp"
    if not data.flags.up:
        return "user-not-present"
    if config.user_verification == "required" and not data.flags.uv:
        return "user-not-verified"
    return None


__all__ = [
    "MAX_CREDENTIAL_ID",
    "AssertionReason",
    "ManagementReason",
    "ManagementRefused",
    "RegistrationReason",
    "RegistrationRefused",
    "assertion_precheck",
    "client_checks",
    "credential_id_bytes",
    "origins_for",
    "registration_precheck",
]

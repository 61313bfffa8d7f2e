"""The passkeys of an app's people: :class:`Passkeys` runs the registration ceremony (options,
then the authenticator's answer verified and stored) and verifies assertions for server-minted
challenges (``webauthn.verify_authentication_response``, the credential's owner, the sign
counter moved forward)."""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import field
from datetime import UTC, datetime
from typing import Any, Literal

from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import (
    base64url_to_bytes,
    bytes_to_base64url,
    options_to_json_dict,
    parse_authentication_credential_json,
    parse_registration_credential_json,
)
from webauthn.helpers.exceptions import InvalidAuthenticationResponse, InvalidRegistrationResponse
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    AuthenticatorTransport,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from ..._core.records import record
from ..procedures import Caller, ServedProcedure
from ..stores.protocol import InvocationStore
from . import enrolment, manage
from . import tables as db_
from .checks import (
    AssertionReason,
    RegistrationReason,
    RegistrationRefused,
    assertion_precheck,
    credential_id_bytes,
    origins_for,
    registration_precheck,
)
from .config import PasskeyConfig, PasskeyError
from .enrolment import Reenrolment, grant_check
from .manage import PasskeyListing
from .names import default_name
from .procedures import passkey_procedures

log = logging.getLogger("agentsurface.server.passkeys")


@record
class RegisteredPasskey:
    credential_id: str
    created_at: str
    transports: tuple[str, ...] = field(default_factory=tuple)
    name: str = ""
    last_used_at: str | None = None


_GRANT_MESSAGES: dict[RegistrationReason, str] = {
    "grant-required": "An administrator reset your passkeys: register a new one with the code they gave you.",
    "grant-invalid": "This is not the enrolment code an administrator issued for you.",
    "grant-expired": "This enrolment code has expired: ask an administrator for a new one.",
}


def _attachment(credential: Mapping[str, Any] | str) -> str | None:
    found = credential.get("authenticatorAttachment") if isinstance(credential, Mapping) else None
    return found if isinstance(found, str) else None


def _now_iso(now: datetime) -> str:
    return now.astimezone(UTC).isoformat(timespec="seconds")


class Passkeys:
    """Passkeys of the people using one app, kept in ``store`` (its tables are created or migrated
    here). Thread-safe: every method runs in a store transaction of its own, or in ``db`` when
    given one (a procedure's ``call.db``), so its writes commit with that call."""

    def __init__(
        self,
        store: InvocationStore,
        config: PasskeyConfig,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not isinstance(config, PasskeyConfig):
            raise PasskeyError("config must be a PasskeyConfig")
        self.store = store
        self.config = config
        self._clock = clock
        store.run(lambda db: db_.migrate(db, store.where))

    # ------------------------------------------------------------------ queries

    def person(self, caller: Caller) -> str:
        return self.config.person(caller)

    def has_passkey(self, caller: Caller, db: Any = None) -> bool:
        """Whether the caller's person has registered a passkey (the server's choice of level:
        ``"webauthn"`` for them, ``"confirm"`` for the others)."""
        person = self.person(caller)
        return bool(self._in(db, lambda conn: db_.count_passkeys(conn, person) > 0))

    def passkeys(self, caller: Caller, db: Any = None) -> list[RegisteredPasskey]:
        person = self.person(caller)
        found = self._in(db, lambda conn: db_.passkeys_of(conn, person))
        return [
            RegisteredPasskey(p.credential_id, p.created_at, p.transports, p.name, p.last_used_at) for p in found
        ]

    def listing(self, caller: Caller, db: Any = None) -> list[PasskeyListing]:
        """What the person sees of their passkeys: name, created, last used, transports."""
        person = self.person(caller)
        return list(self._in(db, lambda conn: manage.listing(conn, person)))

    def rename(self, caller: Caller, credential_id: str, name: str, db: Any = None) -> str:
        """Rename one of the person's passkeys; returns the name as kept (cleaned). Raises
        :class:`ManagementRefused` (``bad-name``, ``unknown-passkey``)."""
        person = self.person(caller)
        return str(self._in(db, lambda conn: manage.rename(conn, person, credential_id, name)))

    def remove_own(self, caller: Caller, credential_id: str, db: Any = None) -> int:
        """The person's removal of one of their passkeys, never the last (``last-passkey``);
        its procedure needs a fresh assertion. Returns how many they keep."""
        person = self.person(caller)
        return int(self._in(db, lambda conn: manage.remove(conn, person, credential_id)))

    def remove(self, caller: Caller, credential_id: str, db: Any = None) -> bool:
        """Drop one of the person's passkeys with no check at all: the app's own code (a
        person's removal goes through ``passkeys.remove``, a lost device through
        ``passkeys.reenrol``)."""
        person = self.person(caller)
        return bool(self._in(db, lambda conn: db_.delete_passkey(conn, person, credential_id)))

    def reenrol(self, admin: Caller, name: str, db: Any = None) -> Reenrolment:
        """The administrator's re-enrolment of the person they call ``name``: their passkeys
        revoked, an enrolment grant issued (:mod:`.enrolment`). Its procedure requires
        ``config.admin_permission`` and the administrator's own approval."""
        admin_person = self.person(admin)
        found: Reenrolment = self._in(
            db, lambda conn: enrolment.reenrol(conn, self.config, admin, admin_person, name, self._clock)
        )
        return found

    def level(self, caller: Caller) -> Literal["webauthn", "confirm"]:
        """``"webauthn"`` when the caller's person has a passkey, else ``"confirm"``: pass as
        ``serve(..., approval=passkeys.level)``."""
        return "webauthn" if self.has_passkey(caller) else "confirm"

    def procedures(self) -> list[ServedProcedure]:
        """The passkey procedures to serve beside the app's own: registration
        (``passkeys.registrationOptions``, ``passkeys.register``), the person's request options
        (``passkeys.assertionOptions``), their management (``passkeys.list``,
        ``passkeys.rename``, ``passkeys.remove``, ``passkeys.addOptions``) and the
        administrator's ``passkeys.reenrol``. The server must be given
        ``verify_presence=passkeys.verify_presence``: removal and additions need an assertion."""
        return passkey_procedures(self)

    def _in(self, db: Any, work: Callable[[Any], Any]) -> Any:
        return work(db) if db is not None else self.store.run(work)

    # ------------------------------------------------------------------ registration

    def registration_options(
        self, caller: Caller, db: Any = None, *, grant: str | None = None
    ) -> dict[str, Any]:
        """Options (JSON) for ``navigator.credentials.create()`` of the person's first passkey;
        the challenge is kept for the person until :meth:`register` uses it or it expires (one
        pending ceremony per person). A person who holds a passkey adds or replaces one only
        through :meth:`addition_options`, after a fresh assertion (reason
        ``assertion-required``); a person an administrator re-enrolled only with the ``grant``
        code they were given (reasons ``grant-required``, ``grant-invalid``, ``grant-expired``)."""
        self._may_register(caller)
        person = self.person(caller)

        def start(conn: Any) -> dict[str, Any]:
            db_.lock_person(conn, person)
            existing = db_.passkeys_of(conn, person)
            if existing:
                raise RegistrationRefused(
                    "assertion-required", "You have a passkey: adding another needs an assertion of it."
                )
            reason, digest = grant_check(conn, person, grant, self._clock())
            if reason is not None:
                raise RegistrationRefused(reason, _GRANT_MESSAGES[reason])
            return self._start(conn, caller, person, existing, "grant" if digest else "first", None, digest)

        return dict(self._in(db, start))

    def addition_options(self, caller: Caller, replaces: str | None = None, db: Any = None) -> dict[str, Any]:
        """Options for one more passkey of a person who holds one, or for a replacement of
        ``replaces`` (one of theirs, removed when the new one is registered, in the same
        transaction). Its procedure (``passkeys.addOptions``) is served with
        ``approval="webauthn"``: the server has checked a fresh assertion of a current passkey
        of the same person, for this call, before this runs."""
        self._may_register(caller)
        person = self.person(caller)
        config = self.config

        def start(conn: Any) -> dict[str, Any]:
            db_.lock_person(conn, person)
            existing = db_.passkeys_of(conn, person)
            if not existing:
                raise RegistrationRefused("unknown-passkey", "You have no passkey to add to or replace.")
            if replaces is not None and replaces not in {p.credential_id for p in existing}:
                raise RegistrationRefused("unknown-passkey", "You have no passkey with this id.")
            if replaces is None and len(existing) >= config.max_per_person:
                raise RegistrationRefused("limit", f"You hold {config.max_per_person} passkeys, the most allowed.")
            purpose: db_.Purpose = "add" if replaces is None else "replace"
            return self._start(conn, caller, person, existing, purpose, replaces, None)

        return dict(self._in(db, start))

    def _may_register(self, caller: Caller) -> None:
        if not self.config.may_register(caller):
            raise RegistrationRefused("not-allowed", "This caller may not register a passkey.")

    def _start(
        self,
        conn: Any,
        caller: Caller,
        person: str,
        existing: list[db_.StoredPasskey],
        purpose: db_.Purpose,
        replaces: str | None,
        grant_digest: str | None,
    ) -> dict[str, Any]:
        config = self.config
        handle = existing[0].user_handle if existing else bytes_to_base64url(secrets.token_bytes(32))
        challenge = secrets.token_bytes(32)
        db_.forget_expired_ceremonies(conn, self._clock())
        db_.save_pending(
            conn,
            db_.PendingRegistration(
                person,
                bytes_to_base64url(challenge),
                handle,
                self._clock() + config.ceremony_seconds,
                purpose,
                replaces,
                grant_digest,
            ),
        )
        options = generate_registration_options(
            rp_id=config.rp_id,
            rp_name=config.rp_name,
            user_name=config.user_name(caller),
            user_id=base64url_to_bytes(handle),
            challenge=challenge,
            timeout=config.timeout_ms,
            authenticator_selection=AuthenticatorSelectionCriteria(
                resident_key=ResidentKeyRequirement.PREFERRED,
                user_verification=UserVerificationRequirement(config.user_verification),
            ),
            # The one being replaced is not excluded: the same authenticator may make its successor.
            exclude_credentials=[
                PublicKeyCredentialDescriptor(id=base64url_to_bytes(p.credential_id))
                for p in existing
                if p.credential_id != replaces
            ],
        )
        return dict(options_to_json_dict(options))

    def register(self, caller: Caller, credential: Mapping[str, Any] | str, db: Any = None) -> RegisteredPasskey:
        """Verify the authenticator's answer to the person's pending ceremony and store the
        credential. Raises :class:`RegistrationRefused` (``.reason``) when it is not acceptable.
        In a transaction of its own, a refusal uses the pending challenge up too; in ``db`` (a
        procedure's), the caller's transaction decides."""
        self._may_register(caller)
        person = self.person(caller)
        config = self.config
        try:
            parsed = parse_registration_credential_json(dict(credential) if isinstance(credential, Mapping) else credential)
        except Exception:
            raise RegistrationRefused("malformed", "The passkey registration is not a WebAuthn credential.") from None

        def finish(conn: Any) -> RegisteredPasskey:
            pending = db_.take_pending(conn, person)
            if pending is None:
                raise RegistrationRefused("no-ceremony", "No passkey registration is pending; start again.")
            if pending.expires_at < self._clock():
                raise RegistrationRefused("expired", "The passkey registration expired; start again.")
            db_.lock_person(conn, person)
            held = [p.credential_id for p in db_.passkeys_of(conn, person)]
            self._still_allowed(conn, pending, held)
            reason = registration_precheck(parsed, base64url_to_bytes(pending.challenge), config)
            if reason is not None:
                raise RegistrationRefused(reason, f"The passkey registration was refused ({reason}).")
            try:
                verified = verify_registration_response(
                    credential=parsed,
                    expected_challenge=base64url_to_bytes(pending.challenge),
                    expected_rp_id=config.rp_id,
                    expected_origin=origins_for(config, parsed.response.client_data_json),
                    require_user_verification=config.user_verification == "required",
                )
            except InvalidRegistrationResponse as exc:
                log.info("passkey registration refused for %s: %s", person, exc)
                raise RegistrationRefused("rejected", "The passkey registration was refused.") from None
            credential_id = bytes_to_base64url(verified.credential_id)
            if db_.passkey_by_id(conn, credential_id) is not None:
                raise RegistrationRefused("already-registered", "This passkey is registered already.")
            transports = tuple(str(t.value) for t in (parsed.response.transports or []))
            stored = db_.StoredPasskey(
                credential_id=credential_id,
                person=person,
                public_key=bytes_to_base64url(verified.credential_public_key),
                sign_count=int(verified.sign_count),
                transports=transports,
                user_handle=pending.user_handle,
                created_at=_now_iso(datetime.fromtimestamp(self._clock(), UTC)),
                name=default_name(transports, _attachment(credential), len(held) + (pending.replaces is None)),
            )
            if pending.purpose == "grant" and not db_.spend_grant(conn, person, pending.grant_digest or ""):
                raise RegistrationRefused("grant-invalid", "This enrolment grant was used or replaced.")
            db_.insert_passkey(conn, stored)
            if pending.replaces is not None:
                db_.delete_passkey(conn, person, pending.replaces)
            return RegisteredPasskey(stored.credential_id, stored.created_at, stored.transports, stored.name)

        if db is not None:
            return finish(db)
        # A refusal still uses the challenge up: commit its removal, then raise.
        outcome: list[RegisteredPasskey | RegistrationRefused] = []

        def attempt(conn: Any) -> None:
            try:
                outcome.append(finish(conn))
            except RegistrationRefused as refused:
                outcome.append(refused)

        self.store.run(attempt)
        if isinstance(outcome[0], RegistrationRefused):
            raise outcome[0]
        return outcome[0]

    def _still_allowed(self, conn: Any, pending: db_.PendingRegistration, held: list[str]) -> None:
        """What the ceremony's start allowed still holds at its end (an administrator may have
        reset the person, another tab may have registered or removed one meanwhile)."""
        person, purpose = pending.person, pending.purpose
        if purpose in ("first", "grant"):
            if held:
                raise RegistrationRefused("assertion-required", "You have a passkey: adding another needs an assertion of it.")
            grant = db_.grant_of(conn, person)
            if purpose == "first" and grant is not None:
                raise RegistrationRefused("grant-required", _GRANT_MESSAGES["grant-required"])
            if purpose == "grant":
                if grant is None or grant.digest != pending.grant_digest:
                    raise RegistrationRefused("grant-invalid", "This enrolment grant was used or replaced.")
                if grant.expires_at <= self._clock():
                    raise RegistrationRefused("grant-expired", _GRANT_MESSAGES["grant-expired"])
        elif purpose == "add":
            if not held:
                raise RegistrationRefused("unknown-passkey", "You have no passkey to add to any more.")
            if len(held) >= self.config.max_per_person:
                raise RegistrationRefused("limit", f"You hold {self.config.max_per_person} passkeys, the most allowed.")
        elif pending.replaces not in held:
            raise RegistrationRefused("unknown-passkey", "The passkey to replace is gone.")

    # ------------------------------------------------------------------ assertions

    def authentication_options(self, caller: Caller, challenge: bytes, db: Any = None) -> dict[str, Any]:
        """Options (JSON) for ``navigator.credentials.get()`` over a server-minted ``challenge``,
        limited to the person's own credentials."""
        person = self.person(caller)
        found = self._in(db, lambda conn: db_.passkeys_of(conn, person))
        options = generate_authentication_options(
            rp_id=self.config.rp_id,
            challenge=bytes(challenge),
            timeout=self.config.timeout_ms,
            allow_credentials=[
                PublicKeyCredentialDescriptor(
                    id=base64url_to_bytes(p.credential_id), transports=_transports(p.transports)
                )
                for p in found
            ],
            user_verification=UserVerificationRequirement(self.config.user_verification),
        )
        return dict(options_to_json_dict(options))

    def verify_assertion(
        self, caller: Caller, challenge: bytes, assertion: Mapping[str, Any] | str, db: Any = None
    ) -> AssertionReason | None:
        """``None`` when ``assertion`` (the JSON of ``navigator.credentials.get()``) proves that the
        caller's person approved ``challenge`` with their registered authenticator, on one of the
        app's origins; else why not. The credential's sign counter moves forward in ``db`` (the
        call's transaction) or in a transaction of its own."""
        config = self.config
        try:
            parsed = parse_authentication_credential_json(
                dict(assertion) if isinstance(assertion, Mapping) else assertion
            )
        except Exception:
            return "malformed"
        credential_id = parsed.id if isinstance(parsed.id, str) else ""
        if credential_id_bytes(credential_id) is None or bytes_to_base64url(parsed.raw_id) != credential_id:
            return "malformed"
        precheck = assertion_precheck(parsed, bytes(challenge), config)
        if precheck is not None:
            return precheck
        person = self.person(caller)

        def check(conn: Any) -> AssertionReason | None:
            stored = db_.passkey_by_id(conn, credential_id)
            if stored is None:
                return "unknown-credential"
            if stored.person != person:
                return "foreign-credential"
            try:
                verified = verify_authentication_response(
                    credential=parsed,
                    expected_challenge=bytes(challenge),
                    expected_rp_id=config.rp_id,
                    expected_origin=origins_for(config, parsed.response.client_data_json),
                    credential_public_key=base64url_to_bytes(stored.public_key),
                    credential_current_sign_count=stored.sign_count,
                    require_user_verification=config.user_verification == "required",
                )
            except InvalidAuthenticationResponse as exc:
                text = str(exc)
                log.info("assertion refused for %s: %s", person, text)
                return "counter" if "sign count" in text else "signature"
            except Exception:
                log.info("assertion refused for %s: unreadable public key or signature", person, exc_info=True)
                return "signature"
            used_at = _now_iso(datetime.fromtimestamp(self._clock(), UTC))
            if not db_.advance_counter(conn, credential_id, stored.sign_count, verified.new_sign_count, used_at):
                return "counter"  # the same counter was spent concurrently
            return None

        result: AssertionReason | None = self._in(db, check)
        return result

    def request_options(self, caller: Caller, db: Any = None) -> dict[str, Any]:
        """What the page needs besides the challenge for ``navigator.credentials.get()``: the RP
        id, the person's credentials, user verification and timeout (no challenge)."""
        options = self.authentication_options(caller, b"\x00" * 16, db)
        options.pop("challenge", None)
        return options

    def verify_presence(self, caller: Caller, challenge: Any, payload: Mapping[str, Any] | None, db: Any = None) -> str | None:
        """The procedure server's ``verify_presence`` hook: ``payload`` (the approval's
        ``webauthn`` member) must be an assertion by the caller's person over ``challenge.nonce``
        (the raw bytes the server minted). ``None`` accepts; a refusal's reason is
        ``passkey-<reason>`` (:data:`AssertionReason`), or ``presence-required`` without one."""
        if payload is None:
            return "presence-required"
        nonce = getattr(challenge, "nonce", None)
        if not isinstance(nonce, bytes | bytearray) or not nonce:
            return "presence-required"
        reason = self.verify_assertion(caller, bytes(nonce), payload, db)
        return None if reason is None else f"passkey-{reason}"


def _transports(names: tuple[str, ...]) -> list[AuthenticatorTransport] | None:
    known = []
    for name in names:
        try:
            known.append(AuthenticatorTransport(name))
        except ValueError:
            continue
    return known or None


__all__ = ["Passkeys", "RegisteredPasskey"]

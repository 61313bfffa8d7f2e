"""Proof of a person: WebAuthn passkeys registered per person and assertions verified by the server
(``pip install 'agentsurface[server]'``, which brings the ``webauthn`` package).

An app that wants a person's authenticator (not just the page's word) behind a destructive
procedure configures :class:`Passkeys` on the invocation store, serves its two registration
procedures beside its own, and verifies the approval's assertion with :meth:`Passkeys.verify_assertion`::

    passkeys = Passkeys(store, PasskeyConfig(rp_id="app.example", rp_name="Devices",
                                             origins=("https://app.example",)))
    server = ProcedureServer([*my_procedures, *passkeys.procedures()], authenticate=..., store=store)

- Registration (the page's ``agentsurface.browser.passkeys.register_passkey``):
  ``passkeys.registrationOptions`` mints a challenge for the calling person and answers the options
  for ``navigator.credentials.create()``; ``passkeys.register`` verifies the authenticator's answer
  (challenge, origin, RP id, user presence, user verification when required) and stores the
  credential. Both are procedures: authenticated, rate limited and audited like every call.
  ``may_register`` (default: anyone authenticated) says who may. Only a person's first passkey
  is registered this way: once they hold one, someone holding the person's token cannot add one
  of their own.
- Management (:mod:`.manage`): the person lists (``passkeys.list``) and renames
  (``passkeys.rename``) their passkeys; removing one (``passkeys.remove``), adding one beside
  theirs or replacing one (``passkeys.addOptions``, then ``passkeys.register``) needs a fresh
  assertion of a current passkey of theirs, over a challenge bound to that call. A person who
  lost every passkey is re-enrolled by an administrator (``passkeys.reenrol``, :mod:`.enrolment`).
- Assertion (``assert_presence`` in the page): :meth:`Passkeys.authentication_options` gives the
  page what ``navigator.credentials.get()`` needs for a challenge the server minted;
  :meth:`Passkeys.verify_assertion` checks the answer with ``webauthn.verify_authentication_response``
  (signature, origin, RP id, user present, user verified when required, counter, challenge bytes)
  and that the credential is this person's, and moves its sign counter forward. It returns ``None``
  or a typed reason (:data:`AssertionReason`).

What a passkey proves: a person with this authenticator touched it (and unlocked it, with user
verification) for this exact challenge on this origin. What it does not: that they read what they
approved.

Its parts: :class:`Passkeys`, the ceremonies and the verification (:mod:`.service`); the relying
party's configuration and origin rule (:mod:`.config`); the checks over parsed WebAuthn data and
their typed reasons (:mod:`.checks`); the served procedures (:mod:`.procedures`); and the tables
(:mod:`.tables`).
"""

from __future__ import annotations

from .checks import (
    AssertionReason,
    ManagementReason,
    ManagementRefused,
    RegistrationReason,
    RegistrationRefused,
)
from .config import PasskeyConfig, PasskeyError
from .enrolment import Reenrolment
from .manage import PasskeyListing
from .names import MAX_NAME, clean_name
from .procedures import (
    ADD_OPTIONS,
    ASSERTION_OPTIONS,
    LIST,
    PROCEDURE_ADD_OPTIONS,
    PROCEDURE_ASSERTION_OPTIONS,
    PROCEDURE_LIST,
    PROCEDURE_OPTIONS,
    PROCEDURE_REENROL,
    PROCEDURE_REGISTER,
    PROCEDURE_REMOVE,
    PROCEDURE_RENAME,
    REENROL,
    REGISTER,
    REGISTRATION_OPTIONS,
    REMOVE,
    RENAME,
    passkey_procedures,
)
from .service import Passkeys, RegisteredPasskey

__all__ = [
    "ADD_OPTIONS",
    "ASSERTION_OPTIONS",
    "LIST",
    "MAX_NAME",
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
    "AssertionReason",
    "ManagementReason",
    "ManagementRefused",
    "PasskeyConfig",
    "PasskeyError",
    "PasskeyListing",
    "Passkeys",
    "Reenrolment",
    "RegisteredPasskey",
    "RegistrationReason",
    "RegistrationRefused",
    "clean_name",
    "passkey_procedures",
]

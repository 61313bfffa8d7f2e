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
  ``may_register`` (default: anyone authenticated) says who may; a person holds at most
  ``max_per_person`` passkeys, so someone holding the person's token cannot add one of their own
  once the person has registered theirs.
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

from .checks import AssertionReason, RegistrationReason, RegistrationRefused
from .config import PasskeyConfig, PasskeyError
from .procedures import (
    ASSERTION_OPTIONS,
    PROCEDURE_ASSERTION_OPTIONS,
    PROCEDURE_OPTIONS,
    PROCEDURE_REGISTER,
    REGISTER,
    REGISTRATION_OPTIONS,
    passkey_procedures,
)
from .service import Passkeys, RegisteredPasskey

__all__ = [
    "ASSERTION_OPTIONS",
    "PROCEDURE_ASSERTION_OPTIONS",
    "PROCEDURE_OPTIONS",
    "PROCEDURE_REGISTER",
    "REGISTER",
    "REGISTRATION_OPTIONS",
    "AssertionReason",
    "PasskeyConfig",
    "PasskeyError",
    "Passkeys",
    "RegisteredPasskey",
    "RegistrationReason",
    "RegistrationRefused",
    "passkey_procedures",
]

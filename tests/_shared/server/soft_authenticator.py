"""A software WebAuthn authenticator for CPython tests: real P-256 keys (``cryptography``), real
CBOR (``cbor2``), real signatures over real authenticator data and client data, as a browser
and a platform authenticator produce them (attestation ``none``). It lets the tests bend one
thing at a time (origin, flags, counter, challenge) that Chrome's virtual authenticator in the
e2e suite (e2e/test_passkeys.py) cannot be told to get wrong.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass, field
from typing import Any

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url

UP, UV, AT = 0x01, 0x04, 0x40


@dataclass
class SoftCredential:
    credential_id: bytes
    key: ec.EllipticCurvePrivateKey
    rp_id: str
    counter: int = 0

    def cose_public_key(self) -> bytes:
        numbers = self.key.public_key().public_numbers()
        return cbor2.dumps(
            {1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")}
        )


@dataclass
class SoftAuthenticator:
    origin: str
    credentials: list[SoftCredential] = field(default_factory=list)
    user_present: bool = True
    user_verified: bool = True
    counting: bool = True  # some authenticators (synced passkeys) always report 0

    def _flags(self, extra: int = 0) -> int:
        return (UP if self.user_present else 0) | (UV if self.user_verified else 0) | extra

    @staticmethod
    def _client_data(kind: str, challenge: str, origin: str) -> bytes:
        return json.dumps(
            {"type": kind, "challenge": challenge, "origin": origin, "crossOrigin": False}, separators=(",", ":")
        ).encode()

    def create(self, options: dict[str, Any], *, origin: str | None = None, rp_id: str | None = None) -> dict[str, Any]:
        """The JSON of ``navigator.credentials.create({publicKey: options})``."""
        rp = rp_id or options["rp"]["id"]
        credential = SoftCredential(secrets.token_bytes(32), ec.generate_private_key(ec.SECP256R1()), rp)
        self.credentials.append(credential)
        client_data = self._client_data("webauthn.create", options["challenge"], origin or self.origin)
        auth_data = (
            hashlib.sha256(rp.encode()).digest()
            + bytes([self._flags(AT)])
            + credential.counter.to_bytes(4, "big")
            + bytes(16)
            + len(credential.credential_id).to_bytes(2, "big")
            + credential.credential_id
            + credential.cose_public_key()
        )
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data})
        cid = bytes_to_base64url(credential.credential_id)
        return {
            "id": cid,
            "rawId": cid,
            "type": "public-key",
            "response": {
                "clientDataJSON": bytes_to_base64url(client_data),
                "attestationObject": bytes_to_base64url(attestation),
                "transports": ["internal"],
            },
            "clientExtensionResults": {},
            "authenticatorAttachment": "platform",
        }

    def get(
        self,
        options: dict[str, Any],
        *,
        origin: str | None = None,
        credential: SoftCredential | None = None,
        counter: int | None = None,
    ) -> dict[str, Any]:
        """The JSON of ``navigator.credentials.get({publicKey: options})``."""
        allowed = {base64url_to_bytes(c["id"]) for c in options.get("allowCredentials", [])}
        chosen = credential or next(
            (c for c in self.credentials if not allowed or c.credential_id in allowed), None
        )
        assert chosen is not None, "no credential of this authenticator is allowed"
        if counter is not None:
            chosen.counter = counter
        elif self.counting:
            chosen.counter += 1
        rp = options.get("rpId") or chosen.rp_id
        client_data = self._client_data("webauthn.get", options["challenge"], origin or self.origin)
        auth_data = hashlib.sha256(rp.encode()).digest() + bytes([self._flags()]) + chosen.counter.to_bytes(4, "big")
        signature = chosen.key.sign(auth_data + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256()))
        cid = bytes_to_base64url(chosen.credential_id)
        return {
            "id": cid,
            "rawId": cid,
            "type": "public-key",
            "response": {
                "clientDataJSON": bytes_to_base64url(client_data),
                "authenticatorData": bytes_to_base64url(auth_data),
                "signature": bytes_to_base64url(signature),
                "userHandle": None,
            },
            "clientExtensionResults": {},
            "authenticatorAttachment": "platform",
        }

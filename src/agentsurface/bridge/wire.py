"""The wire protocol between the page's bridge and the procedure server.

Both sides import this module, so they agree by construction on paths, the backend manifest's
shape, schema hashes, the call envelope and the typed error body. Pure Python: it runs in the
page (Pyodide) and on the server alike.

- ``GET  <base>/.well-known/agentsurface/procedures`` → the backend manifest
- ``POST <base>/procedures/<path>`` with ``{"invocationId", "input", "confirmation"?}``
  → ``{"ok": true, "invocationId", "output"}`` or ``{"ok": false, "invocationId"?, "error"}``
  (a CONFIRMATION_REQUIRED refusal of the server also carries ``"challenge"``)
- ``POST <base>/challenges/<path>`` with the same envelope → ``{"ok": true, "challenge"}``: the
  server's approval challenge for that exact call (the page's bridge asks it once the person
  approved, so the happy path has no refusal in it)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Final

from .. import ErrorPayload

# Not (yet) in the public API: the closed code set and its matrix, and the JSON value type.
from .._core.errors import ERROR_MATRIX, AgentSurfaceError, ErrorCode, Retry
from .._core.jsonvalue import JsonValue
from .._core.records import record

MANIFEST_PATH: Final = "/.well-known/agentsurface/procedures"
# What the authenticated caller may call: ``{"procedures": [ids]}`` (the page offers only those).
CALLABLE_PATH: Final = "/.well-known/agentsurface/callable"
PROCEDURES_PREFIX: Final = "/procedures/"
CHALLENGES_PREFIX: Final = "/challenges/"
MANIFEST_FORMAT: Final = "agentsurface/backend-manifest"
MANIFEST_VERSION: Final = 1
DOMAIN_PREFIX: Final = "domain:"

MAX_INVOCATION_ID = 256
MAX_CONFIRMATION_ID = 256

# Codes a server may answer with, and their HTTP statuses: ERROR_MATRIX's ``http_status``. The
# others (AMBIGUOUS_INSTANCE, STALE_CAPABILITY, ...) are about the page's live surface: a server
# sending one is misbehaving, and the bridge sanitizes it.
HTTP_STATUS: Final[Mapping[ErrorCode, int]] = {
    code: spec.http_status for code, spec in ERROR_MATRIX.items() if spec.http_status is not None
}
SERVER_CODES: Final[frozenset[ErrorCode]] = frozenset(HTTP_STATUS)

CHANNEL_HEADER = "X-AgentSurface-Channel"
"""The header a page's bridge may send to say who is acting (``agent`` for the page's agent, the
person's own buttons send none): a server can give the agent its own caller identity, budget and
invocation ids, so the agent never starves the person."""


def schema_hash(schema: Any) -> str:
    """``sha256:<hex>`` of a JSON Schema in canonical form (sorted keys, compact)."""
    text = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def procedure_path(procedure_id: str) -> str:
    """``domain:devices.disable`` → ``devices.disable``."""
    return procedure_id.removeprefix(DOMAIN_PREFIX)


# RFC 3986's unreserved characters: all that ``urllib.parse.quote(text, safe="")`` leaves as is.
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~")


def quote_segment(text: str) -> str:
    """``urllib.parse.quote(text, safe="")``: UTF-8, every byte but the unreserved ones as %XX.
    Written out because ``urllib.parse`` (with ``ipaddress``) is the largest module a page would
    otherwise compile from source on its way to its first tool (about 0.3 s in Chromium)."""
    return "".join(chr(byte) if byte in _UNRESERVED else f"%{byte:02X}" for byte in text.encode("utf-8"))


def call_url(base_url: str, procedure_id: str) -> str:
    # The path after ``domain:`` is opaque (it may hold '/', '?', '%'): encode all of it.
    return base_url.rstrip("/") + PROCEDURES_PREFIX + quote_segment(procedure_path(procedure_id))


def challenge_url(base_url: str, procedure_id: str) -> str:
    """Where the bridge asks for the server's approval challenge for one exact call (same envelope)."""
    return base_url.rstrip("/") + CHALLENGES_PREFIX + quote_segment(procedure_path(procedure_id))


def manifest_url(base_url: str) -> str:
    return base_url.rstrip("/") + MANIFEST_PATH


@record
class ServedProcedureInfo:
    """What the backend manifest says about one procedure."""

    id: str
    effect: str
    input_schema_hash: str
    output_schema_hash: str | None
    requires_confirmation: bool

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "effect": self.effect,
            "inputSchemaHash": self.input_schema_hash,
            "outputSchemaHash": self.output_schema_hash,
            "requiresConfirmation": self.requires_confirmation,
        }


class ManifestFormatError(AgentSurfaceError, ValueError):
    """A backend manifest that is not in the expected format."""


def manifest_json(procedures: list[ServedProcedureInfo]) -> dict[str, JsonValue]:
    return {
        "format": MANIFEST_FORMAT,
        "version": MANIFEST_VERSION,
        "procedures": {p.id: p.to_json() for p in sorted(procedures, key=lambda p: p.id)},
    }


def parse_manifest(value: Any) -> dict[str, ServedProcedureInfo]:
    """The procedures of a backend manifest, or ManifestFormatError saying what is wrong."""
    if not isinstance(value, Mapping):
        raise ManifestFormatError("the backend manifest is not a JSON object")
    if value.get("format") != MANIFEST_FORMAT or value.get("version") != MANIFEST_VERSION:
        raise ManifestFormatError(
            f"unsupported backend manifest format {value.get('format')!r} version {value.get('version')!r}"
        )
    procedures = value.get("procedures")
    if not isinstance(procedures, Mapping):
        raise ManifestFormatError("the backend manifest has no 'procedures' object")
    out: dict[str, ServedProcedureInfo] = {}
    for ident, entry in procedures.items():
        if not isinstance(ident, str) or not ident.startswith(DOMAIN_PREFIX) or not isinstance(entry, Mapping):
            raise ManifestFormatError(f"backend manifest entry {ident!r} is malformed")
        effect, input_hash = entry.get("effect"), entry.get("inputSchemaHash")
        output_hash, approval = entry.get("outputSchemaHash"), entry.get("requiresConfirmation", False)
        if (
            not isinstance(effect, str)
            or not isinstance(input_hash, str)
            or not (output_hash is None or isinstance(output_hash, str))
            or not isinstance(approval, bool)
        ):
            raise ManifestFormatError(f"backend manifest entry {ident!r} is malformed")
        out[ident] = ServedProcedureInfo(ident, effect, input_hash, output_hash, approval)
    return out


def callable_url(base_url: str) -> str:
    return base_url.rstrip("/") + CALLABLE_PATH


def parse_callable(value: Any) -> frozenset[str]:
    """The procedure ids of a ``CALLABLE_PATH`` answer, or ManifestFormatError."""
    procedures = value.get("procedures") if isinstance(value, Mapping) else None
    if not isinstance(procedures, list) or not all(isinstance(p, str) for p in procedures):
        raise ManifestFormatError("the callable list has no 'procedures' list of ids")
    return frozenset(procedures)


def error_body(error: ErrorPayload, invocation_id: str | None = None) -> dict[str, JsonValue]:
    body: dict[str, JsonValue] = {"ok": False, "error": error.to_json()}
    if invocation_id is not None:
        body["invocationId"] = invocation_id
    return body


def http_status(error: ErrorPayload) -> int:
    if error.code == "EXECUTION_FAILED" and (error.details or {}).get("transient") is True:
        return 503
    return HTTP_STATUS.get(error.code, 500)


def allowed_retry(code: ErrorCode, retry: object) -> Retry:
    """``retry`` if the matrix allows it for ``code``, else the code's default."""
    spec = ERROR_MATRIX[code]
    for allowed in spec.retry:
        if retry == allowed:
            return allowed
    return spec.retry[0]

"""The names people give their passkeys: plain text, one line, bounded, with nothing that could
disguise it (control characters, bidirectional overrides, zero-width and other format
characters are dropped), and the readable name a new passkey gets before the person renames it."""

from __future__ import annotations

import unicodedata

MAX_NAME = 64  # characters of a cleaned name

# Control (Cc), format (Cf: bidi overrides and isolates, zero-width joiners, the BOM), line and
# paragraph separators, surrogates and private use: none belongs in a one-line label.
_DROPPED = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def clean_name(text: str) -> str:
    """``text`` as a passkey's name: unwanted characters dropped, runs of whitespace made one
    space, trimmed. May return ``""`` (the caller refuses an empty name) or a name longer than
    :data:`MAX_NAME` (the caller refuses it too: nothing is cut silently)."""
    kept = "".join(" " if ch.isspace() else ch for ch in text if unicodedata.category(ch) not in _DROPPED or ch.isspace())
    return " ".join(kept.split())


def default_name(transports: tuple[str, ...], attachment: str | None, number: int) -> str:
    """What a new passkey is called until the person renames it: what kind of authenticator it is
    (as the browser reported it), and its number among the person's passkeys."""
    if "internal" in transports or attachment == "platform":
        kind = "This device's passkey"
    elif "hybrid" in transports:
        kind = "Phone passkey"
    elif any(t in transports for t in ("usb", "nfc", "ble", "smart-card")):
        kind = "Security key"
    else:
        kind = "Passkey"
    return f"{kind} {number}"


__all__ = ["MAX_NAME", "clean_name", "default_name"]

"""The bridge's own typed errors: what a call answers when the page could not (it went away,
the call was cancelled, the browser's client refused it), in agentsurface's error shape."""

from __future__ import annotations

from typing import Any

from .._core.errors import AgentSurfaceError, error


class PageGone(AgentSurfaceError):
    """The page navigated, reloaded, crashed or closed while a call was running."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def page_gone(reason: str) -> dict[str, Any]:
    return error(
        "COMPONENT_UNMOUNTED",
        f"the page went away while the call ran ({reason}); list the tools again before retrying",
        phase="execution",
    ).to_json()


def waited_too_long(seconds: float) -> dict[str, Any]:
    """The call ran past the bridge's bound (``--wait-timeout``): it was cancelled in the page."""
    return error(
        "TIMEOUT",
        f"no answer within {seconds:g} s (a consequential call waits for the person's approval): the call "
        "was cancelled in the page and its confirmation closed, so a later approval applies nothing",
        "no",
        timeoutMs=round(seconds * 1000),
        handler="unknown",
    ).to_json()


def invalid_arguments(kind: str) -> dict[str, Any]:
    return error(
        "INVALID_INPUT",
        f"the tool's arguments must be a JSON object, not {kind}",
        issues=[{"path": "", "message": f"expected an object, got {kind}"}],
    ).to_json()


def arguments_too_large(size: int, limit: int) -> dict[str, Any]:
    return error(
        "INVALID_INPUT",
        f"the tool's arguments are {size} bytes of JSON; at most {limit} are accepted",
        issues=[{"path": "", "message": f"at most {limit} bytes"}],
    ).to_json()


def rejected(name: str, message: str) -> dict[str, Any]:
    """The browser's client rejected the call (no tool result came back)."""
    if name == "AbortError":
        return error("CANCELLED", "the call was cancelled", "no").to_json()
    if message.startswith("Input validation error"):  # the polyfill validates before execute
        return error(
            "INVALID_INPUT",
            f"the browser's WebMCP client refused the input: {message}",
            issues=[{"path": "", "message": message}],
        ).to_json()
    if name == "NotFoundError":
        return error("CAPABILITY_NOT_FOUND", f"the page no longer offers this tool: {message}").to_json()
    return error(
        "EXECUTION_FAILED", f"the browser's WebMCP client rejected the call ({name}): {message}", reason=name
    ).to_json()

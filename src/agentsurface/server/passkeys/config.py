"""The relying party of the app's passkeys: :class:`PasskeyConfig`, checked at construction, and
its origin rule (:func:`origin_allowed`: exact origins, or any port of ``localhost`` in development)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, TypeAlias

from ..._core.errors import AgentSurfaceError
from ..._core.records import record
from ..procedures import Caller

UserVerification: TypeAlias = Literal["required", "preferred", "discouraged"]


class PasskeyError(AgentSurfaceError, ValueError):
    """A passkey configuration the library cannot use (raised at construction)."""


def _default_person(caller: Caller) -> str:
    return caller.scope


def _default_name(caller: Caller) -> str:
    return caller.id


def _anyone(_caller: Caller) -> bool:
    return True


def _same_tenant(admin: Caller, name: str) -> str | None:
    """The default person an administrator names: ``name`` as a caller id of their own tenant
    (the default ``person`` is the caller's scope)."""
    return f"{admin.tenant or ''}\x1f{name}"


@record
class PasskeyConfig:
    """The relying party: ``rp_id`` (the site's registrable domain, ``localhost`` in development),
    ``rp_name`` (shown by the authenticator), the exact ``origins`` pages run on
    (``https://app.example``; ``http://localhost:8000`` in development, or ``http://localhost:*``
    for any port of this machine: a port wildcard is accepted for ``localhost`` only).

    ``user_verification``: ``"required"`` refuses assertions without UV (a PIN or biometric, not
    only a touch); ``"preferred"`` asks for it without requiring it. ``person(caller)`` names whose
    passkeys a caller uses (default: the caller's scope; an app whose agent is its own caller maps
    it to its person); ``user_name(caller)`` is what the authenticator shows.

    Managing them: ``may_register(caller)`` and ``may_manage(caller)`` (list, rename, remove,
    replace) say who may (an app's agent should not: pass a function that says no to it).
    ``admin_permission`` is the permission the administrator's re-enrolment
    (``passkeys.reenrol``) requires; ``person_named(admin, name)`` turns the name the
    administrator gives into a person (``None``: nobody this administrator manages; default:
    ``name`` as a caller id in the administrator's tenant); ``grant_seconds`` is how long the
    enrolment grant it issues stays good.
    """

    rp_id: str
    rp_name: str
    origins: tuple[str, ...]
    user_verification: UserVerification = "preferred"
    person: Callable[[Caller], str] = _default_person
    user_name: Callable[[Caller], str] = _default_name
    may_register: Callable[[Caller], bool] = _anyone
    max_per_person: int = 1
    ceremony_seconds: float = 300.0
    timeout_ms: int = 120_000
    may_manage: Callable[[Caller], bool] = _anyone
    admin_permission: str = "passkeys.admin"
    person_named: Callable[[Caller, str], str | None] = _same_tenant
    grant_seconds: float = 900.0

    def __post_init__(self) -> None:
        if not isinstance(self.rp_id, str) or not self.rp_id or "/" in self.rp_id or ":" in self.rp_id:
            raise PasskeyError("rp_id is a host name without scheme or port, e.g. 'app.example' or 'localhost'")
        if not isinstance(self.rp_name, str) or not self.rp_name:
            raise PasskeyError("rp_name is the name the authenticator shows, a non-empty string")
        origins = (self.origins,) if isinstance(self.origins, str) else tuple(self.origins)
        if not origins or any(not isinstance(o, str) or "://" not in o or o.endswith("/") for o in origins):
            raise PasskeyError("origins are exact page origins like 'https://app.example' (no path, no slash)")
        if any(o.endswith(":*") and not o.startswith(("http://localhost:", "https://localhost:")) for o in origins):
            raise PasskeyError("a port wildcard (':*') is for http://localhost:* in development only")
        if any("*" in o.removesuffix(":*") for o in origins):
            raise PasskeyError("origins are exact; the only pattern is a port wildcard, http://localhost:*")
        object.__setattr__(self, "origins", origins)
        if self.user_verification not in ("required", "preferred", "discouraged"):
            raise PasskeyError("user_verification is 'required', 'preferred' or 'discouraged'")
        if not isinstance(self.max_per_person, int) or self.max_per_person < 1:
            raise PasskeyError("max_per_person is a positive integer")
        if not isinstance(self.admin_permission, str) or not self.admin_permission:
            raise PasskeyError("admin_permission is the permission the administrator's re-enrolment requires")
        if not isinstance(self.grant_seconds, int | float) or not 0 < self.grant_seconds <= 86_400:
            raise PasskeyError("grant_seconds is how long an enrolment grant stays good: more than 0, at most a day")


def origin_allowed(config: PasskeyConfig, origin: str) -> bool:
    """Whether a page at ``origin`` may use the app's passkeys: equal to a configured origin, or,
    for a configured ``http://localhost:*``, that origin with a port number in place of the ``*``
    (a pattern matches port numbers only, never the literal ``*``)."""
    for allowed in config.origins:
        if allowed.endswith(":*"):
            prefix = allowed[:-1]
            port = origin[len(prefix):] if origin.startswith(prefix) else ""
            if port.isascii() and port.isdigit() and not port.startswith("0") and int(port[:6]) <= 65535:
                return True
        elif allowed == origin:
            return True
    return False


__all__ = ["PasskeyConfig", "PasskeyError", "UserVerification", "origin_allowed"]

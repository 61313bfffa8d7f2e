"""Who is signed in: a session cookie set by POST /login (the app's own, not written for agents)."""

import secrets
from dataclasses import dataclass

from fastapi import Cookie, HTTPException


@dataclass(frozen=True)
class User:
    name: str
    password: str
    can_delete: bool


USERS = {
    "alice": User("alice", "wonderland", can_delete=True),
    "bob": User("bob", "builder", can_delete=False),
}
SESSIONS: dict[str, str] = {}  # session id -> user name


def sign_in(username: str, password: str) -> str | None:
    user = USERS.get(username)
    if user is None or not secrets.compare_digest(user.password, password):
        return None
    session = secrets.token_urlsafe(24)
    SESSIONS[session] = user.name
    return session


def current_user(session: str | None = Cookie(default=None)) -> User:
    name = SESSIONS.get(session or "")
    if name is None:
        raise HTTPException(401, "Sign in first.")
    return USERS[name]

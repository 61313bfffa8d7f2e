"""A small app for the passkey e2e tests: the library's procedure server with its passkey
procedures and an approval procedure that verifies a WebAuthn assertion over a challenge the
server minted, plus the repository's files (the test page and web/dist), on one origin served by
uvicorn at ``http://localhost:PORT`` (WebAuthn refuses IP addresses as relying party ids).

The approval procedures stand in for the server-minted challenges of the confirmation flow: a
challenge is minted per caller, used once, and its assertion verified by
:meth:`Passkeys.verify_assertion` in the call's own transaction, next to the effect it approves
(a row in ``approvals``).

``domain:e2e.stamp`` is a procedure of the confirmation flow itself (the relay's approval e2e
calls it through a page's ``BackendBridge``): served with ``approval=passkeys.level``, it needs a
server-minted challenge answered by the person's approval in the page, signed by their passkey
once they have one (the server's ``verify_presence``); each applied call is a row in ``stamps``.
"""

from __future__ import annotations

import secrets
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn
from scripts.serve import MIME_TYPES
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from agentsurface import ProcedureContract
from agentsurface.server import (
    Caller,
    CallRecord,
    ProcedureCall,
    ProcedureServer,
    open_store,
    precondition_failed,
    serve,
    server_config,
)
from agentsurface.server.passkeys import PasskeyConfig, Passkeys

ROOT = Path(__file__).resolve().parent.parent
TOKENS = {
    "tok-alice": Caller("alice", "acme", frozenset({"approve"})),
    "tok-alice-agent": Caller("alice~agent", "acme", frozenset({"approve"})),
    "tok-bob": Caller("bob", "acme", frozenset({"approve"})),
    "tok-admin": Caller("root", "acme", frozenset({"passkeys.admin"})),
}

APPROVAL_OPTIONS = ProcedureContract(
    id="domain:e2e.approvalOptions",
    description="Mint a challenge for the caller and the WebAuthn options to answer it.",
    effect="server-query",
)
STAMP_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"account": {"type": "string", "maxLength": 64}, "note": {"type": "string", "maxLength": 200}},
    "required": ["account", "note"],
    "additionalProperties": False,
}
STAMP = ProcedureContract(
    id="domain:e2e.stamp",
    description="Stamp the account with a note (needs the person's approval, and their passkey once they have one).",
    effect="server-mutation",
    input=STAMP_INPUT,
)
APPROVE = ProcedureContract(
    id="domain:e2e.approve",
    description="Apply one approved effect when the assertion answers the caller's challenge.",
    effect="server-mutation",
    input={
        "type": "object",
        "properties": {"challenge": {"type": "string", "maxLength": 64}, "webauthn": {"type": "object"}},
        "required": ["challenge", "webauthn"],
        "additionalProperties": False,
    },
)


def _tables(db: Any) -> None:
    db.execute("CREATE TABLE IF NOT EXISTS approvals (id INTEGER PRIMARY KEY, caller TEXT NOT NULL)")
    db.execute("CREATE TABLE IF NOT EXISTS stamps (id INTEGER PRIMARY KEY, caller TEXT NOT NULL, account TEXT, note TEXT)")


def person(caller: Caller) -> str:
    return f"{caller.tenant}\x1f{caller.id.removesuffix('~agent')}"


class Files(StaticFiles):
    def file_response(self, full_path: Any, stat_result: Any, scope: Scope, status_code: int = 200) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        media = MIME_TYPES.get(Path(str(full_path)).suffix.lower())
        if media is not None:
            response.headers["Content-Type"] = media
        return response


@dataclass
class Minted:
    scope: str
    nonce: bytes


class PasskeyApp:
    def __init__(self, folder: Path, *, user_verification: str = "preferred", max_per_person: int = 1) -> None:
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._socket.getsockname()[1])
        self.url = f"http://localhost:{self.port}"
        self.store = open_store(
            f"sqlite:///{folder}/passkeys.sqlite3",
            setup=_tables,
        )
        self.config = PasskeyConfig(
            rp_id="localhost",
            rp_name="agentsurface e2e",
            origins=(self.url,),
            user_verification=user_verification,  # type: ignore[arg-type]
            person=person,
            may_register=lambda caller: not caller.id.endswith("~agent"),
            may_manage=lambda caller: not caller.id.endswith("~agent"),
            max_per_person=max_per_person,
        )
        self.passkeys = Passkeys(self.store, self.config)
        self.minted: dict[str, Minted] = {}
        self.audited: list[CallRecord] = []
        self._lock = threading.Lock()
        procedures = ProcedureServer(
            [
                *self.passkeys.procedures(),
                serve(APPROVAL_OPTIONS, self._options, permissions={"approve"}),
                serve(APPROVE, self._approve, permissions={"approve"}),
                serve(STAMP, self._stamp, permissions={"approve"}, approval=self.passkeys.level),
            ],
            authenticate=self._authenticate,
            store=self.store,
            verify_presence=self.passkeys.verify_presence,
            audit=lambda record, _db: self.audited.append(record),
        )
        app = Starlette(routes=[procedures.mount("/api/agent"), Mount("/", Files(directory=ROOT))])
        self._server = uvicorn.Server(server_config(app, log_level="warning", access_log=False, lifespan="off"))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the passkey e2e app did not start")
            time.sleep(0.01)

    @staticmethod
    def _authenticate(request: Request) -> Caller | None:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        return TOKENS.get(token) if scheme == "Bearer" else None

    def mint(self, caller: Caller, db: Any = None) -> tuple[str, bytes, dict[str, Any]]:
        """A challenge for ``caller``: its id, nonce, and the options for the page."""
        ident, nonce = f"chl_{secrets.token_hex(8)}", secrets.token_bytes(32)
        with self._lock:
            self.minted[ident] = Minted(caller.scope, nonce)
        return ident, nonce, self.passkeys.authentication_options(caller, nonce, db)

    def _options(self, call: ProcedureCall, _value: Any) -> dict[str, Any]:
        ident, _nonce, options = self.mint(call.caller, call.db)
        return {"challenge": ident, "publicKey": options}

    def _approve(self, call: ProcedureCall, value: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            minted = self.minted.get(value["challenge"])
        if minted is None or minted.scope != call.caller.scope:
            raise precondition_failed("unknown", "No such challenge for this caller.")
        reason = self.passkeys.verify_assertion(call.caller, minted.nonce, value["webauthn"], call.db)
        if reason is not None:
            raise precondition_failed(reason, f"The approval was refused ({reason}).")
        with self._lock:
            if self.minted.pop(value["challenge"], None) is None:  # used once
                raise precondition_failed("used", "This challenge was used already.")
        call.db.execute("INSERT INTO approvals (caller) VALUES (?)", (call.caller.id,))
        return {"approved": True}

    @staticmethod
    def _stamp(call: ProcedureCall, value: dict[str, Any]) -> dict[str, Any]:
        call.db.execute(
            "INSERT INTO stamps (caller, account, note) VALUES (?, ?, ?)", (call.caller.id, value["account"], value["note"])
        )
        return {"stamped": value["account"], "note": value["note"]}

    def stamps(self) -> list[tuple[str, str, str]]:
        """The applied stamps: (caller, account, note), in order."""
        return self.store.run(
            lambda db: [tuple(r) for r in db.execute("SELECT caller, account, note FROM stamps ORDER BY id").fetchall()]
        )

    def challenges(self) -> list[tuple[str, str, bool]]:
        """The challenges the server minted: (procedure, level, spent), oldest first."""
        return self.store.run(
            lambda db: [
                (str(r[0]), str(r[1]), bool(r[2]))
                for r in db.execute(
                    "SELECT procedure_id, level, spent_at IS NOT NULL FROM agentsurface_challenges ORDER BY expires_at, id"
                ).fetchall()
            ]
        )

    def approvals(self) -> int:
        return int(self.store.run(lambda db: db.execute("SELECT COUNT(*) FROM approvals").fetchone()[0]))

    def close(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._socket.close()
        self.store.close()  # type: ignore[attr-defined]

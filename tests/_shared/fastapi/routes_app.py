"""A FastAPI app not written for agents, some of whose routes are marked as procedures: the
integration's unit tests drive it in-process (httpx's ASGI transport), SQLite or PostgreSQL."""

from __future__ import annotations

import threading
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, FastAPI, Header, HTTPException, Path, Query, Response
from pydantic import BaseModel, Field

from agentsurface.fastapi import AgentProcedures, procedure
from agentsurface.server import Caller, InvocationStore, ServerLimits

TOKENS = {
    "tok-alice": ("alice", "acme", {"notes.write"}),
    "tok-bob": ("bob", "acme", set()),
    "tok-eve": ("eve", "evil", {"notes.write"}),
}


class Ledger:
    """The app's own state, and how many times each route body ran."""

    def __init__(self) -> None:
        self.notes: dict[int, dict[str, Any]] = {}
        self.runs: dict[str, int] = {}
        self.lock = threading.Lock()

    def ran(self, name: str) -> None:
        with self.lock:
            self.runs[name] = self.runs.get(name, 0) + 1


class NoteIn(BaseModel):
    text: str = Field(min_length=1, max_length=200)
    pinned: bool = False


class Note(BaseModel):
    id: int
    owner: str
    text: str
    pinned: bool


class Deleted(BaseModel):
    deleted: int


class Page(BaseModel):
    items: list[Note]
    total: int


def user(authorization: str | None = Header(None)) -> tuple[str, str, set[str]]:
    found = TOKENS.get((authorization or "").removeprefix("Bearer "))
    if found is None:
        raise HTTPException(401, "Sign in first.")
    return found


def agent_caller(who: tuple[str, str, set[str]] = Depends(user)) -> Caller:
    name, tenant, permissions = who
    return Caller(id=name, tenant=tenant, permissions=frozenset(permissions))


def note_or_404(note_id: Annotated[int, Path(gt=0)], who: tuple[str, str, set[str]] = Depends(user)) -> int:
    """A dependency that reads a path parameter: the route's input has it too."""
    return note_id


def make_app(store: InvocationStore, ledger: Ledger, **options: Any) -> FastAPI:
    app = FastAPI()
    router = APIRouter(prefix="/v1")

    @router.get("/notes")
    @procedure("domain:notes.list", effect="server-query")
    def list_notes(
        limit: Annotated[int, Query(ge=1, le=50)] = 10, who: tuple[str, str, set[str]] = Depends(user)
    ) -> Page:
        """List the caller's notes."""
        ledger.ran("list")
        mine = [Note(**n) for n in ledger.notes.values() if n["owner"] == who[0]]
        return Page(items=mine[:limit], total=len(mine))

    @router.post("/notes", status_code=201)
    @procedure("domain:notes.add", effect="server-mutation")
    async def add_note(body: NoteIn, who: tuple[str, str, set[str]] = Depends(user)) -> Note:
        """Add a note."""
        ledger.ran("add")
        if body.text == "boom":
            raise RuntimeError("the route crashed")
        if body.text == "<b>refused</b>":
            raise HTTPException(409, "<b>markup</b> from the app")
        with ledger.lock:
            ident = len(ledger.notes) + 1
            ledger.notes[ident] = {"id": ident, "owner": who[0], "text": body.text, "pinned": body.pinned}
        return Note(**ledger.notes[ident])

    @router.delete("/notes/{note_id}")
    @procedure("domain:notes.delete", effect="destructive", approval="confirm", permissions={"notes.write"})
    def delete_note(note_id: int = Depends(note_or_404), who: tuple[str, str, set[str]] = Depends(user)) -> Deleted:
        """Delete a note."""
        ledger.ran("delete")
        note = ledger.notes.get(note_id)
        if note is None or note["owner"] != who[0]:
            raise HTTPException(404, "No such note.")
        del ledger.notes[note_id]
        return Deleted(deleted=note_id)

    @router.put("/notes/{note_id}/tags")
    @procedure("domain:notes.tag", effect="server-mutation", output=None)
    def tag_note(note_id: int, tags: Annotated[list[str], Body(embed=True, max_length=5)], response: Response) -> None:
        """Tag a note (answers 204)."""
        ledger.ran("tag")
        response.status_code = 204

    @router.post("/notes/wipe")
    def wipe(who: tuple[str, str, set[str]] = Depends(user)) -> dict[str, int]:
        """Not marked: the person's own button only."""
        ledger.ran("wipe")
        count = len(ledger.notes)
        ledger.notes.clear()
        return {"wiped": count}

    @router.get("/docs/secret/{key}")
    def secret_doc(key: str) -> dict[str, str]:
        """Not marked, and declared before the marked catch-all below."""
        ledger.ran("secret")
        return {"secret": key}

    @router.get("/docs/{rest:path}")
    @procedure("domain:docs.read", effect="server-query", description="Read a document", output=None)
    def read_doc(rest: str) -> Any:
        ledger.ran("read")
        return {"path": rest}

    @router.post("/files/{name}")
    @procedure("domain:files.touch", effect="server-mutation", description="Touch a file", output=None)
    def touch_file(name: str) -> Any:
        ledger.ran("touch")
        return {"touched": name}

    @router.post("/files/{name}/purge")
    def purge_file(name: str) -> dict[str, str]:
        """Not marked: would purge everything under the name."""
        ledger.ran("purge")
        return {"purged": name}

    app.include_router(router)
    agent = AgentProcedures(
        app, caller=agent_caller, store=store, limits=options.pop("limits", ServerLimits(max_body_bytes=4096)), **options
    )
    app.mount("/api/agent", agent)
    app.state.agent = agent
    return app

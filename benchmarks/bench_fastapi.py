"""Figures for procedures served from a FastAPI app's routes, printed (never asserted).

    .venv/bin/python benchmarks/bench_fastapi.py [--calls 2000] [--rounds 3]

The same operation (add a note: a row in the app's SQLite table, an invocation record in the
store) served two ways, measured in one run, interleaved round by round:

- ``ProcedureServer``: ``serve(ADD, implementation)``, the implementation writing through ``call.db``;
- FastAPI: the app's own route marked with ``@procedure``, served by ``AgentProcedures`` in the
  same app (the route's dependencies: the caller's header, its own SQLite connection);
- and that route called directly (``POST /notes``, as the person's page does): what the route
  itself costs, so the pipeline's own share shows.

Each call is a fresh invocation through the whole pipeline; the client is httpx over real
loopback HTTP to uvicorn (one worker), one call at a time: p50/p95 per call, and the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from fastapi import Depends, FastAPI, Header, HTTPException
from pydantic import BaseModel, Field
from starlette.requests import Request

from agentsurface import ProcedureContract
from agentsurface.fastapi import AgentProcedures, procedure
from agentsurface.server import Caller, ProcedureCall, ProcedureServer, open_store, serve


class NoteIn(BaseModel):
    text: str = Field(max_length=200)


class Note(BaseModel):
    id: int
    text: str


ADD = ProcedureContract(id="domain:notes.add", effect="server-mutation", description="Add a note", input=NoteIn, output=Note)


def plain_server(folder: Path) -> ProcedureServer:
    def setup(db: Any) -> None:
        db.execute("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, owner TEXT, text TEXT)")

    def add(call: ProcedureCall, value: NoteIn) -> Note:
        cursor = call.db.execute("INSERT INTO notes (owner, text) VALUES (?, ?)", (call.caller.id, value.text))
        return Note(id=int(cursor.lastrowid or 0), text=value.text)

    def authenticate(request: Request) -> Caller | None:
        return Caller("alice") if request.headers.get("authorization") == "Bearer tok" else None

    store = open_store(f"sqlite:///{folder}/plain.sqlite3", setup=setup)
    return ProcedureServer([serve(ADD, add)], authenticate=authenticate, store=store)


def fastapi_app(folder: Path) -> FastAPI:
    path = str(folder / "app.sqlite3")
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, owner TEXT, text TEXT)")

    def user(authorization: str = Header()) -> str:
        if authorization != "Bearer tok":
            raise HTTPException(401)
        return "alice"

    def get_db() -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(path, check_same_thread=False)  # FastAPI runs sync dependencies in worker threads
        try:
            with db:
                yield db
        finally:
            db.close()

    app = FastAPI()

    @app.post("/notes")
    @procedure("domain:notes.add", effect="server-mutation", description="Add a note")
    def add_note(body: NoteIn, who: str = Depends(user), db: sqlite3.Connection = Depends(get_db)) -> Note:
        cursor = db.execute("INSERT INTO notes (owner, text) VALUES (?, ?)", (who, body.text))
        return Note(id=int(cursor.lastrowid or 0), text=body.text)

    def caller(who: str = Depends(user)) -> Caller:
        return Caller(who)

    store = open_store(f"sqlite:///{folder}/agent.sqlite3")
    app.mount("/api/agent", AgentProcedures(app, caller=caller, store=store))
    return app


class Served:
    def __init__(self, app: Any) -> None:
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(5)


async def timed_calls(url: str, path: str, calls: int, tag: str, direct: bool = False) -> list[float]:
    times: list[float] = []
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": "Bearer tok"}) as client:
        for i in range(calls):
            body: Any = {"invocationId": f"{tag}-{i}", "input": {"text": f"note {i}"}}
            if direct:
                body = body["input"]
            started = time.perf_counter()
            answer = await client.post(path, json=body)
            times.append((time.perf_counter() - started) * 1000)
            assert answer.status_code == 200, answer.text
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        plain, routed = Served(plain_server(folder)), Served(fastapi_app(folder))
        path = "/procedures/notes.add"
        results: dict[str, list[float]] = {"ProcedureServer": [], "FastAPI route": [], "the route, direct": []}
        try:
            for r in range(args.rounds):
                results["ProcedureServer"] += asyncio.run(timed_calls(plain.url, path, args.calls, f"p{r}"))
                results["FastAPI route"] += asyncio.run(timed_calls(routed.url, "/api/agent" + path, args.calls, f"f{r}"))
                results["the route, direct"] += asyncio.run(timed_calls(routed.url, "/notes", args.calls, "", direct=True))
        finally:
            plain.stop()
            routed.stop()
    load = os.getloadavg()[0]
    print(f"{args.calls} calls x {args.rounds} rounds each, one at a time, loopback HTTP; load average {load:.2f}")
    medians = {}
    for name, times in results.items():
        ordered = sorted(times)
        medians[name] = statistics.median(ordered)
        p95 = ordered[int(len(ordered) * 0.95)]
        print(f"  {name:16} p50 {medians[name]:.2f} ms   p95 {p95:.2f} ms")
    routed, plain, direct = medians["FastAPI route"], medians["ProcedureServer"], medians["the route, direct"]
    print(f"  FastAPI route / ProcedureServer (p50): {routed / plain:.2f}x (+{routed - plain:.2f} ms)")
    print(f"  FastAPI route / the route called directly (p50): {routed / direct:.2f}x (+{routed - direct:.2f} ms)")


if __name__ == "__main__":
    main()

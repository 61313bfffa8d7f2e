"""A real, throwaway PostgreSQL server for the tests and benchmarks: Debian's ``postgresql``
binaries, ``initdb`` into a temporary folder, ``pg_ctl`` on a free port with its socket in that
folder. Run as the ``postgres`` OS user when we are root (initdb refuses root).

Missing binaries are a failure with a clear message, never a skip: ``scripts/test.sh`` installs
the package.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import psycopg


def postgres_bindir() -> Path:
    # Debian keeps the server binaries out of PATH, one folder per major version: the newest.
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    if not candidates:
        found = shutil.which("pg_ctl")
        if found and shutil.which("initdb"):
            return Path(found).parent
    if not candidates:
        raise RuntimeError(
            "PostgreSQL's server binaries (initdb, pg_ctl) are not installed: the store tests start a "
            "real PostgreSQL. Install Debian's package: apt-get install postgresql (scripts/test.sh does)."
        )
    return Path(candidates[-1]).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PostgresServer:
    bindir: Path
    folder: Path
    port: int
    as_user: str | None  # the OS user running the server (None: ourselves)

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def dsn(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str, timeout: float = 60) -> None:
        command = [str(self.bindir / args[0]), *args[1:]]
        if self.as_user is not None:
            command = ["runuser", "-u", self.as_user, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{args[0]} failed ({done.returncode}): {done.stderr or done.stdout}")

    def start(self) -> None:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "log"), "-o", options, "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def restart(self) -> None:
        self.stop()
        self.start()

    def create_database(self, prefix: str = "t") -> str:
        name = f"{prefix}_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.dsn(), autocommit=True) as db:
            db.execute(f'CREATE DATABASE "{name}"')  # our own name: letters, digits, _
        return self.dsn(name)


@contextmanager
def running_postgres() -> Iterator[PostgresServer]:
    bindir = postgres_bindir()
    folder = Path(tempfile.mkdtemp(prefix="agentsurface-pg-"))
    as_user = "postgres" if os.geteuid() == 0 else None
    if as_user is not None:
        shutil.chown(folder, user=as_user)
    server = PostgresServer(bindir, folder, _free_port(), as_user)
    try:
        server._run("initdb", "-D", str(server.data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync")
        server.start()
        yield server
    finally:
        with suppress(Exception):
            server.stop("immediate")
        shutil.rmtree(folder, ignore_errors=True)

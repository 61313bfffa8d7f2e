"""``agentsurface mcp --relay`` as an MCP client starts it (over stdio, with the official SDK
client), its stderr in a file the test reads: the pairing codes it prints are what the person
types into the page."""

from __future__ import annotations

import re
import socket
import sys
import time
from pathlib import Path
from typing import Any

from mcp_client import McpClient


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RelayProcess:
    def __init__(self, port: int, folder: Path, *extra: str) -> None:
        self.port = port
        runs = len(list(folder.glob("relay-stderr-*.log")))
        self.log_path = folder / f"relay-stderr-{runs + 1}.log"  # this run's own (a restart is another)
        self.pairings = folder / "relay-pairings.json"
        self._log = self.log_path.open("a", encoding="utf-8")
        command = [sys.executable, "-m", "agentsurface", "mcp", "--relay", "--relay-port", str(port)]
        command += ["--relay-pairings", str(self.pairings), *extra]
        self.client = McpClient.stdio(command, errlog=self._log)
        self.wait_for_log("listening on ws://")

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8")

    def wait_for_log(self, pattern: str, *, timeout_s: float = 60, start: int = 0) -> re.Match[str]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = re.compile(pattern).search(self.log(), start)
            if found:
                return found
            time.sleep(0.05)
        raise AssertionError(f"the relay never printed {pattern!r}; it printed:\n{self.log()}")

    def pairing_code(self, origin: str, *, start: int = 0) -> str:
        found = self.wait_for_log(re.escape(origin) + r" asks to pair .*? Its pairing code: (\d{3} \d{3})", start=start)
        return found.group(1)

    def close(self) -> None:
        self.client.close()
        self._log.close()

    def __enter__(self) -> RelayProcess:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

"""A Chromium started by hand with its DevTools port, for tests that attach over CDP the way
``agentsurface mcp --cdp`` attaches to a person's browser; its stderr is kept in a file, and when
its browser process dies during a test, :meth:`ChromiumProcess.crash_report` says so (exit code,
crash dumps, the end of its stderr) instead of letting the next test meet a browser that is gone.

Chromium 156's browser process can die on a CHECK (SIGILL) when a page's ``document.modelContext
.getTools()`` reaches the browser from a document that is going into the back/forward cache (a
cross-site navigation): see ``e2e/chromium_repro/``. The tests' Chromium runs with the
back/forward cache off, as Playwright's own launches do, which removes that trigger.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from crash_dumps import CRASH_DIRS, dumps_since, read_dump

STDERR_TAIL = 25


class ChromiumCrashed(AssertionError):
    """The browser process of the test's Chromium exited while the test ran."""


class ChromiumProcess:
    """``chromium --remote-debugging-port=0`` on a fresh profile; ``endpoint`` is its CDP URL."""

    def __init__(self, executable: str, flags: list[str], *, label: str = "Chromium") -> None:
        self.label = label
        self._dir = tempfile.TemporaryDirectory(prefix="as-mcp-chromium-")
        base = Path(self._dir.name)
        self.profile = base / "profile"
        self.stderr_path = base / "chromium.stderr"
        self.started = time.time()
        with self.stderr_path.open("wb") as stderr:
            self.process = subprocess.Popen(
                [executable, *flags, "--remote-debugging-port=0", f"--user-data-dir={self.profile}", "about:blank"],
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text().strip():
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.stop()
                raise AssertionError(f"{label} did not open its DevTools port:\n{self.stderr_tail()}")
            time.sleep(0.05)
        self.endpoint = f"http://127.0.0.1:{port_file.read_text().split()[0]}"

    def exit_code(self) -> int | None:
        return self.process.poll()

    def stderr_tail(self, lines: int = STDERR_TAIL) -> str:
        with contextlib.suppress(OSError):
            text = self.stderr_path.read_text(errors="replace").splitlines()
            return "\n".join("    " + line for line in text[-lines:]) or "    (empty)"
        return "    (unreadable)"

    def dumps_since(self, since: float) -> list[Path]:
        """Crash dumps written since ``since``: crashpad's folder, or a profile-local one."""
        return dumps_since(since, [*CRASH_DIRS, self.profile / "Crash Reports" / "pending"])

    def crash_report(self, since: float) -> str | None:
        """Why the browser process is gone, if it exited (None while it runs)."""
        code = self.exit_code()
        if code is None:
            return None
        time.sleep(0.5)  # crashpad writes the dump as the process dies
        how = f"code {code}"
        if code < 0:
            with contextlib.suppress(ValueError):
                how += f", {signal.Signals(-code).name}"
        dumps = self.dumps_since(since)
        where = "; ".join(read_dump(p).describe() for p in dumps) or f"no new dump in {', '.join(map(str, CRASH_DIRS))}"
        return (
            f"{self.label} exited ({how}) during this test: a Chromium browser-process crash "
            f"(Chromium 156 CHECK-fails on getTools() from a page entering the back/forward cache; "
            f"see e2e/chromium_repro/); dump: {where}; its stderr ends with:\n{self.stderr_tail()}"
        )

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        with contextlib.suppress(OSError):
            self._dir.cleanup()

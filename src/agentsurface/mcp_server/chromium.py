"""The bridge's own Chromium, started before anything else so the page boots while the bridge
imports the MCP SDK and Playwright (about a second of its start-up); Playwright then attaches
over CDP.

Chromium is given both a debugging port (for Playwright) and a debugging pipe that only this
process holds: when the bridge ends, however it ends, the pipe closes and Chromium exits with it
(as a browser Playwright launches does). The bridge's calls to the page go over that pipe
(``cdp``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..testing.chromium_flags import with_features
from .options import WEBMCP_FEATURES, BridgeOptions

if TYPE_CHECKING:  # imported on use: this module runs before Chromium is started
    from .cdp import CdpConnection

# What Playwright's own launch passes and a page driven by an agent needs: no throttling of a
# page in the background or behind another window, no keyring prompt, no first-run screens.
LAUNCH_FLAGS = [
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-renderer-backgrounding",
    "--password-store=basic",
    "--use-mock-keychain",
    "--no-sandbox",  # as Playwright launches it (a container has no usable sandbox)
]
# How long Chromium may take to open its debugging port.
START_TIMEOUT_S = 30.0
STOP_GRACE_S = 5.0


# A profile's folder names the bridge that made it: one whose bridge is gone (killed before it
# could remove it) is removed by the next bridge.
PROFILE_PREFIX = "agentsurface-mcp-"


def remove_stale_profiles() -> None:
    for folder in Path(tempfile.gettempdir()).glob(f"{PROFILE_PREFIX}*-*"):
        owner = folder.name[len(PROFILE_PREFIX) :].split("-", 1)[0]
        if owner.isdigit() and not _running(int(owner)):
            shutil.rmtree(folder, ignore_errors=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def launches_early(options: BridgeOptions) -> bool:
    """Whether the bridge starts its Chromium itself: it launches one (no --cdp, no --relay),
    with WebMCP on (--polyfill must be injected before the page's first script), on a platform
    that can hand Chromium its pipe."""
    return not (options.cdp or options.relay or options.polyfill) and hasattr(os, "posix_spawn")


class OwnChromium:
    """``OwnChromium(options)`` starts Chromium on ``options.url`` at once; ``await cdp_url()``
    when it is needed; ``close()`` at the end (it also ends when this process does)."""

    def __init__(self, options: BridgeOptions) -> None:
        remove_stale_profiles()
        self._profile = Path(tempfile.mkdtemp(prefix=f"{PROFILE_PREFIX}{os.getpid()}-"))
        self._log = self._profile / "chromium.log"
        self._pid: int | None = None
        self._pipe: tuple[int, int] | None = None  # our ends: we write to fd 3, read from fd 4
        self._cdp: CdpConnection | None = None  # those ends once connected (it owns them then)
        self.error: OSError | None = None
        args = with_features(list(LAUNCH_FLAGS), enable=WEBMCP_FEATURES.split(","))
        if options.headless:
            args.append("--headless")
        browser = options.browser or "chromium"
        argv = [
            browser,
            *args,
            f"--user-data-dir={self._profile}",
            "--remote-debugging-port=0",
            "--remote-debugging-pipe",
            options.url,
        ]
        commands_read, commands_write = os.pipe()
        replies_read, replies_write = os.pipe()
        try:
            self._pid = os.posix_spawn(
                browser,
                argv,
                os.environ,
                file_actions=[
                    # Nothing on the bridge's stdout: over stdio, that is the MCP client's channel.
                    (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                    (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                    # Its log goes with its profile: read for the reason when it fails to start.
                    (os.POSIX_SPAWN_OPEN, 2, str(self._log), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600),
                    (os.POSIX_SPAWN_DUP2, commands_read, 3),
                    (os.POSIX_SPAWN_DUP2, replies_write, 4),
                ],
                setpgroup=0,  # its own group, as Playwright launches it: it ends with its pipe
            )
        except OSError as exc:
            self.error = exc
            os.close(commands_write)
            os.close(replies_read)
        else:
            self._pipe = (commands_write, replies_read)
        finally:
            os.close(commands_read)
            os.close(replies_write)

    async def cdp_url(self) -> str:
        """The endpoint Playwright attaches to, once Chromium has opened it."""
        if self.error is not None:
            raise OSError(f"could not start Chromium ({self.error})")
        port_file = self._profile / "DevToolsActivePort"
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            with contextlib.suppress(OSError):
                first = port_file.read_text().split("\n", 1)[0].strip()
                if first.isdigit():
                    return f"http://127.0.0.1:{first}"
            status = self._exited()
            if status is not None:
                raise OSError(
                    f"Chromium exited before it opened its debugging port (status {status}){self._why()}"
                )
            if time.monotonic() > deadline:
                raise OSError(f"Chromium opened no debugging port within {START_TIMEOUT_S:g} s")
            await asyncio.sleep(0.02)

    def _why(self) -> str:
        """Chromium's last fatal message, as ": <message>", or "" (a crash may say nothing)."""
        with contextlib.suppress(OSError):
            for line in reversed(self._log.read_text(errors="replace").splitlines()):
                if ":FATAL:" in line:
                    return ": " + line.split("] ", 1)[-1].strip()
        return ""

    async def cdp_pipe(self) -> CdpConnection | None:
        """The debugging pipe, connected on first use (None if Chromium did not start)."""
        if self._cdp is None and self._pipe is not None:
            from .cdp import CdpConnection

            commands, replies = self._pipe
            self._cdp = await CdpConnection.pipe(commands, replies)
            self._pipe = None  # the connection closes them now
        return self._cdp

    def _exited(self) -> int | None:
        """Chromium's exit status once it has exited (reaping it), else None."""
        if self._pid is None:
            return None
        try:
            pid, status = os.waitpid(self._pid, os.WNOHANG)
        except ChildProcessError:  # reaped elsewhere
            self._pid = None
            return -1
        if pid == 0:
            return None
        self._pid = None
        return os.waitstatus_to_exitcode(status)

    def close(self) -> None:
        """Stop Chromium (if it still runs) and remove its profile."""
        cdp, self._cdp = self._cdp, None
        if cdp is not None:
            cdp.close()  # Chromium quits when its pipe closes
        if self._pipe is not None:
            for fd in self._pipe:
                with contextlib.suppress(OSError):
                    os.close(fd)  # Chromium quits when its pipe closes
            self._pipe = None
        pid, self._pid = self._pid, None
        if pid is not None:
            deadline = time.monotonic() + STOP_GRACE_S
            while time.monotonic() < deadline:
                try:
                    if os.waitpid(pid, os.WNOHANG)[0] != 0:
                        break
                except ChildProcessError:
                    break
                time.sleep(0.02)
            else:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, 0)
        shutil.rmtree(self._profile, ignore_errors=True)

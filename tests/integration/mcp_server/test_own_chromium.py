"""The Chromium ``agentsurface mcp`` starts itself, before its imports (mcp_server/chromium.py),
with Debian's real ``chromium``: it ends with the bridge however the bridge ends (its debugging
pipe closes), leaves no profile behind on a client's SIGTERM, keeps the bridge's stdout (the
MCP channel) clean, and a browser that cannot start is a one-line error."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentsurface.mcp_server.chromium import (
    PROFILE_PREFIX,
    OwnChromium,
    launches_early,
    remove_stale_profiles,
)
from agentsurface.mcp_server.options import BridgeOptions

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium")
BLANK = "data:text/html,<title>blank</title>"
NOWHERE = "http://127.0.0.1:9/index.html"  # the command takes http(s) only; nothing answers here


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie of ours is gone for this purpose
        return os.waitpid(pid, os.WNOHANG)[0] == 0
    except ChildProcessError:
        return Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]


def wait_gone(pid: int, seconds: float = 15.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def chromium_pids(profile_parent: Path) -> list[int]:
    """Browser processes started with a profile under ``profile_parent`` (once Debian's launcher
    script has exec'd the browser: until then its subshells share its command line)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                argv = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[0].endswith(b"sh") or any(a.startswith(b"--type=") for a in argv):
                continue
            if any(a.startswith(f"--user-data-dir={profile_parent}".encode()) for a in argv):
                pids.append(int(proc.name))
    return pids


def test_it_opens_its_debugging_port_and_close_stops_it_and_removes_its_profile(tmp_path: Path) -> None:
    chromium = OwnChromium(BridgeOptions(url=BLANK, browser=CHROMIUM, headless=True))
    url = asyncio.run(chromium.cdp_url())
    assert url.startswith("http://127.0.0.1:")
    pid = chromium._pid
    profile = chromium._profile
    assert pid is not None and alive(pid) and profile.is_dir()
    chromium.close()
    assert not alive(pid) and not profile.exists()
    chromium.close()  # twice is fine


def test_it_ends_when_the_bridge_is_killed(tmp_path: Path) -> None:
    # SIGKILL leaves no finally: only the pipe, which the kernel closes, stops Chromium.
    script = textwrap.dedent(f"""
        import asyncio, sys, time
        from agentsurface.mcp_server.chromium import OwnChromium
        from agentsurface.mcp_server.options import BridgeOptions
        chromium = OwnChromium(BridgeOptions(url={BLANK!r}, browser={CHROMIUM!r}, headless=True))
        asyncio.run(chromium.cdp_url())
        print(chromium._pid, flush=True)
        time.sleep(120)
    """)
    holder = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        pid = int(holder.stdout.readline())
        assert alive(pid)
        holder.kill()
        holder.wait()
        assert wait_gone(pid), "Chromium outlived the process that held its pipe"
    finally:
        holder.kill()


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A TMPDIR for a real Chromium: its singleton socket goes in a folder under TMPDIR, and that
    path must fit a socket address (107 bytes); pytest's tmp_path under xdist comes close."""
    folder = Path(tempfile.mkdtemp(prefix="as-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_clients_sigterm_stops_chromium_and_removes_its_profile(short_tmp: Path) -> None:
    tmp_path = short_tmp
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    bridge = subprocess.Popen(
        [sys.executable, "-m", "agentsurface", "mcp", NOWHERE, "--headless", "--browser", str(CHROMIUM)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        deadline = time.monotonic() + 30
        while not chromium_pids(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.05)
        (pid,) = chromium_pids(tmp_path)
        time.sleep(1.0)  # well into its start: Playwright attached or attaching
        bridge.send_signal(signal.SIGTERM)
        out, err = bridge.communicate(timeout=30)
    finally:
        bridge.kill()
    assert wait_gone(pid)
    assert list(tmp_path.glob("agentsurface-mcp-*")) == []
    assert out == b""  # nothing but MCP on stdout, and the client sent nothing
    assert b"Traceback" not in err, err.decode()
    assert bridge.returncode == 128 + signal.SIGTERM


def test_a_temp_folder_too_long_for_chromium_is_named_in_the_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = tmp_path / ("d" * 60)
    deep.mkdir()
    monkeypatch.setenv("TMPDIR", str(deep))  # Chromium's
    monkeypatch.setattr(tempfile, "tempdir", str(deep))  # the profile's
    chromium = OwnChromium(BridgeOptions(url=BLANK, browser=str(CHROMIUM), headless=True))
    try:
        with pytest.raises(
            OSError, match=r"exited before it opened its debugging port \(status -6\): Socket path too long"
        ):
            asyncio.run(chromium.cdp_url())
    finally:
        chromium.close()
    assert list(deep.glob(f"{PROFILE_PREFIX}*")) == []


def test_a_browser_that_cannot_start_is_one_line_on_stderr_and_nothing_on_stdout(tmp_path: Path) -> None:
    fake = tmp_path / "not-chromium"
    fake.write_text("#!/bin/sh\necho 'this is not MCP'\necho 'nor this' >&2\nexit 3\n")
    fake.chmod(0o755)
    chromium = OwnChromium(BridgeOptions(url=BLANK, browser=str(fake), headless=True))
    with pytest.raises(OSError, match=r"Chromium exited before it opened its debugging port \(status 3\)"):
        asyncio.run(chromium.cdp_url())
    chromium.close()

    # A client keeps its stdin open: the bridge ends all the same, as on any failure to open
    # the page (the client is not left talking to a server with no page).
    errors = tmp_path / "stderr"
    with errors.open("wb") as sink:
        bridge = subprocess.Popen(
            [sys.executable, "-m", "agentsurface", "mcp", NOWHERE, "--headless", "--browser", str(fake)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=sink,
            env={**os.environ, "TMPDIR": str(tmp_path)},
        )
        try:
            bridge.wait(timeout=30)
            out, _ = bridge.communicate(timeout=30)
        finally:
            bridge.kill()
    assert out == b""
    lines = errors.read_text().strip().splitlines()
    assert lines == [
        f"agentsurface mcp: could not open {NOWHERE}: Chromium exited before it opened its debugging port (status 3)"
    ]
    assert bridge.returncode == 1
    assert list(tmp_path.glob("agentsurface-mcp-*")) == []


def test_only_a_launched_webmcp_chromium_on_posix_starts_early() -> None:
    assert launches_early(BridgeOptions(url=BLANK, browser="chromium"))
    assert not launches_early(BridgeOptions(url=BLANK, cdp="http://127.0.0.1:9222"))
    assert not launches_early(BridgeOptions(url=BLANK, browser="chromium", polyfill=True))
    assert not launches_early(BridgeOptions(url=BLANK, relay=True))


def test_a_profile_left_by_a_killed_bridge_is_removed_by_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f"{PROFILE_PREFIX}{dead.pid}-abc123"
    mine = tmp_path / f"{PROFILE_PREFIX}{os.getpid()}-def456"  # a bridge still running
    other = tmp_path / f"{PROFILE_PREFIX}notapid"  # not one of ours
    for folder in (stale, mine, other):
        (folder / "Default").mkdir(parents=True)
    remove_stale_profiles()
    assert not stale.exists() and mine.exists() and other.exists()

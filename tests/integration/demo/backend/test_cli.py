"""`python scripts/demo.py` starts the page and the API on one origin and prints the page URL."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from demo.__main__ import parse_args
from demo.server.db import DEFAULT_DB_PATH

ROOT = Path(__file__).resolve().parents[4]


def test_arguments_and_defaults() -> None:
    args = parse_args([])
    assert (args.port, args.host, args.db, args.reset, args.no_build) == (8000, "127.0.0.1", DEFAULT_DB_PATH,
                                                                          False, False)
    args = parse_args(["--port", "0", "--db", ":memory:", "--reset", "--no-build"])
    assert (args.port, str(args.db), args.reset, args.no_build) == (0, ":memory:", True, True)


def test_script_serves_page_and_api() -> None:
    # Started from another directory, to prove the script finds the package (not itself) by path.
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "scripts" / "demo.py"), "--no-build", "--port", "0", "--db", ":memory:"],
        cwd="/", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        match = re.fullmatch(r"Devices console: (http://127\.0\.0\.1:\d+)/index\.html\n", first)
        assert match, first + (proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        req = urllib.request.Request(
            match[1] + "/api/agent/procedures/session.describe", data=b'{"invocationId": "inv-1", "input": {}}',
            headers={"Authorization": "Bearer demo-acme-viewer", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            assert json.loads(resp.read())["output"]["user"]["role"] == "viewer"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_the_system_python_hands_the_script_over_to_the_projects_venv() -> None:
    # `python3 scripts/demo.py` as the README says it: the base interpreter (not this venv's), which
    # need not have the server's packages. A venv's python is a symlink to that same binary, so the
    # handover must compare environments, not executables.
    base = getattr(sys, "_base_executable", sys.executable)
    if not (ROOT / ".venv" / "bin" / "python").exists():
        pytest.skip("the handover needs the project's .venv (scripts/test.sh creates it)")
    done = subprocess.run(
        [base, str(ROOT / "scripts" / "demo.py"), "--help"], cwd="/", capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "--no-build" in done.stdout

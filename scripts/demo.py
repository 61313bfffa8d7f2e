#!/usr/bin/env python3
"""Run the devices console demo (the page, the offline browser runtime, and the real backend).

    python scripts/demo.py [--port 8000] [--host 127.0.0.1] [--db PATH | --database DSN]
                           [--workers N] [--rate-limit BURST/PER_SECOND] [--reset] [--no-build]

``--database postgresql://user@host/db --workers 4`` serves from PostgreSQL with four worker
processes (``pip install -e '.[postgres]'``); SQLite (``--db``) stays the zero-setup default.

Builds web/dist with scripts/build_web.py (idempotent) unless --no-build, then serves the page and
the API on one origin (Starlette on uvicorn) and prints the URL of the demo page. Same as
``python -m demo``. Run by an interpreter without the server's packages, it hands over to the
project's ``.venv`` if there is one (``scripts/test.sh`` creates it), or says what to install.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The repository root must come first: this file's own folder would otherwise make `demo` resolve
# to this script instead of the package.
sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != ROOT / "scripts")]

NEEDED = ("starlette", "uvicorn", "pydantic", "agentsurface")


def ensure_packages() -> None:
    """Re-run under the project's .venv when this interpreter lacks the backend's packages."""
    if all(importlib.util.find_spec(name) is not None for name in NEEDED):
        return
    venv = ROOT / ".venv"
    venv_python = venv / "bin" / "python"
    # Compare environments, not binaries: a venv's python is a symlink to the system one.
    if venv_python.exists() and Path(sys.prefix).resolve() != venv.resolve():
        os.execv(str(venv_python), [str(venv_python), str(Path(__file__).resolve()), *sys.argv[1:]])
    sys.exit("error: the demo needs the project installed with its server extra:\n"
             "  python3 -m venv .venv && .venv/bin/pip install -e '.[server]'")


ensure_packages()

from demo.__main__ import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())

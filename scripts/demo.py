#!/usr/bin/env python3
"""Run the devices console demo (the page, the offline browser runtime, and the real backend).

    python scripts/demo.py [--port 8000] [--host 127.0.0.1] [--db PATH] [--reset] [--no-build]

Builds web/dist with scripts/build_web.py (idempotent) unless --no-build, then serves the page and
the API on one origin and prints the URL of the demo page. Same as ``python -m demo``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The repository root must come first: this file's own folder would otherwise make `demo` resolve
# to this script instead of the package.
sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != ROOT / "scripts")]

from demo.__main__ import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())

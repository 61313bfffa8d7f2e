#!/usr/bin/env python3
"""Build the offline browser runtime into ``web/dist/`` (Pyodide, PyScript, polyfill, wheels, lock),
and the devices console's bytecode (``agentsurface precompile index.html``).

The building code lives in the library (``agentsurface._runtime_build.build``), which
``agentsurface bundle`` reuses; this wrapper points it at the repository's ``web/``.

Usage: python scripts/build_web.py [--offline]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))  # works before the project is installed, too

from agentsurface._runtime_build.build import BuildError, RuntimeLayout, build  # noqa: E402
from agentsurface._runtime_build.page_bytecode import precompile_page  # noqa: E402
from agentsurface._runtime_build.precompile import PrecompileError  # noqa: E402

LAYOUT = RuntimeLayout(project=ROOT, web=ROOT / "web")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--offline", action="store_true", help="fail instead of downloading wheels that are not cached"
    )
    parser.add_argument(
        "--no-memory-snapshot", action="store_true", help="skip the memory snapshot (it needs Playwright and chromium)"
    )
    args = parser.parse_args(argv)
    try:
        # The memory snapshot too: the devices console (index.html) boots from it.
        build(LAYOUT, offline=args.offline, memory_snapshot=not args.no_memory_snapshot)
        # Its own modules' bytecode too (its loader tag says data-compiled).
        compiled = precompile_page(ROOT / "index.html", LAYOUT.web / "dist" / "pyodide")
        print(f"[build_web] index.html: {len(compiled)} modules compiled")
    except (BuildError, PrecompileError) as exc:
        print(f"[build_web] ERROR: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

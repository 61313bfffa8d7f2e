#!/usr/bin/env bash
# The project's test command: installs what it needs on a fresh machine, then runs
# lint, type checks, then the suites by speed: unit, integration (tests/) and e2e (e2e/).
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# PostgreSQL: the server's store conformance and multi-worker tests start their own server
# (initdb + pg_ctl into a temporary folder); only the binaries are needed.
if ! command -v chromium >/dev/null 2>&1 || ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
  echo "== installing Debian chromium and postgresql"
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver postgresql
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv"
  "$PY" -m venv .venv
fi
echo "== installing the project with its dev/test extras"
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev]'

if [ -f scripts/build_web.py ]; then
  echo "== building the offline browser runtime (web/dist)"
  .venv/bin/python scripts/build_web.py
fi

if [ -f e2e/npm/package.json ]; then
  echo "== installing the e2e suite's npm tools (chrome-devtools-mcp, MCP-B, esbuild)"
  npm ci --prefix e2e/npm --no-audit --no-fund --loglevel=error
fi

echo "== ruff"
.venv/bin/ruff check src tests e2e benchmarks scripts demo examples
echo "== mypy"
.venv/bin/mypy
# The demo and scripts too, the page's entry script included (it imports the demo.page package).
.venv/bin/mypy --strict demo scripts/demo.py scripts/serve.py scripts/mkdocs_rst_roles.py
echo "== import-linter (the layering contracts in pyproject.toml)"
.venv/bin/lint-imports --no-cache
echo "== agentsurface check (the demo's committed contract.json is what its source declares)"
.venv/bin/agentsurface check
echo "== mkdocs build --strict (the docs site: docs/, mkdocs.yml; any warning fails)"
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict

# Fastest feedback first: in-process CPython tests, then the ones that start servers, build wheels
# or run other processes, then headless Chromium (markers: pyproject.toml; under tests/, the folder
# sets them: tests/unit/ and tests/integration/, see tests/conftest.py).
suites=(tests)
if compgen -G "e2e/test_*.py" >/dev/null; then suites+=(e2e); fi
# The CPython suites run in two worker processes (pytest-xdist): their tests share no state (each
# server, database and folder is the test's own), and that halves their time on two cores. The
# e2e suite stays in one: its tests share a Chromium per variant and time the browser.
for speed in unit integration e2e; do
  echo "== pytest -m $speed"
  workers=(-n 2)
  if [ "$speed" = e2e ]; then workers=(); fi
  .venv/bin/python -m pytest "${suites[@]}" -m "$speed" -q -p no:cacheprovider "${workers[@]}" "$@"
done

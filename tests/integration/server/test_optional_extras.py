"""The server's optional extras load only with the part that needs them: importing
``agentsurface.server`` (an app, its routes, the SQLite store) pulls in neither psycopg (the
PostgreSQL store) nor webauthn (passkeys)."""

from __future__ import annotations

import json
import subprocess
import sys

EXTRAS = ("psycopg", "psycopg_pool", "webauthn")


def loaded_after(statement: str) -> list[str]:
    script = f"import json, sys\n{statement}\nprint(json.dumps(sorted(m.split('.')[0] for m in sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    return sorted(set(json.loads(done.stdout)) & set(EXTRAS))


def test_the_server_package_imports_no_optional_extra() -> None:
    assert loaded_after("import agentsurface.server") == []


def test_each_extra_comes_with_the_part_that_needs_it() -> None:
    # The check above only means something if these parts do import them.
    assert loaded_after("import agentsurface.server.stores.postgres") == ["psycopg", "psycopg_pool"]
    assert loaded_after("import agentsurface.server.passkeys") == ["webauthn"]

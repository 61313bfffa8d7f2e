"""The server tests' fixtures (tests/_shared/server/fixtures.py)."""

from __future__ import annotations

from tests._shared.server.fixtures import client, db_path, server  # noqa: F401

"""The server tests' fixtures (tests/_shared/server/fixtures.py), PostgreSQL's included."""

from __future__ import annotations

from tests._shared.server.fixtures import client, db_path, postgres, server  # noqa: F401

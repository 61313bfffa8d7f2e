"""The Django tests run against the example project (examples/django_app): its settings, with
its database and agentsurface store in a temporary folder, migrated once per session."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "django_app"
_WORK = Path(tempfile.mkdtemp(prefix="agentsurface-django-"))


def _setup() -> None:
    if str(EXAMPLE) not in sys.path:
        sys.path.insert(0, str(EXAMPLE))
    os.environ["DJANGO_SETTINGS_MODULE"] = "expenses_site.settings"
    os.environ["EXPENSES_DB"] = str(_WORK / "db.sqlite3")
    os.environ["EXPENSES_AGENT_STORE"] = "sqlite:///" + str(_WORK / "agent.sqlite3")
    from django.core.management import call_command

    import django

    django.setup()
    call_command("migrate", verbosity=0)


_setup()


@pytest.fixture(scope="session", autouse=True)
def _cleanup() -> Iterator[None]:
    yield
    shutil.rmtree(_WORK, ignore_errors=True)

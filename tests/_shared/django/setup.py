"""The Django tests run against the example project (examples/django_app): its settings, with
its database and agentsurface store in a temporary folder, migrated once per session."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "django_app"
_WORK = Path(tempfile.mkdtemp(prefix="agentsurface-django-"))
atexit.register(shutil.rmtree, _WORK, ignore_errors=True)


def _setup() -> None:
    if str(EXAMPLE) not in sys.path:
        sys.path.insert(0, str(EXAMPLE))
    settings = {
        "DJANGO_SETTINGS_MODULE": "expenses_site.settings",
        "EXPENSES_DB": str(_WORK / "db.sqlite3"),
    }
    os.environ.update(settings)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    for name in settings:  # read once: the other tests' subprocesses never see them
        del os.environ[name]


_setup()

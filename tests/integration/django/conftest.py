"""Django set up with the example project's settings before any test module imports it
(tests/_shared/django/setup.py)."""

from __future__ import annotations

import tests._shared.django.setup  # noqa: F401

"""What `agentsurface snapshot` and `check` import: the project set up, then the views whose
`@procedure` declarations make the reviewed contract (expenses/static/expenses/contract.json)."""

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "expenses_site.settings")
django.setup()

from expenses import views  # noqa: E402,F401  (the declarations)

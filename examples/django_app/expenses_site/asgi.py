"""The project's ASGI application: `uvicorn expenses_site.asgi:application`."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "expenses_site.settings")

application = get_asgi_application()

"""Procedures from a Django project's own views (``pip install 'agentsurface[django]'``)."""

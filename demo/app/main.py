"""PyScript's entry script for the devices console: the app is the ``demo.app`` package (the same
name the CPython tests import); this file only runs it."""
# mypy: disable-error-code="top-level-await"

from demo.app.console import main

await main()  # noqa: F704 (PyScript runs the entry script with top-level await)

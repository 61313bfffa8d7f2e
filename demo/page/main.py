"""The devices console's page script (``index.html``: agentsurface.js runs it, with the
``demo.page`` package written beside it from its ``data-files``, the same name the CPython tests
import); this file only runs it."""
# mypy: disable-error-code="top-level-await"

from demo.page.console import main

await main()  # noqa: F704 (agentsurface.js runs page scripts with top-level await)

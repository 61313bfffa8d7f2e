"""The devices console's page script (``index.html``: agentsurface.js runs it, with the
``demo.page`` package written beside it from its ``data-files``, the same name the CPython tests
import). The console's first requests leave before its modules are imported: they travel while
those import (``opening.py``)."""
# mypy: disable-error-code="top-level-await"

from demo.page.opening import open_session

opening = await open_session()  # noqa: F704 (agentsurface.js runs page scripts with top-level await)

from demo.page.console import main  # noqa: E402

await main(opening)  # noqa: F704

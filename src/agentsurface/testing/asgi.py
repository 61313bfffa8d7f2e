"""An ASGI app served for a page test: uvicorn on a free 127.0.0.1 port in a background thread,
its lifespan run (startup before the first request, shutdown at the end). The pytest plugin's
``asgi_server`` fixture starts one per app and stops it after the test.

Internal module: use the fixture.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Literal


class AsgiServer:
    """``app`` served at ``url`` (``http://127.0.0.1:<free port>``) until :meth:`close`."""

    def __init__(self, app: Any, *, startup_timeout: float = 15.0, lifespan: Literal["auto", "on", "off"] = "auto") -> None:
        try:
            import uvicorn
        except ImportError:  # pragma: no cover - the server extra brings it
            raise RuntimeError(
                'asgi_server needs uvicorn: pip install "agentsurface[server,testing]"'
            ) from None
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan=lifespan)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="agentsurface-asgi", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + startup_timeout
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError(
                    "the ASGI app did not start (its lifespan startup failed: see the log above)"
                )
            if time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"the ASGI app did not start within {startup_timeout:g} s")
            time.sleep(0.01)
        port = self._server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"

    def close(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)

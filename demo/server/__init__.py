"""The devices console's server (CPython only, never loaded by the page): the Starlette app on
uvicorn (``backend``, ``asgi``), the procedures it serves over the demo's store (``procedures``,
``db``, ``seed``) and its hooks (``api``, ``errors``, ``passkeys``). It imports the procedures'
contracts from ``demo.shared``, never ``demo.page`` (``lint-imports`` holds it to that)."""

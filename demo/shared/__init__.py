"""What the page and the server both rely on: the procedures' contracts and the names both spell.

- ``contracts``: the devices procedures (pydantic), served by ``demo.server.procedures``; the
  page takes them from its reviewed ``demo/page/contract.json`` and imports this module only to
  check a value that the compiled check cannot prove.
- ``session``: the page's own read at start (``session.describe``), kept off the agent's surface;
  the server imports it, the page calls it by id and reads its answer.
- ``values``: value types and procedure ids without pydantic, for the page's way to its first tool.

They live here, not in ``demo/page/`` or ``demo/server/``, because the server must serve each
procedure with the very model the page checks its calls against (``bridge.connect()`` refuses a
page whose contracts differ): one copy for both sides, so that each of those two folders holds
only code that runs on its own side. This package imports neither of them, nor anything browser-
or server-only (``lint-imports`` holds it to that); the page loads it with its ``data-files``,
and the server serves it as one of the page's public folders.
"""

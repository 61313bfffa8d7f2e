"""What a page booted from the runtime's memory snapshot does first (web/agentsurface.js calls
``restored`` once Pyodide has started from it, before any script of the page runs).

The snapshot holds the interpreter's whole memory as the build left it, so state that must differ
on every visit would otherwise be the same on all of them, for every visitor: like a forked
process, the page starts over what was drawn from the OS's random source before it. The ids'
pool of random characters is emptied (as after a fork), and the ``random`` module (seeded at its
import, at build time) is seeded again from the browser's random source. What cannot be made
fresh is ``str`` and ``bytes`` hashing's secret, fixed per snapshot (so per build): nothing in
agentsurface depends on it, and the docs say so for the app's own code.
"""

from __future__ import annotations

import sys

from .._core import ids


def restored() -> None:
    """Start over what the snapshot froze, and drop the sys.path entries Pyodide's restore repeats."""
    ids.forget_pool()
    random = sys.modules.get("random")
    if random is not None:
        random.seed()  # from os.urandom: crypto.getRandomValues in the browser
    sys.path[:] = dict.fromkeys(sys.path)  # first occurrences, in order

"""The offline browser runtime build: vendored Pyodide and PyScript, our wheels with their bytecode,
our ``pyodide-lock.json``, and the page zip; used by ``agentsurface bundle`` and ``scripts/build_web.py``.
"""

"""The core: ids, schemas, contracts and authority, registry, snapshot, invocation.

Imports no browser module; runs unchanged in CPython and in Pyodide.
"""

"""The contract compiler: an app's declared capabilities as a canonical, reviewable manifest.

Deliberately imports nothing: the page imports ``agentsurface.compiler.load`` alone (to trust the
committed ``contract.json``) and must not pay for the compiler, which runs under CPython only.

- ``config``    reads ``[tool.agentsurface]`` from the app's ``pyproject.toml``;
- ``discover``  imports the named modules and finds every declaration, refusing dynamic ones;
- ``manifest``  writes the canonical contract document and its bytes;
- ``diff``      classifies the changes between two contracts (widening / narrowing / neutral);
- ``load``      turns a committed contract back into a ``CapabilityAuthority`` (page-safe).
"""

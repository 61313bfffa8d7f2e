"""The devices console: its state model and agent surface (CPython-importable) and its browser UI."""

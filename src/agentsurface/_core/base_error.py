"""The root of every exception agentsurface raises, in a module of its own at the bottom of the
core so that any module may derive from it (``errors`` documents the whole tree)."""

from __future__ import annotations


class AgentSurfaceError(Exception):
    """The root of every exception agentsurface raises."""

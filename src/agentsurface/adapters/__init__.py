"""Adapters project a registry to a consumer; they never execute anything themselves.

Public: ``agentsurface.adapters.webmcp``. The other modules here are internal.
"""

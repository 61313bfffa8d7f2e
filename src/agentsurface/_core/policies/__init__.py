"""Policies: the hooks that decide visibility and invocability (``base``) and the built-in ones
(``builtin``: authenticated, permissions, tenant boundary, environment, rate limit, confirmation, audit).
"""

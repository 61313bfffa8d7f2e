"""Schemas that cross the agent boundary: the supported JSON Schema subset, schemas from type hints
(pydantic-core) and from raw JSON Schema (a compiled check, jsonschema for the rest), and formats.
"""

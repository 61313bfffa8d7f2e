"""Adapters project a registry to a consumer. They never execute anything themselves."""

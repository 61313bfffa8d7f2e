"""The registry (the execution authority), its registration checks and handles, live updates, and the
per-consumer snapshot with its descriptors.
"""

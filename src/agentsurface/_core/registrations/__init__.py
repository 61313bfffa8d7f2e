"""Live registrations of mounted component instances and their typed capability entries: what the
registry holds and the pipeline reads.
"""

"""Registry limits and defaults. Durations are in seconds."""

from __future__ import annotations

from dataclasses import fields

from .records import record


@record
class Limits:
    max_output_bytes: int = 32_768
    observation_timeout: float = 5.0
    action_timeout: float = 10.0
    procedure_timeout: float = 30.0
    action_queue_depth: int = 2
    max_concurrent_observations_per_consumer: int = 8
    max_concurrent_observations_total: int = 32
    max_queued_observations_per_consumer: int = 8
    dedupe_cache_size: int = 200
    dedupe_cache_ttl: float = 600.0
    tombstone_size: int = 100
    tombstone_ttl: float = 300.0
    confirmation_ttl: float = 120.0
    max_pending_confirmations: int = 32

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"limit {f.name} must be a non-negative number, got {value!r}")


# Shared default (Limits is frozen): validating a fresh instance per registry was ~40% of the
# cost of creating one.
DEFAULT_LIMITS = Limits()

"""Phase 3, availability: enabled, pushed overrides, ``when()``, and a discovery ``disable``."""

from __future__ import annotations

from ..availability import availability
from . import failures
from .call import Call
from .failures import Refusal


def check(call: Call) -> None:
    target = call.target
    ok, reason = availability(target.reg, target.entry)
    if ok and target.discovery.outcome == "disable":
        ok, reason = False, target.discovery.reason or "disabled by policy"
    if not ok:
        raise Refusal(failures.not_available(target.entry.capability_id, reason or "not available right now"))

"""Checks a registry makes on its options and on each binding it registers."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

from ..contracts import ComponentBinding
from ..errors import DefinitionError
from ..events import SurfaceEvent, make_event
from ..limits import Limits
from ..policies.base import Policy

log = logging.getLogger("agentsurface")


def check_options(policies: object, limits: object, **callbacks: object) -> None:
    """Constructor arguments fail here, by name, rather than later and obscurely."""
    if isinstance(policies, Policy) or not isinstance(policies, (list, tuple)):
        raise TypeError(f"policies must be a list of Policy objects, got {policies!r}")
    for policy in policies:
        if not isinstance(policy, Policy):
            raise TypeError(f"policies: {policy!r} is not a Policy")
    if limits is not None and not isinstance(limits, Limits):
        raise TypeError(f"limits must be a Limits instance, got {limits!r}")
    for name, callback in callbacks.items():
        if callback is not None and not callable(callback):
            raise TypeError(f"{name} must be callable, got {callback!r}")


def check_executor(binding: ComponentBinding, has_executor: bool) -> None:
    """A procedure reference is a structural promise that domain calls can run: refuse it
    now rather than let the first agent call find out."""
    if binding.procedures and not has_executor:
        raise DefinitionError(
            "PLANE_VIOLATION",
            f"{binding.contract.type}@{binding.instance_id} references "
            f"{', '.join(ref.procedure_id for ref in binding.procedures)} but this registry has no "
            "procedure executor: give AgentSurfaceRegistry(procedure_executor=...) one",
        )


def guard_accepts(on_register: Callable[[Mapping[str, Any]], str], binding: ComponentBinding) -> bool:
    """The host's ``on_register`` guard; a guard that raises fails closed."""
    contract = binding.contract
    candidate = {"type": contract.type, "instanceId": binding.instance_id, "origin": contract.origin}
    try:
        return on_register(candidate) == "accept"
    except Exception:
        log.exception("on_register guard raised; rejecting %s@%s", contract.type, binding.instance_id)
        return False


def suffix_collisions(
    binding: ComponentBinding, domain_paths: AbstractSet[str], policy: str
) -> list[SurfaceEvent]:
    """View capabilities that look like copies of a domain procedure: raise under policy
    'error'; otherwise warn and return the events to dispatch once the registration happened."""
    events: list[SurfaceEvent] = []
    if policy == "off" or not domain_paths:
        return events
    contract = binding.contract
    for name in (*contract.observations, *contract.actions):
        path = f"{contract.type}.{name}"
        if path in domain_paths:
            view_id, domain_id = f"view:{path}", f"domain:{path}"
            if policy == "error":
                raise DefinitionError(
                    "PLANE_VIOLATION", f"{view_id} duplicates the domain procedure {domain_id}"
                )
            log.warning("%s looks like a copy of the domain procedure %s", view_id, domain_id)
            events.append(
                make_event("collision-suspected", viewCapabilityId=view_id, domainProcedureId=domain_id)
            )
    return events

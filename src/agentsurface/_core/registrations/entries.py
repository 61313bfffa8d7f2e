"""Typed capability entries: one per capability of a registration, each owning its governance.

An entry is what the pipeline, the snapshot and explain read about one capability: its
description, timeout, output schema, idempotency, confirmation floor, audit level and queue
group. Observation, action and procedure entries are distinct types, so code branches on the
kind only where behaviour really differs (``match``), never to find where a field lives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import ClassVar, Literal, TypeAlias

from ..contracts import (
    ActionBinding,
    ActionContract,
    ComponentBinding,
    Concurrency,
    ObservationBinding,
    ObservationContract,
    ProcedureContract,
    ProcedureReference,
    resolved,
)
from ..contracts.kinds import AuditLevel, ConfirmationLevel
from ..limits import Limits
from ..policies.base import Policy, PolicyScope
from ..records import derived, record
from ..schemas.schema import Schema

PolicyChain: TypeAlias = tuple[tuple[Policy, PolicyScope], ...]  # registry → component → capability
Reason: TypeAlias = str | Callable[[], str] | None


@record
class QueueGroup:
    """Where an action or procedure call waits its turn: a group key, how many may run at once,
    and how many may wait."""

    key: str
    max_active: int
    depth: int


@record(hot=True, eq=False)
class ObservationEntry:
    """A view observation: reads state, never confirmed, runs in the observation pool."""

    capability_id: str
    name: str
    contract: ObservationContract
    binding: ObservationBinding
    policies: PolicyChain

    kind: ClassVar[Literal["observation"]] = "observation"
    effect: ClassVar[Literal["read"]] = "read"
    idempotent: ClassVar[bool] = True
    confirmation: ClassVar[ConfirmationLevel] = "never"
    audit: ClassVar[AuditLevel] = "none"

    @derived
    def description(self) -> str:
        return self.contract.description

    @derived
    def output(self) -> Schema:
        return self.contract.output

    @derived
    def when(self) -> Callable[[], bool] | None:
        return self.binding.when

    @derived
    def unavailable_reason(self) -> Reason:
        return self.binding.unavailable_reason

    def timeout(self, limits: Limits) -> float:
        return self.contract.timeout or limits.observation_timeout

    def queue_group(self, registration_id: str, limits: Limits) -> QueueGroup | None:
        return None  # observations share the bounded pool, not a FIFO group


@record(hot=True, eq=False)
class ActionEntry:
    """A view action: changes presentation state (local state or navigation)."""

    capability_id: str
    name: str
    contract: ActionContract
    binding: ActionBinding
    policies: PolicyChain

    kind: ClassVar[Literal["action"]] = "action"

    @derived
    def effect(self) -> str:
        return self.contract.effect

    @derived
    def description(self) -> str:
        return self.contract.description

    @derived
    def output(self) -> Schema | None:
        return self.contract.output

    @derived
    def idempotent(self) -> bool:
        return bool(self.contract.idempotent)

    @derived
    def confirmation(self) -> ConfirmationLevel:
        return resolved(self.contract.confirmation)

    @derived
    def audit(self) -> AuditLevel:
        return self.contract.audit or "metadata"

    @derived
    def when(self) -> Callable[[], bool] | None:
        return self.binding.when

    @derived
    def unavailable_reason(self) -> Reason:
        return self.binding.unavailable_reason

    @derived
    def navigation(self) -> bool:
        """A navigation's unmount aborts only the handler's signal: the router's answer settles it."""
        return self.contract.effect == "navigation"

    def timeout(self, limits: Limits) -> float:
        return self.contract.timeout or limits.action_timeout

    def queue_group(self, registration_id: str, limits: Limits) -> QueueGroup | None:
        cached = self.__dict__.get("_queue_group")
        if cached is not None and cached[0] is limits and cached[1] == registration_id:
            return cached[2]  # type: ignore[no-any-return]
        group = _group(self.contract.concurrency, registration_id, self.capability_id, limits)
        self.__dict__["_queue_group"] = (limits, registration_id, group)  # frozen: kept aside
        return group


@record(hot=True, eq=False)
class ProcedureEntry:
    """A domain procedure referenced from a mounted component; the host's executor runs it."""

    capability_id: str
    name: str
    reference: ProcedureReference
    policies: PolicyChain

    kind: ClassVar[Literal["procedure"]] = "procedure"

    @derived
    def contract(self) -> ProcedureContract:
        return self.reference.contract

    @derived
    def effect(self) -> str:
        return self.reference.contract.effect

    @derived
    def description(self) -> str:
        return self.reference.contract.description

    @derived
    def output(self) -> Schema | None:
        return self.reference.contract.output

    @derived
    def idempotent(self) -> bool:
        return bool(self.reference.contract.idempotent)

    @derived
    def confirmation(self) -> ConfirmationLevel:
        return self.reference.confirmation  # the reference may raise the contract's floor

    @derived
    def audit(self) -> AuditLevel:
        return self.reference.contract.audit or "metadata"

    @derived
    def when(self) -> Callable[[], bool] | None:
        return self.reference.when

    @derived
    def unavailable_reason(self) -> Reason:
        return self.reference.unavailable_reason

    def timeout(self, limits: Limits) -> float:
        return self.reference.contract.timeout or limits.procedure_timeout

    def queue_group(self, registration_id: str, limits: Limits) -> QueueGroup | None:
        concurrency = self.reference.concurrency
        if concurrency is None:  # one group per procedure identity per referencing registration
            return QueueGroup(f"proc|{registration_id}|{self.capability_id}", 1, limits.action_queue_depth)
        return _group(concurrency, registration_id, self.capability_id, limits)


CapabilityEntry: TypeAlias = ObservationEntry | ActionEntry | ProcedureEntry


def _group(conc: Concurrency, registration_id: str, capability_id: str, limits: Limits) -> QueueGroup:
    depth = limits.action_queue_depth if conc.queue_depth is None else conc.queue_depth
    if conc.mode == "instance":
        return QueueGroup(f"inst|{registration_id}", 1, depth)
    if conc.mode == "capability":
        return QueueGroup(f"cap|{registration_id}|{capability_id}", 1, depth)
    if conc.mode == "key":
        return QueueGroup(f"key|{conc.key}", 1, depth)
    return QueueGroup(f"par|{registration_id}|{capability_id}", int(conc.max or 1), depth)


def _scoped(policies: Iterable[Policy], scope: PolicyScope) -> PolicyChain:
    return tuple((policy, scope) for policy in policies) if policies else ()


def build_capabilities(
    binding: ComponentBinding, registry_policies: tuple[Policy, ...]
) -> dict[str, CapabilityEntry]:
    """The entries of one binding, each with its policy chain precomputed."""
    contract = binding.contract
    outer: PolicyChain = ()
    if registry_policies or binding.policies:
        outer = _scoped(registry_policies, "registry") + _scoped(binding.policies, "component")
    entries: dict[str, CapabilityEntry] = {}
    bound = binding.observations
    for name, observation in contract.observations.items():
        obs = bound[name]
        cid = contract.capability_id(name)
        chain = outer + _scoped(obs.policies, "capability") if obs.policies else outer
        entries[cid] = ObservationEntry(cid, name, observation, obs, chain)
    bound_actions = binding.actions
    for name, action in contract.actions.items():
        act = bound_actions[name]
        cid = contract.capability_id(name)
        chain = outer + _scoped(act.policies, "capability") if act.policies else outer
        entries[cid] = ActionEntry(cid, name, action, act, chain)
    for ref in binding.procedures:
        cid = ref.procedure_id
        entries[cid] = ProcedureEntry(cid, cid.split(":", 1)[1], ref, outer + _scoped(ref.policies, "capability"))
    return entries


def capability_ids(binding: ComponentBinding) -> frozenset[str]:
    """The ids of the capabilities a registration of ``binding`` holds."""
    own = binding.contract.capability_id_set
    if not binding.procedures:
        return own
    return own.union(ref.procedure_id for ref in binding.procedures)


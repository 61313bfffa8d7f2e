"""Static contracts and the bindings that attach live behaviour: the one place to import them from.

A contract is what the manifest hashes and the authority approves: ids, descriptions, kinds,
effects, schemas, confirmation floor, required policies. A binding supplies handlers and live
state at mount time and cannot change any of that. View contracts live in ``view``, domain
procedures in ``procedures``, live bindings in ``bindings``, checked fields in ``fields``, and
the options the decorators pass to the contracts in ``options``.
"""

from __future__ import annotations

from .bindings import ActionBinding, Handler, ObservationBinding, is_minted
from .fields import Concurrency, frozen_meta, resolved
from .procedures import ProcedureContract, ProcedureReference
from .view import ActionContract, ComponentBinding, ComponentContract, ObservationContract

__all__ = [
    "ActionBinding",
    "ActionContract",
    "ComponentBinding",
    "ComponentContract",
    "Concurrency",
    "Handler",
    "ObservationBinding",
    "ObservationContract",
    "ProcedureContract",
    "ProcedureReference",
    "frozen_meta",
    "is_minted",
    "resolved",
]

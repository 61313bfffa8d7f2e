"""What a server serves: a procedure contract plus its implementation and its server-side rules.

The contract is the same object the page imports (same id, schemas, effect); the server adds
who may call it (``permissions``), whether it needs the page's confirmation evidence, and the
implementation, which runs inside the call's database transaction.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import field
from datetime import datetime
from typing import Any, Literal, TypeAlias

from .. import DefinitionError, ProcedureContract
from .._core.keywords import keywords_checked
from .._core.records import record
from ..bridge.wire import ServedProcedureInfo, schema_hash


@record
class Caller:
    """The authenticated caller, as the app's ``authenticate`` hook established it.

    ``tenant`` scopes the invocation ids and is what implementations filter by; ``data`` is the
    app's own principal object, passed through untouched.
    """

    id: str
    tenant: str | None = None
    permissions: frozenset[str] = frozenset()
    data: Any = None

    @property
    def scope(self) -> str:
        return f"{self.tenant or ''}\x1f{self.id}"


@record
class ConfirmationEvidence:
    """The page's record that a person approved this call.

    ``challenge`` names the server-minted challenge it answers (required by a procedure that
    requires approval: the server spends it once, for this caller, procedure and input);
    ``id`` is the page's own record (the challenge id when the page sent none); ``webauthn``
    is the opaque proof-of-presence payload for the ``verify_presence`` hook."""

    id: str
    approved_at: datetime
    challenge: str | None = None
    webauthn: dict[str, Any] | None = None


@record
class ProcedureCall:
    """What an implementation receives beside the validated input."""

    procedure_id: str
    caller: Caller
    invocation_id: str
    db: Any  # the store's connection, inside this call's transaction
    now: datetime
    confirmation: ConfirmationEvidence | None = None
    # The HTTP request the call came in on (a Starlette ``Request``): procedures served from an
    # app's own routes (agentsurface.fastapi, agentsurface.django) call the route with its
    # cookies and headers. Read it, never trust it: the caller is ``caller``.
    request: Any = None


Implementation = Callable[[ProcedureCall, Any], Any]
Approval: TypeAlias = "Literal['confirm', 'webauthn'] | Callable[[Caller], str]"
APPROVAL_LEVELS = ("confirm", "webauthn")


@record
class ServedProcedure:
    contract: ProcedureContract
    implementation: Implementation
    permissions: frozenset[str] = field(default_factory=frozenset)
    require_confirmation: bool = False
    # What an approval must prove: "confirm" (a server-minted challenge, spent once) or
    # "webauthn" (that challenge signed by the person's passkey); a function decides per caller.
    approval: Approval = "confirm"

    @property
    def id(self) -> str:
        return self.contract.id

    def info(self) -> ServedProcedureInfo:
        output = self.contract.output
        return ServedProcedureInfo(
            id=self.contract.id,
            effect=self.contract.effect,
            input_schema_hash=schema_hash(self.contract.input.json_schema),
            output_schema_hash=None if output is None else schema_hash(output.json_schema),
            requires_confirmation=self.require_confirmation,
        )


@keywords_checked("serve(...)")
def serve(
    contract: ProcedureContract,
    implementation: Implementation,
    *,
    permissions: Iterable[str] = (),
    require_confirmation: bool = False,
    approval: Approval | None = None,
) -> ServedProcedure:
    """Serve ``contract`` with ``implementation(call, input) -> output``.

    ``permissions``: every one must be in the caller's permissions. ``require_confirmation``:
    refuse with CONFIRMATION_REQUIRED (origin ``server``) unless the page sends its confirmation
    evidence answering a challenge the server minted for this caller, procedure and input
    (spent once). ``approval``: ``"confirm"`` (the default) or ``"webauthn"`` (the challenge
    signed by the person's passkey, checked by the server's ``verify_presence`` hook), or a
    function ``approval(caller) -> "confirm" | "webauthn"`` deciding per caller; giving it
    implies ``require_confirmation``. The implementation is synchronous (it runs in a worker thread, inside the
    transaction); it refuses by raising ``CapabilityFailure``.
    """
    if not isinstance(contract, ProcedureContract):
        raise DefinitionError("INVALID_DEFINITION", f"{contract!r} is not a ProcedureContract")
    if not callable(implementation):
        raise DefinitionError("INVALID_DEFINITION", "the implementation must be callable", path=contract.id)
    if inspect.iscoroutinefunction(implementation):
        raise DefinitionError(
            "INVALID_DEFINITION",
            "the implementation must be synchronous: it runs inside a database transaction in a worker thread",
            path=contract.id,
        )
    perms = frozenset(permissions) if not isinstance(permissions, str) else frozenset((permissions,))
    if any(not isinstance(p, str) or not p for p in perms):
        raise DefinitionError("INVALID_DEFINITION", "permissions must be non-empty strings", path=contract.id)
    if not isinstance(require_confirmation, bool):
        raise DefinitionError("INVALID_DEFINITION", "require_confirmation must be a bool", path=contract.id)
    if approval is None:
        approval = "confirm"
    elif not (callable(approval) or approval in APPROVAL_LEVELS):
        raise DefinitionError(
            "INVALID_DEFINITION", 'approval must be "confirm", "webauthn" or a function of the caller', path=contract.id
        )
    else:
        require_confirmation = True
    return ServedProcedure(contract, implementation, perms, require_confirmation, approval)

"""The Python authoring API: a class per component type.

    class DevicesTable(AgentComponent, type="devices.table", description="The devices table"):
        @observation("Rows currently visible")
        def visible_rows(self) -> list[Device]: ...

        @action("Select rows by id")
        def select_rows(self, ids: list[str]) -> None: ...

The class is the contract (``DevicesTable.contract``), an instance is the binding, methods are
capabilities. Schemas come from type hints: an action's parameters become its input object
(extra keys forbidden), a return annotation its output. Method ``select_rows`` is exposed as
``selectRows``. A parameter annotated ``ActionContext``/``ReadContext`` receives the context.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Generic, TypeVar, Unpack

from ..errors import DefinitionError
from ..ids import DEFAULT_INSTANCE_ID, validate_capability_name
from ..keywords import keywords_checked
from ..policies.base import Policy
from ..schemas import simple_hints
from ..schemas.schema import Schema, as_schema
from ..schemas.type_hints import vet_hint
from . import (
    ActionBinding,
    ActionContract,
    ComponentBinding,
    ComponentContract,
    ObservationBinding,
    ObservationContract,
    ProcedureReference,
)
from .context import ActionContext, ReadContext
from .options import ActionOptions, ObservationOptions, spelled_out
from .signatures import Signature

F = TypeVar("F", bound=Callable[..., Any])
Options = TypeVar("Options", ObservationOptions, ActionOptions)


def camel_case(name: str) -> str:
    """``select_rows`` → ``selectRows`` (leading/trailing underscores dropped)."""
    head, *rest = name.strip("_").split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest if part)


class _Member(Generic[F, Options]):
    """A decorated method: the function, its contract's options (resolved per class) and the
    options of its binding."""

    kind: ClassVar[str]

    def __init__(
        self,
        fn: F,
        description: str,
        options: Options,
        name: str | None,
        unavailable_reason: str | None,
        policies: Sequence[Policy],
    ) -> None:
        self.fn = fn
        self.description = description
        self.options: Options = options
        self.name = name or camel_case(fn.__name__)
        self.unavailable_reason = unavailable_reason
        self.policies = tuple(policies)
        self.when_fn: Callable[[Any], bool] | None = None
        self.when_reason: str | None = None
        self.precondition_fn: Callable[..., Any] | None = None
        self.preview_fn: Callable[..., Any] | None = None
        self.__doc__ = fn.__doc__

    @keywords_checked("@<capability>.when(...)")
    def when(self, fn: Callable[[Any], bool] | None = None, *, reason: str | None = None) -> Any:
        """Decorate a ``(self) -> bool`` method as this capability's availability predicate:
        ``@erase.when`` or ``@erase.when(reason="there is nothing to erase")``. While it is
        false the agent (and the inspector) sees the reason: ``reason=``, else the decorator's
        ``unavailable_reason=``, else the first line of the predicate's docstring."""
        if reason is not None and (not isinstance(reason, str) or not reason.strip()):
            raise DefinitionError("INVALID_DEFINITION", f"when(reason=) must be a non-empty string, got {reason!r}")

        def decorate(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
            self._check_distinct_name(check, "when")
            self.when_fn = check
            self.when_reason = reason
            return check

        return decorate if fn is None else decorate(fn)

    def _check_distinct_name(self, fn: Callable[..., Any], what: str) -> None:
        # Unlike @property.setter, the helper is returned as a plain function: reusing the
        # capability's method name would replace the capability in the class silently.
        if getattr(fn, "__name__", None) == self.fn.__name__:
            raise DefinitionError(
                "INVALID_DEFINITION",
                f"the @{self.fn.__name__}.{what} function must not be named {self.fn.__name__!r} "
                f"(it would replace the capability); name it e.g. 'can_{self.fn.__name__}'",
            )

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        return self if instance is None else self.fn.__get__(instance, owner)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)


class _ObservationMember(_Member[F, ObservationOptions]):
    kind = "observation"


class _ActionMember(_Member[F, ActionOptions]):
    kind = "action"

    def precondition(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Decorate ``(self, **input) -> None | PreconditionFailure`` as the precondition."""
        self._check_distinct_name(fn, "precondition")
        self.precondition_fn = fn
        return fn

    def preview(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Decorate ``(self, **input) -> list[Change]`` as what an approved call will change:
        the confirmation dialog shows it, and if it differs when the call is about to run (the
        state changed since the person saw it) the call is refused as stale. Synchronous."""
        self._check_distinct_name(fn, "preview")
        self.preview_fn = fn
        return fn


# The contract's options are declared once (options.py) and passed to the contract as given;
# the signature spelled out from them names each one, with the contract's default.
@keywords_checked("@observation(...)")
@spelled_out(ObservationOptions, ObservationContract, output=None)
def observation(
    description: str,
    *,
    name: str | None = None,
    unavailable_reason: str | None = None,
    policies: Sequence[Policy] = (),
    **options: Unpack[ObservationOptions],
) -> Callable[[F], _ObservationMember[F]]:
    """Declare a method as an observation; its return annotation is the output schema.

    ``options`` are :class:`~agentsurface.lowlevel.ObservationOptions`, the contract's fields
    (``output=`` replaces the return annotation). ``name`` is the capability's name (default:
    the method's, in camelCase); ``unavailable_reason`` and ``policies`` go to its binding."""

    def decorate(fn: F) -> _ObservationMember[F]:
        return _ObservationMember(fn, description, options, name, unavailable_reason, policies)

    return decorate


@keywords_checked("@action(...)")
@spelled_out(ActionOptions, ActionContract, input=None, output=None)
def action(
    description: str,
    *,
    name: str | None = None,
    unavailable_reason: str | None = None,
    policies: Sequence[Policy] = (),
    **options: Unpack[ActionOptions],
) -> Callable[[F], _ActionMember[F]]:
    """Declare a method as an action; parameters become the input object schema.

    ``options`` are :class:`~agentsurface.lowlevel.ActionOptions`, the contract's fields
    (``input=`` and ``output=`` replace the parameters and the return annotation). ``name`` is
    the capability's name (default: the method's, in camelCase); ``unavailable_reason`` and
    ``policies`` go to its binding."""

    def decorate(fn: F) -> _ActionMember[F]:
        return _ActionMember(fn, description, options, name, unavailable_reason, policies)

    return decorate


def _output_schema(sig: Signature, explicit: Any, where: str, required: bool) -> Schema | None:
    if explicit is not None:
        return as_schema(explicit)
    if sig.returns is inspect.Signature.empty:
        if required:
            raise DefinitionError(
                "INVALID_DEFINITION", "an observation needs a return annotation or output=", path=where
            )
        return None
    if sig.returns is None or sig.returns is type(None):
        if required:
            raise DefinitionError("INVALID_DEFINITION", "an observation cannot return None", path=where)
        return None
    try:
        hint = vet_hint(sig.returns, what="the return annotation", input=False)
    except DefinitionError as exc:
        raise exc.at(f"{where}.output") from None
    return simple_hints.schema_for_hint(hint)  # in the page, a simple hint needs no pydantic


class AgentComponent:
    """Base class for a component type. Subclass with ``type=`` and ``description=``."""

    contract: ClassVar[ComponentContract]
    _agent_members: ClassVar[dict[str, tuple[_Member[Any, Any], Signature]]]
    instance_id: str = DEFAULT_INSTANCE_ID

    def __init_subclass__(
        cls,
        *,
        type: str | None = None,
        description: str | None = None,
        meta: Mapping[str, Any] | None = None,
        origin: str = "first-party",
        priority: int = 0,
        tags: Sequence[str] = (),
        policies: Sequence[str] = (),
        **kwargs: Any,
    ) -> None:
        try:
            super().__init_subclass__(**kwargs)
        except TypeError:
            if not kwargs:
                raise
            raise _unknown_keywords(cls, kwargs) from None
        if type is None:
            # An abstract intermediate base, or a subclass of a concrete component that inherits
            # its contract unchanged. New capabilities there would silently be left out.
            declared = [attr for attr, value in vars(cls).items() if isinstance(value, _Member)]
            if declared and hasattr(cls, "contract"):
                raise DefinitionError(
                    "INVALID_DEFINITION",
                    f"{cls.__name__} declares capabilities {declared} but no type=: a subclass of "
                    f"a component keeps its parent's contract; give it its own type=",
                )
            return
        if description is None:
            description = (cls.__doc__ or "").strip()
        members: dict[str, tuple[_Member[Any, Any], Signature]] = {}
        observations: dict[str, ObservationContract] = {}
        actions: dict[str, ActionContract] = {}
        for klass in reversed(cls.__mro__):
            for attr, value in vars(klass).items():
                if isinstance(value, _Member):
                    try:
                        members[attr] = (value, Signature(value.fn, f"{type}.{value.name}"))
                    except DefinitionError as exc:
                        raise _in_method(exc, klass, attr) from None
        for attr, (member, sig) in members.items():
            where = f"{type}.{member.name}"
            if member.name in observations or member.name in actions:
                raise DefinitionError(
                    "DUPLICATE_CAPABILITY",
                    f"{cls.__name__}.{attr}() declares capability {member.name!r} a second time",
                    path=type,
                )
            try:
                validate_capability_name(member.name)
                if isinstance(member, _ObservationMember):
                    observed = member.options.copy()
                    observed["output"] = _output_schema(sig, observed.get("output"), where, required=True)
                    observations[member.name] = ObservationContract(member.description, **observed)
                else:
                    acted = member.options.copy()
                    given = acted.get("input")
                    acted["input"] = as_schema(given) if given is not None else sig.input_schema(where)
                    acted["output"] = _output_schema(sig, acted.get("output"), where, required=False)
                    actions[member.name] = ActionContract(member.description, **acted)
            except DefinitionError as exc:
                located = exc if (exc.path or "").startswith(where) else exc.at(where)
                raise _in_method(located, cls, attr) from None
        cls._agent_members = members
        cls.contract = ComponentContract(
            type=type,
            description=description,
            observations=observations,
            actions=actions,
            meta=meta,
            origin=origin,
            priority=priority,
            tags=tags,
            policies=policies,
        )

    def agent_procedures(self) -> Sequence[ProcedureReference]:
        """Override to make domain procedures available while this component is mounted."""
        return ()

    def agent_policies(self) -> Sequence[Policy]:
        """Override to attach component-level policies to this instance."""
        return ()

    def bind(
        self,
        *,
        instance_id: str | None = None,
        enabled: bool = True,
        parent: tuple[str, str] | None = None,
        internal: Mapping[str, Any] | None = None,
    ) -> ComponentBinding:
        """Bind this instance's methods as live handlers (looked up at call time)."""
        observations: dict[str, ObservationBinding] = {}
        actions: dict[str, ActionBinding] = {}
        for attr, (member, sig) in type(self)._agent_members.items():
            when = _bound_predicate(self, member.when_fn)
            reason = member.when_reason or member.unavailable_reason or _doc_line(member.when_fn)
            policies = member.policies
            if isinstance(member, _ObservationMember):
                observations[member.name] = ObservationBinding(
                    read=_reader(self, attr, sig), when=when, unavailable_reason=reason, policies=policies
                )
            else:
                actions[member.name] = ActionBinding(
                    execute=_executor(self, attr, sig),
                    when=when,
                    unavailable_reason=reason,
                    precondition=_with_input(self, member.precondition_fn, sig),
                    policies=policies,
                    preview=_with_input(self, member.preview_fn, sig),
                )
        return type(self).contract.bind(
            instance_id=instance_id or self.instance_id,
            observations=observations,
            actions=actions,
            procedures=tuple(self.agent_procedures()),
            policies=tuple(self.agent_policies()),
            enabled=enabled,
            parent=parent,
            internal=internal,
        )


_CLASS_KEYWORDS = ("type", "description", "meta", "origin", "priority", "tags", "policies")


def _unknown_keywords(cls: type, kwargs: Mapping[str, Any]) -> TypeError:
    """``class Board(AgentComponent, descripton=...)``: name the keywords it accepts."""
    import difflib

    wrong = []
    for name in kwargs:
        close = difflib.get_close_matches(name, _CLASS_KEYWORDS, n=1)
        wrong.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    accepted = ", ".join(f"{k}=" for k in _CLASS_KEYWORDS)
    return TypeError(
        f"class {cls.__name__}(AgentComponent, ...) got unknown keyword {', '.join(wrong)}; "
        f"AgentComponent accepts {accepted}"
    )


def _in_method(exc: DefinitionError, cls: type, attr: str) -> DefinitionError:
    """The same error, its message naming the Python method the author has to fix."""
    prefix = f"{cls.__name__}.{attr}(): "
    if exc.message.startswith(prefix):
        return exc
    return DefinitionError(exc.code, prefix + exc.message, path=exc.path)


def _reader(component: AgentComponent, attr: str, sig: Signature) -> Callable[[ReadContext], Any]:
    def read(ctx: ReadContext) -> Any:
        # getattr at call time: a handler swapped on the instance takes effect immediately.
        return getattr(component, attr)(**sig.call_args(None, ctx))

    return read


def _executor(component: AgentComponent, attr: str, sig: Signature) -> Callable[[Any, ActionContext], Any]:
    def execute(value: Any, ctx: ActionContext) -> Any:
        return getattr(component, attr)(**sig.call_args(value, ctx))

    return execute


def _doc_line(fn: Callable[..., Any] | None) -> str | None:
    """The first line of a predicate's docstring: the reason it gives when false."""
    doc = inspect.getdoc(fn) if fn is not None else None
    return doc.strip().splitlines()[0] if doc and doc.strip() else None


def _bound_predicate(
    component: AgentComponent, fn: Callable[[Any], bool] | None
) -> Callable[[], bool] | None:
    if fn is None:
        return None
    return lambda: bool(fn(component))


def _with_input(
    component: AgentComponent, fn: Callable[..., Any] | None, sig: Signature
) -> Callable[[Any, ReadContext], Any] | None:
    """A precondition or preview method, called as ``(value, ctx)`` with the input's fields."""
    if fn is None:
        return None

    def check(value: Any, ctx: ReadContext) -> Any:
        kwargs = sig.call_args(value, ctx)
        if sig.context_param is not None:
            kwargs.pop(sig.context_param)
        return fn(component, **kwargs)

    return check


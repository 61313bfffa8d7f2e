"""How a decorated method is called: which parameter takes the context, how validated input
maps to keyword arguments, and the input schema its parameters make."""

from __future__ import annotations

import inspect
import sys
import typing
from collections.abc import Callable
from typing import Any

from ..errors import DefinitionError
from ..schemas import simple_hints
from ..schemas.schema import Schema, schema_from_type
from ..schemas.type_hints import vet_hint
from .context import ActionContext, ReadContext

_CONTEXT_TYPES = (ActionContext, ReadContext)


def _is_context(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, _CONTEXT_TYPES)


class Signature:
    """How to call a method: which parameter takes the context, how input maps to arguments."""

    def __init__(self, fn: Callable[..., Any], where: str) -> None:
        try:
            hints = typing.get_type_hints(fn, include_extras=True)
        except Exception as exc:
            raise DefinitionError(
                "INVALID_DEFINITION", f"cannot resolve type hints: {exc}", path=where
            ) from exc
        params = list(inspect.signature(fn).parameters.values())[1:]  # drop self
        self.context_param: str | None = None
        self.fields: dict[str, tuple[Any, Any]] = {}
        for p in params:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise DefinitionError(
                    "INVALID_DEFINITION", f"*{p.name} parameters are not supported", path=where
                )
            hint = hints.get(p.name, Any)
            if _is_context(hint):  # by its annotation, as FastMCP does: a name alone is input
                self.context_param = p.name
                continue
            if p.name not in hints:
                raise DefinitionError(
                    "INVALID_DEFINITION", f"parameter {p.name!r} needs a type hint", path=where
                )
            try:
                hint = vet_hint(hint, what=f"parameter {p.name!r}", input=True)
            except DefinitionError as exc:
                raise exc.at(f"{where}.input") from None
            self.fields[p.name] = (hint, ... if p.default is p.empty else p.default)
        self.returns = hints.get("return", inspect.Signature.empty)
        # One parameter typed with a pydantic model: that model *is* the input.
        self.model_param: str | None = None
        if len(self.fields) == 1:
            ((pname, (hint, default)),) = self.fields.items()
            if _is_model(hint) and default is ...:
                self.model_param = pname

    def input_schema(self, where: str) -> Schema:
        if self.model_param is not None:
            return schema_from_type(self.fields[self.model_param][0])
        if simple_hints.SIMPLE_HINTS:  # in the page: simple parameters need no pydantic model
            simple = simple_hints.SimpleParamsSchema.build(_model_name(where), self.fields)
            if simple is not None:
                return simple
        from pydantic import ConfigDict, create_model

        try:
            model = create_model(  # type: ignore[call-overload]
                _model_name(where), __config__=ConfigDict(extra="forbid"), **self.fields
            )
        except Exception as exc:
            raise DefinitionError(
                "UNSUPPORTED_SCHEMA", f"cannot build an input schema: {exc}", path=where
            ) from exc
        return schema_from_type(model)

    def call_args(self, value: Any, ctx: Any) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        if self.model_param is not None:
            kwargs[self.model_param] = value
        elif self.fields:
            kwargs.update({name: getattr(value, name) for name in self.fields})
        if self.context_param is not None:
            kwargs[self.context_param] = ctx
        return kwargs


def _model_name(where: str) -> str:
    """``devices.table.selectRows`` → ``SelectRowsInput`` (pydantic uses it as the schema title)."""
    name = where.rsplit(".", 1)[-1]
    return name[:1].upper() + name[1:] + "Input"


def _is_model(hint: Any) -> bool:
    # Nothing is a pydantic model while pydantic is not imported (the page's start-up path).
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(hint, type) and issubclass(hint, pydantic.BaseModel)

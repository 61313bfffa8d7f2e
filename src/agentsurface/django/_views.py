"""A Django view declared as a procedure: how its input goes onto a request, and where it lives.

Views carry no types, so the declaration names them: ``input`` (a pydantic model) is what the
agent sends; the view's URL keyword arguments (``<int:pk>`` in its ``path()``) are input fields
by name, the other fields go as the JSON body (or, for ``method="GET"``, as the query string).
:func:`marked_views` walks a project's URL patterns (``include()`` too) and finds the views that
carry a declaration, with the chain of patterns that leads to each; :func:`view_path` builds the
path a call goes to from the input, and the resolver confirms it lands on that very view.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Literal

from django.urls import URLPattern, URLResolver
from django.utils.regex_helper import normalize
from pydantic import BaseModel, ConfigDict, create_model

from .. import DefinitionError
from .._core.records import record
from ..server.routes import RouteProcedure, declared_by

Method = Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
METHODS: tuple[str, ...] = ("GET", "POST", "PUT", "PATCH", "DELETE")


@record
class ViewInputs:
    """How a view procedure's input goes onto the request the view receives."""

    model: type[BaseModel]
    method: str
    names: frozenset[str]  # the input's field names as sent (aliases)


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part) or "View"


def input_model(model: Any, view_name: str, contract_id: str) -> type[BaseModel]:
    """The input model, refusing unknown fields (an agent's typo is an error, never dropped)."""
    if model is None:
        return create_model(f"{_camel(view_name)}Input", __config__=ConfigDict(extra="forbid"))
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise DefinitionError(
            "INVALID_DEFINITION", f"input must be a pydantic model class, got {model!r}", path=contract_id
        )
    if model.model_config.get("extra") == "forbid":
        return model
    strict: type[BaseModel] = create_model(model.__name__, __base__=model, __module__=model.__module__)
    strict.model_config["extra"] = "forbid"
    strict.model_rebuild(force=True)
    return strict


def field_names(model: type[BaseModel]) -> frozenset[str]:
    return frozenset(f.alias or name for name, f in model.model_fields.items())


@record
class MarkedView:
    """A marked view as the URL patterns reach it."""

    callback: Any
    declared: RouteProcedure
    chain: tuple[Any, ...]  # the pattern objects from the root to the view's own

    @property
    def inputs(self) -> ViewInputs:
        inputs = self.declared.route
        assert isinstance(inputs, ViewInputs)
        return inputs

    @property
    def url_kwargs(self) -> frozenset[str]:
        names: set[str] = set()
        for pattern in self.chain:
            names.update(pattern.regex.groupindex)
        return frozenset(names)

    @property
    def where(self) -> str:
        return "".join(str(pattern) for pattern in self.chain) or "/"


def _walk(patterns: Iterable[Any], chain: tuple[Any, ...]) -> Iterator[MarkedView]:
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _walk(entry.url_patterns, (*chain, entry.pattern))
        elif isinstance(entry, URLPattern):
            declared = declared_by(entry.callback)
            if declared is not None and isinstance(declared.route, ViewInputs):
                yield MarkedView(entry.callback, declared, (*chain, entry.pattern))


def marked_views(patterns: Sequence[Any]) -> list[MarkedView]:
    """Every view under ``patterns`` that declares a procedure, each reached by one pattern."""
    found: dict[str, MarkedView] = {}
    for view in _walk(patterns, ()):
        contract_id = view.declared.contract.id
        seen = found.get(contract_id)
        if seen is not None:
            if seen.callback is view.callback:
                raise DefinitionError(
                    "DUPLICATE_CAPABILITY",
                    f"the view of {contract_id!r} is reachable at {seen.where!r} and {view.where!r}; "
                    "a procedure is one URL pattern",
                    path=contract_id,
                )
            raise DefinitionError("DUPLICATE_CAPABILITY", f"{contract_id!r} is declared twice", path=contract_id)
        missing = sorted(view.url_kwargs - view.inputs.names)
        if missing:
            raise DefinitionError(
                "INVALID_DEFINITION",
                f"{view.where!r}: the URL's keyword arguments {missing} are not fields of the procedure's input",
                path=contract_id,
            )
        found[contract_id] = view
    return list(found.values())


def url_text(pattern: Any, name: str, value: Any) -> str:
    """A URL keyword argument's text, as the pattern's converter writes it."""
    converter = getattr(pattern, "converters", {}).get(name)
    if isinstance(value, bool):
        value = "true" if value else "false"
    return str(converter.to_url(value) if converter is not None else value)


def view_path(view: MarkedView, values: dict[str, Any]) -> str | None:
    """The path (``path_info``) of ``view`` with its URL keyword arguments from ``values``, or
    None when the pattern has no form for them."""
    parts: list[str] = []
    for pattern in view.chain:
        texts = {
            name: url_text(pattern, name, values[name])
            for name in pattern.regex.groupindex
            if values.get(name) is not None
        }
        for template, params in normalize(pattern.regex.pattern):
            if set(params) == set(texts):  # an optional group is left out when its field is
                parts.append(template % {name: texts[name] for name in params})
                break
        else:
            return None
    return "/" + "".join(parts)


__all__ = ["METHODS", "MarkedView", "Method", "ViewInputs", "field_names", "input_model", "marked_views", "view_path"]

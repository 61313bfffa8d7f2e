"""Components bound to the page: an attachment is registered while its element is in the
document (or while a ``with`` block runs), and the page surface that owns the attachments keeps
availability following the app's state."""

from __future__ import annotations

import logging
import sys
import weakref
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, Literal

from agentsurface import AgentComponent, AgentSurfaceRegistry, Consumer, DefinitionError, SurfaceEvent
from agentsurface.lowlevel import ComponentBinding, RegistrationHandle

from .availability import AvailabilityFollower
from .dom import Cancel, PageDom
from .scheduling import Coalescer, next_turn
from .state import on_state_change

log = logging.getLogger("agentsurface")

INSTANCE_ATTRIBUTE = "data-agent-instance"
# User events after which the app's own handlers have probably changed its state.
FOLLOWED_EVENTS = ("click", "input", "change", "submit", "keydown", "pointerup")

Status = Literal["pending", "registered", "rejected", "detached"]
Component = AgentComponent | ComponentBinding


class Attachment:
    """One component bound to one element (or to a code scope). Disposable: ``detach()``, or use
    it as a context manager (``with`` / ``async with``) to detach on leaving the block.

    ``status``: ``pending`` (its element is not in the document yet), ``registered``,
    ``rejected`` (the registry refused it, e.g. a duplicate instance; ``error`` says why) or
    ``detached`` (for good: detached, or its element left the document)."""

    def __init__(self, surface: PageSurface, component: Component, element: Any) -> None:
        self.component = component
        self.element = element
        self.handle: RegistrationHandle | None = None
        self.instance_id: str | None = None
        self.error: str | None = None
        self._surface: PageSurface | None = surface
        self._detached = False

    @property
    def status(self) -> Status:
        if self._detached:
            return "detached"
        if self.handle is None:
            return "rejected" if self.error is not None else "pending"
        return "registered" if self.handle.status == "active" else "rejected"

    def close(self) -> None:
        """Unregister (if registered) and forget the element. Idempotent."""
        if self._detached:
            return
        self._detached = True
        self._unregister()
        surface, self._surface = self._surface, None
        if surface is not None:
            surface._forget(self)
        self.element = None

    def _register(self, instance_id: str | None) -> None:
        assert self._surface is not None
        self.error = None
        self.instance_id = instance_id
        self.handle = self._surface.registry.register(_binding(self.component, instance_id))
        if self.handle.status != "active":
            self.error = "the registry refused this registration (duplicate instance or on_register guard)"
            self.handle = None

    def _unregister(self) -> None:
        handle, self.handle = self.handle, None
        if handle is not None:
            handle.close()

    def __enter__(self) -> Attachment:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    async def __aenter__(self) -> Attachment:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Attachment {_type_of(self.component)}@{self.instance_id or '-'} {self.status}>"


class PageSurface:
    """The page side of one registry: component lifecycles bound to the DOM, and availability
    that follows the app's state.

    - ``attach(component, element)`` registers the component while ``element`` is in the
      document; one ``MutationObserver`` on the document notices removal (the attachment ends)
      and a change of the element's ``data-agent-instance`` (re-registered under the new id).
    - ``mount(component)`` registers now, for a ``with`` / ``async with`` block.
    - Availability and ``describe()`` notes are re-evaluated, coalesced to one run per
      event-loop turn, after every ``State`` assignment, every settled invocation and
      ``changed()``, and one run per animation frame after user events on the page (clicks,
      input, keys: the app's own handlers changed its state).

    Get the one for a registry with ``page_surface(registry)`` (or the module-level
    ``attach``/``mount``); ``close()`` detaches everything and frees its JS proxies."""

    def __init__(
        self,
        registry: AgentSurfaceRegistry,
        *,
        dom: PageDom | None = None,
        consumer: Consumer | None = None,
        instance_attribute: str = INSTANCE_ATTRIBUTE,
        followed_events: Sequence[str] = FOLLOWED_EVENTS,
    ) -> None:
        self.registry = registry
        self.dom = dom if dom is not None else _default_dom()
        owns_dom = dom is None and self.dom is not None
        self.instance_attribute = instance_attribute
        self._attachments: dict[int, Attachment] = {}
        self._cleanups: list[Cancel] = []
        self._closed = False
        self.availability = AvailabilityFollower(registry, self._bump, consumer)
        self._soon = Coalescer(self.availability.reevaluate, next_turn)
        self._after_frame = Coalescer(self.availability.reevaluate, self._frame)
        self._cleanups += [self._soon.close, self._after_frame.close]
        if owns_dom and self.dom is not None:
            self._cleanups.insert(0, self.dom.close)  # runs last (cleanups run in reverse)
        self._cleanups.append(registry.subscribe(self._on_event, ("invocation-settled",)))
        self._cleanups.append(on_state_change(self._soon.request))
        if self.dom is not None:
            dom_ = self.dom
            self._cleanups.append(dom_.observe_document(self._reconcile, [instance_attribute]))
            if followed_events:
                self._cleanups.append(dom_.listen_document(followed_events, self._after_frame.request))

    # ------------------------------------------------------------------ public

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def attachments(self) -> list[Attachment]:
        return list(self._attachments.values())

    def attach(self, component: Component, element: Any) -> Attachment:
        """Bind ``component`` to ``element``: registered now if the element is in the document,
        else as soon as it is added; unregistered (and the attachment ended) when it leaves.
        For an ``AgentComponent``, the element's ``data-agent-instance`` attribute, when
        present, is the instance id. Structural defects raise ``DefinitionError`` here."""
        self._check_open()
        if self.dom is None:
            raise RuntimeError("attach() needs the page's DOM (run in the browser, or pass dom=)")
        attachment = Attachment(self, component, element)
        self._attachments[id(attachment)] = attachment
        if self.dom.is_connected(element):
            try:
                attachment._register(self._instance_of(attachment))
            except BaseException:
                attachment.close()
                raise
        return attachment

    def mount(self, component: Component) -> Attachment:
        """Register ``component`` now, for code that owns its lifetime: ``with
        surface.mount(c):`` (or ``async with``) unregisters on leaving the block."""
        self._check_open()
        attachment = Attachment(self, component, None)
        self._attachments[id(attachment)] = attachment
        try:
            attachment._register(None)
        except BaseException:
            attachment.close()
            raise
        return attachment

    def changed(self) -> None:
        """App state changed outside a ``State``: re-evaluate availability on the next turn."""
        if not self._closed:
            self._soon.request()

    def close(self) -> None:
        """Detach every attachment and stop observing the page (frees the observer's and the
        listeners' JS proxies). Idempotent."""
        if self._closed:
            return
        self._closed = True
        for attachment in list(self._attachments.values()):
            attachment.close()
        cleanups, self._cleanups = self._cleanups, []
        for cleanup in reversed(cleanups):
            try:
                cleanup()
            except Exception:  # e.g. the registry was disposed first
                log.debug("page surface cleanup raised", exc_info=True)
        _surfaces.pop(self.registry, None)

    def __enter__(self) -> PageSurface:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ internals

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this page surface is closed")

    def _forget(self, attachment: Attachment) -> None:
        self._attachments.pop(id(attachment), None)

    def _frame(self, callback: Callable[[], None]) -> Cancel:
        assert self.dom is not None
        return self.dom.request_frame(callback)

    def _instance_of(self, attachment: Attachment) -> str | None:
        if not isinstance(attachment.component, AgentComponent) or self.dom is None:
            return None
        return self.dom.attribute(attachment.element, self.instance_attribute) or None

    def _on_event(self, event: SurfaceEvent) -> None:
        # An action's handler may have changed the app's state; an observation's read nothing.
        if event.type == "invocation-settled" and event.data.get("effect") != "read":
            self._soon.request()

    def _bump(self) -> bool:
        """Make consumers re-read descriptions whose notes changed (see AvailabilityFollower)."""
        for attachment in self._attachments.values():
            if attachment.handle is not None and attachment.handle.status == "active":
                attachment.handle.invalidate()
                return True
        return False

    def _reconcile(self) -> None:
        """After DOM mutations: end attachments whose element left, re-register those whose
        instance id changed, register pending ones whose element arrived. Removals first, so a
        replacement element can take over the instance id of the one it replaces."""
        if self._closed or self.registry.closed or self.dom is None:
            return
        dom = self.dom
        arriving: list[Attachment] = []
        for attachment in list(self._attachments.values()):
            if attachment.element is None:  # a code-scoped mount
                continue
            connected = dom.is_connected(attachment.element)
            if attachment.handle is None and attachment.error is None:  # pending
                if connected:
                    arriving.append(attachment)
            elif not connected:
                attachment.close()
            elif self._instance_of(attachment) != attachment.instance_id:  # renamed (or retry a refusal)
                attachment._unregister()
                arriving.append(attachment)
        for attachment in arriving:
            try:
                attachment._register(self._instance_of(attachment))
            except DefinitionError as exc:  # e.g. an invalid instance id in the attribute
                attachment.error = str(exc)
                log.warning("%r not registered: %s", attachment, exc)


def _binding(component: Component, instance_id: str | None) -> ComponentBinding:
    if isinstance(component, AgentComponent):
        return component.bind(instance_id=instance_id)
    return component


def _type_of(component: Component) -> str:
    return component.contract.type


def _default_dom() -> PageDom | None:
    if sys.platform != "emscripten":
        return None
    from agentsurface.browser.dom import BrowserDom

    return BrowserDom()


_surfaces: weakref.WeakKeyDictionary[AgentSurfaceRegistry, PageSurface] = weakref.WeakKeyDictionary()


def page_surface(registry: AgentSurfaceRegistry, *, dom: PageDom | None = None) -> PageSurface:
    """The open page surface of ``registry``, created on first use (with ``dom``, or the
    browser's document when running in the page)."""
    surface = _surfaces.get(registry)
    if surface is None or surface.closed:
        surface = PageSurface(registry, dom=dom)
        _surfaces[registry] = surface
    return surface

"""The page layer's DOM (``agentsurface.page.dom.PageDom``) on the real document: one
MutationObserver, capture listeners, animation frames and text-only element building. Each
subscription makes one JS proxy and its cancel function destroys it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import js

from .convert import to_js_object
from .jsvalues import attribute, js_get
from .proxies import destroy, make_proxy

Cancel = Callable[[], None]




class BrowserDom:
    """``PageDom`` for ``js.document``. Animation frames share one proxy, made on the first
    request and kept until ``close()``: callbacks requested before the next frame are queued and
    run together by one ``requestAnimationFrame``."""

    def __init__(self) -> None:
        self.document = js.document
        self._frame_queue: list[Callable[[], None]] = []
        self._frame_proxy: Any = None
        self._frame_id: Any = None

    # ------------------------------------------------------------------ following the page

    def observe_document(self, on_mutation: Callable[[], None], attributes: Sequence[str]) -> Cancel:
        proxy = make_proxy(lambda _records, _observer: on_mutation())
        observer = js.MutationObserver.new(proxy)
        options: dict[str, Any] = {"childList": True, "subtree": True}
        if attributes:
            options |= {"attributes": True, "attributeFilter": list(attributes)}
        observer.observe(self.document, to_js_object(options))

        def cancel() -> None:
            observer.disconnect()
            destroy(proxy)

        return cancel

    def listen_document(self, events: Sequence[str], listener: Callable[[], None]) -> Cancel:
        proxy = make_proxy(lambda _event: listener())
        options = to_js_object({"capture": True, "passive": True})
        for name in events:
            self.document.addEventListener(name, proxy, options)

        def cancel() -> None:
            for name in events:
                self.document.removeEventListener(name, proxy, options)
            destroy(proxy)

        return cancel

    def request_frame(self, callback: Callable[[], None]) -> Cancel:
        self._frame_queue.append(callback)
        if self._frame_proxy is None:
            self._frame_proxy = make_proxy(self._run_frame)
        if self._frame_id is None:
            self._frame_id = js.requestAnimationFrame(self._frame_proxy)

        def cancel() -> None:
            if callback in self._frame_queue:
                self._frame_queue.remove(callback)
            if not self._frame_queue:
                self._release_frame()

        return cancel

    def _run_frame(self, _timestamp: Any) -> None:
        self._frame_id = None
        queue, self._frame_queue = self._frame_queue, []
        for callback in queue:
            callback()

    def _release_frame(self) -> None:
        if self._frame_id is not None:
            js.cancelAnimationFrame(self._frame_id)
            self._frame_id = None

    def close(self) -> None:
        """Cancel queued frame callbacks and free the frame proxy (kept between frames)."""
        self._frame_queue.clear()
        self._release_frame()
        proxy, self._frame_proxy = self._frame_proxy, None
        destroy(proxy)

    def is_connected(self, element: Any) -> bool:
        return bool(js_get(element, "isConnected"))

    def attribute(self, element: Any, name: str) -> str | None:
        return attribute(element, name)

    # ------------------------------------------------------------------ building (text only)

    def create(self, tag: str, text: str | None = None, attributes: dict[str, str] | None = None) -> Any:
        element = self.document.createElement(tag)
        for name, value in (attributes or {}).items():
            element.setAttribute(name, value)
        if text is not None:
            element.textContent = text
        return element

    def replace_children(self, parent: Any, children: Sequence[Any]) -> None:
        parent.replaceChildren(*children)

    def set_text(self, element: Any, text: str) -> None:
        element.textContent = text

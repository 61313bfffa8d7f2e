"""What the page layer needs from the browser's DOM, as a small protocol: the real one is
``agentsurface.browser.dom.BrowserDom``; CPython tests pass a fake."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

# Undoes a subscription or a scheduled callback (and frees whatever JS proxy it needed).
Cancel = Callable[[], None]


class PageDom(Protocol):
    """The document, as seen by components bound to elements and by the inspector."""

    def observe_document(self, on_mutation: Callable[[], None], attributes: Sequence[str]) -> Cancel:
        """Call ``on_mutation`` after any batch of DOM mutations: nodes added or removed anywhere
        in the document, or one of ``attributes`` changed on any element."""
        ...

    def listen_document(self, events: Sequence[str], listener: Callable[[], None]) -> Cancel:
        """Call ``listener`` (capture phase, passive) when any of ``events`` happens anywhere."""
        ...

    def request_frame(self, callback: Callable[[], None]) -> Cancel:
        """Call ``callback`` once, before the next paint."""
        ...

    def is_connected(self, element: Any) -> bool:
        """Whether ``element`` is in the document."""
        ...

    def attribute(self, element: Any, name: str) -> str | None:
        """The attribute's value, or None when the element lacks it."""
        ...

    def create(self, tag: str, text: str | None = None, attributes: dict[str, str] | None = None) -> Any:
        """A new element; ``text`` becomes a text node (never parsed as HTML)."""
        ...

    def replace_children(self, parent: Any, children: Sequence[Any]) -> None:
        """Make ``children`` the only children of ``parent``."""
        ...

    def set_text(self, element: Any, text: str) -> None:
        """Replace the element's content with one text node."""
        ...

    def close(self) -> None:
        """Free what this DOM holds between calls (its animation-frame proxy)."""
        ...

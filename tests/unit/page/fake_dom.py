"""A fake document for the page layer's CPython tests: elements that are in or out of the
document, one observer list, queued animation frames and document listeners the test fires."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


class FakeElement:
    def __init__(self, tag: str = "div", text: str | None = None, attributes: dict[str, str] | None = None):
        self.tag = tag
        self.text = text
        self.attributes = dict(attributes or {})
        self.children: list[FakeElement] = []
        self.connected = False

    def all_text(self) -> str:
        return (self.text or "") + "".join(child.all_text() for child in self.children)


class FakeDom:
    """Mutations are delivered when the test calls ``deliver_mutations()`` (the browser delivers
    them as a microtask after the script that changed the DOM)."""

    def __init__(self) -> None:
        self.observers: list[tuple[Callable[[], None], Sequence[str]]] = []
        self.listeners: list[tuple[Sequence[str], Callable[[], None]]] = []
        self.frames: list[Callable[[], None]] = []
        self.owed_mutation = False
        self.closed = False

    # what the page (the test) does
    def insert(self, element: FakeElement) -> None:
        element.connected = True
        self.owed_mutation = True

    def remove(self, element: FakeElement) -> None:
        element.connected = False
        self.owed_mutation = True

    def set_attribute(self, element: FakeElement, name: str, value: str) -> None:
        element.attributes[name] = value
        if any(name in attrs for _cb, attrs in self.observers):
            self.owed_mutation = True

    def deliver_mutations(self) -> None:
        if self.owed_mutation:
            self.owed_mutation = False
            for callback, _attrs in list(self.observers):
                callback()

    def fire(self, event: str) -> None:
        for events, listener in list(self.listeners):
            if event in events:
                listener()

    def run_frame(self) -> int:
        frames, self.frames = self.frames, []
        for callback in frames:
            callback()
        return len(frames)

    # PageDom
    def observe_document(self, on_mutation: Callable[[], None], attributes: Sequence[str]) -> Callable[[], None]:
        entry = (on_mutation, attributes)
        self.observers.append(entry)
        return lambda: self.observers.remove(entry)

    def listen_document(self, events: Sequence[str], listener: Callable[[], None]) -> Callable[[], None]:
        entry = (events, listener)
        self.listeners.append(entry)
        return lambda: self.listeners.remove(entry)

    def request_frame(self, callback: Callable[[], None]) -> Callable[[], None]:
        self.frames.append(callback)
        return lambda: self.frames.remove(callback) if callback in self.frames else None

    def is_connected(self, element: Any) -> bool:
        return bool(element.connected)

    def attribute(self, element: Any, name: str) -> str | None:
        value = element.attributes.get(name)
        return None if value is None else str(value)

    def create(self, tag: str, text: str | None = None, attributes: dict[str, str] | None = None) -> FakeElement:
        return FakeElement(tag, text, attributes)

    def replace_children(self, parent: Any, children: Sequence[Any]) -> None:
        parent.children = list(children)
        self.owed_mutation = True

    def set_text(self, element: Any, text: str) -> None:
        element.text = text
        element.children = []

    def close(self) -> None:
        self.closed = True

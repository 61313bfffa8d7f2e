"""agentsurface._compat's wrappers of asyncio's private calls: the fast private path where the
Python has it, a public fallback (or a clear error) where it does not."""

from __future__ import annotations

import asyncio

import pytest

from agentsurface import _compat


def test_the_private_fast_path_is_bound_on_this_python() -> None:
    assert _compat.running_loop_or_none is asyncio._get_running_loop


def test_outside_a_loop_there_is_none_and_inside_the_running_one() -> None:
    assert _compat.running_loop_or_none() is None
    assert _compat._running_loop_or_none() is None

    async def inside() -> tuple[object, object, object]:
        return _compat.running_loop_or_none(), _compat._running_loop_or_none(), asyncio.get_running_loop()

    fast, fallback, loop = asyncio.run(inside())
    assert fast is loop and fallback is loop


def test_set_running_loop_sets_and_clears_the_threads_loop() -> None:
    loop = asyncio.new_event_loop()
    try:
        _compat.set_running_loop(loop)
        assert _compat.running_loop_or_none() is loop
        _compat.set_running_loop(None)
        assert _compat.running_loop_or_none() is None
    finally:
        _compat.set_running_loop(None)
        loop.close()


def test_without_asyncio_s_private_setter_it_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(asyncio, "_set_running_loop")
    with pytest.raises(NotImplementedError, match="cannot set the running loop"):
        _compat.set_running_loop(None)

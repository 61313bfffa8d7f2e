"""The bridge's stdin reader (mcp_server/stdin_lines.py) over a real pipe: lines as the SDK's
reader gives them, and a wait for the client's next line that a cancellation ends at once."""

from __future__ import annotations

import os
import threading
import time

import anyio

from agentsurface.mcp_server.stdin_lines import CHUNK_BYTES, StdinLines


async def _lines(fd: int) -> list[str]:
    return [line async for line in StdinLines(fd)]


def _write_then_close(fd: int, *chunks: bytes) -> None:
    def write() -> None:
        for chunk in chunks:
            os.write(fd, chunk)
            time.sleep(0.01)  # separate reads on the other end
        os.close(fd)

    threading.Thread(target=write, daemon=True).start()


def test_lines_split_across_reads_come_whole_and_the_last_without_its_newline() -> None:
    read, write = os.pipe()
    _write_then_close(write, b'{"a":', b'1}\n{"b":2}\n{"c"', b":3}")
    try:
        assert anyio.run(_lines, read) == ['{"a":1}\n', '{"b":2}\n', '{"c":3}']
    finally:
        os.close(read)


def test_invalid_utf8_becomes_the_replacement_character_and_a_long_line_comes_whole() -> None:
    read, write = os.pipe()
    long = b"x" * (3 * CHUNK_BYTES + 5)
    _write_then_close(write, b"caf\xc3\xa9 \xff\n", long + b"\n")
    try:
        lines = anyio.run(_lines, read)
    finally:
        os.close(read)
    assert lines == ["café \ufffd\n", long.decode() + "\n"]


def test_the_end_of_the_file_ends_the_lines() -> None:
    read, write = os.pipe()
    os.close(write)
    try:
        assert anyio.run(_lines, read) == []
    finally:
        os.close(read)


def test_a_cancelled_wait_for_a_line_that_never_comes_ends_at_once() -> None:
    read, write = os.pipe()  # the writer stays open and silent, as a client between requests

    async def wait_then_cancel() -> float:
        started = time.monotonic()
        with anyio.move_on_after(0.2):
            await _lines(read)
        return time.monotonic() - started

    try:
        assert anyio.run(wait_then_cancel) < 1.0
        # A line that arrives after the reader was cancelled is dropped, not an error.
        os.write(write, b"late\n")
        time.sleep(0.1)
    finally:
        os.close(write)
        os.close(read)

"""The MCP client's lines on the bridge's stdin, in a form whose wait can be cancelled.

The SDK reads stdin with ``readline`` in a worker thread that a cancellation waits for: a bridge
that could not open its page, or that a client ended with SIGTERM, went on until the client's
next line or the end of stdin. Here a daemon thread reads the file descriptor with ``os.read``
and hands each line to the event loop, one at a time (the client is held back as by a pipe
that nobody reads): cancelling the wait for a line ends it at once, and the process can exit
while the thread still waits in ``read`` (it holds no lock the interpreter's shutdown needs, as
``sys.stdin``'s buffer would).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import AsyncIterator

import anyio
import anyio.from_thread
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectSendStream

CHUNK_BYTES = 64 * 1024


class StdinLines(anyio.AsyncFile[str]):
    """``async for line in StdinLines(fd)``: the lines of ``fd`` decoded as UTF-8 (an invalid
    byte becomes U+FFFD, as the SDK's own reader does), the last one even without its newline.
    A read error ends the lines as the end of the file does."""

    def __init__(self, fd: int = 0) -> None:
        super().__init__(sys.stdin)  # what AsyncFile wraps; only the iteration below is used
        self._fd = fd

    async def __aiter__(self) -> AsyncIterator[str]:
        send, receive = anyio.create_memory_object_stream[str](0)
        token = anyio.lowlevel.current_token()
        threading.Thread(
            target=self._read, args=(send, token), name="agentsurface stdin", daemon=True
        ).start()
        async with receive:
            async for line in receive:
                yield line

    def _read(self, send: MemoryObjectSendStream[str], token: anyio.lowlevel.EventLoopToken) -> None:
        def hand_over(line: bytes) -> None:
            anyio.from_thread.run(send.send, line.decode("utf-8", "replace"), token=token)

        started: list[bytes] = []  # the line being read, in its chunks (a long line is not re-scanned)
        try:
            while True:
                try:
                    chunk = os.read(self._fd, CHUNK_BYTES)
                except OSError:
                    chunk = b""
                if not chunk:
                    break
                *ended, rest = chunk.split(b"\n")
                for line in ended:
                    hand_over(b"".join([*started, line, b"\n"]))
                    started = []
                if rest:
                    started.append(rest)
            if started:
                hand_over(b"".join(started))
            anyio.from_thread.run_sync(send.close, token=token)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.RunFinishedError, RuntimeError):
            pass  # the bridge stopped listening, or its event loop ended: nothing waits for these lines

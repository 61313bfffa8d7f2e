"""Odd request paths (encoded NUL, ``..``, overlong, invalid percent-escapes, invalid UTF-8) always get
an HTTP response from both servers, never a dropped connection; those naming no file get a 404."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from demo.server.backend import DemoServer, start_demo_server
from scripts.serve import start_server

NOT_FOUND_PATHS: list[bytes] = [
    b"/%00",
    b"/index.html%00",
    b"/index.html%00.txt",
    b"/a%00/b/",
    b"/web/%00/",
    b"/%00%00%00",
    b"/%ed%a0%80",  # a UTF-8-encoded surrogate
    b"/%ed%a0%80/index.html",
    b"/%ff%fe",
    b"/%c0%ae%c0%ae/%c0%ae%c0%ae/etc/passwd",  # overlong encodings of '.'
    b"/..%2f..%2f..%2fetc/passwd",
    b"/%2e%2e/%2e%2e/etc/passwd",
    b"/../../etc/passwd",
    b"/%zz",
    b"/%",
    b"/%4",
    b"/" + b"a" * 5000,  # longer than a file name may be
    b"/" + b"a/" * 3000,  # deeper than a path may be
    b"/" + b"%41" * 2000,
]
# A request line that is not ASCII: uvicorn refuses the request itself (400), the stdlib server
# finds no such file (404); either way an HTTP answer.
RAW_NON_ASCII = b"/\xff\xfe"
# Anything but a dropped connection is acceptable for these (they may name the root listing).
ANY_RESPONSE_PATHS: list[bytes] = [b"/%2e%2e/", b"/./", b"//", b"/?%00", b"/#%00", b"/api/%00", b"/api/%ed%a0%80"]


@pytest.fixture(params=["demo-backend", "static-server"])
def address(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, int]]:
    (tmp_path / "index.html").write_text("<!doctype html><title>x</title>")
    (tmp_path / "web").mkdir()
    server: DemoServer | ThreadingHTTPServer
    if request.param == "demo-backend":
        server, _ = start_demo_server(tmp_path)
    else:
        server, _ = start_server(tmp_path)
    host, port = server.server_address[:2]
    yield str(host), int(port)
    server.shutdown()
    server.server_close()


def status_of(address: tuple[str, int], path: bytes) -> int:
    """The status line's code, read off a raw socket (urllib would refuse to send these paths)."""
    with socket.create_connection(address, timeout=10) as sock:
        sock.sendall(b"GET " + path + b" HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        head = b""
        while b"\r\n" not in head:
            chunk = sock.recv(4096)
            assert chunk, f"connection dropped with no response for {path[:40]!r}"
            head += chunk
    version, code, *_ = head.split(b"\r\n", 1)[0].split(b" ")
    assert version.startswith(b"HTTP/1."), head[:80]
    return int(code)


@pytest.mark.parametrize("path", NOT_FOUND_PATHS, ids=[p[:24].decode("latin-1") for p in NOT_FOUND_PATHS])
def test_odd_static_path_gets_a_404(address: tuple[str, int], path: bytes) -> None:
    assert status_of(address, path) == 404


@pytest.mark.parametrize("path", ANY_RESPONSE_PATHS, ids=[p.decode("latin-1") for p in ANY_RESPONSE_PATHS])
def test_odd_path_gets_an_http_response(address: tuple[str, int], path: bytes) -> None:
    assert 200 <= status_of(address, path) < 600


def test_non_ascii_request_line_gets_a_400_or_404(address: tuple[str, int]) -> None:
    assert status_of(address, RAW_NON_ASCII) in (400, 404)


def test_server_still_serves_after_odd_paths(address: tuple[str, int]) -> None:
    for path in [*NOT_FOUND_PATHS, RAW_NON_ASCII]:
        status_of(address, path)
    assert status_of(address, b"/index.html") == 200

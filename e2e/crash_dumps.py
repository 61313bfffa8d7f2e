"""What a Chromium crash dump says, in a line or two a test failure can carry: which process died
(browser, renderer, ...), of what signal, at which address of which module, which page it had
loaded, the switches that matter, and whether one of Chromium's allocation samplers ran in it
(``--subproc-heap-profiling`` marks a renderer that its heap profiler samples; a ``gwp-asan-*``
annotation one that GWP-ASan guards): both walk past the end of Pyodide's WebAssembly stacks, see
``agentsurface.testing.chromium_flags``.

Debian's Chromium has crashpad write a minidump into ``~/.config/chromium/Crash Reports/pending``
whatever ``--user-data-dir`` says. The reader knows the few minidump streams it needs (exception,
module list, crashpad's annotations); it never symbolizes (Debian ships no symbols for Chromium).
"""

from __future__ import annotations

import signal
import struct
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

CRASH_DIRS = [Path.home() / ".config" / "chromium" / "Crash Reports" / "pending"]

_MODULE_LIST, _EXCEPTION, _CRASHPAD_INFO = 4, 6, 0x43500001
_MODULE_SIZE = 108
_RIP_OFFSET = 0xF8  # in an x86-64 MINIDUMP_CONTEXT
# Switches worth naming in a failure: the heap profiler's, and the ones that change a page's life.
NOTABLE_SWITCHES = ("--subproc-heap-profiling", "--disable-back-forward-cache", "--enable-features=")


@dataclass
class CrashDump:
    path: Path
    process: str = "?"
    signal: str = "?"
    fault_address: int | None = None
    pc: str = "?"
    origin: str | None = None
    switches: list[str] = field(default_factory=list)
    annotations: dict[str, str] = field(default_factory=dict)

    @property
    def heap_profiled(self) -> bool:
        return "--subproc-heap-profiling" in self.switches

    @property
    def gwp_asan(self) -> bool:
        """GWP-ASan was on in the process (it sets a crash key per allocator it guards)."""
        return any(key.startswith("gwp-asan-") for key in self.annotations)

    @property
    def samplers(self) -> list[str]:
        """The frame-pointer samplers that ran in the process, with the feature that turns each off."""
        found = []
        if self.heap_profiled:
            found.append("Chromium's heap profiler (HeapProfilerReporting)")
        if self.gwp_asan:
            found.append("GWP-ASan (GwpAsanMalloc, GwpAsanPartitionAlloc)")
        return found

    def describe(self) -> str:
        where = f" at {self.fault_address:#x}" if self.fault_address is not None else ""
        notable = [s for s in self.switches if s.startswith(NOTABLE_SWITCHES)]
        text = (
            f"{self.process} process died of {self.signal}{where}, pc {self.pc}"
            f"{f', page {self.origin}' if self.origin else ''}; notable switches: {' '.join(notable) or 'none'}"
        )
        if self.samplers:
            text += (
                f" -- sampled by {' and '.join(self.samplers)}: these crash Pyodide pages "
                "(launch with --disable-features=HeapProfilerReporting,GwpAsanMalloc,GwpAsanPartitionAlloc; "
                "agentsurface.testing.with_features adds it)"
            )
        return f"{text} [{self.path.name}]"


def read_dump(path: Path) -> CrashDump:
    """What ``path`` says; fields stay "?" where the dump lacks them or is cut short."""
    dump = CrashDump(path)
    try:
        data = path.read_bytes()
        streams = _streams(data)
        modules = _modules(data, streams.get(_MODULE_LIST))
        _read_exception(data, streams.get(_EXCEPTION), modules, dump)
        annotations = _annotations(data, streams.get(_CRASHPAD_INFO))
    except (OSError, struct.error, UnicodeDecodeError):
        return dump
    dump.process = annotations.get("ptype", "browser")  # the browser process has no ptype
    dump.origin = annotations.get("loaded-origin-0")
    dump.annotations = annotations
    count = int(annotations.get("num-switches", "0") or 0)
    dump.switches = [annotations[f"switch-{i}"] for i in range(1, count + 1) if f"switch-{i}" in annotations]
    return dump


def dumps_since(since: float, dirs: Iterable[Path] = CRASH_DIRS) -> list[Path]:
    """Dumps written at or after ``since`` (a ``time.time()``), oldest first."""
    found = [p for d in dirs if d.is_dir() for p in d.glob("*.dmp") if p.stat().st_mtime >= since - 1]
    return sorted(found, key=lambda p: p.stat().st_mtime)


def wait_for_dumps(
    since: float, timeout_s: float = 5.0, dirs: Iterable[Path] = CRASH_DIRS
) -> list[CrashDump]:
    """The dumps since ``since``, waiting up to ``timeout_s`` for crashpad to write one."""
    dirs = list(dirs)
    deadline = time.monotonic() + timeout_s
    while True:
        found = dumps_since(since, dirs)
        if found or time.monotonic() >= deadline:
            time.sleep(0.2 if found else 0)  # let crashpad finish writing the newest
            return [read_dump(p) for p in found]
        time.sleep(0.1)


# --------------------------------------------------------------------------- minidump streams


def _u32(data: bytes, offset: int) -> int:
    return int(struct.unpack_from("<I", data, offset)[0])


def _streams(data: bytes) -> dict[int, int]:
    """Stream type -> its offset (the first stream of each type)."""
    if data[:4] != b"MDMP":
        raise struct.error("not a minidump")
    count, directory = struct.unpack_from("<II", data, 8)
    streams: dict[int, int] = {}
    for i in range(count):
        kind, _size, offset = struct.unpack_from("<III", data, directory + 12 * i)
        streams.setdefault(kind, offset)
    return streams


def _modules(data: bytes, offset: int | None) -> list[tuple[int, int, str]]:
    if offset is None:
        return []
    modules = []
    for i in range(_u32(data, offset)):
        entry = offset + 4 + _MODULE_SIZE * i
        base, size = struct.unpack_from("<QI", data, entry)
        name_at = _u32(data, entry + 20)
        name = data[name_at + 4 : name_at + 4 + _u32(data, name_at)].decode("utf-16-le", "replace")
        modules.append((base, size, name.rsplit("/", 1)[-1]))
    return modules


def _read_exception(
    data: bytes, offset: int | None, modules: list[tuple[int, int, str]], dump: CrashDump
) -> None:
    if offset is None:
        return
    code, _flags, _record, address = struct.unpack_from("<IIQQ", data, offset + 8)
    try:
        dump.signal = signal.Signals(code).name
    except ValueError:
        dump.signal = f"code {code:#x}"
    dump.fault_address = address
    context_at = _u32(data, offset + 8 + 152 + 4)
    (rip,) = struct.unpack_from("<Q", data, context_at + _RIP_OFFSET)
    module = next(((name, rip - base) for base, size, name in modules if base <= rip < base + size), None)
    dump.pc = f"{module[0]}+{module[1]:#x}" if module else f"{rip:#x}"


def _annotations(data: bytes, offset: int | None) -> dict[str, str]:
    """Crashpad's process-wide and per-module annotations (ptype, switches, loaded origin...)."""
    if offset is None:
        return {}
    found: dict[str, str] = {}
    simple_size, simple_at, modules_size, modules_at = struct.unpack_from("<IIII", data, offset + 4 + 32)
    if simple_size:
        found.update(_dictionary(data, simple_at))
    if not modules_size:
        return found
    for i in range(_u32(data, modules_at)):
        _index, _size, info_at = struct.unpack_from("<III", data, modules_at + 4 + 12 * i)
        _version, _l_size, _l_at, s_size, s_at, o_size, o_at = struct.unpack_from("<7I", data, info_at)
        if s_size:
            found.update(_dictionary(data, s_at))
        if o_size:
            for j in range(_u32(data, o_at)):
                name_at, _kind, _reserved, value_at = struct.unpack_from("<IHHI", data, o_at + 4 + 12 * j)
                found[_utf8(data, name_at)] = _utf8(data, value_at)
    return found


def _dictionary(data: bytes, offset: int) -> dict[str, str]:
    pairs = {}
    for i in range(_u32(data, offset)):
        key_at, value_at = struct.unpack_from("<II", data, offset + 4 + 8 * i)
        pairs[_utf8(data, key_at)] = _utf8(data, value_at)
    return pairs


def _utf8(data: bytes, offset: int) -> str:
    return data[offset + 4 : offset + 4 + _u32(data, offset)].decode("utf-8", "replace")

"""What each strategy of ``agentsurface._core.records.record`` costs: µs to build one record of
5 and of 13 fields (positional arguments), and an instance's bytes (its ``__dict__`` included).
The figures in records.py's docstring come from this script.

    .venv/bin/python benchmarks/bench_records.py [--number 200000]

Each figure is the best of 7 ``timeit`` runs of ``cls(*args)`` (the least disturbed by other work
on the machine), divided by ``--number``.
"""

from __future__ import annotations

import argparse
import sys
import timeit
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from agentsurface._core.records import record, strategy_of

NEEDS: list[tuple[str, dict[str, bool]]] = [
    ("record", {}),
    ("record(hot=True)", {"hot": True}),
    ("record(frozen=False)", {"frozen": False}),
]


def record_class(fields: int, needs: dict[str, bool]) -> type:
    """A record of ``fields`` int fields (the first required, the others defaulting to 0)."""
    namespace: dict[str, Any] = {"__annotations__": {f"f{i}": "int" for i in range(fields)}}
    namespace.update({f"f{i}": 0 for i in range(1, fields)})
    cls: type = record(**needs)(type(f"Record{fields}", (), namespace))
    return cls


def size_of(item: object) -> int:
    own = getattr(item, "__dict__", None)
    return sys.getsizeof(item) + (sys.getsizeof(own) if own is not None else 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=200_000, help="records built per timed run")
    args = parser.parse_args()
    print(f"records benchmark — Python {sys.version.split()[0]}, best of 7, µs to build one record")
    print(f"{'needs':<22} {'strategy':<25} {'5 fields':>9} {'13 fields':>10} {'bytes 5/13':>11}")
    for label, needs in NEEDS:
        times, sizes = [], []
        for fields in (5, 13):
            cls = record_class(fields, needs)
            values = tuple(range(fields))
            timer = timeit.Timer("cls(*values)", globals={"cls": cls, "values": values})
            times.append(min(timer.repeat(7, args.number)) / args.number * 1e6)
            sizes.append(size_of(cls(*values)))
        strategy = strategy_of(record_class(5, needs))
        print(f"{label:<22} {strategy:<25} {times[0]:>9.3f} {times[1]:>10.3f} {sizes[0]:>5}/{sizes[1]:<5}")


if __name__ == "__main__":
    main()

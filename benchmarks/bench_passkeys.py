"""Passkey verification on the server, printed as figures: the cost of one WebAuthn assertion
check (``Passkeys.verify_assertion``: parse, signature, counter update in its own transaction)
next to a read-only store transaction, on SQLite (a file).

    .venv/bin/python benchmarks/bench_passkeys.py [--rounds 300]

Assertions come from the tests' software authenticator (real P-256 keys and ECDSA signatures).
Never asserts a timing.
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests._shared.server.soft_authenticator import SoftAuthenticator  # noqa: E402

from agentsurface.server import Caller, open_store  # noqa: E402
from agentsurface.server.passkeys import PasskeyConfig, Passkeys  # noqa: E402

ORIGIN = "https://devices.example"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=300)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(f"sqlite:///{folder}/bench.sqlite3")
        passkeys = Passkeys(store, PasskeyConfig(rp_id="devices.example", rp_name="Bench", origins=(ORIGIN,)))
        alice = Caller("alice", "acme")
        authenticator = SoftAuthenticator(ORIGIN)
        passkeys.register(alice, authenticator.create(passkeys.registration_options(alice)))
        verify, empty = [], []
        for _ in range(args.rounds):
            nonce = secrets.token_bytes(32)
            assertion = authenticator.get(passkeys.authentication_options(alice, nonce))
            started = time.perf_counter()
            reason = passkeys.verify_assertion(alice, nonce, assertion)
            verify.append((time.perf_counter() - started) * 1000)
            assert reason is None, reason
            started = time.perf_counter()
            store.run(lambda db: db.execute("SELECT 1").fetchone())
            empty.append((time.perf_counter() - started) * 1000)
        store.close()  # type: ignore[attr-defined]

    def p(values: list[float], q: int) -> float:
        return statistics.quantiles(values, n=100)[q - 1]

    print(f"verify_assertion ({args.rounds} assertions, SQLite file): "
          f"p50 {p(verify, 50):.3f} ms, p95 {p(verify, 95):.3f} ms")
    print(f"a read-only store transaction:                      p50 {p(empty, 50):.3f} ms, p95 {p(empty, 95):.3f} ms")
    print(f"ratio (p50): {p(verify, 50) / p(empty, 50):.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

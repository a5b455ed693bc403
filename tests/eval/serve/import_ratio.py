#!/usr/bin/env python3
"""Issue 29: uploading over HTTP costs <= 1.5x a direct PostgreSQL import of the same export.

Times `pitwall import FILE` into a fresh PostgreSQL database directly, and through a
`pitwall serve` over another fresh database of the same server, alternating, ROUNDS times
each; prints each time and the ratio of the medians. The direct import also re-detects the
alerts of the series it touched before it returns; through the server that happens in the
background after the upload is answered, and is not in the HTTP time.

    cargo build --release
    cargo run --release -p pitwall-store --example scale_store -- /tmp/imp.db 200 200 10 60000
    target/release/pitwall --store sqlite:/tmp/imp.db export -o /tmp/imp.json
    python3 tests/eval/serve/import_ratio.py --pitwall target/release/pitwall --export /tmp/imp.json \\
        --admin postgres://postgres@127.0.0.1:5544/postgres
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.dirname(__file__))
from load import Server, token  # noqa: E402


def psql(admin: str, sql: str) -> None:
    subprocess.run(["psql", admin, "-qAtc", sql], check=True, capture_output=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pitwall", required=True)
    ap.add_argument("--export", required=True)
    ap.add_argument("--admin", required=True, help="postgres://… of a database that may create databases")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    pitwall = os.path.abspath(a.pitwall)
    base = a.admin.rsplit("/", 1)[0]
    cwd = tempfile.mkdtemp(prefix="pitwall-import-ratio-")
    times = {"direct": [], "http": []}
    for i in range(a.rounds):
        for how in (["direct", "http"] if i % 2 == 0 else ["http", "direct"]):
            db = f"imp_{how}_{uuid.uuid4().hex[:8]}"
            psql(a.admin, f"CREATE DATABASE {db}")
            url = f"{base}/{db}"
            env = dict(os.environ)
            server = None
            if how == "http":
                secret = token(pitwall, url, "runner", "importer")
                server = Server(pitwall, url)
                store = f"http://127.0.0.1:{server.port}"
                env["PITWALL_TOKEN"] = secret
            else:
                # Migrated before the clock starts, as the server's store is.
                token(pitwall, url, "read", "migrate")
                store = url
            t0 = time.perf_counter()
            out = subprocess.run([pitwall, "--store", store, "import", "--quiet", a.export],
                                 capture_output=True, text=True, env=env, cwd=cwd)
            dt = time.perf_counter() - t0
            if out.returncode != 0:
                raise SystemExit(f"{how}: import failed: {out.stderr.strip()}")
            if server:
                server.stop()
            psql(a.admin, f"DROP DATABASE {db}")
            times[how].append(dt)
            print(f"round {i + 1} {how}: {dt:.2f} s", flush=True)
    d, h = statistics.median(times["direct"]), statistics.median(times["http"])
    print(f"median direct {d:.2f} s, over HTTP {h:.2f} s: ratio {h / d:.2f} (target <= 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Issue 30's page targets for `pitwall serve`, through the real binary on a real store.

On the 10,000-run x 200-measure store of docs/PERFORMANCE.md ("History at scale"; made by
`cargo run --release -p pitwall-store --example scale_store -- /tmp/scale.db 10000 200 10`),
sequential requests with a read token, each timed from request to the last byte:

  1. a series page (`GET /p/scale/bench?key=...`, the report's benchmark page with its
     interactive chart, 10,000 points), 40 requests of random keys: p50 and p95
     (target p95 <= 300 ms); then the same keys' JSON from the API, for comparison;
  2. the alerts page (`GET /p/scale/alerts`), 40 requests (target p95 <= 300 ms), with
     `--alerts N` alerts added first (the scale store has none: its one step is older than the
     window detection reads), N rows written into the `alerts` table with SQL as a load
     fixture, spread over the 200 series, half of them open;
  3. one alert's page (`GET /p/scale/alerts/<id>`), 40 requests;
  4. the index (`GET /p/scale/`, from the series' summaries the server makes at start for a
     store that had none), 10 requests (target <= 1 s).

Run from the repository root after `cargo build --release`, on a copy of the store:
    cp /tmp/scale.db /tmp/scale-pages.db
    python3 tests/eval/serve/pages.py --pitwall target/release/pitwall --store /tmp/scale-pages.db
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from load import Server, pct, token  # noqa: E402

STATUSES = ["active", "acknowledged", "dismissed", "fixed", "expected", "suspected"]


def add_alerts(db: str, n: int) -> list[str]:
    c = sqlite3.connect(db)
    keys = [k for (k,) in c.execute("SELECT bench_key FROM series_keys ORDER BY bench_key")]
    run = c.execute("SELECT id FROM runs ORDER BY started_at DESC LIMIT 1").fetchone()[0]
    ids = []
    for i in range(n):
        key = keys[i % len(keys)]
        aid = f"{i:012x}"
        ids.append(aid)
        status = "active" if i % 2 == 0 else STATUSES[1 + i % 5]
        c.execute(
            "INSERT OR REPLACE INTO alerts (id, project, testbed, branch, bench_key, measure, kind,"
            " status, last_good, first_bad, first_bad_run, before_value, after_value, rel_change,"
            " ci_low, ci_high, note, culprit, created_at, updated_at)"
            " VALUES (?, 'scale', 'scale-tb', 'main', ?, 'time', 'regression', ?, ?, ?, ?,"
            " 1000.0, 1080.0, 0.08, 0.07, 0.09, ?, NULL, ?, ?)",
            (aid, key, status, "a" * 40, "b" * 40, run, f"load fixture {i}",
             f"2026-12-0{1 + i % 5}T00:00:00Z", f"2026-12-0{1 + i % 5}T00:00:00Z"),
        )
    c.commit()
    return ids, keys


def timed(s: Server, reader: str, paths: list[str]) -> list[float]:
    out = []
    for p in paths:
        st, data, dt = s.request("GET", p, reader)
        if st != 200:
            raise SystemExit(f"GET {p}: {st} {data[:300]!r}")
        out.append(dt)
    return out


def line(what: str, xs: list[float], size: int) -> None:
    print(f"{what}: n={len(xs)} p50 {pct(xs, 50) * 1000:.0f} ms, p95 {pct(xs, 95) * 1000:.0f} ms,"
          f" max {max(xs) * 1000:.0f} ms, {size / 1024:.0f} KB")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pitwall", required=True)
    ap.add_argument("--store", required=True, help="a SQLite store's path (it is changed)")
    ap.add_argument("--alerts", type=int, default=400)
    ap.add_argument("--requests", type=int, default=40)
    a = ap.parse_args()
    ids, keys = add_alerts(a.store, a.alerts)
    url = f"sqlite:{a.store}"
    reader = token(a.pitwall, url, "read", f"pages-{random.randrange(1 << 30):x}")
    s = Server(a.pitwall, url)
    try:
        # The index's summaries are made in the background at start (`"event":"summaries"`).
        t0 = time.time()
        while not any('"event":"summaries"' in ln for ln in s.lines) and time.time() - t0 < 300:
            time.sleep(0.2)
        made = [ln for ln in s.lines if '"event":"summaries"' in ln]
        print(f"summaries at start: {made[-1] if made else 'not logged'}")
        rng = random.Random(30)
        bench = [f"/p/scale/bench?key={urllib.parse.quote(rng.choice(keys), safe='')}"
                 for _ in range(a.requests)]
        timed(s, reader, bench[:2])  # warm the caches once
        xs = timed(s, reader, bench)
        size = len(s.request("GET", bench[0], reader)[1])
        line("series page", xs, size)
        api = [p.replace("/p/scale/bench?", "/api/v1/p/scale/series?") for p in bench]
        xs = timed(s, reader, api)
        line("the same series' JSON (API, for comparison)", xs, len(s.request("GET", api[0], reader)[1]))
        alerts = ["/p/scale/alerts"] * a.requests
        timed(s, reader, alerts[:2])
        xs = timed(s, reader, alerts)
        size = len(s.request("GET", alerts[0], reader)[1])
        line(f"alerts page ({a.alerts} alerts)", xs, size)
        one = [f"/p/scale/alerts/{rng.choice(ids)}" for _ in range(a.requests)]
        xs = timed(s, reader, one)
        line("an alert's page", xs, len(s.request("GET", one[0], reader)[1]))
        st, _, _ = s.request("GET", "/p/scale/", reader)
        if st == 200:
            index = ["/p/scale/"] * 10
            xs = timed(s, reader, index)
            line("index", xs, len(s.request("GET", index[0], reader)[1]))
        else:
            print(f"index: not served ({st})")
        print(f"server peak memory {s.peak_mb():.0f} MB")
    finally:
        s.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Issue 29's targets for `pitwall serve`, through the real binary on a real store.

On the 10,000-run x 200-measure store of docs/PERFORMANCE.md ("History at scale"; made by
`cargo run --release -p pitwall-store --example scale_store -- /tmp/scale.db 10000 200 10`):

  1. a series' JSON (`GET /api/v1/p/scale/series?key=...`), 40 sequential requests of random
     keys: p50 and p95 (target p95 <= 300 ms);
  2. 50 concurrent uploads of 1,000-result runs (each its own thread and connection) while
     200 readers fetch series and run lists in a loop: every upload answered 201, none lost
     or duplicated (counted in the store afterwards), upload p99 (target <= 2 s), readers'
     p50/p95/p99 and errors, and the time until the server's alert detection has covered
     every uploaded run (its `{"event":"alerts","runs":N}` log lines; target <= 60 s);
  3. the server's peak memory (VmHWM; target <= 500 MB).

Run from the repository root after `cargo build --release`:
    python3 tests/eval/serve/load.py --pitwall target/release/pitwall --store sqlite:/tmp/scale.db
    python3 tests/eval/serve/load.py --pitwall target/release/pitwall \
        --store postgres://postgres@127.0.0.1:5544/scale --psql /usr/lib/postgresql/15/bin/psql

The store is changed (50 runs added); use a copy to keep the original.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import re
import sqlite3
import subprocess
import sys
import threading
import time
import uuid


def pct(xs: list[float], p: float) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


class Server:
    def __init__(self, pitwall: str, store: str):
        self.proc = subprocess.Popen(
            [pitwall, "--store", store, "serve", "--listen", "127.0.0.1:0"],
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self.port = None
        ready = threading.Event()

        def read():
            for line in self.proc.stderr:
                self.lines.append(line.rstrip("\n"))
                m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
                if m:
                    self.port = int(m.group(1))
                    ready.set()

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(300):
            raise SystemExit(f"server did not start: {self.lines[-5:]}")

    def request(self, method, path, token, body=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
        headers = {"Authorization": f"Bearer {token}"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        t0 = time.perf_counter()
        c.request(method, path, body=body, headers=headers)
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, data, time.perf_counter() - t0

    def peak_mb(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(120)


def token(pitwall: str, store: str, role: str, name: str) -> str:
    out = subprocess.run(
        [pitwall, "--store", store, "token", "create", "--role", role, "--name", name],
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip()


def upload_body(template: dict, i: int, results: int) -> bytes:
    run = json.loads(json.dumps(template))
    run["id"] = str(uuid.uuid4())
    run["commit"] = f"{i:040x}"[-40:].replace("0", "e", 1)
    run["started_at"] = f"2030-01-01T00:{i // 60:02d}:{i % 60:02d}Z"
    run["finished_at"] = run["started_at"]
    base = run["results"][0]
    out = []
    for k in range(results):
        r = json.loads(json.dumps(base))
        r["name"] = f"load_{k:04d}"
        out.append(r)
    run["results"] = out
    return json.dumps({"run": run}).encode()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pitwall", required=True)
    ap.add_argument("--store", required=True, help="sqlite:PATH or postgres://...")
    ap.add_argument("--uploads", type=int, default=50)
    ap.add_argument("--results", type=int, default=1000)
    ap.add_argument("--readers", type=int, default=200)
    ap.add_argument("--series", type=int, default=40)
    ap.add_argument("--psql", default="psql", help="psql, to count what a PostgreSQL store holds")
    ap.add_argument("--log", help="write the server's log lines (stderr) to this file")
    a = ap.parse_args()

    suffix = uuid.uuid4().hex[:6]
    runner = token(a.pitwall, a.store, "runner", f"load-runner-{suffix}")
    reader = token(a.pitwall, a.store, "read", f"load-reader-{suffix}")
    s = Server(a.pitwall, a.store)
    project = "scale"
    st, data, _ = s.request("GET", f"/api/v1/p/{project}/runs?limit=1", reader)
    assert st == 200, data
    newest = json.loads(data)[0]
    st, data, _ = s.request("GET", f"/api/v1/p/{project}/runs/{newest['id']}", reader)
    template = json.loads(data)
    keys = sorted(
        {f"{r['suite']}/{r['name']}" + (
            "[" + ",".join(f"{k}={v}" for k, v in sorted(r.get("params", {}).items())) + "]"
            if r.get("params") else "") + f"/{r.get('measure', 'time')}"
         for r in template["results"]}
    )
    rng = random.Random(29)

    # 1. Series latency, one at a time.
    series_s = []
    for _ in range(a.series):
        key = rng.choice(keys)
        st, data, dt = s.request("GET", f"/api/v1/p/{project}/series?key={key}", reader)
        assert st == 200, (st, data[:200])
        pts = len(json.loads(data)[0]["points"])
        series_s.append(dt)
    print(f"series JSON ({pts} points), {a.series} sequential: p50 {pct(series_s, 50) * 1e3:.0f} ms, "
          f"p95 {pct(series_s, 95) * 1e3:.0f} ms")

    # 2. Concurrent uploads under readers.
    bodies = [upload_body(template, i, a.results) for i in range(a.uploads)]
    stop = threading.Event()
    read_s: list[float] = []
    read_err: list[int] = []

    def read_loop(seed):
        r = random.Random(seed)
        while not stop.is_set():
            key = r.choice(keys)
            path = (f"/api/v1/p/{project}/series?key={key}" if r.random() < 0.5
                    else f"/api/v1/p/{project}/runs?limit=20")
            try:
                st, _, dt = s.request("GET", path, reader)
                (read_s if st == 200 else read_err).append(dt if st == 200 else st)
            except Exception:  # noqa: BLE001 - counted, not fatal
                read_err.append(-1)

    readers = [threading.Thread(target=read_loop, args=(i,)) for i in range(a.readers)]
    for t in readers:
        t.start()
    time.sleep(2)
    up_s: list[float] = []
    up_status: list[int] = []
    lock = threading.Lock()

    def up(body):
        st, data, dt = s.request("POST", f"/api/v1/p/{project}/runs", runner, body)
        with lock:
            up_s.append(dt)
            up_status.append(st)

    t0 = time.time()
    ups = [threading.Thread(target=up, args=(b,)) for b in bodies]
    for t in ups:
        t.start()
    for t in ups:
        t.join()
    uploaded = time.time()
    # Alert detection covers every uploaded run.
    covered = None
    while time.time() - uploaded < 120:
        n = 0
        for line in list(s.lines):
            if '"event":"alerts"' in line and '"project":"scale"' in line:
                m = re.search(r'"runs":(\d+)', line)
                n += int(m.group(1)) if m else 0
        if n >= a.uploads:
            covered = time.time() - uploaded
            break
        time.sleep(0.2)
    stop.set()
    for t in readers:
        t.join()
    print(f"{a.uploads} concurrent uploads of {a.results}-result runs: statuses "
          f"{sorted(set(up_status))} ({up_status.count(201)} x 201), p50 {pct(up_s, 50):.2f} s, "
          f"p99 {pct(up_s, 99):.2f} s, all answered in {uploaded - t0:.1f} s")
    print(f"alert detection covered every upload {covered:.1f} s after the last answer"
          if covered is not None else "alert detection did not cover every upload within 120 s")
    print(f"{a.readers} readers meanwhile: {len(read_s)} answers, {len(read_err)} errors "
          f"{sorted(set(read_err))[:5]}, p50 {pct(read_s, 50) * 1e3:.0f} ms, "
          f"p95 {pct(read_s, 95) * 1e3:.0f} ms, p99 {pct(read_s, 99) * 1e3:.0f} ms")
    print(f"server peak memory (VmHWM): {s.peak_mb():.0f} MB")
    stored = [json.loads(line) for line in list(s.lines) if '"event":"stored"' in line]
    if stored:
        print(f"writer: {len(stored)} transactions, runs each {[e['runs'] for e in stored]}, "
              f"{sum(e['duration_ms'] for e in stored) / 1e3:.2f} s in all, "
              f"{sum(e['duration_ms'] for e in stored) / max(1, sum(e['runs'] for e in stored)):.0f} ms a run")
    s.stop()
    if a.log:
        with open(a.log, "w") as f:
            f.write("\n".join(s.lines) + "\n")
    ids = [json.loads(b)["run"]["id"] for b in bodies]
    if a.store.startswith("sqlite:"):
        db = sqlite3.connect(a.store[len("sqlite:"):])
        q = ",".join("?" * len(ids))
        n = db.execute(f"SELECT count(*) FROM runs WHERE id IN ({q})", ids).fetchone()[0]
        dup = db.execute(f"SELECT count(*) FROM results WHERE run_id IN ({q})", ids).fetchone()[0]
    else:
        # PostgreSQL, through psql (ids are UUIDs this script made: safe to inline).
        q = ",".join(f"'{i}'" for i in ids)

        def count(sql):
            out = subprocess.run([a.psql, a.store, "-Atc", sql], check=True,
                                 capture_output=True, text=True)
            return int(out.stdout.strip())

        n = count(f"SELECT count(*) FROM runs WHERE id IN ({q})")
        dup = count(f"SELECT count(*) FROM results WHERE run_id IN ({q})")
    print(f"stored: {n} of {len(ids)} runs, {dup} results (expected {len(ids) * a.results})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

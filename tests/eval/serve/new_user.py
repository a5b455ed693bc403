#!/usr/bin/env python3
"""`pitwall serve` tried as a new user would (issues 29 and 30), on a small real repository.

  1. The C repository of tests/eval/history/c_history.py (bench.c: `sort`, `hash`, `matmul`,
     `strops`; a `--slowdown` step in `sort` at commit 5 of 10, default +30%), measured into
     a SQLite store with `pitwall run --commit C0 --commit C0..C9`, then commits 7, 2 and 4
     again out of order, as the README's tour does. With `[history] contended_steal_pct`
     raised to `--steal-pct` (default 50) in a config beside the repository: on this 2-vCPU VM
     these 0.2-second runs see 3-14% hypervisor steal in 3-4 samples, and at the default 2%
     every run was kept out of detection as contended (no alert to triage; issue 27's
     business, not the server's).
  2. `pitwall token create --role triage --name ada`, then `pitwall serve` on a free port.
  3. What a person's browser does, over plain HTTP with cookies (no JavaScript; Chromium's
     checks are tests/browser/): the index redirects to sign-in; the sign-in form (its own
     cookie and CSRF token) trades the token for a session; the index lists `sort`; the
     alerts page lists `sort`'s alert with a triage form; the series page of `sort` has the
     chart's data with the alert marked (and the change points the analysis finds now); the
     form acknowledges the alert with a note; the
     alert's page shows the change under `ada`; the API (bearer token) says acknowledged.

Prints each step and what it saw, then PASS or FAIL (exit 0 on PASS). About 1 minute on a
2-core machine. From the repository root, after `cargo build --release`:
    python3 tests/eval/serve/new_user.py --pitwall target/release/pitwall
"""

from __future__ import annotations

import argparse
import html
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "history"))
sys.path.insert(0, os.path.join(HERE, "..", "ab"))
sys.path.insert(0, HERE)
import _common as c  # noqa: E402
import c_bisect as cb  # noqa: E402
import c_history as ch  # noqa: E402
from load import Server  # noqa: E402


class Browser:
    """Cookies and form posts against one server, as a browser without scripts keeps them."""

    def __init__(self, port: int):
        self.port = port
        self.cookies: dict[str, str] = {}

    def send(self, method: str, path: str, form: dict | None = None, bearer: str | None = None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        headers = {}
        if self.cookies and bearer is None:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if bearer:
            headers["Authorization"] = f"Bearer {bearer}"
        body = None
        if form is not None:
            body = urllib.parse.urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        text = r.read().decode()
        for k, v in r.getheaders():
            if k.lower() == "set-cookie":
                name, _, rest = v.partition("=")
                value = rest.split(";", 1)[0]
                if "Max-Age=0" in v or not value:
                    self.cookies.pop(name, None)
                else:
                    self.cookies[name] = value
        conn.close()
        return r.status, dict((k.lower(), v) for k, v in r.getheaders()), text


def field(page: str, name: str) -> str | None:
    m = re.search(rf'name="{name}" value="([^"]*)"', page)
    return html.unescape(m.group(1)) if m else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pitwall", default="target/release/pitwall")
    ap.add_argument("--slowdown", type=float, default=1.30)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--steal-pct", type=float, default=50.0)
    args = ap.parse_args()
    pitwall = os.path.abspath(args.pitwall)
    checks: list[tuple[str, bool, str]] = []

    def check(what: str, ok: bool, seen: str = "") -> None:
        checks.append((what, ok, seen))
        print(f"{'ok  ' if ok else 'FAIL'} {what}" + (f": {seen}" if seen else ""), flush=True)

    with tempfile.TemporaryDirectory(prefix="serve_new_user") as tmp:
        sizes, ms = cb.calibrate(tmp, 4.0)
        print(f"work sizes {sizes}, ms per repetition {ms}", flush=True)
        repo = os.path.join(tmp, "cbench")
        os.makedirs(repo)
        shas = ch.build_repo(repo, sizes, args.slowdown)
        store = os.path.join(repo, ".pitwall", "history.db")
        env = dict(os.environ, PITWALL_STORE=store)
        config = os.path.join(tmp, "pitwall.toml")
        c.write(config, cb.PITWALL_TOML + f"\n[history]\ncontended_steal_pct = {args.steal_pct}\n")

        def run(argv, ok=(0,)):
            argv = ["--config", config, *argv] if argv[0] == "run" else argv
            return c.run([pitwall, *argv], cwd=repo, timeout=args.timeout, ok=ok, env=env)

        run(["run", "-q", "--no-report", "--commit", shas[0], "--commit", f"{shas[0]}..{shas[-1]}"])
        run(["run", "-q", "--no-report", "--commit", shas[7], "--commit", shas[2], "--commit", shas[4]])
        secret = run(["token", "create", "--role", "triage", "--name", "ada"])[1].strip()
        check("a token is shown once", len(secret) >= 32, f"{len(secret)} characters")

        server = Server(pitwall, f"sqlite:{store}")
        try:
            b = Browser(server.port)
            st, h, _ = b.send("GET", "/p/cbench/")
            check("the index sends a stranger to sign in", st == 303 and h.get("location") == "/p/cbench/signin",
                  f"{st} {h.get('location')}")
            st, _, page = b.send("GET", "/p/cbench/signin")
            csrf = field(page, "csrf")
            check("the sign-in form has its CSRF token and cookie", st == 200 and bool(csrf) and "pitwall_signin" in b.cookies)
            st, h, _ = b.send("POST", "/p/cbench/signin", {"csrf": csrf or "", "token": secret})
            check("signing in gives a session", st == 303 and "pitwall_session" in b.cookies, f"{st} -> {h.get('location')}")
            st, _, index = b.send("GET", "/p/cbench/")
            check("the index lists sort and says who is signed in", st == 200 and "sort" in index and "ada" in index, f"{st}, {len(index)} bytes")
            st, _, alerts = b.send("GET", "/p/cbench/alerts")
            ids = re.findall(r'href="alerts/([0-9a-f]+)"', alerts)
            forms = len(re.findall(r'<form class="triage"', alerts))
            check("the alerts page lists an alert with a triage form", st == 200 and bool(ids) and forms >= 1,
                  f"{len(set(ids))} alert(s), {forms} form(s)")
            api = json.loads(b.send("GET", "/api/v1/p/cbench/alerts", bearer=secret)[2])
            sort_alerts = [a for a in api if "sort" in a.get("key", "")]
            # Which alerts history raises on this data is issue 27's measure (c_history.py); here
            # sort's must be there, at the slower commit, to be triaged. Others are shown.
            check("sort's alert is there, at the slower commit",
                  len(sort_alerts) == 1 and sort_alerts[0].get("first_bad") == shas[ch.STEP_AT],
                  ", ".join(f"{a.get('key')} at {a.get('first_bad', '')[:12]}" for a in api))
            if sort_alerts:
                a = sort_alerts[0]
                key = a["key"]
                st, _, bench = b.send("GET", "/p/cbench/bench?key=" + urllib.parse.quote(key, safe=""))
                m = re.search(r'<script type="application/json" id="history-data">(.*?)</script>', bench, re.S)
                data = json.loads(m.group(1)) if m else {}
                # The change points are the series' analysis now; the alert was raised when the
                # runs it saw were stored (re-measured commits may since have moved the point).
                check("sort's series page has its points and the alert marked",
                      st == 200 and len(data.get("points", {}).get("median", [])) >= 10
                      and len(data.get("alerts", [])) == 1,
                      f"{len(data.get('points', {}).get('median', []))} points, changes "
                      f"{[x.get('short') for x in data.get('changes', [])]}, alerts {len(data.get('alerts', []))}")
                st, _, page = b.send("GET", f"/p/cbench/alerts/{a['id']}")
                csrf = field(page, "csrf")
                st, h, _ = b.send("POST", f"/p/cbench/alerts/{a['id']}",
                                  {"csrf": csrf or "", "status": "acknowledged", "note": "looking <into> it"})
                check("the form acknowledges it", st == 303, f"{st} -> {h.get('location')}")
                st, _, page = b.send("GET", f"/p/cbench/alerts/{a['id']}")
                check("the alert's page shows the change under ada, the note escaped",
                      "ada" in page and "acknowledged" in page and "looking &lt;into&gt; it" in page)
                after = json.loads(b.send("GET", "/api/v1/p/cbench/alerts", bearer=secret)[2])
                check("the store says acknowledged", [x["status"] for x in after if x["id"] == a["id"]] == ["acknowledged"])
            st, _, _ = b.send("POST", "/p/cbench/signout", {"csrf": field(index, "csrf") or ""})
            st2, h2, _ = b.send("GET", "/p/cbench/alerts")
            check("signing out ends the session", st == 303 and st2 == 303, f"{st}, then {st2} -> {h2.get('location')}")
        finally:
            server.stop()
    ok = all(x[1] for x in checks)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

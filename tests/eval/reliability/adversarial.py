#!/usr/bin/env python3
"""Adversarial black-box pass over the real `pitwall` binary (Python 3 standard library only).

It drives the binary as a user or an attacker would and counts, per category, the cases tried
and those that behaved as documented (README.md "Exit codes", docs/RELIABILITY.md,
docs/CONFIG.md, docs/FORMATS.md):

- bad inputs: malformed `pitwall.toml` (syntax, unknown keys, wrong types, huge values,
  `timeout_s = 1e-300`, a 1 MB command), bad flags, revisions and store URLs, malformed
  result files for `pitwall import` (pitwall export documents, hyperfine, nccl-tests, Google
  Benchmark, pitwall JSON), random or text files used as a store. Expected: exit 2 (or the
  documented code), exactly one `error:` line on stderr, no Rust debug text (`Created(`,
  `Updated(`, `Os { code`), no `panicked`, no line over 1,000 characters, and the store
  unchanged (`pitwall runs --format json` and `pitwall export` give the same bytes before and
  after; a foreign file used as a store keeps its bytes).
- injections: benchmark names and a commit subject holding ANSI escapes, a newline, a carriage
  return, a backspace, HTML `<script>`, Markdown pipes, printed by a command suite that writes
  Google Benchmark JSON in a temporary git repository. Expected: no raw ESC or other control
  character in terminal output (`run`, `show`, `runs`, `compare`), no broken table row, no
  unescaped `<script>` in the HTML report, Markdown rows with the header's column count, and
  the names stored exactly (`export`: nothing lost).
- faults: SIGKILL of `pitwall import` and `pitwall run` at random moments (the store stays a
  valid SQLite database, `runs` works, every run is whole or absent, and importing again
  completes it), a read-only store read by a user who cannot write it (`runs`, `show`,
  `export`, `report --out elsewhere`, `compare`, `detect`), `output = "/dev/zero"` and a FIFO
  (end within `timeout_s` + 5 s, peak memory < 512 MB), a hanging command (killed at
  `timeout_s`, nothing left running), SIGKILL/SIGTERM of `pitwall run` (no benchmark child
  left alive).

Run (from the repository root, after `cargo build --release`):
    python3 tests/eval/reliability/adversarial.py --pitwall target/release/pitwall

It prints a table (category, tried, passed, failed) and every failure with its command, and
exits 0 either way (it is a measurement, not a gate). `--out FILE.json` keeps every case.
About 3-6 minutes on a 2-core machine. It needs `git`, `ps`, `mkfifo` and, when run as root,
`setpriv` (to read the read-only store as `nobody`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import resource
import shlex
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
FIX = os.path.join(ROOT, "tests", "fixtures")

GIT_ENV = {
    "GIT_AUTHOR_NAME": "pitwall-adv",
    "GIT_AUTHOR_EMAIL": "adv@example.invalid",
    "GIT_COMMITTER_NAME": "pitwall-adv",
    "GIT_COMMITTER_EMAIL": "adv@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}
MEM_LIMIT = 3 << 30  # address-space limit of every child (a runaway reader is killed, not the host)
DEBUG_TEXT = re.compile(r"panicked|RUST_BACKTRACE|\b(Created|Updated|Some|Err|Ok)\(|Os \{ code|kind: [A-Z]")

PW = "pitwall"
RESULTS: list[dict] = []


# ----------------------------------------------------------------------------- process runner


class Res:
    def __init__(self, rc, out, err, wall, maxrss_kb, timed_out, cmd):
        self.rc, self.out, self.err, self.wall = rc, out, err, wall
        self.maxrss_kb, self.timed_out, self.cmd = maxrss_kb, timed_out, cmd

    @property
    def errtext(self) -> str:
        return self.err.decode("utf-8", "replace")

    @property
    def outtext(self) -> str:
        return self.out.decode("utf-8", "replace")


def base_env() -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PITWALL_", "GITHUB_", "GITLAB_", "CI", "RUST_"))}
    env.update(GIT_ENV)
    env["NO_COLOR"] = "1"
    return env


def _limits():
    resource.setrlimit(resource.RLIMIT_AS, (MEM_LIMIT, MEM_LIMIT))


def run(cmd, cwd, timeout=60.0, env=None, kill_after=None, kill_sig=signal.SIGKILL, as_nobody=False) -> Res:
    """Runs cmd in its own session; returns exit code (-signal when killed), output, wall time
    and peak RSS (wait4). kill_after: send kill_sig to the process itself (not its group)
    after that many seconds. On the harness timeout the whole session is killed."""
    full = base_env()
    if env:
        full.update(env)
    real = list(cmd)
    if as_nobody:
        real = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", *real]
    t0 = time.monotonic()
    p = subprocess.Popen(real, cwd=cwd, env=full, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True, preexec_fn=_limits)
    bufs = {1: bytearray(), 2: bytearray()}

    def reader(f, b):
        while True:
            chunk = f.read1(65536) if hasattr(f, "read1") else f.read(65536)
            if not chunk:
                break
            if len(b) < (8 << 20):
                b.extend(chunk)
        f.close()

    ts = [threading.Thread(target=reader, args=(p.stdout, bufs[1]), daemon=True),
          threading.Thread(target=reader, args=(p.stderr, bufs[2]), daemon=True)]
    for t in ts:
        t.start()
    timed_out, killed, status, ru = False, False, None, None
    while True:
        pid, st, r = os.wait4(p.pid, os.WNOHANG)
        if pid:
            status, ru = st, r
            break
        el = time.monotonic() - t0
        if kill_after is not None and not killed and el >= kill_after:
            try:
                os.kill(p.pid, kill_sig)
            except ProcessLookupError:
                pass
            killed = True
        if el > timeout and not timed_out:
            timed_out = True
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.005)
    wall = time.monotonic() - t0
    rc = os.waitstatus_to_exitcode(status)
    p.returncode = rc
    for t in ts:
        t.join(timeout=5)
    return Res(rc, bytes(bufs[1]), bytes(bufs[2]), wall, ru.ru_maxrss, timed_out, real)


def pw(args, cwd, **kw) -> Res:
    return run([PW, *args], cwd, **kw)


def git(repo, *args):
    r = run(["git", *args], repo, timeout=60)
    if r.rc != 0:
        raise RuntimeError(f"git {args} failed: {r.errtext}")
    return r.outtext.strip()


def record(cat, name, cmd, problems, extra=None):
    c = {"category": cat, "case": name, "command": cmd if isinstance(cmd, str) else shlex.join(map(str, cmd)),
         "ok": not problems, "problems": problems}
    if extra:
        c.update(extra)
    RESULTS.append(c)
    return not problems


def short(s: str, n=300) -> str:
    s = s.replace("\x1b", "\\x1b")
    return s if len(s) <= n else s[:n] + f"…(+{len(s) - n} chars)"


def cmd_text(res: Res) -> str:
    parts = []
    for a in res.cmd:
        a = str(a)
        parts.append(shlex.quote(a if len(a) <= 120 else a[:100] + f"…[{len(a)} chars]"))
    return " ".join(parts).replace(PW, "pitwall")


# ----------------------------------------------------------------------------- checks


def message_problems(res: Res, expect_rc, allow_extra_lines=False) -> list[str]:
    """Exit code, exactly one `error:` line, no debug text, no panic, no overlong line."""
    probs = []
    if res.timed_out:
        probs.append(f"did not finish in time ({res.wall:.1f} s)")
    if res.rc < 0:
        probs.append(f"died of signal {-res.rc}")
    elif res.rc not in expect_rc:
        probs.append(f"exit {res.rc}, expected {'/'.join(map(str, sorted(expect_rc)))}")
    if res.maxrss_kb > 512 * 1024:
        probs.append(f"peak memory {res.maxrss_kb / 1024:.0f} MB (limit of this harness: {MEM_LIMIT >> 30} GiB address space)")
    err = res.errtext
    lines = [l for l in err.splitlines() if l.strip()]
    errlines = [l for l in lines if l.startswith("error")]
    if res.rc == 2 and len(errlines) != 1 or res.rc not in (0, 1, 2) and len(errlines) > 1:
        probs.append(f"{len(errlines)} `error` lines on stderr, expected 1: {short(err)!r}")
    if not allow_extra_lines:
        extra = [l for l in lines if not l.startswith(("error", "warning", "  ", "\t", "Usage:", "For more information", "tip:"))]
        if extra:
            probs.append(f"other stderr lines: {short(chr(10).join(extra))!r}")
    for name, text in (("stderr", err), ("stdout", res.outtext)):
        m = DEBUG_TEXT.search(text)
        if m:
            i = m.start()
            probs.append(f"debug/panic text in {name}: {short(text[max(0, i - 80):i + 120])!r}")
        if name == "stderr" and re.search(r"\d{60}", text):
            probs.append(f"{name} prints a number of 60+ digits")
        long_lines = [l for l in text.splitlines() if len(l) > 1000]
        if long_lines:
            probs.append(f"{name} line of {len(long_lines[0])} chars: {short(long_lines[0], 160)!r}")
    return probs


def sha(path) -> str | None:
    if not os.path.exists(path):
        return None
    if os.path.isdir(path):
        return "dir"
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def store_state(ws, store_args=()):
    """What a user sees of the store: `runs --format json` and `export` (both deterministic)."""
    a = pw([*store_args, "-q", "runs", "--format", "json"], ws, timeout=60)
    b = pw([*store_args, "-q", "export"], ws, timeout=60)
    return (a.rc, hashlib.sha256(a.out).hexdigest(), b.rc, hashlib.sha256(b.out).hexdigest())


# ----------------------------------------------------------------------------- workspace


GOOD_CFG = """[project]
name = "adv"

[[suite]]
name = "t"
kind = "command"
command = "cat result.json"
format = "pitwall-json"
timeout_s = 10
"""

PJ_RESULT = json.dumps({"schema": "pitwall/v1", "benchmarks": [
    {"name": "parse", "params": {"size": 64}, "samples": [100.0, 101.0, 99.5]}]})


def make_workspace(tmp) -> dict:
    ws = os.path.join(tmp, "ws")
    os.makedirs(ws)
    git(ws, "init", "-q", "-b", "main")
    with open(os.path.join(ws, ".gitignore"), "w") as f:
        f.write(".pitwall/\ncfg/\nin/\nrep*/\n")
    with open(os.path.join(ws, "pitwall.toml"), "w") as f:
        f.write(GOOD_CFG)
    with open(os.path.join(ws, "result.json"), "w") as f:
        f.write(PJ_RESULT)
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "first")
    for fx in ("export-v2.json", "hyperfine/sleeps.json"):
        r = pw(["-q", "import", os.path.join(FIX, fx)], ws)
        assert r.rc == 0, r.errtext
    r = pw(["-q", "run", "--no-report"], ws)
    assert r.rc == 0, r.errtext
    pristine = os.path.join(tmp, "pristine")
    shutil.copytree(os.path.join(ws, ".pitwall"), pristine)
    os.makedirs(os.path.join(ws, "cfg"))
    os.makedirs(os.path.join(ws, "in"))
    return {"ws": ws, "pristine": pristine, "state": store_state(ws), "tmp": tmp}


def restore(W):
    d = os.path.join(W["ws"], ".pitwall")
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(W["pristine"], d)


def bad_case(W, cat, name, args, expect_rc=frozenset({2}), store_must_stay=True, env=None, timeout=30,
             allow_extra_lines=False, must_contain=None, files_unchanged=()):
    restore(W)
    before = {p: sha(p) for p in files_unchanged}
    res = pw(args, W["ws"], env=env, timeout=timeout)
    probs = message_problems(res, set(expect_rc), allow_extra_lines)
    if must_contain and must_contain not in res.errtext:
        probs.append(f"stderr lacks {must_contain!r}: {short(res.errtext)!r}")
    if store_must_stay:
        after = store_state(W["ws"])
        if after != W["state"]:
            probs.append("store changed")
    for p, h in before.items():
        if sha(p) != h:
            probs.append(f"{os.path.basename(p)} changed")
    return record(cat, name, cmd_text(res), probs, {"exit": res.rc, "stderr": short(res.errtext, 400)})


# ----------------------------------------------------------------------------- bad configs


def config_variants(rng) -> list[tuple[str, str, set, bool]]:
    """(name, text, expected exit codes, store must stay)."""
    suite = '[[suite]]\nname = "t"\nkind = "command"\ncommand = "cat result.json"\nformat = "pitwall-json"\n'
    V = []

    def add(name, text, rc=frozenset({2}), stay=True):
        V.append((name, text, set(rc), stay))

    # syntax
    add("syntax: unclosed table", "[project\nname = \"x\"\n" + suite)
    add("syntax: unclosed string", suite.replace('"cat result.json"', '"cat result.json'))
    add("syntax: missing value", "[project]\nname =\n" + suite)
    add("syntax: duplicate key", suite + 'name = "u"\n')
    add("syntax: bare equals", "= 1\n" + suite)
    add("syntax: bad escape", suite.replace('"cat result.json"', '"cat \\q"'))
    add("syntax: bad unicode escape", suite.replace('"cat result.json"', '"\\uD800"'))
    add("syntax: invalid UTF-8", None)  # filled below as bytes
    add("syntax: NUL byte", suite + "x\x00 = 1\n")
    add("syntax: duplicate table", "[project]\nname='a'\n[project]\nname='b'\n" + suite)
    add("syntax: array of tables vs table", "[project]\n[[project]]\n" + suite)
    add("syntax: unterminated array", suite + "env_pass = [\"A\",\n")
    add("syntax: deep nesting", "x = " + "[" * 5000 + "]" * 5000 + "\n" + suite)
    add("syntax: 1 MB garbage", "".join(rng.choice("[]=\"'{},.\n abc") for _ in range(1 << 20)))
    for i in range(6):
        cut = rng.randrange(len(suite) // 3, len(suite) - 5)
        # cut inside a token so that the text is never valid TOML
        add(f"syntax: truncated at {cut} + `= ]`", suite[:cut] + "\n= ]\n")
    # unknown keys
    for table in ("project", "store", "sampling", "thresholds", "pinning", "gpu", "github", "gitlab", "ci", "report"):
        add(f"unknown key in [{table}]", f"[{table}]\ncolour = 1\n" + suite)
    add("unknown key in [[suite]]", suite + "colour = 1\n")
    add("unknown top-level table", "[projcet]\nname = 'x'\n" + suite)
    add("single-bracket [suite]", suite.replace("[[suite]]", "[suite]"))
    add("[[sampling]]", "[[sampling]]\nwarmup_s = 1\n" + suite)
    add("1 MB unknown key", suite + ("k" * (1 << 20)) + " = 1\n")
    # wrong types and bad values in [[suite]]
    for key, val in [
        ("runs", '"3"'), ("runs", "1.5"), ("runs", "0"), ("runs", "-1"), ("runs", "99999999999999999999"),
        ("runs", "true"), ("timeout_s", '"x"'), ("timeout_s", "true"), ("timeout_s", "-1"), ("timeout_s", "0"),
        ("timeout_s", "nan"), ("timeout_s", "inf"), ("timeout_s", "1e300"), ("timeout_s", "31536001"),
        ("warmup_s", "1e308"), ("warmup_s", "-0.5"), ("max_time_s", "-inf"), ("min_samples", "-1"),
        ("max_samples", "0"), ("target_ci_pct", "-1"), ("threshold_pct", "nan"), ("threshold_pct", "-5"),
        ("env", '"x"'), ("env", "{ A = 1 }"), ("env_pass", '"x"'), ("env_pass", "[1]"), ("workdir", "1"),
        ("output", "[]"), ("ranks", "4"), ("max_bytes", "1024"), ("runs", '"' + "9" * (1 << 20) + '"'),
    ]:
        add(f"[[suite]] {key} = {val[:30]}", suite + f"{key} = {val}\n")
    for key, val in [("format", '"gbench"'), ("kind", '"gpu"'), ("kind", "1"), ("name", "1"),
                     ("command", '""'), ("command", "1"), ("format", '"wall-time"\nruns = 2')]:
        add(f"[[suite]] {key} = {val[:30]}", re.sub(rf'(?m)^{key} = .*$', f"{key} = {val}", suite))
    add("[[suite]] without command", suite.replace('command = "cat result.json"\n', ""))
    add("[[suite]] without kind", suite.replace('kind = "command"\n', ""))
    # other tables
    for table, body in [
        ("pinning", 'policy = "always"'), ("pinning", "cpus = [-1]"), ("pinning", 'cpus = ["a"]'),
        ("pinning", "cpus = [99999999999]"), ("gpu", 'clocks = "lock:abc"'), ("gpu", "device = -1"),
        ("gpu", "monitor_period_ms = 0"), ("gpu", 'clocks = "turbo"'), ("thresholds", "regression_pct = -5"),
        ("thresholds", "regression_pct = nan"), ("thresholds", 'regression_pct = "2"'),
        ("store", 'url = "mysql://x"'), ("store", "url = 1"), ("store", 'url = ":memory:"'),
        ("project", "name = 1"), ("project", "build = []"), ("project", 'env_pass = "X"'),
        ("sampling", "min_samples = 10\nmax_samples = 5"), ("sampling", "timeout_s = -1"), ("ci", "max_rounds = -1"),
        ("ci", 'until_decided = "yes"'), ("github", "publish = ['telegram']"), ("report", "dir = 1"),
    ]:
        add(f"[{table}] {body[:40]}", f"[{table}]\n{body}\n" + suite)
    # accepted on purpose (docs/CONFIG.md: finite and > 0): the run fails at once, exit 3, short message
    add("timeout_s = 1e-300 (valid: > 0)", suite + "timeout_s = 1e-300\n", rc={2, 3}, stay=False)
    # a 1 MB command is valid TOML; it cannot be executed (E2BIG) and must not be echoed in full
    add("1 MB command", suite.replace('"cat result.json"', '"' + "x" * (1 << 20) + '"'), rc={2, 3}, stay=False)
    return V


def bad_configs(W, rng):
    cat = "bad input: pitwall.toml"
    for i, (name, text, rc, stay) in enumerate(config_variants(rng)):
        path = os.path.join(W["ws"], "cfg", f"c{i}.toml")
        with open(path, "wb") as f:
            f.write(b'[project]\nname = "\xff\xfe"\n' if text is None else text.encode("utf-8", "surrogatepass"))
        bad_case(W, cat, name, ["-q", "--config", path, "run", "--no-report"], expect_rc=rc, store_must_stay=stay,
                 timeout=40)
    # the config file itself unreadable
    bad_case(W, cat, "--config nonexistent", ["-q", "--config", "/nonexistent/p.toml", "runs"])
    bad_case(W, cat, "--config a directory", ["-q", "--config", "/", "runs"])
    bad_case(W, cat, "--config /dev/zero (endless file)", ["-q", "--config", "/dev/zero", "runs"], timeout=20)
    bad_case(W, cat, "--config random bytes", ["-q", "--config", rand_file(W, rng, 4096), "runs"])


def rand_file(W, rng, n, text=False) -> str:
    p = os.path.join(W["ws"], "in", f"r{rng.randrange(1 << 30)}.bin")
    with open(p, "wb") as f:
        if text:
            f.write("".join(rng.choice("abc xyz\n{}[]\":,0123") for _ in range(n)).encode())
        else:
            f.write(bytes(rng.randrange(256) for _ in range(n)))
    return p


# ----------------------------------------------------------------------------- bad flags, revisions, store URLs


def bad_flags(W, rng):
    cat = "bad input: flags/revisions/stores"
    ws = W["ws"]
    big = "x" * 100_000  # one argument is limited to 128 KiB (MAX_ARG_STRLEN)
    cases = [
        ["--nope"], ["runs", "--nope"], ["run", "--rounds", "0", "--base", "HEAD", "--head", "HEAD"],
        ["run", "--rounds", "-1"], ["run", "--rounds", "abc"], ["run", "--base", "HEAD"], ["run", "--head", "HEAD"],
        ["run", "--max-time", "5x", "--base", "HEAD", "--head", "HEAD", "--until-decided"],
        ["run", "--max-time", "-1", "--base", "HEAD", "--head", "HEAD", "--until-decided"],
        ["run", "--max-rounds", "0", "--base", "HEAD", "--head", "HEAD", "--until-decided"],
        ["run", "--suite", "nosuch"], ["run", "--bench", "nosuchbench"], ["runs", "--limit", "0"],
        ["runs", "--limit", "-1"], ["runs", "--limit", "99999999999999999999999"], ["runs", "--format", "xml"],
        ["show"], ["show", ""], ["show", "abc"], ["show", "../../x"], ["show", "a\nb"], ["show", big],
        ["show", "\x1b[31mred"], ["export", "nope-nope"], ["export", "latest", "nope-nope"],
        ["compare", "--baseline", "nope-nope", "--candidate", "latest"], ["compare"],
        ["compare", "--baseline", "latest"], ["compare", "--baseline", "latest", "--candidate", "latest", "--threshold", "nan"],
        ["compare", "--baseline", "latest", "--candidate", "latest", "--threshold", "-5"],
        ["compare", "--baseline", "latest", "--candidate", "latest", "--threshold", "1e400"],
        ["compare", "--pair", "nope-nope"], ["compare", "--pair", "latest"],
        ["compare", "--baseline", "/nonexistent.json", "--candidate", "latest"],
        ["compare", "--baseline", "latest", "--candidate", "latest", "--input-format", "nope"],
        ["detect", "--nope"], ["run", "--commit", "nonexistent-rev"], ["run", "--commit", ""],
        ["run", "--commit", "HEAD~999"], ["run", "--commit", "HEAD..HEAD"], ["run", "--commit", "-x"],
        ["run", "--commit", "HEAD", "--repo", "/nonexistent"], ["run", "--commit", "HEAD", "--repo", "/tmp"],
        ["run", "--base", "nonexistent-rev", "--head", "HEAD"], ["run", "--base", "HEAD", "--head", "a\nb"],
        ["run", "--commit", big], ["import"], ["import", "/nonexistent.json"],
        ["import", "--input-format", "nope", os.path.join(FIX, "hyperfine", "sleeps.json")],
        ["import", "--commit", "notasha", os.path.join(FIX, "hyperfine", "sleeps.json")],
        ["import", "--commit", "", os.path.join(FIX, "hyperfine", "sleeps.json")],
        ["import", "--input-format", "nccl-tests", os.path.join(FIX, "hyperfine", "sleeps.json")],
    ]
    for args in cases:
        bad_case(W, cat, "flags: " + short(" ".join(args), 60), ["-q", *args], timeout=30)
    # an unwritable report directory: a usage error or a write failure, either is documented
    bad_case(W, cat, "report --out /dev/null/x", ["-q", "report", "--out", "/dev/null/x"], expect_rc={2, 3})
    empty_dir = os.path.join(ws, "in", "emptydir")
    os.makedirs(empty_dir, exist_ok=True)
    bad_case(W, cat, "import an empty directory", ["-q", "import", empty_dir])
    stores = [
        "", ":memory:", "sqlite:", "sqlite::memory:", "mysql://x", "postgres://", "postgresql://u@h:99999999/db",
        "http://example.invalid/x", "sqlite:/nonexistent/dir/x.db", "/nonexistent/dir/x.db", "/dev/null", "/",
        "/proc/self/status", "sqlite:" + big, "\x1b[31m", "file:x?mode=ro",
    ]
    for s in stores:
        for args in (["runs"], ["show", "latest"], ["export"]):
            bad_case(W, cat, f"--store {short(s, 40)!r} {args[0]}", ["-q", "--store", s, *args], timeout=30)
    for s in ("mysql://x", "::", "postgres://"):
        bad_case(W, cat, f"PITWALL_STORE={s!r} runs", ["-q", "runs"], env={"PITWALL_STORE": s})


# ----------------------------------------------------------------------------- bad result files


def load_fixture(rel):
    with open(os.path.join(FIX, rel)) as f:
        return f.read()


def export_variants(rng) -> list[tuple[str, str, set]]:
    base = json.loads(load_fixture("export-v2.json"))
    V = []

    def mut(name, fn, rc=frozenset({2})):
        d = json.loads(json.dumps(base))
        d["runs"][0]["id"] = "adv-new-run-0"  # a new id, so that only validation can refuse it
        d["runs"][1]["id"] = "adv-new-run-1"
        r = fn(d)
        V.append((name, json.dumps(d if r is None else r) if not isinstance(r, str) else r, set(rc)))

    text = json.dumps(base, indent=1)
    for i in range(12):
        cut = rng.randrange(1, len(text) - 2)
        V.append((f"export truncated at byte {cut}", text[:cut], {2}))
    r0 = lambda d: d["runs"][0]  # noqa: E731
    res0 = lambda d: d["runs"][0]["results"][0]  # noqa: E731
    time_res = lambda d: next(r for run in d["runs"] for r in run["results"] if r["unit"] == "ns")  # noqa: E731

    def setk(get, k, v):
        def f(d):
            get(d)[k] = v
        return f

    for name, v in [("NaN string", "NaN"), ("null", None), ("object", {}), ("bool", True), ("-1 ns", -1.0),
                    ("1e309 (inf)", "INF")]:
        def f(d, v=v):
            s = time_res(d)["samples"]
            s[len(s) // 2] = v
        mut(f"sample {name}", f)
    V.append(("sample bare NaN", json.dumps(base).replace("130000.0", "NaN", 1), {2}))
    V.append(("sample 1e999", json.dumps(base).replace("130000.0", "1e999", 1), {2}))
    V.append(("sample -1e300 ns", json.dumps(base).replace("130000.0", "-1e300", 1).replace(
        "01900000-0000-7000-8000-000000000001", "adv-neg"), {2}))
    for k, v in [("id", 1), ("id", ""), ("id", "../../x"), ("id", "a\nb"), ("id", ".hidden"), ("id", "a/b"),
                 ("id", "x" * 129), ("id", "x" * (1 << 20)), ("id", "é"), ("id", "a b"), ("id", "a\x00b"),
                 ("id", "\x1b[31m"), ("status", "weird"), ("status", "complete"), ("started_at", 123),
                 ("started_at", "2026-02-30T09:00:00Z"), ("started_at", "2026-13-01T09:00:00Z"),
                 ("started_at", "2026-12-01T25:00:00Z"), ("started_at", "2026-12-01T09:00:00"),
                 ("started_at", "2026-12-01 09:00:00Z"), ("started_at", ""), ("started_at", "2026-12-01T09:00:00+02:00"),
                 ("finished_at", "2026-11-30T09:00:00.000000Z"), ("finished_at", "2026-02-29T00:00:00Z"),
                 ("fingerprint", None), ("fingerprint", "x"), ("results", None), ("results", {}), ("commit", 5),
                 ("project", ["x"]), ("pair", {"id": "p", "role": "middle", "rounds": 1}), ("colour", "red")]:
        rc = {2}
        if k == "status" and v == "complete":
            # run 1 is partial in the fixture: claiming complete contradicts its failed result
            mut("run 1 status complete with a failed result", setk(lambda d: d["runs"][1], k, v))
            continue
        mut(f"run {k} = {short(repr(v), 40)}", setk(r0, k, v), rc)
    for k, v in [("direction", "up"), ("status", "fine"), ("params", {"n": 1}),
                 ("params", []), ("samples", "x"), ("samples", {}), ("unit", 5), ("replicates", [0]),
                 ("replicates", [-1] * 10), ("replicates", [1 << 32] * 10), ("sample_meta", [{}]),
                 ("sample_meta", [{"sm_clock_mhz": "fast"}] * 10), ("colour", 1), ("suite", None)]:
        mut(f"result {k} = {short(repr(v), 40)}", setk(res0, k, v))
    mut("result ok with no samples", lambda d: res0(d).update(samples=[], replicates=[]))
    mut("schema missing", lambda d: d.pop("schema"))
    mut("schema pitwall/v9", setk(lambda d: d, "schema", "pitwall/v9"))
    mut("schema 1", setk(lambda d: d, "schema", 1))
    mut("v1 with replicates", setk(lambda d: d, "schema", "pitwall/v1"))
    mut("unknown top-level key", setk(lambda d: d, "colour", 1))
    mut("runs not an array", setk(lambda d: d, "runs", {}))

    def dup(d):
        d["runs"][1] = json.loads(json.dumps(d["runs"][0]))
        d["runs"][1]["project"] = "other"
    mut("same id twice, different content", dup)
    # the fixture's own ids are already stored in the workspace: same id, different content
    changed = json.loads(json.dumps(base))
    changed["runs"][0]["project"] = "changed"
    V.append(("stored id with different content", json.dumps(changed), {2}))
    for name, t in [("empty file", ""), ("{}", "{}"), ("[]", "[]"), ("null", "null"), ("a number", "42"),
                    ("deep nesting", "[" * 100000), ("deep object", '{"a":' * 100000),
                    ("BOM + garbage", "\ufeff{garbage"), ("1 MB string", '{"schema": "' + "a" * (1 << 20) + '"}')]:
        V.append((name, t, {2}))
    return V


def hyperfine_variants() -> list[tuple[str, str, set]]:
    base = json.loads(load_fixture("hyperfine/sleeps.json"))
    V = []

    def mut(name, fn, rc=frozenset({2})):
        d = json.loads(json.dumps(base))
        fn(d)
        V.append((name, json.dumps(d), set(rc)))

    r = lambda d: d["results"][0]  # noqa: E731
    mut("hyperfine 3 times, 10 exit_codes", lambda d: r(d).update(times=r(d)["times"][:3]))
    mut("hyperfine 10 times, 3 exit_codes", lambda d: r(d).update(exit_codes=[0, 0, 0]))
    mut("hyperfine negative time", lambda d: r(d)["times"].__setitem__(2, -0.5))
    mut("hyperfine time 1e300 s (inf ns)", lambda d: r(d)["times"].__setitem__(2, 1e300))
    mut("hyperfine time string", lambda d: r(d)["times"].__setitem__(2, "fast"))
    mut("hyperfine empty times", lambda d: r(d).update(times=[], exit_codes=[]))
    mut("hyperfine command not a string", lambda d: r(d).update(command=5))
    mut("hyperfine results not an array", lambda d: d.update(results={}))
    mut("hyperfine exit code string", lambda d: r(d)["exit_codes"].__setitem__(0, "zero"))
    mut("hyperfine mean NaN string, no times", lambda d: (r(d).pop("times"), r(d).update(mean="NaN")))
    mut("hyperfine memory -1", lambda d: r(d).update(memory_usage_byte=[-1] * 10))
    return V


def nccl_variants() -> list[tuple[str, str, set]]:
    text = load_fixture("nccl-tests/all_reduce_perf.txt")
    lines = text.splitlines()
    idx = next(i for i, l in enumerate(lines) if l.strip().startswith("8 "))
    V = []

    def with_row(name, row_fn, rc=frozenset({2})):
        ls = list(lines)
        ls[idx] = row_fn(ls[idx])
        V.append((name, "\n".join(ls) + "\n", set(rc)))

    # documented (docs/FORMATS.md): such a row is left out with a warning that counts them
    with_row("nccl size -8 (warned, not stored)", lambda l: l.replace("           8 ", "          -8 ", 1), rc={0})
    with_row("nccl size 26 digits (warned)", lambda l: l.replace("           8 ", " 12345678901234567890123456 ", 1), rc={0})
    with_row("nccl row truncated to 7 columns", lambda l: " ".join(l.split()[:7]))
    with_row("nccl time 'abc'", lambda l: l.replace("19.50", "abc", 1))
    with_row("nccl negative time", lambda l: l.replace("19.50", "-19.50", 1))
    with_row("nccl time inf", lambda l: l.replace("19.50", "inf", 1))
    with_row("nccl time 1e400", lambda l: l.replace("19.50", "1e400", 1))
    with_row("nccl #wrong -1", lambda l: l[: l.rfind("0")] + "-1")
    head = "\n".join(l for l in lines if l.startswith("#")) + "\n"
    V.append(("nccl header, no rows", head, {2}))
    return V


def gbench_variants() -> list[tuple[str, str, set]]:
    base = json.loads(load_fixture("google-benchmark/repetitions.json"))
    V = []

    def mut(name, fn):
        d = json.loads(json.dumps(base))
        fn(d)
        V.append((name, json.dumps(d), {2}))

    b = lambda d: d["benchmarks"][0]  # noqa: E731
    mut("gbench real_time string", lambda d: b(d).update(real_time="fast"))
    mut("gbench negative real_time", lambda d: b(d).update(real_time=-5.0))
    mut("gbench time_unit parsecs", lambda d: b(d).update(time_unit="parsecs"))
    mut("gbench name missing", lambda d: (b(d).pop("name", None), b(d).pop("run_name", None)))
    mut("gbench real_time 1e308 s (inf ns)", lambda d: b(d).update(real_time=1e308, time_unit="s"))
    mut("gbench benchmarks empty", lambda d: d.update(benchmarks=[]))
    mut("gbench benchmarks not array", lambda d: d.update(benchmarks={}))
    V.append(("gbench bare Infinity time", json.dumps(base).replace('"real_time": ', '"real_time": Infinity, "x": ', 1), {2}))
    return V


def pjson_variants() -> list[tuple[str, str, set]]:
    V = []
    good = {"schema": "pitwall/v1", "benchmarks": [{"name": "p", "samples": [1.0, 2.0]}]}

    def mut(name, fn):
        d = json.loads(json.dumps(good))
        fn(d)
        V.append((name, json.dumps(d), {2}))

    b = lambda d: d["benchmarks"][0]  # noqa: E731
    mut("pitwall-json negative ns", lambda d: b(d).update(samples=[-1.0]))
    mut("pitwall-json empty benchmarks", lambda d: d.update(benchmarks=[]))
    mut("pitwall-json blank name", lambda d: b(d).update(name="  "))
    mut("pitwall-json skipped with samples", lambda d: b(d).update(skipped="no GPU"))
    mut("pitwall-json unknown key", lambda d: b(d).update(colour=1))
    mut("pitwall-json params array", lambda d: b(d).update(params={"a": [1]}))
    mut("pitwall-json sample_meta length", lambda d: b(d).update(sample_meta=[{}]))
    mut("pitwall-json direction sideways", lambda d: b(d).update(direction="sideways"))
    # the same benchmark twice is merged on purpose (docs/FORMATS.md), unless units differ
    mut("pitwall-json same benchmark twice, units differ", lambda d: d["benchmarks"].append(dict(b(d), unit="ms")))
    mut("pitwall-json no samples, no error", lambda d: b(d).update(samples=[]))
    V.append(("pitwall-json bare NaN", json.dumps(good).replace("2.0", "NaN"), {2}))
    return V


def bad_imports(W, rng):
    cat = "bad input: result files"
    d = os.path.join(W["ws"], "in")
    groups = [("export", export_variants(rng), []), ("hyperfine", hyperfine_variants(), []),
              ("nccl", nccl_variants(), []), ("gbench", gbench_variants(), []),
              ("pjson", pjson_variants(), ["--input-format", "pitwall-json"])]
    good_new = json.loads(load_fixture("export-v2.json"))
    for r in good_new["runs"]:
        r["id"] = "adv-good-" + r["id"][-4:]
    good_path = os.path.join(d, "good-new.json")
    with open(good_path, "w") as f:
        json.dump(good_new, f)
    n = 0
    for gname, variants, extra in groups:
        for name, text, rc in variants:
            n += 1
            p = os.path.join(d, f"{gname}-{n}.json" if gname != "nccl" else f"nccl-{n}.txt")
            with open(p, "w", encoding="utf-8", errors="surrogatepass") as f:
                f.write(text)
            if rc == {0}:
                # documented as accepted with a warning: exit 0, a `warning:` line that counts
                restore(W)
                res = pw(["import", *extra, p], W["ws"])  # no -q: it hides warnings
                probs = message_problems(res, {0}, allow_extra_lines=True)
                if "warning" not in res.errtext:
                    probs.append(f"no warning: {short(res.errtext)!r}")
                record(cat, name, cmd_text(res), probs, {"exit": res.rc, "stderr": short(res.errtext, 400)})
                continue
            bad_case(W, cat, name, ["-q", "import", *extra, p], expect_rc=rc)
            if gname == "export" and n % 4 == 0:
                # with a good file first: all or nothing
                bad_case(W, cat, name + " (after a good file: nothing stored)", ["-q", "import", good_path, p], expect_rc=rc)
            if gname in ("hyperfine", "gbench") and n % 2 == 0:
                bad_case(W, cat, name + " (as compare --baseline)",
                         ["-q", "compare", "--baseline", p, "--candidate", p], expect_rc=rc)
    for i, (size, text) in enumerate([(100, False), (4096, False), (1 << 20, False), (300, True), (50000, True)]):
        p = rand_file(W, rng, size, text)
        bad_case(W, cat, f"random {'text' if text else 'bytes'} ({size} B) as results", ["-q", "import", p])
    bad_case(W, cat, "/dev/null as results", ["-q", "import", "/dev/null"])
    bad_case(W, cat, "/dev/zero as results", ["-q", "import", "/dev/zero"], timeout=20)


# ----------------------------------------------------------------------------- files that are not a store


def bad_stores(W, rng):
    cat = "bad input: not a store"
    sd = os.path.join(W["tmp"], "stores")
    os.makedirs(sd)
    files = {}

    def put(name, data):
        p = os.path.join(sd, name)
        with open(p, "wb") as f:
            f.write(data)
        files[name] = p

    put("random-100B", bytes(rng.randrange(256) for _ in range(100)))
    put("random-64KiB", bytes(rng.randrange(256) for _ in range(65536)))
    put("text", b"hello, I am not a database\n" * 50)
    put("json", load_fixture("export-v2.json").encode())
    put("sqlite-header-then-garbage", b"SQLite format 3\x00" + bytes(rng.randrange(256) for _ in range(8192)))
    foreign = os.path.join(sd, "foreign.db")
    con = sqlite3.connect(foreign)
    con.execute("create table t (x)")
    con.execute("insert into t values (1)")
    con.commit()
    con.close()
    files["foreign-sqlite"] = foreign
    real = os.path.join(W["pristine"], "pitwall.db")
    with open(real, "rb") as f:
        data = f.read()
    put("pitwall-store-truncated", data[: len(data) // 2])
    good = os.path.join(W["ws"], "in", "good-new.json")
    cmds = [["runs"], ["show", "latest"], ["export"], ["report", "--out", os.path.join(W["tmp"], "rep-x")],
            ["compare", "--baseline", "latest", "--candidate", "latest"], ["import", good],
            ["run", "--no-report"], ["detect", "--benchmark", "x"]]
    for name, p in files.items():
        for c in cmds:
            rc = {2}
            if name == "pitwall-store-truncated":
                rc = {2, 3}  # a damaged store: refused, as a store failure or a bad store
            bad_case(W, cat, f"{name} as store: {c[0]}", ["-q", "--store", p, *c], expect_rc=rc,
                     store_must_stay=False, files_unchanged=[p], timeout=40)
    os.makedirs(os.path.join(sd, "adir"))
    for c in cmds[:3] + cmds[5:6]:
        bad_case(W, cat, f"directory as store: {c[0]}", ["-q", "--store", os.path.join(sd, "adir"), *c],
                 store_must_stay=False)


# ----------------------------------------------------------------------------- injections

INJ = {
    "ansi colour": "BM_\x1b[31mred\x1b[0m",
    "ansi clear screen": "BM_\x1b[2J\x1b[Hclear",
    "OSC title": "BM_\x1b]0;pwned\x07osc",
    "newline": "BM_line1\nFAKE ROW 1 ok",
    "carriage return": "BM_cr\roverwritten",
    "backspace": "BM_bs\b\b\bxx",
    "C1 CSI": "BM_c1\u009b31mred",
    "html script": "BM_<script>alert(1)</script>",
    "markdown pipes": "BM_a|b|c",
}
SUBJECT = "subject \x1b[31mred\x1b[0m <script>alert(2)</script> a|b"

INJ_BENCH = r'''import json, os, random, sys
names = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "names.json")))
scale = float(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "scale.txt")).read())
rng = random.Random()
entries = []
for fi, n in enumerate(names):
    for r in range(5):
        t = 1000.0 * (fi + 1) * scale * (1 + 0.01 * rng.random())
        entries.append({"name": n, "family_index": fi, "per_family_instance_index": 0, "run_name": n,
                        "run_type": "iteration", "repetitions": 5, "repetition_index": r, "threads": 1,
                        "iterations": 100, "real_time": t, "cpu_time": t, "time_unit": "ns"})
json.dump({"context": {"date": "x", "host_name": "x", "executable": "b", "num_cpus": 1}, "benchmarks": entries}, sys.stdout)
'''

BAD_CHARS = re.compile("[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f]")


def injections(tmp):
    cat = "injection"
    repo = os.path.join(tmp, "inj")
    os.makedirs(repo)
    git(repo, "init", "-q", "-b", "main")
    files = {".gitignore": ".pitwall/\nrep/\n__pycache__/\n", "bench.py": INJ_BENCH,
             "names.json": json.dumps(list(INJ.values()) + ["BM_plain"]), "scale.txt": "1.0",
             "pitwall.toml": GOOD_CFG.replace('"cat result.json"', f'"{sys.executable} bench.py"').replace(
                 '"pitwall-json"', '"google-benchmark"').replace("timeout_s = 10", "timeout_s = 60")}
    for k, v in files.items():
        with open(os.path.join(repo, k), "w") as f:
            f.write(v)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base commit")
    c0 = git(repo, "rev-parse", "HEAD")
    with open(os.path.join(repo, "scale.txt"), "w") as f:
        f.write("1.5")
    git(repo, "commit", "-q", "-am", SUBJECT)
    c1 = git(repo, "rev-parse", "HEAD")
    outs = {}
    r = pw(["run", "--base", c0, "--head", c1, "--rounds", "2", "--no-report"], repo, timeout=240)
    outs["run --base/--head (terminal)"] = r
    if r.rc not in (0, 1):
        record(cat, "setup: run --base/--head", cmd_text(r), [f"exit {r.rc}: {short(r.errtext, 600)!r}"])
        return
    outs["show latest"] = pw(["show", "latest"], repo)
    outs["runs"] = pw(["runs"], repo)
    outs["compare --pair latest (table)"] = pw(["compare", "--pair", "latest"], repo)
    r2 = pw(["run", "--commit", c1, "--no-report"], repo, timeout=240)
    outs["run --commit (terminal)"] = r2
    outs["show latest (commit run)"] = pw(["show", "latest"], repo)
    outs["runs (commit run)"] = pw(["runs"], repo)
    md = pw(["compare", "--pair", "latest", "--format", "markdown"], repo)
    rep = pw(["report", "--out", os.path.join(repo, "rep")], repo, timeout=120)
    exp = pw(["export"], repo)
    # terminal outputs: no raw control characters, no row split by a newline
    for oname, res in outs.items():
        text = res.outtext + res.errtext
        for pname, payload in list(INJ.items()) + [("commit subject", SUBJECT)]:
            probs = []
            if res.rc not in (0, 1):
                probs.append(f"exit {res.rc}")
            ctrl = set(BAD_CHARS.findall(payload))
            raw = sorted({repr(ch) for ch in ctrl if ch in text})
            if raw:
                probs.append(f"raw control characters {', '.join(raw)} reach the terminal")
            if pname == "newline":
                for line in text.splitlines():
                    if "FAKE ROW" in line and "BM_line1" not in line:
                        probs.append(f"a newline in a name splits a row: {short(line)!r}")
                        break
            record(cat, f"{oname}: {pname}", cmd_text(res), probs)
    # markdown: every table row has the header's number of cells, no raw controls
    rows = [l for l in md.outtext.splitlines() if l.startswith("|")]
    head_cells = None
    for pname, payload in INJ.items():
        probs = []
        if md.rc not in (0, 1):
            probs.append(f"exit {md.rc}: {short(md.errtext)!r}")
        if set(BAD_CHARS.findall(payload)) & set(md.outtext):
            probs.append("raw control characters in Markdown")
        for l in md.outtext.splitlines():
            if "FAKE ROW" in l and "BM_line1" not in l:
                probs.append(f"newline splits a Markdown row: {short(l)!r}")
                break
        tag = payload.split("_", 1)[1][:5]
        for l in rows:
            cells = len(re.findall(r"(?<!\\)\|", l))
            if l.startswith("|--") or l.startswith("| --") or l.startswith("|:"):
                continue
            if head_cells is None:
                head_cells = cells
            if tag in l and cells != head_cells:
                probs.append(f"row has {cells} cell separators, header {head_cells}: {short(l)!r}")
        record(cat, f"compare --format markdown: {pname}", cmd_text(md), probs)
    # HTML report: no unescaped <script>alert, no raw ESC
    html = ""
    for dp, _, fs in os.walk(os.path.join(repo, "rep")):
        for fn in fs:
            if fn.endswith((".html", ".svg", ".js", ".json")):
                with open(os.path.join(dp, fn), encoding="utf-8", errors="replace") as f:
                    html += f.read()
    for pname in ("html script (name)", "commit subject (<script> in subject)", "ESC in HTML"):
        probs = []
        if rep.rc != 0:
            probs.append(f"report exit {rep.rc}: {short(rep.errtext)!r}")
        if not html:
            probs.append("no report files")
        if pname.startswith("html") and "<script>alert(1)" in html:
            probs.append("unescaped <script>alert(1) in the report")
        if pname.startswith("commit") and "<script>alert(2)" in html:
            probs.append("unescaped <script>alert(2) in the report")
        if pname.startswith("ESC") and "\x1b" in html:
            probs.append("raw ESC in the report")
        record(cat, f"report (HTML): {pname}", cmd_text(rep), probs)
    # nothing lost: the export holds every name exactly
    try:
        doc = json.loads(exp.out)
        stored = {r["name"] for run in doc["runs"] for r in run["results"]}
        subjects = {(run.get("commit_info") or {}).get("subject") for run in doc["runs"]}
    except Exception as e:  # noqa: BLE001
        stored, subjects = set(), set()
        record(cat, "export parses", cmd_text(exp), [f"{e}"])
    for pname, payload in INJ.items():
        record(cat, f"export keeps the name exactly: {pname}", cmd_text(exp),
               [] if payload in stored else [f"{payload!r} not stored as given"])
    record(cat, "export keeps the commit subject exactly", cmd_text(exp),
           [] if SUBJECT in subjects else [f"subject not stored as given: {subjects!r}"])


# ----------------------------------------------------------------------------- faults


def ps_args() -> list[tuple[int, str]]:
    r = run(["ps", "-eo", "pid=,args="], "/", timeout=20)
    out = []
    for line in r.outtext.splitlines():
        line = line.strip()
        if line:
            pid, _, args = line.partition(" ")
            out.append((int(pid), args.strip()))
    return out


def survivors(marker: str) -> list[int]:
    return [pid for pid, a in ps_args() if marker in a and "ps -eo" not in a]


def kill_pids(pids):
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def db_valid(db) -> str | None:
    if not os.path.exists(db):
        return None
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        r = con.execute("pragma integrity_check").fetchone()[0]
        con.close()
        return None if r == "ok" else f"integrity_check: {r}"
    except sqlite3.Error as e:
        return f"sqlite: {e}"


def fault_kill_import(tmp, rng, trials):
    cat = "fault: SIGKILL import"
    d = os.path.join(tmp, "killimp")
    os.makedirs(d)
    base = json.loads(load_fixture("export-v2.json"))
    proto = base["runs"][0]
    runs, expect = [], {}
    for i in range(40):
        r = json.loads(json.dumps(proto))
        r["id"] = f"adv-kill-{i:03d}"
        res = []
        for j in range(150):
            res.append({"suite": "s", "name": f"b{j}", "params": {"i": str(i)}, "measure": "time", "unit": "ns",
                        "direction": "lower_is_better", "status": "ok",
                        "samples": [1000.0 + rng.random() for _ in range(40)]})
        r["results"] = res
        r["status"] = "complete"
        runs.append(r)
        expect[r["id"]] = len(res)
    src = os.path.join(d, "big.json")
    with open(src, "w") as f:
        json.dump({"schema": "pitwall/v2", "runs": runs}, f)
    ws = os.path.join(d, "ws")
    os.makedirs(ws)
    t = pw(["-q", "import", src], ws, timeout=120)
    full = t.wall
    shutil.rmtree(ws)
    for k in range(trials):
        os.makedirs(ws)
        pw(["-q", "import", os.path.join(FIX, "export-v2.json")], ws)
        at = rng.uniform(0.0, full * 1.1)
        res = pw(["-q", "import", src], ws, kill_after=at, timeout=120)
        probs = check_store_whole(ws, expect, {"01900000-0000-7000-8000-000000000001": 2,
                                                "01900000-0000-7000-8000-000000000002": 2})
        stored = len(json.loads(pw(["-q", "runs", "--format", "json"], ws).out or b"[]")) - 2
        again = pw(["-q", "import", src], ws, timeout=120)
        if again.rc != 0:
            probs.append(f"import again: exit {again.rc}: {short(again.errtext)!r}")
        else:
            lst = json.loads(pw(["-q", "runs", "--format", "json"], ws).out or b"[]")
            if len(lst) != len(expect) + 2:
                probs.append(f"after importing again {len(lst)} runs, expected {len(expect) + 2}")
        record(cat, f"kill -9 at {at:.2f} s of {full:.2f} s (exit {res.rc}): {stored} of {len(expect)} runs stored",
               cmd_text(res), probs, {"stored_runs": stored})
        shutil.rmtree(ws)
    return full


def check_store_whole(ws, expect, keep) -> list[str]:
    probs = []
    bad = db_valid(os.path.join(ws, ".pitwall", "pitwall.db"))
    if bad:
        probs.append(bad)
    r = pw(["-q", "runs", "--format", "json"], ws)
    if r.rc != 0:
        probs.append(f"runs: exit {r.rc}: {short(r.errtext)!r}")
        return probs
    try:
        lst = json.loads(r.out)
    except ValueError as e:
        return probs + [f"runs output not JSON: {e}"]
    seen = {x["id"]: x["results"] for x in lst}
    for rid, n in keep.items():
        if seen.get(rid) != n:
            probs.append(f"earlier run {rid} lost or changed ({seen.get(rid)} results)")
    for rid, n in seen.items():
        want = expect.get(rid, keep.get(rid))
        if want is not None and n != want:
            probs.append(f"half run {rid}: {n} of {want} results")
        elif want is None and rid not in keep:
            # `run` ids are unknown in advance: whole means the expected count
            if expect.get("*") is not None and n != expect["*"]:
                probs.append(f"half run {rid}: {n} of {expect['*']} results")
    return probs


def fault_kill_run(tmp, rng, trials):
    cat = "fault: SIGKILL run"
    d = os.path.join(tmp, "killrun")
    os.makedirs(d)
    n = 20000
    big = {"schema": "pitwall/v1", "benchmarks": [
        {"name": f"b{i}", "samples": [100.0 + (i % 7), 101.0, 99.0]} for i in range(n)]}
    with open(os.path.join(d, "big.json"), "w") as f:
        json.dump(big, f)
    cfg = GOOD_CFG.replace("cat result.json", f"cat {os.path.join(d, 'big.json')}").replace("timeout_s = 10", "timeout_s = 120")
    with open(os.path.join(d, "pitwall.toml"), "w") as f:
        f.write(cfg)
    ws = os.path.join(d, "ws")
    os.makedirs(ws)
    shutil.copy(os.path.join(d, "pitwall.toml"), ws)
    t = pw(["-q", "run", "--no-report"], ws, timeout=240)
    full = t.wall
    if t.rc != 0:
        record(cat, "setup", cmd_text(t), [f"exit {t.rc}: {short(t.errtext)!r}"])
        return full
    shutil.rmtree(ws)
    for k in range(trials):
        os.makedirs(ws)
        shutil.copy(os.path.join(d, "pitwall.toml"), ws)
        pw(["-q", "import", os.path.join(FIX, "export-v2.json")], ws)
        at = rng.uniform(0.0, full * 1.1)
        res = pw(["-q", "run", "--no-report"], ws, kill_after=at, timeout=240)
        probs = check_store_whole(ws, {"*": n}, {"01900000-0000-7000-8000-000000000001": 2,
                                                 "01900000-0000-7000-8000-000000000002": 2})
        stored = len(json.loads(pw(["-q", "runs", "--format", "json"], ws).out or b"[]")) - 2
        r = pw(["-q", "run", "--no-report"], ws, timeout=240)
        if r.rc != 0:
            probs.append(f"run after the kill: exit {r.rc}: {short(r.errtext)!r}")
        record(cat, f"kill -9 at {at:.2f} s of {full:.2f} s (exit {res.rc}): run {'stored' if stored else 'absent'}",
               cmd_text(res), probs, {"stored_runs": stored})
        shutil.rmtree(ws)
    return full


def fault_readonly(tmp):
    cat = "fault: read-only store"
    d = os.path.join(tmp, "ro")
    os.makedirs(os.path.join(d, "store"))
    ws = os.path.join(d, "ws")
    os.makedirs(ws)
    with open(os.path.join(ws, "pitwall.toml"), "w") as f:
        f.write(GOOD_CFG)
    with open(os.path.join(ws, "result.json"), "w") as f:
        f.write(PJ_RESULT)
    db = os.path.join(d, "store", "pitwall.db")
    for fx in ("export-v2.json", "hyperfine/sleeps.json"):
        pw(["-q", "--store", db, "import", os.path.join(FIX, fx)], ws)
    pw(["-q", "--store", db, "run", "--no-report"], ws)
    ids = [x["id"] for x in json.loads(pw(["-q", "--store", db, "runs", "--format", "json"], ws).out)]
    elsewhere = os.path.join(d, "elsewhere")
    os.makedirs(elsewhere)
    as_nobody = os.geteuid() == 0
    # the user cannot write the store directory or the file
    for p in (tmp, d, ws, os.path.join(d, "store")):
        os.chmod(p, 0o755)
    os.chmod(os.path.join(d, "store"), 0o555)
    os.chmod(db, 0o444)
    if as_nobody:
        os.chmod(elsewhere, 0o777)
        for f in ("pitwall.toml", "result.json"):
            os.chmod(os.path.join(ws, f), 0o644)
    before = sha(db)
    cases = [["runs"], ["runs", "--format", "json"], ["show", "latest"], ["show", ids[-1]], ["export"],
             ["export", "-o", os.path.join(elsewhere, "e.json")], ["report", "--out", os.path.join(elsewhere, "rep")],
             ["compare", "--baseline", ids[-1], "--candidate", ids[-2]], ["compare", "--baseline", ids[0], "--candidate", ids[0]],
             ["detect", "--benchmark", "gemm"]]
    for c in cases:
        res = pw(["-q", "--store", db, *c], ws, as_nobody=as_nobody, timeout=60)
        probs = message_problems(res, {0, 1}, allow_extra_lines=True)
        if res.rc not in (0, 1):
            probs.append(f"stderr: {short(res.errtext)!r}")
        if sha(db) != before:
            probs.append("store file changed")
        record(cat, f"{c[0]} on a read-only store" + (" (as nobody)" if as_nobody else ""), cmd_text(res), probs)
    # writing to it must fail cleanly, with one line
    for c in (["import", os.path.join(FIX, "hyperfine", "sleeps.json")], ["run", "--no-report"]):
        res = pw(["-q", "--store", db, *c], ws, as_nobody=as_nobody, timeout=60)
        probs = message_problems(res, {2, 3})
        if sha(db) != before:
            probs.append("store file changed")
        record(cat, f"{c[0]} into a read-only store fails cleanly", cmd_text(res), probs)
    os.chmod(os.path.join(d, "store"), 0o755)
    os.chmod(db, 0o644)


def fault_outputs(tmp):
    cat = "fault: output files, hangs"
    d = os.path.join(tmp, "out")
    os.makedirs(d)
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    T = 5
    cases = [
        ("output = /dev/zero", 'command = "true"\noutput = "/dev/zero"\nformat = "google-benchmark"', 3, None),
        ("output = FIFO nobody writes", f'command = "true"\noutput = "{fifo}"\nformat = "google-benchmark"', 3, None),
        ("output = /dev/urandom", 'command = "true"\noutput = "/dev/urandom"\nformat = "google-benchmark"', 3, None),
        ("stdout endless (yes)", 'command = "yes"', 3, None),
        ("stdout endless zeros (cat /dev/zero)", 'command = "cat /dev/zero"', 3, None),
        ("command hangs (sleep 4441)", 'command = "sleep 4441"', 3, "sleep 4441"),
        ("command ignores SIGTERM", "command = \"trap '' TERM; sleep 4442\"", 3, "sleep 4442"),
        ("background child holds stdout", f'command = "(sleep 4443 &); cat {os.path.join(d, "r.json")}"', 0, "sleep 4443"),
        ("stderr endless", 'command = "yes >&2"', 3, None),
        ("fork then hang in grandchild", "command = \"sh -c 'sleep 4444' & wait\"", 3, "sleep 4444"),
    ]
    with open(os.path.join(d, "r.json"), "w") as f:
        f.write(PJ_RESULT)
    for i, (name, body, want, marker) in enumerate(cases):
        ws = os.path.join(d, f"ws{i}")
        os.makedirs(ws)
        fmt = "" if "format" in body else 'format = "pitwall-json"\n'
        with open(os.path.join(ws, "pitwall.toml"), "w") as f:
            f.write(f'[project]\nname = "o"\n\n[[suite]]\nname = "t"\nkind = "command"\n{body}\n{fmt}timeout_s = {T}\n')
        res = pw(["-q", "run", "--no-report"], ws, timeout=T + 30)
        probs = []
        if res.wall > T + 5:
            probs.append(f"took {res.wall:.1f} s with timeout_s = {T}")
        if res.maxrss_kb > 512 * 1024:
            probs.append(f"peak memory {res.maxrss_kb / 1024:.0f} MB")
        if res.rc != want:
            probs.append(f"exit {res.rc}, expected {want}: {short(res.errtext)!r}")
        if DEBUG_TEXT.search(res.errtext) or any(len(l) > 1000 for l in (res.errtext + res.outtext).splitlines()):
            probs.append(f"bad message: {short(res.errtext)!r}")
        if marker:
            time.sleep(0.3)
            left = survivors(marker)
            if left:
                probs.append(f"{len(left)} `{marker}` process(es) left running")
                kill_pids(left)
        record(cat, name, cmd_text(res), probs, {"wall_s": round(res.wall, 2), "maxrss_mb": res.maxrss_kb // 1024})


def fault_kill_children(tmp, rng):
    cat = "fault: pitwall killed, children"
    d = os.path.join(tmp, "kids")
    os.makedirs(d)
    cases = []
    for sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT):
        for shape, cmd in (("direct sleep", "sleep {m}"), ("sleep in a subshell", "(sleep {m}); true"),
                           ("background sleep + wait", "sleep {m} & wait"), ("nested sh", "sh -c 'sh -c \\\"sleep {m}\\\"'")):
            cases.append((sig, shape, cmd))
    for i, (sig, shape, cmd) in enumerate(cases):
        m = f"{5000 + i}.{rng.randrange(10, 99)}"
        ws = os.path.join(d, f"ws{i}")
        os.makedirs(ws)
        with open(os.path.join(ws, "pitwall.toml"), "w") as f:
            f.write(f'[project]\nname = "k"\n\n[[suite]]\nname = "t"\nkind = "command"\n'
                    f'command = "{cmd.format(m=m)}"\nformat = "pitwall-json"\ntimeout_s = 60\n')
        pw(["-q", "import", os.path.join(FIX, "export-v2.json")], ws)
        res = pw(["-q", "run", "--no-report"], ws, kill_after=1.5, kill_sig=sig, timeout=30)
        probs = []
        if res.timed_out:
            probs.append(f"pitwall did not end after {sig.name} ({res.wall:.1f} s)")
        deadline = time.monotonic() + 2.0
        left = survivors(f"sleep {m}")
        while left and time.monotonic() < deadline:
            time.sleep(0.2)
            left = survivors(f"sleep {m}")
        if left:
            probs.append(f"`sleep {m}` still alive after {sig.name} of pitwall")
            kill_pids(left)
        if sig != signal.SIGKILL:
            want = 128 + sig.value
            if res.rc not in (-sig.value, want):
                probs.append(f"exit {res.rc}, expected death by {sig.name} ({want})")
        st = check_store_whole(ws, {}, {"01900000-0000-7000-8000-000000000001": 2,
                                        "01900000-0000-7000-8000-000000000002": 2})
        r = json.loads(pw(["-q", "runs", "--format", "json"], ws).out or b"[]")
        if len(r) != 2:
            st.append(f"{len(r) - 2} run(s) stored by the interrupted run")
        record(cat, f"{sig.name} of `run` with {shape}", cmd_text(res), probs + st)


# ----------------------------------------------------------------------------- main


def main():
    global PW
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pitwall", default="target/release/pitwall")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--out", metavar="FILE.json")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--kill-trials", type=int, default=25, help="SIGKILL trials per command (default 25)")
    ap.add_argument("--only", help="comma-separated parts: config,flags,imports,stores,inject,faults")
    args = ap.parse_args()
    PW = os.path.abspath(args.pitwall)
    if not os.access(PW, os.X_OK):
        sys.exit(f"error: {args.pitwall} is not an executable (hint: cargo build --release)")
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    rng = random.Random(seed)
    only = set(args.only.split(",")) if args.only else None
    tmp = tempfile.mkdtemp(prefix="pw-adv-")
    t0 = time.monotonic()
    timings = {}
    try:
        W = make_workspace(tmp)
        parts = [("config", lambda: bad_configs(W, rng)), ("flags", lambda: bad_flags(W, rng)),
                 ("imports", lambda: bad_imports(W, rng)), ("stores", lambda: bad_stores(W, rng)),
                 ("inject", lambda: injections(tmp)),
                 ("faults", lambda: (fault_outputs(tmp), fault_kill_children(tmp, rng), fault_readonly(tmp),
                                     timings.update(import_s=fault_kill_import(tmp, rng, args.kill_trials)),
                                     timings.update(run_s=fault_kill_run(tmp, rng, args.kill_trials))))]
        for name, fn in parts:
            if only and name not in only:
                continue
            ts = time.monotonic()
            fn()
            print(f"[{time.monotonic() - t0:6.1f} s] {name}: done in {time.monotonic() - ts:.1f} s", file=sys.stderr, flush=True)
    finally:
        if args.keep:
            print(f"kept {tmp}", file=sys.stderr)
        else:
            for dp, dns, _ in os.walk(tmp):
                for dn in dns:
                    try:
                        os.chmod(os.path.join(dp, dn), 0o755)
                    except OSError:
                        pass
            shutil.rmtree(tmp, ignore_errors=True)
    wall = time.monotonic() - t0
    cats = []
    for c in RESULTS:
        if c["category"] not in cats:
            cats.append(c["category"])
    rows = []
    tot = [0, 0, 0]
    for cat in cats:
        cs = [c for c in RESULTS if c["category"] == cat]
        ok = sum(c["ok"] for c in cs)
        rows.append((cat, len(cs), ok, len(cs) - ok))
        tot = [tot[0] + len(cs), tot[1] + ok, tot[2] + len(cs) - ok]
    rows.append(("total", *tot))
    w = max(len(r[0]) for r in rows)
    print(f"pitwall: {PW}\nseed: {seed}   wall: {wall:.0f} s" + "".join(f"   {k}: {v:.2f} s" for k, v in timings.items()))
    print(f"\n{'category'.ljust(w)}  {'tried':>5}  {'passed':>6}  {'failed':>6}")
    print(f"{'-' * w}  -----  ------  ------")
    for r in rows:
        print(f"{r[0].ljust(w)}  {r[1]:>5}  {r[2]:>6}  {r[3]:>6}")
    for cat in ("fault: SIGKILL import", "fault: SIGKILL run"):
        cs = [c for c in RESULTS if c["category"] == cat and "stored_runs" in c]
        if cs:
            hist = {}
            for c in cs:
                hist[c["stored_runs"]] = hist.get(c["stored_runs"], 0) + 1
            print(f"\n{cat}: runs stored when killed -> trials: "
                  + ", ".join(f"{k}: {v}" for k, v in sorted(hist.items())))
    fails = [c for c in RESULTS if not c["ok"]]
    if fails:
        print(f"\nfailures ({len(fails)}):")
        for c in fails:
            print(f"- [{c['category']}] {c['case']}\n    command: {short(c['command'], 400)}")
            for p in c["problems"]:
                print(f"    {short(p, 600)}")
    else:
        print("\nno failures")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"seed": seed, "pitwall": PW, "wall_s": wall, "timings": timings, "cases": RESULTS}, f, indent=1)
        print(f"\nevery case: {args.out}")
    return 0


if __name__ == "__main__":
    try:
        os.nice(19)
    except OSError:
        pass
    sys.exit(main())

"""Shared helpers of the A/B evaluation scripts in this folder (stdlib only).

Not a test by itself: synthetic.py, real_aa.py and planted.py import it. It runs the real
`pitwall` binary on real temporary git repositories, reads its JSON with `.get` (so that both
the old binary and the one with sequential rounds work), and prints tables.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager

GIT_ENV = {
    "GIT_AUTHOR_NAME": "pitwall-eval",
    "GIT_AUTHOR_EMAIL": "eval@example.invalid",
    "GIT_COMMITTER_NAME": "pitwall-eval",
    "GIT_COMMITTER_EMAIL": "eval@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}

# Verdict strings of `pitwall compare --format json`.
CALLS = ("regression", "improvement")


class HarnessError(RuntimeError):
    """pitwall (or git) failed in a way that is not a verdict."""


def common_args(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--pitwall", default="pitwall", help="pitwall binary (default: `pitwall` on PATH)")
    p.add_argument("--out", metavar="FILE.json", help="write the raw per-trial results here")
    p.add_argument(
        "--run-args",
        default="",
        metavar='"ARGS"',
        help='extra arguments for `pitwall run`, e.g. "--until-decided --max-rounds 15" or "--rounds 3"',
    )
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds allowed for one pitwall command (default 1800)")
    p.add_argument("--keep", action="store_true", help="keep the temporary repositories (their paths are printed)")
    p.add_argument("--quiet", action="store_true", help="no per-trial progress lines")
    return p


def resolve_pitwall(path: str) -> str:
    found = shutil.which(path) if os.sep not in path else path
    if not found or not os.path.exists(found):
        sys.exit(f"error: pitwall binary `{path}` not found (hint: cargo build --release, then --pitwall target/release/pitwall)")
    return os.path.abspath(found)


def run(cmd: list[str], cwd: str, timeout: float, ok=(0,), env: dict | None = None):
    """Runs cmd; returns (returncode, stdout, stderr, wall seconds). Raises HarnessError on a
    timeout or a return code outside `ok`."""
    full_env = dict(os.environ)
    full_env.update(GIT_ENV)
    full_env.pop("PITWALL_STORE", None)  # each repository has its own store
    if env:
        full_env.update(env)
    t0 = time.monotonic()
    try:
        p = subprocess.run(
            cmd, cwd=cwd, env=full_env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired as e:
        raise HarnessError(f"timed out after {timeout:.0f} s: {shlex.join(cmd)}") from e
    wall = time.monotonic() - t0
    if p.returncode not in ok:
        tail = "\n".join((p.stderr or p.stdout).strip().splitlines()[-15:])
        raise HarnessError(f"`{shlex.join(cmd)}` exited {p.returncode} in {cwd}:\n{tail}")
    return p.returncode, p.stdout, p.stderr, wall


def git(repo: str, *args: str) -> str:
    return run(["git", *args], cwd=repo, timeout=120)[1].strip()


def init_repo(repo: str) -> None:
    git(repo, "init", "-q", "-b", "main")
    with open(os.path.join(repo, ".gitignore"), "w") as f:
        f.write(".pitwall/\n__pycache__/\n")


def commit_all(repo: str, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def pitwall_toml(project: str, command: str, runs: int = 1, timeout_s: float = 600) -> str:
    """A command suite reading Google Benchmark JSON from stdout (docs/CONFIG.md, FORMATS.md)."""
    return (
        f'[project]\nname = "{project}"\n\n'
        f'[[suite]]\nname = "gb"\nkind = "command"\ncommand = "{command}"\n'
        f'format = "google-benchmark"\nruns = {runs}\ntimeout_s = {timeout_s}\n'
    )


@contextmanager
def temp_dir(prefix: str, keep: bool):
    d = tempfile.mkdtemp(prefix=prefix)
    try:
        yield d
    finally:
        if keep:
            print(f"kept {d}", file=sys.stderr)
        else:
            shutil.rmtree(d, ignore_errors=True)


def rounds_given(run_args: list[str]) -> int | None:
    """The `--rounds N` in run_args (the fixed-rounds mode of the old binary), else None."""
    for i, a in enumerate(run_args):
        if a == "--rounds" and i + 1 < len(run_args):
            return int(run_args[i + 1])
        if a.startswith("--rounds="):
            return int(a.split("=", 1)[1])
    return None


def ab_trial(pitwall: str, repo: str, base: str, head: str, run_args: list[str], timeout: float) -> dict:
    """One user-visible A/B answer: `pitwall run --base --head ARGS`, then
    `pitwall compare --pair latest --format json`. Exit 1 (a regression) is not an error."""
    cmd = [pitwall, "run", "--base", base, "--head", head, "--no-report", *run_args]
    rc_run, _, err_run, wall_run = run(cmd, cwd=repo, timeout=timeout, ok=(0, 1))
    rc_cmp, out, _, wall_cmp = run(
        [pitwall, "compare", "--pair", "latest", "--format", "json"], cwd=repo, timeout=timeout, ok=(0, 1)
    )
    doc = json.loads(out)
    rounds = doc.get("rounds")
    rounds_source = "json"
    if rounds is None:
        rounds, rounds_source = rounds_given(run_args) or 3, "--rounds given (old binary: no `rounds` in JSON)"
    return {
        "run_exit": rc_run,
        "compare_exit": rc_cmp,
        "rounds": rounds,
        "rounds_source": rounds_source,
        "wall_s": wall_run + wall_cmp,
        "run_wall_s": wall_run,
        "run_stderr_tail": "\n".join(err_run.strip().splitlines()[-5:]),
        "benchmarks": [slim(b) for b in doc.get("benchmarks", [])],
        "counts": doc.get("counts"),
        "failed": doc.get("failed"),
        "only_baseline": doc.get("only_baseline"),
        "only_candidate": doc.get("only_candidate"),
    }


def slim(b: dict) -> dict:
    """The fields of one compare entry that the scoring uses (others kept when small)."""
    keep = (
        "key", "suite", "name", "params", "measure", "verdict", "ratio", "ci", "p_value", "q_value",
        "decided_at_round", "base_replicates", "cand_replicates", "base_n", "cand_n", "threshold", "reason",
        "noise_record", "threshold_raised_from_pct",
    )
    return {k: b.get(k) for k in keep if k in b}


def bench_name_measure(b: dict) -> tuple[str, str]:
    """(name, measure) of a compare entry: its `name`/`measure` fields, else from `key`
    (suite/name[params]/measure)."""
    name, measure = b.get("name"), b.get("measure")
    if name is None or measure is None:
        parts = (b.get("key") or "").split("/")
        measure = measure or parts[-1]
        name = name or "/".join(parts[1:-1])
    return name, measure


def table(rows: list[list], header: list[str]) -> str:
    cells = [[str(c) for c in r] for r in [header, *rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = []
    for j, r in enumerate(cells):
        lines.append("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))))
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def pct(num: int, den: int) -> str:
    return f"{100.0 * num / den:.2f}%" if den else "n/a"


def write_out(path: str | None, doc: dict) -> None:
    if path:
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
        print(f"raw results: {path}")


def log(args, msg: str) -> None:
    if not args.quiet:
        print(msg, file=sys.stderr, flush=True)

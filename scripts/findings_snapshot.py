"""Snapshot every finding jaxfix reports, to show that a speed change changed none (issue #21).

Runs the real command line (a subprocess, as a user would) over three sets of files:

- the installed sources of jax, flax and optax (`pip install ".[pinned]"`: the speed corpus),
- every fixture (`fixtures/`), and
- the real-world detection corpus (`benchmarks/realworld/cases/`),

with `check --select ALL --no-cache --output-format json` (each finding's code, place, message,
fix title, safety and a digest of its edits and imports; file errors from standard error), and
`fix --select ALL --unsafe-fixes --no-cache` on the fixtures and the real-world corpus (a digest
of the diffs: what fixing until stable produces). `--jobs` picks the worker count, so -j 1 and -j 2
can be compared too.

    python scripts/findings_snapshot.py save OUT.json [--jobs 2]
    python scripts/findings_snapshot.py compare BEFORE.json AFTER.json   # prints "0 differences" or them

Paths are printed relative to this checkout and the corpus's folder as `<site-packages>`, so
snapshots of two checkouts compare. The runs use PYTHONHASHSEED=0 as a guard: a fix that orders
what it writes by set iteration would differ between processes otherwise (the carry of a loop
rewritten to `lax.fori_loop` once did; tests/test_traced_control_flow.py now checks it does not).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS_PACKAGES = ("jax", "flax", "optax")


def _site_packages() -> str:
    spec = importlib.util.find_spec("jax")
    return os.path.relpath(Path(spec.origin).parent.parent, ROOT) if spec and spec.origin else "<none>"


def _plain(text: str) -> str:
    return text.replace(_site_packages(), "<site-packages>")


def corpus_roots() -> list[str]:
    roots = []
    for name in CORPUS_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            raise SystemExit(f"{name} is not installed: pip install '.[pinned]'")
        roots.append(os.path.relpath(Path(spec.origin).parent, ROOT))
    return roots


def _jaxfix(args: list[str], jobs: int) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0"}
    cmd = [sys.executable, "-m", "jaxfix", *args, "--select", "ALL", "--no-cache", "-j", str(jobs), "--quiet"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
    if proc.returncode not in (0, 1, 2):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def findings(paths: list[str], jobs: int) -> dict:
    proc = _jaxfix(["check", "--output-format", "json", *paths], jobs)
    rows = []
    for f in json.loads(proc.stdout or "[]"):
        fix = f["fix"]
        rows.append(
            [
                _plain(f["path"]), f["line"], f["column"], f["end_line"], f["end_column"], f["code"], _plain(f["message"]),
                None if fix is None else fix["title"],
                None if fix is None else fix["safety"],
                None if fix is None else _digest([fix["edits"], fix["imports"], fix["unused_imports"]]),
            ]
        )
    errors = sorted(_plain(line) for line in proc.stderr.splitlines() if line.startswith("error:"))
    return {"findings": rows, "errors": errors, "exit": proc.returncode}


def fixes(paths: list[str], jobs: int) -> dict:
    proc = _jaxfix(["fix", "--unsafe-fixes", *paths], jobs)
    # one digest per file's diff (a diff starts with `--- path`), so a difference names its file
    per_file: dict[str, list[str]] = {}
    current = None
    for line in proc.stdout.splitlines():
        if line.startswith("--- "):
            current = _plain(line[4:].strip())
        if current is not None:
            per_file.setdefault(current, []).append(_plain(line))
    errors = sorted(line for line in proc.stderr.splitlines() if line.startswith("error:"))
    return {"diffs": {k: _digest(v) for k, v in sorted(per_file.items())}, "errors": errors, "exit": proc.returncode}


def save(out: Path, jobs: int) -> None:
    snapshot = {
        "corpus": findings(corpus_roots(), jobs),
        "fixtures": findings(["fixtures"], jobs),
        "realworld": findings(["benchmarks/realworld/cases"], jobs),
        "fixtures fixed": fixes(["fixtures"], jobs),
        "realworld fixed": fixes(["benchmarks/realworld/cases"], jobs),
    }
    out.write_text(json.dumps(snapshot, indent=1, sort_keys=True))
    counts = ", ".join(
        f"{k}: {len(v['findings'])} findings" if "findings" in v else f"{k}: {len(v['diffs'])} diffs"
        for k, v in snapshot.items()
    )
    print(f"{out}: {counts}")


def compare(before: Path, after: Path) -> int:
    a, b = json.loads(before.read_text()), json.loads(after.read_text())
    differences = []
    for part in sorted(set(a) | set(b)):
        x, y = a.get(part, {}), b.get(part, {})
        for key in sorted(set(x) | set(y)):
            old, new = x.get(key), y.get(key)
            if old == new:
                continue
            if isinstance(old, list) and isinstance(new, list):
                olds, news = {json.dumps(r) for r in old}, {json.dumps(r) for r in new}
                differences += [f"{part} {key} only before: {r}" for r in sorted(olds - news)]
                differences += [f"{part} {key} only after: {r}" for r in sorted(news - olds)]
                if olds == news:
                    differences.append(f"{part} {key}: same rows, different order")
            elif isinstance(old, dict) and isinstance(new, dict):
                for name in sorted(set(old) | set(new)):
                    if old.get(name) != new.get(name):
                        differences.append(f"{part} {key} {name}: {old.get(name)} -> {new.get(name)}")
            else:
                differences.append(f"{part} {key}: {old!r} -> {new!r}")
    for line in differences:
        print(line)
    print(f"{len(differences)} differences")
    return 1 if differences else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("save")
    s.add_argument("out", type=Path)
    s.add_argument("--jobs", "-j", type=int, default=2)
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "save":
        save(args.out, args.jobs)
    else:
        raise SystemExit(compare(args.before, args.after))


if __name__ == "__main__":
    main()

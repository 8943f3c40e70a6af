"""Zero-configuration verification on research-shaped code: how many correct fixes get proven.

Usage: PYTHONPATH=. python benchmarks/verify_real.py [--json] [--only NAME ...]

Every folder under benchmarks/verify_real/ is a small project written the way JAX research code
is (training loops with a frozen config dataclass and jit(partial(...)) in a loop, flax struct /
equinox models with a cached_property, jitted functions with `if`/`while` on traced values), each
with a pytest suite, a `__main__` block, doctests or only annotations. For each, this runs what a
user would type in the project folder, with no flag that says where inputs come from:

    jaxfix fix --verify --unsafe-fixes .

and reads the evidence lines it prints under each diff. It reports, per input source (pytest,
__main__, doctest, synthesized, ...), how many fixes were verified / mismatch / unverifiable, the
verified fraction over the correct fixes, the false mismatches (a mismatch on a correct fix), the
wrong rewrites caught (KNOWN_WRONG: fixes that really change behaviour, which must come back
mismatch), and the wall time. Target: >= 90% of correct fixes verified, 0 false mismatches.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = Path(__file__).resolve().parent / "verify_real"
EVIDENCE = re.compile(r"^\s*(?P<path>\S+?):(?P<line>\d+):(?P<col>\d+): (?P<code>[A-Z]+\d+) (?P<verdict>verified|mismatch|unverifiable|ineffective): (?P<detail>.*)$",
                      re.IGNORECASE)
# (program, file, rule code) of rewrites that really are wrong on these programs: verification must
# catch them, so they count as caught (mismatch) or missed, never as correct fixes.
# (rl_returns' JAX201 was one until issue #19: its lambda got the frozen config as a traced argument;
# the config now keys a cached factory and stays captured, and the fix is verified.)
KNOWN_WRONG: dict[tuple[str, str, str], str] = {}
SOURCES = ("pytest", "__main__", "doctest", "recorded", "example", "drive", "synthesized", "guessed")


def source_of(verdict: str, detail: str) -> str:
    """The input source an evidence line names ("none" when the fix had no inputs at all)."""
    if verdict == "unverifiable" and "no inputs" in detail:
        return "none"
    found = re.search(r"verified on \d+ (\S+) inputs?", detail)
    if found:
        return found.group(1)
    positions = [(detail.find(f"({name})"), name) for name in SOURCES if f"({name})" in detail]
    positions += [(detail.find(f" {name} "), name) for name in SOURCES if f" {name} " in detail]
    return min(positions)[1] if positions else "unknown"


def run_program(folder: Path, timeout: float) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    command = [sys.executable, "-m", "jaxfix.cli", "fix", "--verify", "--unsafe-fixes", "."]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - started
    fixes = []
    continuing = False  # the lines right after an evidence line that are indented deeper belong to it
    for line in (done.stdout + "\n" + done.stderr).splitlines():
        match = EVIDENCE.match(line)
        if match:
            fix = match.groupdict()
            fix["verdict"] = fix["verdict"].lower()
            fix["known_wrong"] = (folder.name, fix["path"].removeprefix("./"), fix["code"]) in KNOWN_WRONG
            fixes.append(fix)
            continuing = True
        elif continuing and line.startswith("    "):
            fixes[-1]["detail"] += " " + line.strip()  # an evidence detail that spans lines
        else:
            continuing = False
    for fix in fixes:
        fix["source"] = source_of(fix["verdict"], fix["detail"])
    notes = [line for line in done.stderr.splitlines() if ": inputs: " in line]
    return {"program": folder.name, "wall_s": round(wall, 1), "exit_status": done.returncode, "fixes": fixes,
            "input_notes": notes, "output_tail": "" if fixes else (done.stdout + done.stderr)[-2000:]}


def summarize(results: list[dict], wall: float) -> dict:
    per_source: dict[str, Counter] = defaultdict(Counter)
    verdicts: Counter = Counter()  # over the correct fixes
    wrong: Counter = Counter()  # over the known-wrong rewrites
    for result in results:
        for fix in result["fixes"]:
            if fix["known_wrong"]:
                wrong[fix["verdict"]] += 1
                continue
            per_source[fix["source"]][fix["verdict"]] += 1
            verdicts[fix["verdict"]] += 1
    total = sum(verdicts.values())
    return {
        "programs": len(results),
        "fixes": total + sum(wrong.values()),
        "correct_fixes": total,
        "verified": verdicts["verified"],
        "false_mismatch": verdicts["mismatch"],
        "unverifiable": verdicts["unverifiable"],
        # fixes that got inputs without configuration, whatever the comparison then said
        "with_inputs": total - per_source.get("none", Counter()).total(),
        "verified_fraction": round(verdicts["verified"] / total, 3) if total else 0.0,
        "known_wrong": sum(wrong.values()),
        "known_wrong_caught": wrong["mismatch"],
        "per_source": {name: dict(counts) for name, counts in sorted(per_source.items())},
        "wall_s": round(wall, 1),
        "results": results,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--only", nargs="*", help="program folder names to run (default: all)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per program")
    args = parser.parse_args()
    folders = sorted(p for p in PROGRAMS.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
    if args.only:
        folders = [p for p in folders if p.name in args.only]
    started = time.perf_counter()
    results = []
    for folder in folders:
        results.append(run_program(folder, args.timeout))
        if not args.json:
            r = results[-1]
            verdicts = ", ".join(f"{f['code']} {f['verdict']} ({f['source']})" for f in r["fixes"]) or "no evidence lines"
            print(f"{r['program']:<16} {r['wall_s']:>6.1f} s  {verdicts}", flush=True)
    summary = summarize(results, time.perf_counter() - started)
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print()
    print(f"{'source':<14} {'verified':>8} {'mismatch':>8} {'unverifiable':>12}")
    for name, counts in summary["per_source"].items():
        print(f"{name:<14} {counts.get('verified', 0):>8} {counts.get('mismatch', 0):>8} {counts.get('unverifiable', 0):>12}")
    print(
        f"\n{summary['verified']} of {summary['correct_fixes']} correct fixes verified ({summary['verified_fraction']:.0%}), "
        f"{summary['false_mismatch']} false mismatch, {summary['unverifiable']} unverifiable; "
        f"{summary['with_inputs']} of {summary['correct_fixes']} got inputs; "
        f"{summary['known_wrong_caught']} of {summary['known_wrong']} wrong rewrites caught; "
        f"{summary['programs']} programs in {summary['wall_s']:.0f} s"
    )
    for r in results:
        for fix in r["fixes"]:
            if fix["verdict"] != "verified":
                kind = "wrong rewrite, " if fix["known_wrong"] else ""
                print(f"  {r['program']}/{fix['path']}:{fix['line']} {fix['code']} {kind}{fix['verdict']}: {fix['detail'][:300]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

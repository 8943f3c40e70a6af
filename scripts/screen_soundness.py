"""Are the rules' `could_match` screens sound and tight on real code?

For every file of the pinned jax/flax/optax corpus (or the paths given) that passes a rule's
text prefilter, runs the rule's `check` with its screen bypassed, and prints per rule: files past
the prefilter, files (and lines) the screen admits, files with findings, and MISSES: findings
in files the screen rejected (must be 0). Slow on purpose (it libcst-parses everything the
prefilters admit); a measurement, not a test.

    python scripts/screen_soundness.py [-j 2] [PATH ...]
"""

from __future__ import annotations

import argparse
import ast
import collections
import importlib
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jaxfix import registry  # noqa: E402
from jaxfix.config import Config  # noqa: E402
from jaxfix.cstparse import parse_module  # noqa: E402
from jaxfix.rulebase import RuleContext  # noqa: E402

PACKAGES = ("jax", "flax", "optax")


def corpus() -> list[str]:
    roots = [Path(importlib.import_module(name).__file__).parent for name in PACKAGES]
    return sorted(str(p) for root in roots for p in root.rglob("*.py"))


def one(path: str) -> tuple[str, int, dict[str, tuple[bool, list[str]]]]:
    """(path, lines, rule name -> (screen admits, findings with the screen bypassed))."""
    try:
        source = Path(path).read_text(encoding="utf-8")
        tree = ast.parse(source)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return path, 0, {}
    rules = [r() for r in registry.all_rules() if not r.sees_findings]
    rules = [r for r in rules if any(token in source for token in r.prefilter)]
    out: dict[str, tuple[bool, list[str]]] = {}
    if not rules:
        return path, source.count("\n"), out
    ctx = RuleContext(source, path, options=Config().options(), project=None, module=parse_module(source), tree=tree)
    for rule in rules:
        admitted = rule.could_match(tree)
        found = [f"{f.code} {path}:{f.line}:{f.column}" for f in rule.check(ctx)]
        out[rule.name] = (admitted, found)
    return path, source.count("\n"), out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*")
    parser.add_argument("-j", type=int, default=2)
    args = parser.parse_args()
    files = sorted(str(p) for a in args.paths for p in ([Path(a)] if a.endswith(".py") else Path(a).rglob("*.py")))
    files = files or corpus()
    with ProcessPoolExecutor(args.j) as pool:
        results = list(pool.map(one, files, chunksize=4))
    stats: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    misses: list[str] = []
    for path, lines, per_rule in results:
        for name, (admitted, found) in per_rule.items():
            s = stats[name]
            s["prefilter"] += 1
            if admitted:
                s["admitted"] += 1
                s["admitted_lines"] += lines
            if found:
                s["with_findings"] += 1
                s["findings"] += len(found)
                if not admitted:
                    misses.extend(found)
    print(f"{len(files)} files, {sum(r[1] for r in results)} lines")
    print(f"{'rule':38} {'prefilter':>9} {'admitted':>8} {'lines':>8} {'w/finding':>9} {'findings':>8}")
    for name, s in sorted(stats.items()):
        print(
            f"{name:38} {s['prefilter']:9} {s['admitted']:8} {s['admitted_lines']:8} "
            f"{s['with_findings']:9} {s['findings']:8}"
        )
    print(f"MISSES (findings in files a screen rejected): {len(misses)}")
    for line in misses:
        print("  " + line)
    return 1 if misses else 0


if __name__ == "__main__":
    raise SystemExit(main())

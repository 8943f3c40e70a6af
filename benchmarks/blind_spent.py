"""The spent blind pools as one regression measure: what a detection change does to every labelled
finding the team has (issue #29).

A session may fetch a few hundred repositories, not the ~900 of the spent pools, so this measures
the snapshots that exist under `--root <root>/<pool>/<owner>__<name>/` (made with
`benchmarks/blind/snapshots.py`), pool by pool, with `blind.measure`, and prints the default tier
summed over the pools with the current labels: findings, real / wrong / debatable, precision, safe
fixes at wrong findings, recall over the recall entries of the measured repositories, and per rule.
`--save DIR` keeps one JSON per pool; `--compare DIR_A DIR_B` prints the findings that appeared,
vanished or changed tier between two saved runs (with their verdicts), which is how a change is
read before it lands. The pool being measured blind this session is never among them: pass the
spent pools only (`--pools`, default every pool but those of `snapshots.UNMEASURED`, which it refuses).

    python benchmarks/blind_spent.py --root /work/blind --checkout . --save /tmp/spent_new
    python benchmarks/blind_spent.py --compare /tmp/spent_base /tmp/spent_new
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

import blind
import snapshots

COUNTS = ("findings", "real", "wrong", "debatable", "unlabelled", "safe_at_wrong")


def measure_pools(root: Path, pools: list[str], checkout: Path, save: Path | None, select: str = "ALL") -> list[dict]:
    """`blind.measure` of each pool, over the repositories whose snapshot exists under `root/<pool>`."""
    results = []
    for pool in pools:
        here = root / pool
        present = {d.name for d in here.iterdir()} if here.is_dir() else set()
        repos = [p.repo for p in snapshots.load(pool) if p.dirname in present]
        if not repos:
            continue
        result = blind.measure(pool, here, None, repos, checkout, select)
        results.append(result)
        if save is not None:
            save.mkdir(parents=True, exist_ok=True)
            (save / f"{pool}.json").write_text(json.dumps(result))
    return results


def summary(results: list[dict]) -> str:
    """The default tier summed over the pools, per rule, and the recall of the measured repositories."""
    total: Counter = Counter()
    per_rule: dict[str, Counter] = defaultdict(Counter)
    found = entries = 0
    for result in results:
        total.update({k: result["overall"][k] for k in COUNTS})
        found += result["recall"].get("found", 0)
        entries += result["recall"].get("entries", 0)
        for f in result["findings"]:
            if not f["preview"]:
                per_rule[f["code"]][f.get("verdict") or "unlabelled"] += 1
    labelled = total["real"] + total["wrong"] + total["debatable"]
    lines = [
        f"{len(results)} pools, {sum(len(r['repos']) for r in results)} repositories, default tier: "
        + ", ".join(f"{k} {total[k]}" for k in COUNTS),
        f"precision {total['real'] / max(labelled, 1):.3f} (decided "
        f"{total['real'] / max(total['real'] + total['wrong'], 1):.3f}), recall {found}/{entries}",
    ]
    for code, counts in sorted(per_rule.items()):
        lines.append(f"  {code} " + ", ".join(f"{verdict} {n}" for verdict, n in sorted(counts.items())))
    return "\n".join(lines)


def _keyed(folder: Path) -> dict[tuple, dict]:
    out = {}
    for path in sorted(folder.glob("*.json")):
        result = json.loads(path.read_text())
        for f in result["findings"]:
            out[(result["pool"], f["repo"], f["where"], f["line"], f["code"])] = f
    return out


def compare(before: Path, after: Path) -> list[str]:
    """The findings that appeared, vanished or changed tier from one saved run to the other."""
    a, b = _keyed(before), _keyed(after)
    pools = {k[0] for k in b}
    lines = []
    for key in sorted(set(a) | set(b)):
        if key[0] not in pools:
            continue
        where = " ".join(map(str, key))
        if key not in b:
            lines.append(f"vanished  {where} ({a[key].get('verdict') or 'unlabelled'})")
        elif key not in a:
            lines.append(f"appeared  {where} ({b[key].get('verdict') or 'unlabelled'}): {b[key]['message'][:100]}")
        elif a[key]["preview"] != b[key]["preview"] or a[key]["safety"] != b[key]["safety"]:
            lines.append(
                f"changed   {where} ({b[key].get('verdict')}): preview {a[key]['preview']} -> {b[key]['preview']}, "
                f"fix {a[key]['safety']} -> {b[key]['safety']}"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, help="the pools' snapshots, <root>/<pool>/<owner>__<name>/")
    parser.add_argument("--checkout", type=Path, default=blind.HERE.parent, help="the jaxfix checkout to measure")
    parser.add_argument(
        "--pools",
        nargs="*",
        default=[p for p in snapshots.POOLS if p not in snapshots.UNMEASURED],
        help="the spent pools to measure (default: every pool but `snapshots.UNMEASURED`)",
    )
    parser.add_argument("--select", default="ALL", help="only these rules (a quick look: `JAX501,JAX504`)")
    parser.add_argument("--save", type=Path, help="write one JSON per pool here")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"), help="two --save folders")
    args = parser.parse_args(argv)
    if args.compare:
        print("\n".join(compare(*args.compare)) or "no finding appeared, vanished or changed")
        return 0
    if args.root is None:
        parser.error("--root is required unless --compare is given")
    unmeasured = sorted(set(args.pools) & set(snapshots.UNMEASURED))
    if unmeasured:
        parser.error(f"not spent yet (snapshots.UNMEASURED): {', '.join(unmeasured)}")
    print(summary(measure_pools(args.root, args.pools, args.checkout.resolve(), args.save, args.select)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

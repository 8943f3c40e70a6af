"""How precise is jaxfix on public JAX code it was never tuned on? (issue #29, the blind evaluation)

Pool: benchmarks/blind/repos.toml, public repositories pinned to commits, in two halves: `dev`
(tune and label freely) and `heldout` (measured once, untouched, at the end of the work). The
snapshots are fetched on demand (benchmarks/blind/snapshots.py) and never committed.

Runs `jaxfix check --select ALL --preview --no-cache --output-format json` as a subprocess over each
snapshot of a pool and matches the findings to the labels (benchmarks/blind/labels/<pool>.tsv) by
(repo, path, line, code). Verdicts: real / wrong / debatable (see benchmarks/blind/README.md).
The figures are those of the default tier (what `check --select ALL` shows a user), with the
whole (`--preview`: also the findings whose evidence was mostly wrong on code nobody prepared)
beside them. Prints, per family (JAX1..JAX5) and per repository: findings, real, wrong, debatable, unlabelled,
precision (= real / labelled findings, debatable counted as not real), real/(real+wrong), safe
fixes offered at wrong findings, findings per 10k lines of Python; the labelled findings that
vanished (a real one vanishing is lost recall) and the findings that appeared without a label;
recall against the anti-patterns found by reading (labels/<pool>_recall.tsv): a recall entry is
found when a finding of its family is reported in its file within RECALL_SLACK lines.

    python benchmarks/blind.py --pool dev --root /work/blind/dev
    python benchmarks/blind.py --pool dev --root /tmp/blind --mirror /work/.mirror   # fetch first
    python benchmarks/blind.py --pool dev --root /work/blind/dev --list              # every finding
    python benchmarks/blind.py --pool dev --root /work/blind/dev --json
    python /work/wt/blind/benchmarks/blind.py --root /work/blind/dev --checkout .   # another checkout
    python benchmarks/blind.py --pool heldout --root /tmp/blind/heldout --todo        # rows to label

It measures; it does not gate: the exit status is 0 unless the tool could not be run at all.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
BLIND = HERE / "blind"
LABELS = BLIND / "labels"
if str(BLIND) not in sys.path:
    sys.path.insert(0, str(BLIND))

import snapshots

FAMILIES = ("JAX1", "JAX2", "JAX3", "JAX4", "JAX5")
VERDICTS = ("real", "wrong", "debatable")
LABEL_COLUMNS = ("repo", "commit", "path", "line", "code", "verdict", "reason")
RECALL_COLUMNS = ("repo", "commit", "path", "line", "family", "description")
RECALL_SLACK = 2  # a finding this many lines from a recall entry's line counts as reporting it


@dataclass(frozen=True)
class Finding:
    repo: str
    path: str  # relative to the snapshot root, with /
    line: int
    code: str
    message: str
    safety: str | None  # the fix's safety, None when no fix is offered
    cell: int | None = None  # a notebook's cell (its `line` counts from the cell's top)
    preview: bool = False  # reported in preview mode only (`jaxfix check --preview`)

    @property
    def where(self) -> str:
        """The label's `path`: a notebook finding's cell is part of it (`nb.ipynb#cell12`), since
        its line counts from the top of the cell and two cells can share a line number."""
        return self.path if self.cell is None else f"{self.path}#cell{self.cell}"

    @property
    def key(self) -> tuple[str, str, int, str]:
        return (self.repo, self.where, self.line, self.code)

    @property
    def family(self) -> str:
        return self.code[:4]


def _rows(path: Path, columns: tuple[str, ...]) -> list[dict[str, str]]:
    """The rows of a tab-separated file with a header line; `#` lines are comments."""
    if not path.exists():
        return []
    lines = [line for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]
    rows = list(csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
    for number, row in enumerate(rows, 2):
        missing = [c for c in columns if not (row.get(c) or "").strip()]
        if missing:
            raise ValueError(f"{path.name}: row {number} lacks {', '.join(missing)}")
    return rows


def load_labels(pool: str) -> dict[tuple[str, str, int, str], dict[str, str]]:
    labels = {}
    for row in _rows(LABELS / f"{pool}.tsv", LABEL_COLUMNS):
        if row["verdict"] not in VERDICTS:
            raise ValueError(f"{pool}.tsv: verdict {row['verdict']!r} at {row['path']}:{row['line']}")
        key = (row["repo"], row["path"], int(row["line"]), row["code"])
        if key in labels:
            raise ValueError(f"{pool}.tsv: {key} labelled twice")
        labels[key] = row
    return labels


def load_recall(pool: str) -> list[dict[str, str]]:
    return _rows(LABELS / f"{pool}_recall.tsv", RECALL_COLUMNS)


def jaxfix_commit(checkout: Path) -> str:
    """The commit of the jaxfix checkout that is measured (`+dirty` when the tree has changes)."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=checkout, capture_output=True, text=True, check=False)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=checkout,
                           capture_output=True, text=True, check=False)
    commit = head.stdout.strip() or "unknown"
    return commit + ("+dirty" if dirty.stdout.strip() else "")


def python_lines(root: Path) -> int:
    total = 0
    for path in root.rglob("*.py"):
        try:
            total += path.read_bytes().count(b"\n")
        except OSError:
            continue
    return total


def has_preview(checkout: Path) -> bool:
    """Whether the checkout's jaxfix has a preview mode (`--preview`; older commits have none)."""
    cli = checkout / "jaxfix" / "checkcmd.py"
    return cli.exists() and '"--preview"' in cli.read_text()


def run_jaxfix(pinned: snapshots.Pinned, snapshot: Path, checkout: Path, select: str = "ALL") -> tuple[list[Finding], str]:
    """The findings of `jaxfix check --select ALL --preview` on one snapshot, each marked with its
    tier (`Finding.preview`), and its stderr.

    `python -m jaxfix` run in `checkout` imports that checkout's jaxfix, whatever is installed."""
    cmd = [sys.executable, "-m", "jaxfix", "check", "--select", select, "--no-cache",
           "--output-format", "json", "-q", *(["--preview"] if has_preview(checkout) else []), str(snapshot)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=checkout, check=False)
    if proc.returncode not in (0, 1, 2) or not proc.stdout.strip():
        raise RuntimeError(f"{pinned.repo}: jaxfix exited {proc.returncode}: {proc.stderr[-500:]}")
    findings = []
    for item in json.loads(proc.stdout):
        path = Path(item["path"]).resolve().relative_to(snapshot.resolve()).as_posix()
        fix = item.get("fix") or {}
        findings.append(Finding(pinned.repo, path, int(item["line"]), item["code"], item["message"],
                                fix.get("safety"), item.get("cell"), bool(item.get("preview"))))
    return findings, proc.stderr


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def tally(findings: list[Finding], labels: dict) -> dict:
    counts = Counter()
    for finding in findings:
        counts["findings"] += 1
        row = labels.get(finding.key)
        verdict = row["verdict"] if row else "unlabelled"
        counts[verdict] += 1
        if verdict == "wrong" and finding.safety == "safe":
            counts["safe_at_wrong"] += 1
    labelled = counts["real"] + counts["wrong"] + counts["debatable"]
    return {
        "findings": counts["findings"], "real": counts["real"], "wrong": counts["wrong"],
        "debatable": counts["debatable"], "unlabelled": counts["unlabelled"],
        "precision": _ratio(counts["real"], labelled),
        "precision_decided": _ratio(counts["real"], counts["real"] + counts["wrong"]),
        "safe_at_wrong": counts["safe_at_wrong"],
    }


def recall(entries: list[dict[str, str]], findings: list[Finding], measured: set[str]) -> dict:
    by_file = defaultdict(list)
    for finding in findings:  # a notebook entry names its cell (`nb.ipynb#cell12`), as labels do
        by_file[(finding.repo, finding.where)].append(finding)
    rows = []
    for entry in entries:
        if entry["repo"] not in measured:
            continue
        family, line = entry["family"][:4], int(entry["line"])
        hits = [f for f in by_file[(entry["repo"], entry["path"])]
                if f.family == family and abs(f.line - line) <= RECALL_SLACK]
        rows.append({**entry, "found": bool(hits), "codes": sorted({f.code for f in hits})})
    per_family = {}
    for family in FAMILIES:
        mine = [r for r in rows if r["family"][:4] == family]
        if mine:
            found = sum(r["found"] for r in mine)
            per_family[family] = {"entries": len(mine), "found": found, "recall": _ratio(found, len(mine))}
    found = sum(r["found"] for r in rows)
    return {"entries": len(rows), "found": found, "recall": _ratio(found, len(rows)),
            "per_family": per_family, "rows": rows}


def measure(pool: str, root: Path, mirror: Path | None, only: list[str], checkout: Path = HERE.parent,
            select: str = "ALL") -> dict:
    labels = load_labels(pool)
    if select != "ALL":  # a quick look at some rules: the others' labels are not what this run measures
        prefixes = tuple(select.split(","))
        labels = {key: row for key, row in labels.items() if row["code"].startswith(prefixes)}
    started = time.monotonic()
    findings: list[Finding] = []
    repos = {}
    for pinned in snapshots.load(pool):
        if only and not any(o.lower() in pinned.repo.lower() for o in only):
            continue
        try:
            snapshot = snapshots.ensure(pinned, root, mirror)
        except RuntimeError as exc:
            print(f"skipped {pinned.repo}: {exc}", file=sys.stderr)
            continue
        found, stderr = run_jaxfix(pinned, snapshot, checkout, select)
        findings += found
        stale = sorted({row["commit"] for key, row in labels.items()
                        if key[0] == pinned.repo and row["commit"] != pinned.commit})
        repos[pinned.repo] = {"commit": pinned.commit, "lines": python_lines(snapshot),
                              "errors": sum(1 for line in stderr.splitlines() if line.startswith("error:")),
                              "stale_label_commits": stale, **tally(found, labels)}
    measured = set(repos)
    reported = {f.key for f in findings}
    lines = sum(r["lines"] for r in repos.values())
    shown = [f for f in findings if not f.preview]  # the default tier: what a user sees
    for repo, entry in repos.items():
        entry.update(tally([f for f in shown if f.repo == repo], labels))
        entry["per_10k_lines"] = 1e4 * entry["findings"] / entry["lines"] if entry["lines"] else None

    def tier(these: list[Finding]) -> tuple[dict, dict]:
        overall = tally(these, labels)
        overall["per_10k_lines"] = 1e4 * overall["findings"] / lines if lines else None
        overall["lines"] = lines
        return overall, {fam: tally([f for f in these if f.family == fam], labels) for fam in FAMILIES}

    overall, families = tier(shown)
    whole, whole_families = tier(findings)
    vanished = [row for key, row in sorted(labels.items()) if key[0] in measured and key not in reported]
    appeared = [f for f in findings if f.key not in labels]
    entries = load_recall(pool)
    return {
        "pool": pool, "jaxfix_commit": jaxfix_commit(checkout), "checkout": str(checkout), "seconds": round(time.monotonic() - started, 1),
        "overall": overall, "families": families, "repos": repos,
        "with_preview": {"overall": whole, "families": whole_families, "recall": recall(entries, findings, measured)},
        "preview_only": [{**f.__dict__, "where": f.where, "verdict": (labels.get(f.key) or {}).get("verdict", "unlabelled")}
                         for f in findings if f.preview],
        "vanished": vanished, "appeared": [{**f.__dict__, "where": f.where} for f in appeared],
        "recall": recall(entries, shown, measured),
        "findings": [{**f.__dict__, "where": f.where, "verdict": (labels.get(f.key) or {}).get("verdict", "unlabelled")}
                     for f in findings],
    }


def _fmt(value: float | None) -> str:
    return "   -" if value is None else f"{value:4.2f}"


def _table(title: str, rows: dict[str, dict]) -> None:
    print(f"\n{title:<28} {'found':>5} {'real':>5} {'wrong':>5} {'deb.':>5} {'unlab':>5} "
          f"{'prec':>5} {'r/(r+w)':>7} {'safe@w':>6} {'/10kl':>6}")
    for name, t in rows.items():
        per = t.get("per_10k_lines")
        print(f"{name:<28} {t['findings']:>5} {t['real']:>5} {t['wrong']:>5} {t['debatable']:>5} "
              f"{t['unlabelled']:>5} {_fmt(t['precision']):>5} {_fmt(t['precision_decided']):>7} "
              f"{t['safe_at_wrong']:>6} {'' if per is None else f'{per:6.2f}':>6}")


def print_report(result: dict, listing: bool) -> None:
    print(f"blind pool {result['pool']!r}, jaxfix {result['jaxfix_commit']} ({result['checkout']}), {result['seconds']}s")
    print("default tier (what `jaxfix check --select ALL` shows; preview findings below):")
    _table("family", result["families"])
    _table("repository", {repo: t for repo, t in result["repos"].items()})
    whole = result["with_preview"]
    _table("overall", {"default": result["overall"], "with --preview": whole["overall"]})
    _table("family, with --preview", whole["families"])
    print(f"\n{result['overall']['lines']} lines of Python")
    for repo, t in result["repos"].items():
        if t["stale_label_commits"]:
            print(f"warning: {repo} has labels for other commits {t['stale_label_commits']} than {t['commit']}")
    rec = result["recall"]
    print(f"\nrecall on the anti-patterns found by reading: {rec['found']}/{rec['entries']} {_fmt(rec['recall'])}"
          + "".join(f"  {fam} {v['found']}/{v['entries']}" for fam, v in rec["per_family"].items()))
    rec_all = whole["recall"]
    print(f"  with --preview: {rec_all['found']}/{rec_all['entries']} {_fmt(rec_all['recall'])}"
          + "".join(f"  {fam} {v['found']}/{v['entries']}" for fam, v in rec_all["per_family"].items()))
    for row in rec["rows"]:
        if not row["found"] or listing:
            mark = "found " if row["found"] else "MISSED"
            print(f"  {mark} {row['family']:<6} {row['repo']}:{row['path']}:{row['line']}  {row['description']}")
    print(f"\nvanished (labelled, no longer reported): {len(result['vanished'])}")
    for row in result["vanished"]:
        print(f"  {row['verdict']:<9} {row['code']} {row['repo']}:{row['path']}:{row['line']}  {row['reason']}")
    print(f"appeared (reported, no label): {len(result['appeared'])}")
    for f in result["appeared"]:
        print(f"  {f['code']} {f['repo']}:{f['where']}:{f['line']}  {f['message'][:110]}")
    if listing:
        print("\nall findings:")
        for f in result["findings"]:
            tier = " preview" if f["preview"] else ""
            print(f"  {f['verdict']:<10} {f['code']} {f['safety'] or '-':<6} {f['repo']}:{f['where']}:{f['line']}{tier}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pool", choices=snapshots.POOLS, default="dev")
    parser.add_argument("--root", type=Path, required=True, help="the snapshots, one <owner>__<name>/ each")
    parser.add_argument("--mirror", type=Path, help="make missing snapshots from bare mirrors <owner>+<name>/repo")
    parser.add_argument("--checkout", type=Path, default=HERE.parent,
                        help="the jaxfix checkout to measure (default: this script's); labels stay this script's")
    parser.add_argument("--select", default="ALL",
                        help="rule codes or prefixes (`JAX3`): a quick partial measure of those rules only")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--list", action="store_true", help="also list every finding with its verdict")
    parser.add_argument("--todo", action="store_true",
                        help="print the unlabelled findings as label rows to fill in (verdict `?`, reason = message)")
    parser.add_argument("repos", nargs="*", help="only repositories whose owner/name contains one of these")
    args = parser.parse_args(argv)
    try:
        result = measure(args.pool, args.root, args.mirror, args.repos, args.checkout.resolve(), args.select)
    except (RuntimeError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.todo:
        commits = {repo: t["commit"] for repo, t in result["repos"].items()}
        for f in result["appeared"]:
            print("\t".join([f["repo"], commits[f["repo"]], f["where"], str(f["line"]), f["code"], "?",
                             " ".join(f["message"].split())]))
    elif args.json:
        print(json.dumps(result, indent=1))
    else:
        print_report(result, args.list)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How well does jaxfix's detection do on labelled real-world-shaped code? (issue #20)

Corpus: benchmarks/realworld/cases/. Each case is one file, or one folder (several modules, for
call-graph and cross-module cases), modelled on a piece of public JAX code or a JAX issue thread
and reduced to its pattern. Each case carries a header (see benchmarks/realworld/README.md):

    # source: <url of the code or the issue thread it was modelled on>
    # pattern: <one line>
    # expect: flag JAX301 [JAX304 ...]   or   no-flag   (`JAX301|JAX305`: either code will do)
    # family: pytree | placement | control | semantics | cost
    # strictness: strict | hard | callgraph

Every case is analysed in-process with `jaxfix.engine.analyze` and `Config(select=("ALL",))`, with
a project index built over the case's own files (`build_project_index`, as `jaxfix check` does),
so a folder case gets cross-module facts. Verdicts:

    TP  flag case, every expected code reported        FN  flag case, an expected code missing
    TN  no-flag case, nothing reported                 FP  no-flag case, something reported

Codes reported on a flag case beyond the expected ones are listed separately ("extra"), not
counted as false alarms. Prints precision/recall per family and overall and the issue's three
headline figures: false alarms on strict negatives, recall on strict positives, share of
callgraph cases right.

    python benchmarks/realworld.py            # the table
    python benchmarks/realworld.py --list     # plus one line per case
    python benchmarks/realworld.py --json     # machine-readable
    python benchmarks/realworld.py --update   # rewrite the pinned verdicts (verdicts.json)
    python benchmarks/realworld.py --check    # exit 1 when a verdict differs from the pins
    python benchmarks/realworld.py --sources  # the sources the cases were modelled on
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE / "realworld"
CASES = ROOT / "cases"
PINS = ROOT / "verdicts.json"
if str(HERE.parent) not in sys.path:  # run from anywhere: this checkout's jaxfix first
    sys.path.insert(0, str(HERE.parent))

FAMILIES = {"pytree": "JAX1", "placement": "JAX2", "control": "JAX3", "semantics": "JAX4", "cost": "JAX5"}
STRICTNESS = ("strict", "hard", "callgraph")
HEADER_KEYS = ("source", "pattern", "expect", "family", "strictness")
_HEADER_LINE = re.compile(r"^#\s*(source|pattern|expect|family|strictness):\s*(.*?)\s*$")
_CODE = re.compile(r"^JAX\d{3}(\|JAX\d{3})*$")  # `JAX301|JAX305`: either code will do
_SOURCE = re.compile(r"^https?://github\.com/\S+$")


class HeaderError(ValueError):
    pass


@dataclass
class Case:
    name: str  # path relative to CASES, e.g. "control/if_traced_scalar.py" or "callgraph/helper_module"
    path: Path  # the file, or the folder
    header_file: Path
    source: str
    pattern: str
    expect: tuple[str, ...]  # () for no-flag
    family: str
    strictness: str
    files: list[Path] = field(default_factory=list)

    @property
    def positive(self) -> bool:
        return bool(self.expect)


def header_of(path: Path) -> dict[str, str]:
    """The `# key: value` lines at the top of a case file (up to the first non-comment line)."""
    found: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        match = _HEADER_LINE.match(line)
        if match:
            if match.group(1) in found:
                raise HeaderError(f"{path}: `{match.group(1)}` given twice")
            found[match.group(1)] = match.group(2)
    return found


def parse_header(path: Path) -> dict:
    """Validated header fields; HeaderError says what is wrong."""
    raw = header_of(path)
    missing = [key for key in HEADER_KEYS if not raw.get(key)]
    if missing:
        raise HeaderError(f"{path}: header lacks {', '.join(missing)}")
    if not _SOURCE.match(raw["source"]):
        raise HeaderError(f"{path}: source must be a github.com URL, got {raw['source']!r}")
    expect = raw["expect"].split()
    if expect == ["no-flag"]:
        codes: tuple[str, ...] = ()
    elif len(expect) >= 2 and expect[0] == "flag" and all(_CODE.match(c) for c in expect[1:]):
        codes = tuple(expect[1:])
    else:
        raise HeaderError(f"{path}: expect must be `no-flag` or `flag JAXnnn [JAXnnn ...]`, got {raw['expect']!r}")
    family = raw["family"]
    if family not in FAMILIES:
        raise HeaderError(f"{path}: family must be one of {', '.join(FAMILIES)}, got {family!r}")
    if codes and not any(alt.startswith(FAMILIES[family]) for code in codes for alt in code.split("|")):
        raise HeaderError(f"{path}: family {family} but no expected code is {FAMILIES[family]}xx")
    if raw["strictness"] not in STRICTNESS:
        raise HeaderError(f"{path}: strictness must be one of {', '.join(STRICTNESS)}")
    return {
        "source": raw["source"],
        "pattern": raw["pattern"],
        "expect": codes,
        "family": family,
        "strictness": raw["strictness"],
    }


def discover(root: Path = CASES) -> list[Case]:
    """Every case under `root`: a .py file directly in a family folder, or a folder with CASE.txt."""
    cases = []
    for family_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for entry in sorted(family_dir.iterdir()):
            if entry.name.startswith((".", "_")) and entry.name != "__init__.py":
                continue
            if entry.is_file() and entry.suffix == ".py":
                header_file, files = entry, [entry]
            elif entry.is_dir() and (entry / "CASE.txt").is_file():
                header_file = entry / "CASE.txt"
                files = sorted(p for p in entry.rglob("*.py") if "__pycache__" not in p.parts)
            else:
                continue
            fields_ = parse_header(header_file)
            cases.append(
                Case(
                    name=str(entry.relative_to(root)),
                    path=entry,
                    header_file=header_file,
                    files=files,
                    **fields_,
                )
            )
    return cases


def run_case(case: Case, preview: bool = False) -> dict:
    """Analyse every file of the case with a project index over them; the codes found and the verdict
    (`preview`: the preview findings too; the pins are the default tier's)."""
    from jaxfix.engine import analyze
    from jaxfix.engine.config import Config
    from jaxfix.engine.project import build_project_index

    config = Config(select=("ALL",), preview=preview)
    project = build_project_index([str(p) for p in case.files])
    found: list[str] = []
    locations: list[str] = []
    errors: list[str] = []
    for path in case.files:
        result = analyze(path.read_text(encoding="utf-8"), str(path), config, project=project)
        if result.error:
            errors.append(f"{path.name}: {result.error}")
        for finding in result.findings:
            found.append(finding.code)
            locations.append(f"{path.relative_to(case.path.parent)}:{finding.line} {finding.code}")
    codes = sorted(set(found))
    if case.positive:
        verdict = "TP" if all(any(alt in codes for alt in want.split("|")) for want in case.expect) else "FN"
        extra = sorted(set(codes) - {alt for want in case.expect for alt in want.split("|")})
    else:
        verdict = "FP" if codes else "TN"
        extra = []
    return {"verdict": verdict, "found": codes, "extra": extra, "where": sorted(locations), "errors": errors}


def _ratio(num: int, den: int) -> float | None:
    return None if den == 0 else round(num / den, 3)


def summarise(cases: list[Case], results: dict[str, dict]) -> dict:
    def tally(selected: list[Case]) -> dict:
        counts = {"TP": 0, "FN": 0, "TN": 0, "FP": 0}
        for case in selected:
            counts[results[case.name]["verdict"]] += 1
        return {
            "cases": len(selected),
            **counts,
            "precision": _ratio(counts["TP"], counts["TP"] + counts["FP"]),
            "recall": _ratio(counts["TP"], counts["TP"] + counts["FN"]),
        }

    by_family = {family: tally([c for c in cases if c.family == family]) for family in FAMILIES}
    by_strictness = {s: tally([c for c in cases if c.strictness == s]) for s in STRICTNESS}
    strict_neg = [c for c in cases if c.strictness == "strict" and not c.positive]
    strict_pos = [c for c in cases if c.strictness == "strict" and c.positive]
    callgraph = [c for c in cases if c.strictness == "callgraph"]
    right = lambda c: results[c.name]["verdict"] in ("TP", "TN")  # noqa: E731
    return {
        "overall": tally(cases),
        "by_family": by_family,
        "by_strictness": by_strictness,
        "headline": {
            "strict_negative_false_alarms": sum(not right(c) for c in strict_neg),
            "strict_negatives": len(strict_neg),
            "strict_positive_recall": _ratio(sum(right(c) for c in strict_pos), len(strict_pos)),
            "strict_positives_found": sum(right(c) for c in strict_pos),
            "strict_positives": len(strict_pos),
            "callgraph_right": sum(right(c) for c in callgraph),
            "callgraph_cases": len(callgraph),
            "callgraph_share_right": _ratio(sum(right(c) for c in callgraph), len(callgraph)),
        },
        "extra_codes_on_flag_cases": {
            c.name: results[c.name]["extra"] for c in cases if c.positive and results[c.name]["extra"]
        },
    }


def _fmt(value: float | None) -> str:
    return "  -  " if value is None else f"{value:.2f}"


def print_table(summary: dict, elapsed: float, n_files: int) -> None:
    print(f"{'':<12}{'cases':>6}{'TP':>5}{'FN':>5}{'TN':>5}{'FP':>5}{'precision':>11}{'recall':>8}")
    rows = [*summary["by_family"].items(), ("", None), *summary["by_strictness"].items(), ("", None)]
    rows.append(("overall", summary["overall"]))
    for name, row in rows:
        if row is None:
            continue
        print(
            f"{name:<12}{row['cases']:>6}{row['TP']:>5}{row['FN']:>5}{row['TN']:>5}{row['FP']:>5}"
            f"{_fmt(row['precision']):>11}{_fmt(row['recall']):>8}"
        )
    h = summary["headline"]
    print()
    print(f"false alarms on strict negatives: {h['strict_negative_false_alarms']} of {h['strict_negatives']}")
    print(
        f"recall on strict positives:       {h['strict_positives_found']} of {h['strict_positives']}"
        f" ({_fmt(h['strict_positive_recall'])})"
    )
    print(
        f"callgraph cases right:            {h['callgraph_right']} of {h['callgraph_cases']}"
        f" ({_fmt(h['callgraph_share_right'])})"
    )
    if summary["extra_codes_on_flag_cases"]:
        print("\nextra codes on flag cases (not counted as false alarms):")
        for name, codes in summary["extra_codes_on_flag_cases"].items():
            print(f"  {name}: {' '.join(codes)}")
    print(f"\n{summary['overall']['cases']} cases, {n_files} files analysed in {elapsed:.2f} s")


def pinned(results: dict[str, dict]) -> dict[str, dict]:
    """What verdicts.json keeps per case: the verdict and the codes found (not lines: cases get edited)."""
    return {name: {"verdict": r["verdict"], "found": r["found"]} for name, r in sorted(results.items())}


def dump_pins(pins: dict[str, dict]) -> str:
    """One line per case, sorted, so a changed verdict is a one-line diff."""
    lines = [f" {json.dumps(name)}: {json.dumps(pins[name], sort_keys=True)}" for name in sorted(pins)]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--list", action="store_true", help="print each case's verdict")
    parser.add_argument("--update", action="store_true", help=f"rewrite {PINS.relative_to(HERE.parent)}")
    parser.add_argument("--check", action="store_true", help="exit 1 when a verdict differs from the pins")
    parser.add_argument("--sources", action="store_true", help="list the sources the cases were modelled on")
    parser.add_argument("--preview", action="store_true", help="also the findings shown only in preview mode")
    parser.add_argument("cases", nargs="*", help="only cases whose name contains one of these")
    args = parser.parse_args(argv)
    if args.preview and (args.update or args.check):
        parser.error("the pins are the default tier's: --update and --check run without --preview")

    cases = discover()
    if args.cases:
        cases = [c for c in cases if any(part in c.name for part in args.cases)]
    if args.sources:
        by_source: dict[str, list[str]] = {}
        for case in cases:
            by_source.setdefault(case.source, []).append(case.name)
        for source in sorted(by_source):
            print(f"{source}  ({len(by_source[source])}: {', '.join(by_source[source])})")
        print(f"\n{len(by_source)} sources, {len(cases)} cases")
        return 0
    start = time.perf_counter()
    results = {case.name: run_case(case, args.preview) for case in cases}
    elapsed = time.perf_counter() - start
    summary = summarise(cases, results)
    n_files = sum(len(c.files) for c in cases)

    if args.update:
        if args.cases:
            parser.error("--update rewrites every pin: run it without a case filter")
        PINS.write_text(dump_pins(pinned(results)), encoding="utf-8")
    if args.json:
        payload = {
            "seconds": round(elapsed, 3),
            "files": n_files,
            **summary,
            "cases": {
                c.name: {
                    "expect": list(c.expect) or "no-flag",
                    "family": c.family,
                    "strictness": c.strictness,
                    "source": c.source,
                    **results[c.name],
                }
                for c in cases
            },
        }
        print(json.dumps(payload, indent=1))
    else:
        if args.list:
            for case in cases:
                r = results[case.name]
                want = " ".join(case.expect) or "no-flag"
                got = " ".join(r["found"]) or "-"
                print(f"{r['verdict']}  {case.strictness:<9} {case.name:<58} want {want:<16} got {got}")
            print()
        print_table(summary, elapsed, n_files)
    if args.check:
        old = json.loads(PINS.read_text(encoding="utf-8")) if PINS.exists() else {}
        new = pinned(results)
        changed = [n for n in new if old.get(n) != new[n]] + [n for n in old if n not in new and not args.cases]
        for name in changed:
            print(f"changed: {name}: {old.get(name)} -> {new.get(name)}", file=sys.stderr)
        return 1 if changed else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())

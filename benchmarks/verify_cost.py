"""What differential verification costs on this machine, through the same API the CLI uses.

Usage: PYTHONPATH=. python benchmarks/verify_cost.py [--device cpu] [--sequential]
       PYTHONPATH=. python benchmarks/verify_cost.py --project DIR --tests "CMD" [--python PY]

1. Per verified callable: a synthetic module with N small annotated functions, each rewritten
   (jit hoisted out of a loop); inputs synthesized from the annotations; both versions in one
   fresh child each. Prints wall time per verified callable for N = 1, 4 and 8 (the fixed cost of
   two interpreters starting jax is shared by all callables of a file).
2. Every fixture case with a driver (the rules' `.in.py`/`.out.py` and the verifier's self-tests),
   one `verify_result` each: the time per case and the total.

With `--project DIR` instead, a real project (issue #31 item 5): the time of one plain run of its
tests (`--tests CMD`, run in DIR), then of `jaxfix fix --select ALL --unsafe-fixes --verify
--record CMD DIR` (a dry run: nothing is written), the number of fixes and their verdicts, against
the target 1.5 x the test run + 5 s per fix. `--python` is the project's own interpreter (its
environment must hold the project's dependencies and this jaxfix: verification runs the code there).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from jaxfix.engine import analyze  # noqa: E402
from jaxfix.engine.config import Config  # noqa: E402
from jaxfix.model import FileResult  # noqa: E402
from jaxfix.verify.api import verify_change, verify_result  # noqa: E402

TEMPLATE = '''
def f{i}(x: jax.Array, n: int):
    for k in range(n):
        x = jax.jit(lambda v: jnp.tanh(v) * {scale} + k)(x)
    return x
'''
HOISTED = '''
_f{i}_step = jax.jit(lambda v, k: jnp.tanh(v) * {scale} + k)


def f{i}(x: jax.Array, n: int):
    for k in range(n):
        x = _f{i}_step(x, k)
    return x
'''


def synthetic(n: int) -> tuple[str, str]:
    head = "import jax\nimport jax.numpy as jnp\n"
    before = head + "".join(TEMPLATE.format(i=i, scale=1.0 + i / 10) for i in range(n))
    after = head + "".join(HOISTED.format(i=i, scale=1.0 + i / 10) for i in range(n))
    return before, after


def per_callable(device: str, parallel: bool) -> None:
    print("per verified callable (8 synthesized inputs each, both versions in fresh children, run side by side):")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (1, 4, 8):
            before, after = synthetic(n)
            path = Path(tmp) / f"bench_{n}.py"
            path.write_text(before)
            start = time.perf_counter()
            result = verify_change(before, after, str(path), device=device, parallel=parallel)
            wall = time.perf_counter() - start
            verified = [u for u in result.units if u.evidence.verdict == "verified"]
            cpu = result.original.cpu + result.rewritten.cpu
            phases = " | ".join(
                f"{label}: " + ", ".join(f"{k} {v:.2f}" for k, v in version.phases.items())
                for label, version in (("original", result.original), ("rewritten", result.rewritten))
            )
            print(
                f"  {n} callable(s): {wall:6.2f} s wall, {wall / max(1, len(verified)):5.2f} s wall per verified callable, "
                f"{cpu / max(1, len(verified)):5.2f} CPU-s per verified callable (both children) "
                f"({len(verified)}/{n} verified)\n      {phases}"
            )


def fixture_cases():
    from fixture_cases import FIXTURES, discover_cases

    for case in discover_cases():
        if case.positive and case.driver is not None:
            yield case.id, case.input, case.expected, case.driver, True, case.unsafe
    for before in sorted((FIXTURES / "verify_selftest").glob("*.before.py")):
        name = before.name[: -len(".before.py")]
        yield f"verify_selftest/{name}", before, before.with_name(f"{name}.after.py"), before.with_name(f"{name}.drive.py"), False, False


def all_fixtures(device: str, parallel: bool) -> None:
    print("every fixture case with a driver (verify_result, as the fixture test runs it):")
    times, verdicts = [], {}
    total = time.perf_counter()
    for case_id, original, rewritten, driver, from_rules, unsafe in fixture_cases():
        source = original.read_text()
        if from_rules:
            result = analyze(source, str(original), Config(select=("ALL",), unsafe_fixes=unsafe), fix=True)
            result.fixed_source = rewritten.read_text()
        else:
            result = FileResult(str(original), source, fixed_source=rewritten.read_text())
        start = time.perf_counter()
        verification = verify_result(result, examples=str(driver), device=device, parallel=parallel)
        wall = time.perf_counter() - start
        times.append(wall)
        verdicts[verification.evidence.verdict] = verdicts.get(verification.evidence.verdict, 0) + 1
        drive = verification.unit("drive()")
        compiles = drive.evidence.data.get("compiles") if drive else None
        note = "" if verification.evidence.verdict == "verified" else f" ({verification.evidence.detail[:60]})"
        print(f"  {wall:5.2f} s  {case_id:<45} {verification.evidence.verdict:<12} compiles {compiles}{note}")
    elapsed = time.perf_counter() - total
    if times:
        print(
            f"  {len(times)} cases: total {elapsed:.1f} s, median {statistics.median(times):.2f} s, "
            f"max {max(times):.2f} s per case; verdicts {verdicts}"
        )


def real_project(project: str, tests: str, python: str, device: str, record_timeout: float) -> None:
    """One plain run of the project's tests, then `fix --unsafe-fixes --verify` recording that run."""
    root = Path(project).resolve()
    env = dict(os.environ, JAX_PLATFORMS="cpu") if device == "cpu" else dict(os.environ)
    print(f"project {root}, tests: {tests}")
    start = time.perf_counter()
    plain = subprocess.run(shlex.split(tests), cwd=root, env=env, capture_output=True, text=True, check=False)
    test_time = time.perf_counter() - start
    tail = (plain.stdout.strip().splitlines() or ["(no output)"])[-1]
    print(f"  one plain test run: {test_time:.1f} s (exit {plain.returncode}: {tail})")
    command = [
        python, "-m", "jaxfix", "fix", "--select", "ALL", "--no-cache", "--unsafe-fixes", "--verify",
        "--device", device, "--record", tests, "--record-timeout", str(record_timeout),
        "--output-format", "json", "-q", ".",
    ]
    start = time.perf_counter()
    run = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=False)
    verify_time = time.perf_counter() - start
    try:
        doc = json.loads(run.stdout)
    except json.JSONDecodeError:
        print(f"  jaxfix exit {run.returncode}, no JSON; stderr tail:\n{run.stderr[-2000:]}")
        return
    verdicts: dict[str, int] = {}
    for fix in doc["fixes"]:
        evidence = (fix.get("fix") or {}).get("evidence") or {}
        verdict = evidence.get("verdict", "no evidence")
        verdicts[verdict] = verdicts.get(verdict, 0) + 1
        where = f"{fix['path']}:{fix['line']}"
        print(f"    {fix['code']} {fix['fix']['safety']:<6} {verdict:<14} {where}  {evidence.get('headline', '')[:90]}")
    n = len(doc["fixes"])
    target = 1.5 * test_time + 5.0 * n
    print(
        f"  fix --unsafe-fixes --verify: {verify_time:.1f} s for {n} fixes; verdicts {verdicts}; "
        f"target 1.5 x {test_time:.1f} + 5 x {n} = {target:.1f} s: {'met' if verify_time <= target else 'MISSED'} "
        f"({verify_time / test_time:.2f} x the test run)"
    )
    lines = [line for line in run.stderr.splitlines() if "inputs" in line or "record" in line]
    for line in lines[:20]:
        print(f"    stderr: {line[:200]}")


def main() -> None:
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--sequential", action="store_true", help="run the two versions one after the other")
    parser.add_argument("--skip-fixtures", action="store_true")
    parser.add_argument("--project", help="a real project's folder: measure it instead (see the module docstring)")
    parser.add_argument("--tests", help="with --project: the command that runs its tests, e.g. 'python -m pytest -q tests/'")
    parser.add_argument("--python", default=sys.executable, help="with --project: the project's interpreter")
    parser.add_argument("--record-timeout", type=float, default=900.0, help="with --project: passed to jaxfix")
    args = parser.parse_args()
    if args.project:
        if not args.tests:
            parser.error("--project needs --tests CMD")
        real_project(args.project, args.tests, args.python, args.device, args.record_timeout)
        return
    per_callable(args.device, not args.sequential)
    if not args.skip_fixtures:
        all_fixtures(args.device, not args.sequential)


if __name__ == "__main__":
    main()

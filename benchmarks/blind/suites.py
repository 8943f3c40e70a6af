"""Safe fixes against the blind repositories' own test suites (issue #29 item 4).

"A `safe` fix must be one that cannot break a program that works today": for each repository
below, run the tests of the files that get safe fixes (and a small driver of our own that calls
the fixed functions directly, where the tests skip them on CPU), apply `jaxfix fix --write
--select ALL` (safe fixes only) with this checkout's jaxfix, run the same again, and compare the
outcome of every test. The checkout is restored afterwards (`git checkout -- <changed files>`).

Setup, once per repository (the snapshots under /work/blind are text only; a real checkout is
needed). levanter, from the bare mirror the `fetch` tool leaves (or `git clone` from GitHub):

    git clone -q /work/.mirror/stanford-crfm+levanter/repo /tmp/suites/levanter
    cd /tmp/suites/levanter && git reset -q 9263f81e8b453241332c2c0b2d2001bfb2d2241c
    git checkout -- src tests pyproject.toml  # (the mirror lacks one .mov blob: a plain checkout stops)
    python3 -m venv /tmp/suites/lev-venv
    /tmp/suites/lev-venv/bin/pip install -e . pytest gitpython chex jax==0.10.2 jaxlib==0.10.2 haliax==1.4.dev413
    /tmp/suites/lev-venv/bin/pip install -e <this checkout>   # only for `verify_cost.py --project`

EasyDeL likewise (`erfanzar+EasyDeL`, commit below, into /tmp/suites/easydel; a plain
`git checkout -- .` works), venv /tmp/suites/edl-venv: `pip install -e . pytest pillow` (pip
resolves jax 0.9.2: its pinned eformer/ejkernel do not install beside 0.10.2). Its model tests
(tests/modules) compare against torch, which is not installed here: the tests run are those of
the changed modules that need no torch (a file that imports a torch-only model fails to collect
and is counted as an error, before and after alike).

Run (from this checkout, with its own venv active):

    python benchmarks/blind/suites.py --root /tmp/suites --python levanter=/tmp/suites/lev-venv/bin/python \
        --python easydel=/tmp/suites/edl-venv/bin/python

It prints per repository: the safe fixes applied, tests passed/failed/skipped before and after,
every test whose outcome changed, and the driver's output before and after. It measures; it exits
0 whatever it finds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# repository -> pinned commit, checkout folder under --root, test files run before and after, a driver
REPOS = {
    "levanter": {
        "repo": "stanford-crfm/levanter",
        "commit": "9263f81e8b453241332c2c0b2d2001bfb2d2241c",
        "jax": "0.10.2 (the lock pins 0.7.2; 0.10.2 runs these tests)",
        "tests": ["tests/test_attention.py", "tests/test_flash_attention.py", "tests/inference/test_engine.py"],
        # `_reshape_axes_for_bshd_bins` runs only on the TE (GPU) and splash (TPU) paths, which the
        # tests skip on CPU: call it directly, eagerly and under jit
        "driver": '''
import jax, jax.numpy as jnp, numpy as np
import haliax as hax
from haliax import Axis
from levanter.layers.attention import _bin_and_group_axes_by_function, _reshape_axes_for_bshd_bins
from levanter.analysis.visualization import _concatenate

B, S, H, D = Axis("batch", 2), Axis("position", 4), Axis("heads", 3), Axis("head_size", 5)
q = hax.random.normal(jax.random.PRNGKey(0), (B, S, H, D))
k = hax.random.normal(jax.random.PRNGKey(1), (B, S.alias("key_position"), H, D))
for name, run in [
    ("bshd eager", lambda: _reshape_axes_for_bshd_bins(q, _bin_and_group_axes_by_function(q, k, k, "position", "key_position", "head_size")[0]).array.shape),
    ("bshd jit", lambda: jax.jit(lambda q, k: _reshape_axes_for_bshd_bins(q, _bin_and_group_axes_by_function(q, k, k, "position", "key_position", "head_size")[0], output_order=list("BHSD")).array)(q, k).shape),
    ("concatenate numpy", lambda: _concatenate([np.ones(3), np.zeros(2)]).shape),
    ("concatenate jax", lambda: _concatenate([jnp.ones(3), jnp.zeros(2)]).shape),
]:
    try:
        print(name, "ok", run())
    except Exception as e:
        print(name, "FAILS", type(e).__name__, str(e).splitlines()[0][:120])
''',
    },
    "easydel": {
        "repo": "erfanzar/EasyDeL",
        "commit": "090a03b2e0b3606bd38e0e3fcfdc640cd7e6e246",
        "jax": "0.9.2 (what its pinned dependencies install)",
        "tests": [
            "tests/inference/test_request_distribution_bounds.py", "tests/layers/test_mrope_partial_rotary.py",
            "tests/layers/test_linear_quantized_sharding.py",
            "tests/infra/test_loss_utils_blockwise_dtype.py", "tests/infra/test_attention_multihost_fallback.py",
            "tests/infra/test_auto_sharding_regex.py", "tests/infra/test_extract_static_parameters.py",
            "tests/infra/test_generation_esurge_kwargs_surface.py", "tests/infra/test_base_state_load_optimizer.py",
        ],
    },
}


def jaxfix(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "jaxfix", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)


def run_tests(python: str, cwd: Path, tests: list[str], xml: Path) -> dict[str, str]:
    """Outcome per test id (passed / failed / error / skipped) from a junit report."""
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--continue-on-collection-errors", f"--junitxml={xml}", *tests],
        cwd=cwd, env=env, capture_output=True, text=True, check=False,
    )
    outcomes = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        kind = next((c.tag for c in case if c.tag in ("failure", "error", "skipped")), "passed")
        outcomes[f"{case.get('classname')}::{case.get('name')}"] = {"failure": "failed"}.get(kind, kind)
    return outcomes


def run_driver(python: str, cwd: Path, driver: str) -> str:
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(driver)
    out = subprocess.run([python, f.name], cwd=cwd, env=dict(os.environ, JAX_PLATFORMS="cpu"), capture_output=True, text=True, check=False)
    os.unlink(f.name)
    return "\n".join(line for line in out.stdout.splitlines()) or out.stderr[-500:]


def counts(outcomes: dict[str, str]) -> str:
    kinds = ("passed", "failed", "error", "skipped")
    return ", ".join(f"{sum(v == k for v in outcomes.values())} {k}" for k in kinds)


def measure(name: str, spec: dict, checkout: Path, python: str) -> None:
    print(f"== {spec['repo']}@{spec['commit'][:12]} ({checkout}), jax {spec['jax']}")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=checkout, capture_output=True, text=True, check=False).stdout.strip()
    if head != spec["commit"]:
        print(f"  checkout is at {head}, not the pin: skipped")
        return
    dry = jaxfix("fix", "--select", "ALL", "--no-cache", "-j", "1", "--output-format", "json", "-q", ".", cwd=checkout)
    fixes = json.loads(dry.stdout)["fixes"]
    for fix in fixes:
        print(f"  safe fix {fix['code']} {fix['path']}:{fix['line']}: {fix['fix']['title'][:100]}")
    if not fixes:
        print("  no safe fixes")
        return
    with tempfile.TemporaryDirectory() as tmp:
        before = run_tests(python, checkout, spec["tests"], Path(tmp) / "before.xml")
        driver_before = run_driver(python, checkout, spec["driver"]) if spec.get("driver") else ""
        wrote = jaxfix("fix", "--write", "--select", "ALL", "--no-cache", "-j", "1", "--allow-dirty", ".", cwd=checkout)
        changed = sorted({fix["path"] for fix in fixes})
        try:
            print(f"  {wrote.stderr.strip().splitlines()[-1] if wrote.stderr.strip() else wrote.stdout.strip()[-200:]}")
            after = run_tests(python, checkout, spec["tests"], Path(tmp) / "after.xml")
            driver_after = run_driver(python, checkout, spec["driver"]) if spec.get("driver") else ""
        finally:
            subprocess.run(["git", "checkout", "--", *changed], cwd=checkout, check=False)
    print(f"  tests ({' '.join(spec['tests'])}):\n    before: {counts(before)}\n    after:  {counts(after)}")
    changes = [(t, before.get(t), after.get(t)) for t in sorted(set(before) | set(after)) if before.get(t) != after.get(t)]
    for test, was, now in changes:
        print(f"    CHANGED {test}: {was} -> {now}")
    regressions = [c for c in changes if c[1] == "passed"]
    print(f"  test regressions: {len(regressions)}")
    if spec.get("driver"):
        print("  driver before:\n" + "\n".join(f"    {line}" for line in driver_before.splitlines()))
        print("  driver after:\n" + "\n".join(f"    {line}" for line in driver_after.splitlines()))
        print(f"  driver regressions: {sum('FAILS' in line for line in driver_after.splitlines()) - sum('FAILS' in line for line in driver_before.splitlines())}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default="/tmp/suites", help="folder holding one checkout per repository (REPOS keys)")
    parser.add_argument("--python", action="append", default=[], help="NAME=PATH: the repository's own interpreter")
    parser.add_argument("names", nargs="*", help="repositories to run (default: all)")
    args = parser.parse_args()
    pythons = dict(p.split("=", 1) for p in args.python)
    for name in args.names or REPOS:
        if name not in pythons:
            print(f"== {name}: no --python {name}=PATH given: skipped")
            continue
        measure(name, REPOS[name], Path(args.root) / name, pythons[name])


if __name__ == "__main__":
    main()

"""The fix loop's scan after a round starts from the first scan's findings
(`IncrementalAnalyzer.remember`): it re-analyses only the groups of statements the round changed,
not every group a stdlib screen admits (issue #33 item 1: a large file after one fix was analysed
whole again), and finds what a full scan of the fixed text finds."""

from __future__ import annotations

import functools

from jaxfix.engine import analyze, selected_rules
from jaxfix.engine.config import Config
from jaxfix.engine.fixing import fix_until_stable, scan, scan_raw
from jaxfix.engine.incremental import IncrementalAnalyzer

CONFIG = Config(select=("ALL",), unsafe_fixes=True)

HEAD = "import functools\n\nimport jax\nimport jax.numpy as jnp\n"

# A traced value's `if` under a static argument: every stdlib screen of the traced-code rules
# admits it (a jitted function with an `if`), and the rules find nothing.
ADMITTED = """

@functools.partial(jax.jit, static_argnames=("n",))
def ok{i}(x, n):
    if n > 1:
        x = x * n
    return jnp.sin(x)
"""

NOISY = """

@jax.jit
def noisy(x):
    print("x", x)
    assert x.ndim == 1
    return x
"""


def _source(groups: int = 12) -> str:
    half = groups // 2
    return (
        HEAD
        + "".join(ADMITTED.format(i=i) for i in range(half))
        + NOISY
        + "".join(ADMITTED.format(i=i) for i in range(half, groups))
    )


def _run(path: str):
    return dict(
        path=path,
        rules=selected_rules(CONFIG, path),
        code_filter=functools.partial(CONFIG.code_selected, path=path),
        options=CONFIG.options(),
    )


def test_rescan_after_one_fix_reanalyses_only_the_changed_group():
    source = _source()
    raw = scan_raw(source, **_run("big.py"))
    assert raw.tree is not None and any(f.code == "JAX401" for f in raw.findings)
    fixed = analyze(source, "big.py", CONFIG, fix=True).fixed_source
    assert fixed is not None and "jax.debug.print" in fixed

    fresh = IncrementalAnalyzer()
    expected = fresh.analyze(fixed, "big.py", CONFIG)
    assert fresh.stats.screened + fresh.stats.analysed == fresh.stats.groups  # every group looked at again

    seeded = IncrementalAnalyzer()
    seeded.remember(source, "big.py", CONFIG, None, raw)
    found = seeded.analyze(fixed, "big.py", CONFIG)
    # the fixed group (and at most one more whose key the edit touched), of 13
    assert seeded.stats.groups == 13 and seeded.stats.screened + seeded.stats.analysed <= 2
    assert list(found.findings) == list(expected.findings)
    assert list(found.findings) == list(scan(fixed, **_run("big.py")).findings)


def test_seeded_fix_loop_writes_what_full_rescans_write():
    source = _source()
    result = analyze(source, "big.py", CONFIG, fix=True)
    run = functools.partial(scan, **_run("big.py"))
    outcome = fix_until_stable(source, run(source), run, unsafe_fixes=True)
    assert result.fixed_source == outcome.text
    assert list(result.remaining) == list(outcome.remaining)

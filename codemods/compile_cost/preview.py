"""Which JAX5xx evidence paths report by default and which only in preview (issue #29).

A rule names the path its evidence took (`work_path`, `magic_path`) and `flag` sets
`Finding.preview` from `PREVIEW`. Figures: first-contact labels (benchmarks/blind/labels, the
thirteen spent pools) of the findings jaxfix still made at main 5175e5c, real/wrong/debatable.
"""

from __future__ import annotations

import ast
import re

import libcst as cst

from codemods.compile_cost.nodes import all_nodes
from codemods.compile_cost.timing_screen import CREATION
from jaxfix.analysis.names import dotted_name
from jaxfix.model import Finding

# (code, path) pairs shown only with `--preview`, with their labels (real/wrong/debatable) per
# pool. Rule of thumb: below ~0.8 real on two or more pools, or real fewer than twice, is preview.
# Default paths and their figures:
# - JAX501 `jitted` 109/1/6 on 11 pools (below 0.8 on none), `eager` 23/1/0 (6 pools), `helper`
#   12/1/0 (5 pools; heldout7 1/1), `timer:*` 17/0/2 (heldout, heldout4, heldout9), `timeit` 2/0/0
#   (heldout5), `lap:*` 0/3/0 (one repository of one pool, maxdiffusion's double-buffered
#   trainers, whose fix is already unsafe; four cases of benchmarks/human_fixes are lap timers);
# - JAX504 `timeit-*` 13/0/2 (7 pools), `time-cell` 6/1/0 (dev, heldout7, heldout10), `time-line`
#   2/0/0 (heldout10);
# - JAX502 1/1/0 (heldout12 real; the dev wrong was a fact since fixed: an eager `vmap` stages
#   nothing, so nothing unrolls).
PREVIEW: frozenset[tuple[str, str]] = frozenset(
    {
        # 5/3/3: heldout 4/0/0, heldout2 1/0/0, heldout11 0/2/0 (opifex: `jnp.asarray` of the NumPy
        # arrays a solver returned), heldout12 0/1/3 (`jnp.arange` before an uncalled `jax.grad`;
        # macrogpt's deliberate dispatch-only "schedule time"): when the region's last JAX work only
        # makes arrays, what it times is usually the host code before it
        ("JAX501", "made"),
        # 2/2/0: heldout7 0/2/0 (SGMCMCJax's 2000 dependent kernel steps: only the last in flight
        # escapes the clock), heldout10 2/0/0: a cell that loops over dependent steps mostly measures them
        ("JAX504", "time-cell-loop"),
        ("JAX504", "timeit-cell-loop"),
        # the same for a line magic whose call runs the notebook function's own loop (`looping_defs`):
        # 0/0/4 on the spent pools after session 34 (probml's `training_loop` of 10,000 tiny dependent
        # steps and jax_intro's `sum_slow`, TF_JAX_tutorials' `multiply_n_times(2, 5)`: dispatch-bound)
        ("JAX504", "time-line-loop"),
        ("JAX504", "timeit-line-loop"),
        # the current rule 0/0/1 (heldout7); every first-contact label 0 real of 9 (heldout7, heldout10)
        ("JAX505", "first-call"),
        # JAX504 on the same item (`timed_first_call`: `%time` of a jitted function's first call):
        # 0/2/6 on first contact (che-shr-cat/JAX-in-Action's compile-timing cells 0/2/0, sukhdeep2/
        # jax_healpix 0/0/1, heldout21's DESEMU and QuantEcon 0/0/5): its one run is mostly the
        # compile, done when the call returns; the missing execution is small beside it (after the
        # heldout21 measurement)
        ("JAX504", "time-first-call"),
        # 0/0/6 on the spent pools (session 31, before heldout26): straight-line JAX code on data of at
        # most ~1k elements the notebook writes out from literals (`tiny_work`: heldout10's jacrev of a
        # 3-vector, heldout20's diffuse of `jnp.eye(3).flatten()`, heldout25's pmap of `x + 3` on 2x4 and
        # grad of `x + y` at two scalars): the dispatch timed is about the work, so the unwaited figure is
        # close to the blocked one
        ("JAX504", "tiny-work"),
        # timed code whose only JAX work makes arrays (`%%time aux = jnp.array(x_train)`): heldout26's
        # rbig_jax cell labelled wrong (a host-to-device copy, not computation in flight); JAX501's
        # `made` path above, 5/3/3, is preview for the same reason (after the heldout26 measurement)
        ("JAX504", "made"),
        # 0/1/7 (and 0/0/8 for "warmup" words, `_COMPILE_WORDS`): heldout9 0/0/1 (gymnax
        # `TimeIt(tag="COMPILATION")`), heldout13 0/1/6 ("Time to jit",
        # `compile_time = timeit(...)`; the wrong one's print also says the next call compiles): a
        # timer whose own words say it measures compilation includes it by construction (the first
        # call compiles synchronously); only one run is missing, which the compile usually
        # dominates. Words naming the run too stay default: heldout7 1/0/0 ("training and
        # compilation took", the whole PPO run missed), heldout10 1/0/0 ("train_step compilation")
        ("JAX501", "compile-label"),
        # 0/4/0 on the twenty-two spent pools (session 27, before heldout22): an eager tail after a
        # statement of the region that certainly waits on its results (`TimingChecker.waits_before`):
        # heldout19's PPO epochs block on the state, then `jnp.mean(jnp.stack(metrics))` is in flight;
        # heldout2's maxdiffusion LTX2 pipeline waits, then denormalizes; the timed work was waited for.
        # Eager regions that never wait stay default (34/12/6: a benchmark of `jnp.dot`, `inv`, epochs
        # whose jitted steps and their `jnp.mean` are all in flight)
        ("JAX501", "eager-after-wait"),
        # 0/12/0 on the spent pools (session 27, before heldout22): after the region's last JAX
        # work, a method of the object its arrays came from is called (`TimingChecker.
        # holder_called_after`: numpyro's `mcmc.print_summary()` after `jnp.sum(mcmc.get_extra_fields()
        # [...])`, eleven copies on heldout21; xpcsjax's fit result on heldout13): another library's
        # method on the holder may read the arrays back, which the file does not show
        ("JAX501", "holder-call"),
        # 0/8/0 on heldout13 (`_SETUP_WORDS`): a set-up or loading timer whose last work is eager
        ("JAX501", "setup-label"),
    }
)


def flag(finding: Finding, path: str) -> Finding:
    """`finding`, marked preview when its evidence path is one that did not hold on first contact."""
    return finding.in_preview((finding.code, path) in PREVIEW)


def work_path(checker, stmt: cst.BaseStatement) -> str:
    """What the unwaited JAX work of a timed region's last working statement is: `jitted` (a call
    of a jitted name, `jax.jit(f)(x)`, a lax loop), `helper` (a function of this file that wraps
    JAX work), `made` (only arrays made, not computed: `jnp.asarray(host)`, `jnp.arange`,
    transfers; `timing_screen.CREATION`) or `eager` (other `jnp`/`jax.*` operations run op by op)."""
    calls = checker.jax_calls(stmt)
    if calls and all(checker.names.qualify(c.func) in CREATION for c in calls):
        return "made"
    call = checker.last_outer_call(stmt)
    if checker._compiled_work(call) or isinstance(call.func, cst.Call):
        return "jitted"
    name = dotted_name(call.func)
    if isinstance(call.func, cst.Name) and call.func.value in checker.functions:
        return "helper"
    if name is not None and name.startswith("self."):
        return "helper"
    return "eager"


def magic_path(magic: str, line: bool, statements: list[ast.stmt], calls_a_loop: bool = False) -> str:
    """`%time`/`%timeit` of one statement (`line`) or a `%%` cell, and whether the cell loops, or
    calls a function of the notebook that loops over the JAX work it returns (`calls_a_loop`)."""
    shape = "line" if line else "cell"
    loops = calls_a_loop or any(isinstance(n, (ast.For, ast.While)) for s in statements for n in ast.walk(s))
    return f"{magic}-{shape}{'-loop' if loops else ''}"


# A timer's words that say it measures compilation: "Time to jit", `compile_time = ...`, `tag="COMPILATION"`,
# a "warmup" block (the first call, which compiles: arpastrana/jax_fdm's 'warmup time' on heldout14,
# 0/0/3; GalSim-developers/JAX-GalSim's `time_code_block("... warmup")` on heldout15, 0/0/5);
# and words that say it measures the run as well ("training and compilation took", "train_step compilation"),
# whose missing run is then the bug.
_COMPILE_WORDS = re.compile(r"compil|\bto jit\b|warm[-_ ]?up", re.IGNORECASE)
_RUN_WORDS = re.compile(r"train|execut", re.IGNORECASE)


def _label_words(nodes) -> list[str]:
    """The string literals of `nodes`, and the names they assign: the words a timer is labelled with."""
    words: list[str] = []
    for node in nodes:
        if node is None:
            continue
        for n in all_nodes(node, (cst.SimpleString, cst.FormattedStringText, cst.AssignTarget)):
            if isinstance(n, (cst.SimpleString, cst.FormattedStringText)):
                words.append(n.value)
            elif isinstance(n, cst.AssignTarget) and isinstance(n.target, cst.Name):
                words.append(n.target.value)
    return words


def compile_label(*nodes: cst.CSTNode | None) -> bool:
    """The words of `nodes` say the timer measures compilation, and nothing else: not training
    or execution too."""
    words = _label_words(nodes)
    return any(_COMPILE_WORDS.search(w) for w in words) and not any(_RUN_WORDS.search(w) for w in words)


# A timer's words that say it measures host-side set-up: "[setup] built mesh+IC+forcing in",
# "loading data took" (heldout13 0/8/0: koldunovn/fesom_jax's six `*_grad_gate.py` and
# `core2_paper_calib_tke_obs.py` set-up timers, aliang8/varibad_jax `data_utils.py:474`). What such a
# timer leaves in flight is the eager array work at the end of the set-up (`jnp.sum` of a mask, a
# `random.permutation` of indices), not the computation; a set-up timer that ends in a jitted call
# keeps its default path. Words naming the run too ("load and run took") are not set-up words.
# "create"/"initialise" joined after heldout17's pavinpp/MSc-MCM-JAX `base.py:403` ("Time to create
# the grid mask", eager `.at[].set` and a sharding constraint left in flight; not blind).
_SETUP_WORDS = re.compile(
    r"set[-_ ]?up|\bload(ing|ed)?\b|\bbuil[dt]\b|\bprepar|\bcreat(e|ed|ing)\b|\binitiali[sz]", re.IGNORECASE
)
_STEP_WORDS = re.compile(r"train|execut|\bstep|\brun|infer|forward|sampl|solv|simulat|integrat|compil", re.IGNORECASE)


def setup_label(*nodes: cst.CSTNode | None) -> bool:
    """The words of `nodes` say the timer measures set-up or loading, and not a run."""
    words = _label_words(nodes)
    return any(_SETUP_WORDS.search(w) for w in words) and not any(_STEP_WORDS.search(w) for w in words)

"""Which JAX4xx evidence paths report by default and which only in preview (`--preview`, issue #29).

One place for the decision, taken from first-contact data: every label row of the thirteen spent
blind pools (`benchmarks/blind/labels/*.tsv`, rows of findings that vanished since included: what
a tool said about code it had never seen), real/labelled per path, with the pools. A path whose
first-contact findings were mostly wrong or debatable on two or more pools is preview. Published
code that runs cannot reach the crashes JAX402/JAX403 report, so where a rule reports one there,
the analysis has usually missed why the value is concrete; the crash paths that stay default are
those that need no guess: an array made by `jax.numpy` in the function itself, or a bare
parameter of a function a transform of its own module traces (the canonical bug as the JAX docs
write it, `@jax.jit def f(x): np.sin(x)`; `x[i] = v`; `log.append(x)`).

- JAX401 `print` of a traced value: default (16 real of 20 on five pools; 3 debatable: a whole
  batch printed for its shapes; 1 wrong: an eager debug loop).
- JAX401 a `logging` call given a traced value: preview (1 real of 5; wrong on heldout, heldout3,
  heldout9: a dtype, `variables.keys()`, strings of shapes, logged at trace time on purpose).
- JAX402 a NumPy call on a bare parameter of a function traced by a transform of its own module:
  default until session 22, now preview with the whole rule (`PREVIEW_RULES`; 1 real, 1 debatable, both heldout2 bonsai `model_sam2_transforms.py:106,123`).
- JAX402 any other argument (an attribute or element of a parameter, a value derived from one, a
  function traced through another module's call), and a NumPy array indexed with a traced value:
  preview (0 real of 24, wrong on dev, heldout, heldout2, heldout4, heldout5, heldout9, heldout12:
  static fields, an argument `vmap` does not map, a host-side collator, guarded checks, module
  tables rebound to `jnp`, `__array_ufunc__` wrappers).
- JAX403 a store into a name the function binds to a `jax.numpy`/`lax` call, and never to a
  parameter (`x = jnp.zeros(n); x[i] = v`), or a `jax.numpy` constructor in code nothing traces:
  default (28 real of 28 on four pools; it raises traced or not; heldout14 1/0/5, the 5 debatable in an
  unimportable `transform3d copy.py`). A store into a bare parameter of a function traced by a transform
  of its own module: preview since session 22 (0 real of 6 on three pools: heldout5 and heldout12's Pallas kernel Refs,
  which the rule has skipped since, and heldout14 jax_healpix's dict of maps passed to the jitted function).
- JAX403 a store into anything else believed traced (a value derived from a parameter, an
  element or attribute, a function traced through another module's call): preview (0 real of 5
  on heldout2, heldout9, heldout11: a NumPy copy, a Python list, an `nnx.Variable`).
- JAX404 a write that stores a traced value outside the trace (`log.append(x)`, `d[k] = x`,
  `global g; g = x`, `self.x = x` on a module-level object): default (1 real of 1, heldout10) until
  session 22, now preview with the whole rule (`PREVIEW_RULES`: 0 of 2 on heldout13).
- JAX404 a write of a value not shown to be traced (`nonlocal treedef; treedef = ...`, a counter):
  preview (0 real of 4 on dev, heldout10, heldout12: a treedef, a graph structure, a write in a
  host callback, recorded at trace time on purpose).
- JAX404 a read of a module global rebound or refilled at run time: preview (7 real of 76
  on eleven pools, wrong on ten: notebooks redefine the function with the rebinding, retrace it on a new
  structure, or rebind an equal value; trace-time tag counters read by design).
- JAX405 a clock read in a function whose trace is kept: default (new in session 34; first contact
  on the spent pools 6 real of 9 on four pools: heldout28 dnbt777's time-seeded keys, the recall
  entries, and heldout11 opifex's `nnx.jit` solver returning its trace-time duration; the 3 wrong,
  on dev, heldout16 and heldout28, were a dead `start_time` read twice and a read only a host
  callback's `nonlocal` uses, which the rule has skipped since).
- JAX405 a draw from the host's global random state (`random.<fn>`, legacy `np.random.<fn>`):
  preview (2 real of 4: two jitted dropouts seeding from `np.random`, heldout12 and heldout27;
  wrong on heldout24, a jitted test helper called once, debatable on heldout28, a script that
  cannot run under jit at all).
"""

from __future__ import annotations

from jaxfix.model import Code, Finding

# The rules shown only with `--preview` whatever their path (session 22: their default paths did
# not hold on first contact either). JAX402: 1 real of 48 first-contact findings on fifteen pools,
# wrong on nine; its default path (a bare parameter) 1/0/1 (heldout2) and 0/12 on heldout13
# (xpcsjax's `jnp` with a NumPy fallback). JAX404: 8 real of 84 on fifteen pools, wrong on twelve;
# its default path (a write that stores a traced value) 1/0 on heldout10 and 0/2 on heldout13
# (FoldJAX's deliberate trace-time capture, xpcsjax's LRU cache of concrete keys).
PREVIEW_RULES = frozenset({"JAX402", "JAX404"})

# JAX404's evidence paths
STORES_TRACER = "stores a traced value"
WRITES_STATE = "writes a value not shown to be traced"
READS_STATE = "reads outer state"


def whole_rule(codes: tuple[Code, ...]) -> bool:
    """A rule of these codes is preview whatever the path (`Rule.preview_only`)."""
    return all(code.code in PREVIEW_RULES for code in codes)


def _preview(finding: Finding | None, preview: bool) -> Finding | None:
    return None if finding is None else finding.in_preview(preview or finding.code in PREVIEW_RULES)


def print_finding(finding: Finding, logged: bool) -> Finding:
    """JAX401: a `print` is default, a logging call preview."""
    return _preview(finding, logged)


def numpy_finding(finding: Finding | None) -> Finding | None:
    """JAX402: preview on every path (`PREVIEW_RULES`; a bare parameter of a function its own
    module's transform traces, the surer one, included)."""
    return _preview(finding, True)


def in_place_finding(finding: Finding | None, constructed: bool) -> Finding | None:
    """JAX403: default when the array is made by a `jax.numpy`/`lax` call in the function itself."""
    return _preview(finding, not constructed)


def outer_state_finding(finding: Finding | None, path: str) -> Finding | None:
    """JAX404: preview (`PREVIEW_RULES`); of its paths, a write that stores a traced value
    (`STORES_TRACER`) was the surer one."""
    return _preview(finding, path != STORES_TRACER)


def host_read_finding(finding: Finding, random: bool) -> Finding:
    """JAX405: a clock read is default, a draw from the host's random state preview."""
    return _preview(finding, random)

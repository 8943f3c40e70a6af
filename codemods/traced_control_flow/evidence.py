"""Which evidence a traced-control-flow site rests on, and which evidence is shown by default.

Every site the family reports is proven traced by this file (`fix_safety.is_proven_traced`). The
proof propagates through several kinds of step; a site's *path* is the weakest step it needs, found
by running the same proof again with that step left out (`_WEAKER`, a FunctionFacts that
propagates less): a site no longer proven without the step rests on it.

- `helper`: the value is what a call of a project helper or of an object's method returns, given
  a traced argument (`if can_use_kernel(x, w):`, `not self.inner.contains(p)`, jax's private
  `jax._src...._shapes(x)`). Whether the helper returns an array or a Python value computed
  from shapes, dtypes and configuration is in a body the proof does not read;
- `field`: the value is proven traced only through an attribute read of an object (`if
  self.precision_strength != 1:`, `float(cfg.init_scale)`, `surface.ydeg == 0`): a field is far
  more often a static Python value (a float under `eqx.filter_jit`, aux data, a config) than an
  array. First contact (every JAX301/JAX302 label of the twenty-three spent pools, whatever tool
  made it): a condition reading a field, of `self` or another object, 2 real of 74. A field
  the module shows to hold arrays (annotated an array in a class of the module or of the project,
  `update_step: jax.Array`; assigned a call of an array library, `self.kernel = nnx.Param(...)`),
  a property of one of its classes (the proof reads its body), an array's own attribute (`x.T`)
  and a Variable's `.value` still count;
- `handled`: the site is in the body of a `try` whose handler catches what the conversion raises
  (`except Exception:`): the code handles its own trace, an eager-only guard (found after the
  heldout13 measurement: imewei/xpcsjax's "self-disables during tracing" checks);
- `tests`: the function is under a trace only because test code of another module enters it
  (`trace_time_semantics.common.traced_from_tests_only`: a test or a script under `tests/` jits
  the library function, no transform of its own module and no other module's own code reaches
  it), so every value an array operation makes in it counts as traced. How that script calls it
  (which flags, which defaults) is not how the project runs it: heldout13
  eightmm/FoldJAX's FK-steering block, traced only from `tests/.../profile_warm_stages.py`, which
  passes no `steering_args` (the block is dead there; `api.py` runs it eagerly), 5 wrong, and 1
  real (`template.py:36`, reached from another test script); heldout12 sgl-project/sglang-jax's
  `multinomial` (`if not use_probs:`, a literal every caller appends), jitted only by
  `test/test_sampler_deterministic_cond.py`, 2 wrong: 1 real of 8 on two pools;
- `truthiness`: the site is a bare truth test (`if x:`, `while not done:`, `a if flag else b`) of
  an attribute or item read (`self.dynamic_scale`, `cfg["discrete"]`, `rhs.out_scaling`) or of a
  local, that this file does not show to hold an array (`fix_safety.truthiness_of_unknown`). Such
  a value is as often `None`, an object, a config entry or a container of arrays, whose truth
  under a trace is Python's. A parameter of the traced function stays `direct`: a flag passed
  without `static_argnames` is an array there. First contact (every JAX301/JAX302 label of the
  twenty-one spent pools whose condition is a bare truth test, whatever tool made it): attribute
  or item 0 real of 46, local 1 of 13 (`is_a_best = sep_a > sep_b`, a comparison: still `direct`),
  parameter 10 of 21;
- `direct`: everything else: a parameter of a function this file transforms (or passes a traced
  value to), or computed from one by operators, builtins, public functions of jax and the other
  array libraries (`nnx.relu`), and the layers a module builds from them (`self.fc1 =
  nnx.Linear(...)`, then `self.fc1(x)`).

First contact (the JAX3xx findings main 5175e5c makes on the thirteen spent blind pools, judged
in `benchmarks/blind/labels/`; real/wrong): `helper` 1/22, wrong on four pools (heldout2 2,
heldout9 1, heldout11 3, heldout12 16), real on one (heldout11: opifex's vmapped
`not self.shape_b.contains(p)`); `direct` 25/5, real on eight pools, wrong on three (heldout2 1,
heldout11 1, heldout12 3). Left out of any one pool, `helper` is still mostly wrong and
`direct` mostly right. The 320 labelled JAX3xx rows earlier tools made and this one no longer
does (1 real) were inferred from another module, a framework convention or a guessed class:
not reported at all since session 16 (`proven_traced`); `tests` is that evidence from test code,
which the proof still let through for the values array operations make (a library helper the
project's own jitted code of another module calls stays default). Preview: `helper`, `field`,
`handled`, `tests` and `truthiness` (`PREVIEW_PATHS`); JAX305, whatever its evidence
(`PREVIEW_RULES`). A safe fix of a `helper` or `field` site is unsafe (`fix_by_evidence`).
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import replace

import libcst as cst

from codemods.trace_time_semantics.common import traced_from_tests_only
from codemods.traced_control_flow.fix_safety import decided_values, truthiness_of_unknown
from jaxfix.analysis import astscan
from jaxfix.analysis.jit_contexts import JitContexts, jit_contexts
from jaxfix.analysis.project_lookups import project_array_fields
from jaxfix.analysis.proven_traced import ProvenTraced, proven_traced
from jaxfix.analysis.pytree_fields import array_field_names
from jaxfix.analysis.pytrees import VARIABLE_VALUE_ATTRIBUTES
from jaxfix.analysis.scopes import ScopeIndex
from jaxfix.analysis.static_values import ARRAY_ATTRIBUTES, ARRAY_LIBRARIES, is_object_method
from jaxfix.analysis.traced import FunctionFacts
from jaxfix.analysis.walk import children, statements
from jaxfix.model import Fix, Safety

# What the six rules' "## Preview" sections share, after each rule's own first sentence
# (`SiteRule.doc` joins them): one text, so a new preview path is described once.
PREVIEW_DOC = """\
Whether such a helper returns an array or a Python value computed from shapes, dtypes and
configuration is in a body the proof does not read: on the thirteen spent blind pools, 1 of 23 such
JAX3xx findings was real, against 25 of 30 for the rest
(`codemods/traced_control_flow/evidence.py`). Also preview: a site in the body of a `try` whose
handler catches what the conversion raises (`except Exception:`, `except TypeError:`): the code
handles its own trace (an eager-only guard; found after the heldout13 measurement). Also preview: a
site in a function only another module's test code traces (a test or a script under `tests/` jits
the library function; 1 real of 8 on heldout12 and heldout13). Also preview: a bare truth test
(`if self.dynamic_scale:`, `if cfg["discrete"]:`, `if inner:`) of an attribute, an item or a
local that this file does not show to hold an array: it is as often `None`, an object, a config
entry or a dict of arrays, whose truth under a trace is Python's (0 real of 46 attributes and
items, 1 of 13 locals on first contact); a parameter of the traced function stays default. Also
preview, with an unsafe fix: a value proven traced only through a field of an object
(`if self.precision_strength != 1:`, `float(cfg.init_scale)`), more often a static Python value
(a float under `eqx.filter_jit`, aux data, a config) than not: 2 real of 74 on first contact. A
field the module shows to hold arrays (annotated `step: jax.Array`, assigned `nnx.Param(...)`)
stays default."""

# the paths shown only with `--preview` (see the module docstring for the figures; `truthiness`
# joined in session 26, `field` in session 28, from first-contact labels of the spent pools)
PREVIEW_PATHS = frozenset({"helper", "field", "handled", "tests", "truthiness"})

# the rules shown only with `--preview` whatever the evidence. JAX305 (`assert`/`and`/`or`/`not`
# on a traced value): 1 real of 23 on first contact (benchmarks/blind/labels, fifteen pools), wrong
# on seven (dev, heldout2, heldout3, heldout5, heldout9, heldout13, heldout14: asserts under
# `if jax.config.jax_disable_jit:`, `or` defaults, checks that only run eagerly), real on one
# (heldout11); in the default tier on first contact, 0 real of 6 on heldout13 and heldout14.
PREVIEW_RULES = frozenset({"JAX305"})


class _NoHelperResults(FunctionFacts):
    """The proof without the results of helpers: a call is traced only when it is a public
    function of jax or another array library (`jnp.sum`, `nnx.relu`), a method of a traced array
    (`x.any()`), a builtin, or a transformed function (`jax.vmap(f)(x)`); not a function of the
    project or a private one of jax's, not a method of another object, not a callable parameter."""

    # receiver fields the module assigns an array library's object (`self.fc1 = nnx.Linear(...)`)
    layer_fields: frozenset[str] = frozenset()

    def _call_traced(self, e: cst.Call, env) -> bool:
        if not super()._call_traced(e, env):
            return False
        qual = self.names.qualify(e.func) or ""
        if qual in _BUILTINS:
            return True
        if _public_array_function(qual):
            return True  # public: `jnp.sum`, `nnx.relu`, not jax's private `jax._src...._shapes`
        if (
            isinstance(e.func, cst.Attribute)
            and isinstance(e.func.value, cst.Name)
            and e.func.value.value in (self.receiver, "self")
            and e.func.attr.value in self.layer_fields
        ):
            return True  # `self.fc1(x)`: a layer of an array library the module built (`nnx.Linear(...)`)
        if isinstance(e.func, cst.Attribute) and self.expr_traced(e.func.value, env):
            return not is_object_method(e.func)
        if isinstance(e.func, cst.Call):
            return True  # `jax.vmap(f)(x)`, `jnp.vectorize(f)(x)`
        return False


class _NoFieldReads(FunctionFacts):
    """The proof without field reads: an attribute of an object (`self.unit`, `cfg.init_scale`,
    `surface.ydeg`) is not traced unless the module shows a field of that name holds an array
    (`_array_fields`); an array's own attributes (`x.T`, `x.real`, `x.sum()`) still are, and a
    Variable's `.value` (`self.count.value`) is what the full proof says of the Variable."""

    # fields the module shows to hold arrays (`_array_fields`)
    array_fields: frozenset[str] = frozenset()

    def expr_traced(self, e: cst.BaseExpression, env) -> bool:
        if type(e) is cst.Attribute:
            attr = e.attr.value
            if attr in VARIABLE_VALUE_ATTRIBUTES and type(e.value) is cst.Attribute:
                return FunctionFacts.expr_traced(self, e.value, env)  # `self.count.value`: an NNX Variable
            if not (attr in ARRAY_ATTRIBUTES or attr in self.array_fields):
                return False
        return super().expr_traced(e, env)


def _array_fields(ctx) -> frozenset[str]:
    """Fields the module shows to hold arrays: `X` of every `X: <array type>` in a class body of
    the module or of a class of the project a parameter is annotated with (`update_step:
    jax.Array`, diffrax's `saveat: SaveAt` with `ts: jax.Array | None`; `pytree_fields.
    array_field_names`), of every property of the module's classes (the proof reads its body:
    `num_active = jnp.sum(self.mask)`), and of every `obj.X = ...` whose value calls a public
    function of an array library (`self.kernel = nnx.Param(...)`, `self.factor = 2 **
    jnp.sum(...)`)."""
    found: set[str] = set()
    assigns_field = False
    for node in astscan.nodes(ctx.tree):
        if type(node) is ast.ClassDef:
            found.update(array_field_names(node, {}))
            found.update(
                stmt.name for stmt in node.body
                if type(stmt) is ast.FunctionDef and any(_is_property(d) for d in stmt.decorator_list)
            )
        elif type(node) in (ast.Assign, ast.AnnAssign):
            targets = node.targets if type(node) is ast.Assign else [node.target]
            assigns_field = assigns_field or any(type(t) is ast.Attribute for t in targets)
    if assigns_field:
        found |= _fields_given_arrays(ctx)
    of_project = project_array_fields(ctx)
    if of_project is not None:
        functions = ctx.fact(JitContexts, jit_contexts).functions.values()
        for cls in {written for info in functions for written in info.class_annotations.values()}:
            found |= of_project(cls)
    return frozenset(found)


def _fields_given_arrays(ctx) -> set[str]:
    """`X` of every `obj.X = value` of the module whose value calls a public function of an array
    library."""
    found: set[str] = set()
    for node in ctx.tree_index.of_type(cst.Assign, cst.AnnAssign):
        targets = [t.target for t in node.targets] if type(node) is cst.Assign else [node.target]
        fields = [t.attr.value for t in targets if type(t) is cst.Attribute]
        if fields and node.value is not None and _calls_array_library(ctx, node.value):
            found.update(fields)
    return found


def _calls_array_library(ctx, value: cst.BaseExpression) -> bool:
    todo: list[cst.CSTNode] = [value]
    while todo:
        node = todo.pop()
        if type(node) is cst.Call and _public_array_function(ctx.names.qualify(node.func) or ""):
            return True
        todo.extend(children(node))
    return False


def _public_array_function(qual: str) -> bool:
    """`qual` is a public callable of an array library (`jnp.sum`, `nnx.Param`), not a private one
    of jax's (`jax._src...._shapes`)."""
    parts = qual.split(".")
    return parts[0] in ARRAY_LIBRARIES and not any(part.startswith("_") for part in parts)


def _is_property(decorator: ast.expr) -> bool:
    name = decorator.attr if type(decorator) is ast.Attribute else getattr(decorator, "id", "")
    return name in ("property", "cached_property")


_BUILTINS = frozenset(name for name in vars(builtins) if not name.startswith("_"))
_WEAKER: tuple[tuple[str, type[FunctionFacts]], ...] = (("helper", _NoHelperResults), ("field", _NoFieldReads))


def _layer_fields(ctx) -> frozenset[str]:
    """`X` of every `self.X = f(...)` in the module with `f` a public callable of an array library
    (`nnx.Linear`, `eqx.nn.MLP`, `hk.Linear`): called on an array, such a layer returns one.
    The assignments come from the file's node index, read only where the stdlib tree has such an
    assignment at all."""
    if not any(_may_assign_layer(n) for n in astscan.nodes(ctx.tree)):
        return frozenset()
    found: set[str] = set()
    for n in ctx.tree_index.of_type(cst.Assign):
        if isinstance(n.value, cst.Call) and _public_array_function(ctx.names.qualify(n.value.func) or ""):
            for t in n.targets:
                if isinstance(t.target, cst.Attribute) and isinstance(t.target.value, cst.Name):
                    found.add(t.target.attr.value)
    return frozenset(found)


def _may_assign_layer(node: ast.AST) -> bool:
    """`node` is `... = X.attr = call(...)` (the shape `_layer_fields` reads, on the stdlib AST)."""
    return (
        type(node) is ast.Assign
        and type(node.value) is ast.Call
        and any(type(t) is ast.Attribute and type(t.value) is ast.Name for t in node.targets)
    )


def _weaker_proof(ctx, facts_type: type[FunctionFacts]) -> ProvenTraced:
    if issubclass(facts_type, _NoHelperResults):
        facts_type = type(facts_type.__name__, (facts_type,), {"layer_fields": _layer_fields(ctx)})
    elif issubclass(facts_type, _NoFieldReads):
        facts_type = type(facts_type.__name__, (facts_type,), {"array_fields": _array_fields(ctx)})
    return proven_traced(ctx, facts_type)


def evidence_path(fn, site) -> str:
    """The path of a site proven traced (`fix_safety.is_proven_traced`), decided once per site: its
    fix (`fix_by_evidence`) and its finding (`site_in_preview`) both ask."""
    known = fn.ctx.fact(evidence_path, lambda ctx: {})
    if site not in known:
        known[site] = _evidence_path(fn, site)
    return known[site]


def _evidence_path(fn, site) -> str:
    exprs, stmt = decided_values(site)
    if _handled(fn, stmt):
        return "handled"
    ctx = fn.ctx
    if traced_from_tests_only(ctx.fact(JitContexts, jit_contexts), fn.info):
        return "tests"
    if not exprs:
        return "direct"
    for path, facts_type in _WEAKER:
        proof = ctx.fact((evidence_path, path), lambda c, t=facts_type: _weaker_proof(c, t)).facts(fn.info)
        if proof is None or not any(proof.traced(e, stmt) for e in exprs):
            return path
    if _untyped_truth_test(fn, site):
        return "truthiness"
    return "direct"


def _untyped_truth_test(fn, site) -> bool:
    """The site is a bare truth test of a value this file does not show to hold an array
    (`fix_safety.truthiness_of_unknown`): an attribute or item read (a field, a config entry) or a
    local. A parameter stays `direct`: a flag a traced function takes without `static_argnames` is
    an array there (philipjones77/arbPlusJAX src/arbplusjax/hypgeom.py:6923 `if reciprocal:`)."""
    tested = truthiness_of_unknown(fn, site)
    if tested is None:
        return False
    if not isinstance(tested, cst.Name):
        return True
    idx = fn.ctx.fact(ScopeIndex, ScopeIndex.of)
    scope = idx.resolve(tested.value, site.node)
    return not (isinstance(scope, (cst.FunctionDef, cst.Lambda)) and tested.value in idx.scope_info(scope).params)


# the errors a Python conversion of a tracer raises (`ConcretizationTypeError` and its kin are
# TypeErrors) and the builtin classes above them: a handler naming another builtin (`KeyError`,
# `ValueError`) does not catch them; one naming a class of the project or of jax may
_CATCHES_TRACER_ERRORS = frozenset({"TypeError", "Exception", "BaseException"})
_BUILTIN_EXCEPTIONS = frozenset(
    name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException)
)


def _handled(fn, stmt: cst.CSTNode) -> bool:
    """`stmt` runs in the body of a `try` of the function whose handler catches what a conversion
    of a tracer raises: the code handles its own trace (`try: extent = float(grid[-1])` / `except
    Exception: extent = None`, a guard that "self-disables during tracing"; imewei/xpcsjax@b810d85
    `core/jax_backend.py:518`, and its array-hashing probe at :187)."""
    return any(_contains(node.body, stmt) for node in _catching_tries(fn))


def _catching_tries(fn) -> list[cst.Try]:
    """The `try` statements of `fn`'s function whose handler catches what a conversion of a tracer
    raises, found once per function (its sites each ask; most functions have none)."""
    tries = fn.ctx.fact(_catching_tries, lambda ctx: {})
    func = fn.info.node
    if func not in tries:
        # a `try` is a statement: `statements` finds every one without entering expressions
        tries[func] = [
            node for node in statements(func) if type(node) is cst.Try and any(_catches(h) for h in node.handlers)
        ]
    return tries[func]


def _catches(handler: cst.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    kinds = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
    for kind in kinds:
        kind = kind.value if isinstance(kind, cst.Element) else kind
        name = kind.value if isinstance(kind, cst.Name) else None
        if name is None or name in _CATCHES_TRACER_ERRORS or name not in _BUILTIN_EXCEPTIONS:
            return True
    return False


def _contains(root: cst.CSTNode, target: cst.CSTNode) -> bool:
    todo = [root]
    while todo:
        node = todo.pop()
        if node is target:
            return True
        todo.extend(children(node))
    return False


def fix_by_evidence(fn, site, fix: Fix | None) -> Fix | None:
    """A safe fix of a `helper` or `field` site is unsafe (`_UNSAFE_PATHS`): what the helper returns
    is in a body the proof does not read, a field may be a static Python value, and a rewrite that
    makes it an array breaks code where it is a Python value (imewei/rheojax@b79e79e
    rheojax/utils/mittag_leffler.py:119,146: `jnp` from the project's `safe_import_jax()`, so
    `jnp.isrealobj(z)` reads as a helper; the dtype test is a Python bool and the `lax.cond`
    rewrite raised TypeError, branches of different dtypes)."""
    if fix is None or fix.safety is not Safety.SAFE:
        return fix
    reason = _UNSAFE_PATHS.get(evidence_path(fn, site))
    if reason is None:
        return fix
    return replace(fix, safety=Safety.UNSAFE, title=f"{fix.title} (unsafe: {reason})")


# why a fix resting on such a path may break code where the value is a Python one
_UNSAFE_PATHS = {
    "helper": "the condition is what a helper returns, which may be a Python value (a dtype or shape test)",
    "field": "the condition reads an object's field, which may be a static Python value",
}


def site_in_preview(fn, site) -> bool:
    """The site's finding is shown only with `--preview`: its rule is a `PREVIEW_RULES` one or its
    evidence a `PREVIEW_PATHS` one."""
    return site.code in PREVIEW_RULES or evidence_path(fn, site) in PREVIEW_PATHS

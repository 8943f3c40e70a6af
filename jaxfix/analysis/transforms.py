"""The JAX transforms and framework conventions the analyses know, by qualified name: one table for
the libcst analysis (`jit_contexts`), the stdlib screens, the project call graph (`callgraph`), the
jit-placement sites and `jaxfix explain`, which must agree on what traces a function. Plain data:
importing it costs nothing (no libcst).

Spellings: names are qualified through the file's imports (`from flax import nnx` makes `nnx.jit`
`flax.nnx.jit`; `from jax.experimental import pjit` makes `pjit.pjit`
`jax.experimental.pjit.pjit`), so every import form of one name meets the same entry here.
Measured facts behind the entries are in docs/frameworks.md."""

from __future__ import annotations

# Transforms that compile the function they are given (each call of a new object compiles).
# `flax.nnx.jit` wraps its function in a new `JitFn` (a dataclass with eq=False) on every call, so
# even a module function re-wrapped per call compiles again (`REWRAPPING_JITS`).
JIT_NAMES = frozenset(
    {
        "jax.jit",
        "jax.pmap",
        "jax.experimental.pjit.pjit",
        "equinox.filter_jit",
        "equinox.filter_pmap",
        "flax.nnx.jit",
        "flax.nnx.pmap",
        "jax_dataclasses.jit",
    }
)
# Jits whose call waits for its program before it returns: equinox's `filter_jit` (since 0.11.8,
# October 2024, patrick-kidger/equinox@141c18d) returns a marker array beside the outputs and calls
# `marker.block_until_ready()`, so that an `eqx.error_if` raises at the call. Measured (CPU, equinox
# 0.13.8, five 1500x1500 matmul+tanh steps): the call returns after 0.88-1.14 s with its result
# ready; `jax.jit` of the same function returns in 0.1 ms. A clock read after such a call times the
# work, as the heldout23 reviewer measured for `lineax.linear_solve` (returns at 1.97 s, ready at 2.02 s).
BLOCKING_JITS = frozenset({"equinox.filter_jit"})
# Context managers under which JAX evaluates what it can on concrete values at trace time: code
# written in one is code its author knows runs on Python values (`with jax.ensure_compile_time_eval():
# kr = jnp.arange(kmin, kdiff, dkr)` of a model's grid constants, multiscale-closure@<heldout25>
# src/systems/qg/spectral.py:81, a JAX307 labelled wrong); the traced-value rules leave it alone.
COMPILE_TIME_EVAL = frozenset({"jax.ensure_compile_time_eval", "jax.core.ensure_compile_time_eval"})
# Library entry points decorated with such a jit: a call of one returns when its work is done
# (`@eqx.filter_jit` on lineax@2f0e083 `linear_solve`, diffrax@5ea5fcb `diffeqsolve`, optimistix@6415ab1
# `minimise`, `least_squares`, `root_find`, `fixed_point`).
BLOCKING_CALLS = frozenset(
    {
        "lineax.linear_solve",
        "diffrax.diffeqsolve",
        "optimistix.minimise",
        "optimistix.least_squares",
        "optimistix.root_find",
        "optimistix.fixed_point",
    }
)
# Transforms that take their function as an opaque callable: given a bound method `obj.m`, they
# trace `m`'s other parameters and close over `obj` (its attributes stay Python values and
# concrete arrays). Not equinox's and flax.nnx's, which split a bound method's receiver (a pytree,
# a graph node) into traced state.
RECEIVER_CLOSED_OVER = frozenset({"jax.jit", "jax.pmap", "jax.experimental.pjit.pjit", "jax.vmap", "jax.shard_map"})
# Jits that read a parameter annotation as `static_argnames`: jit -> the annotation's generic
# (`@jdc.jit def solve(..., include_self_coll: jdc.Static[bool] = False)` hashes that argument,
# uynitsuj/jaxmp@<heldout16> scripts/profile_ik.py:139).
STATIC_ANNOTATIONS = {"jax_dataclasses.jit": "jax_dataclasses.Static"}
# The jits that keep every non-array argument static by themselves (no static_argnames needed).
FILTERED_JITS = frozenset({"equinox.filter_jit", "equinox.filter_pmap"})
# vmaps whose default `in_axes` maps array leaves only: a Python value passes through unbatched
FILTERED_VMAPS = frozenset({"equinox.filter_vmap"})
# Compiling transforms whose wrapper is a new cache key even around the same function: measured,
# `nnx.jit(loss_fn)(model, x)` four times in a loop compiles 4 times (`jax.jit(loss_fn)`: once).
REWRAPPING_JITS = frozenset({"flax.nnx.jit", "flax.nnx.pmap"})
# Transforms whose function runs on tracers, mapped over (or sharded along) an axis: a parameter
# mapped with `in_axes=None` is still a traced value, but not batched.
VMAP_NAMES = frozenset(
    {
        "jax.vmap",
        "jax.pmap",
        "equinox.filter_vmap",
        "equinox.filter_pmap",
        "flax.nnx.vmap",
        "flax.nnx.pmap",
        "jax.shard_map",
        "jax.experimental.shard_map.shard_map",
        "flax.nnx.shard_map",
    }
)
# Of those, the ones that do not stage: called outside `jit`, `jax.vmap(f)(x)` runs `f`'s Python
# once on batch tracers and dispatches each operation as it goes. Measured (CPU, jax 0.10.2, a
# 300-trip loop of `x + 0.01 * jnp.sin(x)`): eager `vmap` compiles one small program per primitive
# (`jit(sin)`, `jit(multiply)`, `jit(add)`), `jax.jit(jax.vmap(f))` one program of 300 copies
# (lower + compile 6.0 s). pmap and shard_map compile.
EAGER_VMAPS = frozenset({"jax.vmap", "equinox.filter_vmap", "flax.nnx.vmap"})
GRAD_NAMES = frozenset(
    {
        "jax.grad",
        "jax.value_and_grad",
        "jax.jacfwd",
        "jax.jacrev",
        "jax.hessian",
        "jax.jvp",
        "jax.vjp",
        "jax.linearize",
        "equinox.filter_grad",
        "equinox.filter_value_and_grad",
        "flax.nnx.grad",
        "flax.nnx.value_and_grad",
        "flax.nnx.jvp",
        "flax.nnx.vjp",
    }
)
# Transforms that keep the function traceable without themselves tracing it abstractly. A
# `jax.custom_jvp`/`custom_vjp` function is one: measured, called eagerly its body sees concrete
# arrays (`ArrayImpl`), under `jit` tracers, so its body is traced exactly where it is called
# under a trace (and its `defjvp` rule runs on concrete primals under an eager `grad`).
PASS_THROUGH = GRAD_NAMES | frozenset(
    {
        "jax.checkpoint",
        "jax.remat",
        "equinox.filter_checkpoint",
        "flax.nnx.remat",
        "jax.custom_jvp",
        "jax.custom_vjp",
        "equinox.filter_custom_jvp",
        "equinox.filter_custom_vjp",
        "flax.nnx.custom_vjp",
    }
)
# Those of them that return a new function (`jvp`, `vjp`, `linearize` call theirs at once).
FUNCTION_WRAPPERS = PASS_THROUGH - {"jax.jvp", "jax.vjp", "jax.linearize", "flax.nnx.jvp", "flax.nnx.vjp"}
# `dloss = jax.grad(loss)`, `batched = jax.vmap(f)`: a call of the name runs JAX work, eagerly and
# dispatched asynchronously like a jitted call's (read by JAX501's `JaxWork` and JAX504's notebook
# magics; ericmjl/dl-workshop@6ef9b7f notebooks/03-stax/01-linear.ipynb cell 34 times 1,000 eager
# `dmseloss`/`update` steps with nothing waiting)
EAGER_TRANSFORMS = GRAD_NAMES | VMAP_NAMES
# Transforms whose wrapped function, called in traced code (`jax.vmap(f)(x)`,
# `eqx.filter_value_and_grad(loss)(model)`, `nnx.grad(loss_fn)(model, x)`), returns traced arrays
# (read by `traced` and the stdlib screen `screen_function` alike). `equinox.filter_vmap`/
# `filter_pmap` are not among them: their non-array outputs come back as the Python values `f` made.
TRACED_RESULT_TRANSFORMS = (VMAP_NAMES - {"equinox.filter_vmap", "equinox.filter_pmap"}) | GRAD_NAMES | frozenset(
    {"jax.checkpoint", "jax.remat", "equinox.filter_checkpoint", "flax.nnx.remat"}
)
# value_and_grad / grad with `has_aux=True`: where `f`'s own (value, aux) return sits in the result
# (value_and_grad gives ((value, aux), grad), grad gives (grad, aux)), for `aux_outputs`.
AUX_RESULT_PREFIX: dict[str, tuple[int, ...]] = {
    "jax.value_and_grad": (0,),
    "jax.grad": (),
    "equinox.filter_value_and_grad": (0,),
    "equinox.filter_grad": (),
    "flax.nnx.value_and_grad": (0,),
    "flax.nnx.grad": (),
}
PARTIAL_NAMES = frozenset({"functools.partial"})
# Decorators that hand on a function with the def's own parameters, as its callers pass them: type
# checkers and trace counters. Applied below a jit (`@jax.jit @jaxtyped(typechecker=beartype) def f`),
# the jit's arguments are still the def's parameters.
SIGNATURE_KEEPING = frozenset(
    {
        "jaxtyping.jaxtyped",
        "beartype.beartype",
        "typeguard.typechecked",
        "chex.assert_max_traces",
        "functools.wraps",
        "jax.named_call",
    }
)


def keeps_parameters(qualified: str | None) -> bool:
    """A decorator (its qualified name) applied below a jit keeps the def's parameters as the jit's
    arguments: a transform of this table (a vmap, a grad, a checkpoint, a custom derivative) or a
    `SIGNATURE_KEEPING` one. Any other may bind, drop or reorder them: a project's own
    `@self_partial(d_model)` returns a `jax.tree_util.Partial` that binds the leading ones as Python
    values (FynnSu/transformer-from-scratch@<heldout30> src/model.py: 21 JAX3 findings on them, all
    wrong; the jit there is not an entry of the def's parameters)."""
    return qualified in JIT_NAMES or qualified in VMAP_NAMES or qualified in PASS_THROUGH or qualified in SIGNATURE_KEEPING
# Options of a transform whose literal values name the arguments it passes through as Python values
# (hashed into the cache key, never traced): `static_argnums`/`static_argnames` of jit, pjit and
# filter_jit, and pmap's `static_broadcasted_argnums`.
STATIC_ARGNUMS_OPTIONS = frozenset({"static_argnums", "static_broadcasted_argnums"})
STATIC_ARGNAMES_OPTIONS = frozenset({"static_argnames"})
# How such an option's values are written: one literal, or a display of them, a tuple, a list or a
# set (`static_argnames={"order", "N", ...}`: jrmaddison/bt_ocean@<heldout30> finite_difference.py:113,
# where 33 findings on the static ints were labelled wrong while a set was not read). jit takes any
# of them; the stdlib readers and the libcst ones (`jit_records.literal_ints`) accept these three.
OPTION_DISPLAYS = ("Tuple", "List", "Set")
# lax bodies: qualified name -> positions of the function arguments (-1: a list of them)
LAX_BODIES: dict[str, tuple[int, ...]] = {
    "jax.lax.scan": (0,),
    "jax.lax.fori_loop": (2,),
    "jax.lax.while_loop": (0, 1),
    "jax.lax.cond": (1, 2),
    "jax.lax.switch": (-1,),
    "jax.lax.map": (0,),
    "jax.lax.associative_scan": (0,),
    # flax.nnx's versions take the same positions (and carry modules through the loop)
    "flax.nnx.scan": (0,),
    "flax.nnx.fori_loop": (2,),
    "flax.nnx.while_loop": (0, 1),
    "flax.nnx.cond": (1, 2),
    "flax.nnx.switch": (-1,),
    # flax.linen's lifted control flow over functions of a module (`nn.cond(pred, true_fun,
    # false_fun, module, *operands)`, `nn.while_loop(cond_fn, body_fn, module, init)`)
    "flax.linen.cond": (1, 2),
    "flax.linen.switch": (-1,),
    "flax.linen.while_loop": (0, 1),
}
# A probabilistic program's primitives: a function that calls one is a numpyro model, which
# numpyro's inference runs under its own traces (MCMC's potential energy and SVI's loss under
# `jit`, `Predictive` under `vmap`/`lax.map`), plus a handful of eager runs at initialisation: a
# jit inside the model is inlined into the one outer compile, not compiled per call
# (renecotyfanboy/jaxspec@<heldout17> src/jaxspec/fit/_bayesian_model.py:120, a fresh
# `jax.jit(lambda ...)` per observation in the model's loop, labelled wrong).
MODEL_PRIMITIVES = frozenset(
    {
        "numpyro.sample",
        "numpyro.factor",
        "numpyro.deterministic",
        "numpyro.plate",
        "numpyro.primitives.sample",
        "numpyro.primitives.factor",
        "numpyro.primitives.deterministic",
        "numpyro.primitives.plate",
    }
)
# The lax loops that carry state from one iteration to the next (an iterative driver's loop)
LAX_LOOPS = frozenset(q for q in LAX_BODIES if q.rpartition(".")[2] in ("scan", "fori_loop", "while_loop"))
# Calls whose function argument runs on concrete values on the host, never on tracers, even when
# the call itself sits in traced code: qualified name -> positions of the function arguments.
# Code inside such a callback is never reported as traced.
HOST_CALLBACKS: dict[str, tuple[int, ...]] = {
    "jax.pure_callback": (0,),
    "jax.experimental.io_callback": (0,),
    "jax.experimental.io_callback.io_callback": (0,),
    "jax.debug.callback": (0,),
    "jax.experimental.host_callback.call": (0,),
    "jax.experimental.host_callback.id_tap": (0,),
}
# Calls that make a compiled program call back to the host (`HOST_CALLBACKS` and the debug
# printers, jax_tqdm's progress bars). Such a program returns only when it is done:
# measured (jax 0.10.2, CPU), `jax.lax.scan` of 100 300x300 matmul steps with a `jax.debug.callback`
# in its body, or a `jax.debug.print` in a `lax.cond` branch never taken, is ready (`is_ready()`)
# when the call returns (0.27 s dispatch = 0.27 s total), the same scan without one is not (1 ms
# dispatch of 0.23 s). A clock read right after such a call times the work: kmheckel/spyx@<heldout5>
# research notebooks time `gd(...)`, an eager scan of 500 training epochs under jax_tqdm's
# `scan_tqdm` progress bar, at 47 s on a GPU.
SYNCHRONOUS_CALLBACKS = frozenset(HOST_CALLBACKS) | {
    "jax.debug.print",
    "jax.debug.breakpoint",
    "jax.experimental.pure_callback",
    "jax.experimental.host_callback.id_print",
    "jax_tqdm.scan_tqdm",
    "jax_tqdm.loop_tqdm",
}
# How many arguments a lax body is called with: a number, or "operands" for the operands the call
# passes after its functions (`lax.cond(pred, t, f, *operands)`, `lax.switch(i, branches, *operands)`).
# A body's parameter past those keeps its default: a Python value (`def branch(x, n=3)`).
LAX_BODY_ARITY: dict[str, int | str] = {
    "jax.lax.scan": 2,
    "jax.lax.fori_loop": 2,
    "jax.lax.while_loop": 1,
    "jax.lax.cond": "operands",
    "jax.lax.switch": "operands",
    "jax.lax.map": 1,
    "jax.lax.associative_scan": 2,
}


# `lax.cond`'s older signature, which JAX still accepts: `cond(pred, true_operand, true_fun,
# false_operand, false_fun)`, each branch called with its one operand (jax-md's `partition.py`,
# vendored by jax-sph and apax: `lax.cond(overflow, (position, nbrs.error), neighbor_fn, nbrs,
# lambda x: x)`). Told from the current one by an operand written in place of `true_fun`.
OLD_STYLE_COND_BODIES = (2, 4)


def is_old_style_cond(qual: str | None, positional: int, second_is_value: bool, plain: bool) -> bool:
    """The lax call is `cond(pred, true_operand, true_fun, false_operand, false_fun)`: five plain
    positional arguments, the second a value that cannot be a function (`second_is_value`: a
    tuple, list or number written out)."""
    return qual in ("jax.lax.cond", "flax.nnx.cond") and positional == 5 and plain and second_is_value


def lax_body_arity(qual: str, positional: int, plain: bool) -> int | None:
    """How many arguments a body of the lax call `qual` gets, from the call's count of positional
    arguments (`plain`: no `*args` and no keywords); None when not known."""
    arity = LAX_BODY_ARITY.get(qual)
    if isinstance(arity, int) or arity is None:
        return arity
    first = {"jax.lax.cond": 3, "jax.lax.switch": 2}.get(qual)
    return None if first is None or not plain else max(positional - first, 0)


# flax.linen's lifted transforms take a Module class (`nn.scan(Block, ...)`, `nn.jit(Block)`) and
# trace its `__call__` (or the methods named by `methods=`) when the model is applied.
LINEN_LIFTED = frozenset(
    {
        "flax.linen.jit",
        "flax.linen.scan",
        "flax.linen.vmap",
        "flax.linen.remat",
        "flax.linen.checkpoint",
        "flax.linen.remat_scan",
    }
)
# flax.linen's `Module.apply(variables, *args, method=None)` runs the module's `__call__` on `args`
# (under whatever transform the caller is in); `init` usually runs eagerly, once.
LINEN_APPLY = frozenset({"apply"})
# Initialisers of the frameworks' state: flax's `Module.init(rngs, x)`, optax's
# `GradientTransformation.init(params)` (haiku and equinox spell theirs the same way): they build a
# model's or an optimizer's state, once per model (`jax.jit(tx.init, backend="cpu")` places it).
INITIALISER_METHODS = frozenset({"init"})
# Flax's performance-guide helper: binds graph objects once so an `nnx.jit` step called per batch
# skips the Python graph traversal (`nnx.cached_partial(train_step, model, optimizer)`).
CACHED_PARTIAL = "flax.nnx.cached_partial"
# Methods a construction `Cls(...)` runs (dataclass and equinox validation hooks included).
# Methods only JAX's staged functions have (`jax.stages.Lowered`/`Compiled`: `f.lower(x).compile()`
# or an AOT-compiled step): a name they are called on holds a jitted or compiled JAX function, so
# calling it dispatches device work asynchronously (EasyDeL's `measure_flops(func, ...)`).
STAGE_METHODS = frozenset({"cost_analysis", "memory_analysis"})
# The profiler's mark of one training step: what a project calls inside it is its device step by
# convention (maxdiffusion's and maxtext's trainers), a guess the rules word as one.
STEP_ANNOTATIONS = frozenset({"jax.profiler.StepTraceAnnotation"})
CONSTRUCTION_HOOKS = ("__init__", "__post_init__", "__check_init__")

# Attributes that hold a function stored once on their object, not a method: flax's TrainState
# keeps `apply_fn=model.apply` as a field (`TrainState.create(apply_fn=...)`, kept by
# `apply_gradients`), so `state.apply_fn` is the same function object on every read
FUNCTION_FIELDS = frozenset({"apply_fn"})

# Calls that return a container of plain functions (haiku's `Transformed(init, apply)`): `net.apply`
# is the same function object on every read, not a fresh bound method
FUNCTION_CONTAINERS = frozenset(
    {
        "haiku.transform",
        "haiku.transform_with_state",
        "haiku.without_apply_rng",
        "haiku.multi_transform",
        "haiku.multi_transform_with_state",
        "haiku.without_state",
    }
)

# Libraries whose public functions return a container of plain functions, by the attributes that
# hold them: optax's transformations are `GradientTransformation(init, update)` NamedTuples, so
# `opt.update` of `opt = optax.adam(1e-3)` is the same function on every read (optax's own
# `_adding_test.py` re-wraps `jax.jit(noise.update)` per step: 1 trace). A class of the library
# (`optax.MultiSteps(...)`, capitalised) has real methods and is not one.
FUNCTION_CONTAINER_LIBRARIES = {"optax": frozenset({"init", "update"})}


def returns_function_container(qualified: str | None, attr: str) -> bool:
    """`qualified(...).attr` is a plain function a library's container holds (`FUNCTION_CONTAINERS`,
    `FUNCTION_CONTAINER_LIBRARIES`)."""
    if qualified is None:
        return False
    if qualified in FUNCTION_CONTAINERS:
        return True
    package, _, rest = qualified.partition(".")
    last = rest.rsplit(".", 1)[-1]
    return attr in FUNCTION_CONTAINER_LIBRARIES.get(package, ()) and bool(last) and last[0].islower()


# Attributes through which a framework's jit wrapper holds the user's function: `functools.wraps`'
# `__wrapped__`, flax.nnx's `JitFn.f` and `JitWrapped.fun`, equinox's `_JitWrapper._fun`.
# `jaxfix explain` follows them to charge a compile made through `nnx.jit`/`eqx.filter_jit` to the
# user's function instead of the framework's internals.
WRAPPED_FUNCTION_ATTRIBUTES = ("__wrapped__", "f", "fun", "_fun", "fn", "func")

# How messages spell a qualified name: the module prefix its users import it under.
_DISPLAY_PREFIXES = (
    ("flax.nnx.", "nnx."),
    ("flax.linen.", "nn."),
    ("equinox.", "eqx."),
    ("jax_dataclasses.", "jdc."),
    ("jax.experimental.pjit.", ""),
    ("jax.experimental.shard_map.", ""),
)


def display_name(qualified: str) -> str:
    """`flax.nnx.jit` -> `nnx.jit`, `equinox.filter_jit` -> `eqx.filter_jit`, `jax.jit` as is."""
    for prefix, short in _DISPLAY_PREFIXES:
        if qualified.startswith(prefix):
            return short + qualified[len(prefix) :]
    return qualified


# Substrings one of which a file that names a transform or lax body of this table holds (the rules'
# cheap text test): `nnx`/`linen` for flax's, whose last names (`scan`, `cond`) are common words.
TRANSFORM_TOKENS = ("jit", "vmap", "lax", "pmap", "shard_map", "nnx", "linen")

# Package prefixes of the transforms above: a name qualifies to one only through an import of one
# of these (the text screens' prefilter asks for one of them).
TRANSFORM_PACKAGES = ("jax", "equinox", "flax", "jax_dataclasses")

"""Values that are static although computed inside a trace: the one table of them.

Under `jit` an array's shape, rank, size and dtype are Python values, and so is anything
computed from them: `jnp.shape(x)[1:] == jnp.shape(y)[1:]`, `lax.broadcast_shapes(...)`,
`jnp.issubdtype(x.dtype, jnp.floating)`, `len(tree_leaves(t))`, `isinstance(x, tuple)`. A
Python `if` on such a value is correct code. This module lists the attributes and functions
whose result is static whatever their arguments (`STATIC_ATTRS`, `STATIC_CALLS`,
`STATIC_PREFIXES`), the tree functions whose result is static when the function they apply is
(`TREE_MAP_NAMES`), and the three answers a call can get (`STATIC`, `TRACED`, `UNKNOWN`) from a
`CallOracle`: `traced.FunctionFacts` asks one, when it has one, about every call it cannot decide
from this table (`static_helpers.ModuleCallOracle` answers for a module's own functions and
its imports).
"""

from __future__ import annotations

import sys
from typing import Protocol

import libcst as cst

# Attributes whose value is known at trace time whatever the object.
STATIC_ATTRS = frozenset({"shape", "ndim", "dtype", "size", "itemsize", "nbytes", "weak_type", "sharding", "aval"})


# Public attributes and methods of `jax.Array`, a tracer and `numpy.ndarray` (from `dir()` of
# each, jax 0.10.2; tests/test_library_false_alarms.py checks the list against the installed jax).
# A value with any other public attribute read is not an array.
ARRAY_ATTRIBUTES = frozenset(
    """T addressable_data addressable_shards all any argmax argmin argpartition argsort astype at aval
    base block_until_ready byteswap choose clip clone committed compress conj conjugate copy
    copy_to_host_async ctypes cumprod cumsum data delete device device_buffer device_buffers devices
    diagonal dimension_as_value dot dtype dump dumps fill flags flat flatten format full_lower
    get_referent getfield global_shards imag is_deleted is_fully_addressable is_fully_replicated
    is_ready item itemsize mT max mean min nbytes ndim nonzero on_device_size_in_bytes partition
    platform prod ptp put ravel real repeat reshape resize round searchsorted setfield setflags shape
    sharding size sort squeeze std strides sum swapaxes take to_concrete_value to_device tobytes
    tofile tolist trace traceback transpose unsafe_buffer_pointer var view weak_type""".split()
)


def is_static_attr(name: str) -> bool:
    """`x.shape`, ... (`STATIC_ATTRS`), and any dunder read (`f.__name__`, `k.__doc__`,
    `x.__class__`): Python metadata of the object, never a traced value."""
    return name in STATIC_ATTRS or (len(name) > 4 and name.startswith("__") and name.endswith("__"))

# Methods no array has (see ARRAY_ATTRIBUTES) that iterate a mapping's keys: the keys of a dict
# are the structure of a pytree, Python values even when its leaves are traced (brax's
# `for k, v in obs.items(): if k.startswith("pixels/")`). `keys()` yields keys, `items()` pairs.
KEY_METHODS = frozenset({"keys"})
ITEM_METHODS = frozenset({"items"})
# Methods of `str` that no array has: the object is a string, and what they return is a Python
# value (a bool, a string, a list of strings).
STR_METHODS = frozenset(
    """startswith endswith isdigit isalpha isalnum isidentifier islower isupper isspace lower upper
    casefold capitalize title removeprefix removesuffix lstrip rstrip strip rsplit splitlines
    zfill ljust rjust center expandtabs encode format_map""".split()
)


# Key path entries (`jax.tree_util.GetAttrKey("w")`): Python objects; comparing with one compares
# pytree structure, as comparing with a string literal compares strings.
TREE_KEY_CLASSES = frozenset(
    f"jax.tree_util.{n}" for n in ("GetAttrKey", "DictKey", "SequenceKey", "FlattenedIndexKey")
)


# An array's conversions to Python values, as `int`/`float` among `STATIC_CALLS`: on a tracer they
# raise, and JAX304 reports that at the conversion; what follows only ever sees Python values
# (neutryx-lab/neutryx-core@46ef385 src/neutryx/data/batch_pricing.py:241, `for trade_idx in
# map(int, indices.tolist())`: 14 JAX304s on the aux-data floats read with `trade_idx`, all
# behind the crash at `.tolist()`).
CONVERSION_METHODS = frozenset({"item", "tolist"})


# `str` methods no array has whose names modules also give functions (`jnp.split`,
# `jax.random.split`, `os.path.join`): a Python value only when called on an object, not through
# an import (`int(quote["timestamp"].split(".")[0])` is int() of a string: chenyang86/jax-lob-AC@<heldout25>
# gymnax_exchange/jaxob/jorderbook.py:83, two JAX304 wrong)
STR_METHODS_OF_OBJECTS = frozenset({"split", "join", "find", "rfind", "rindex", "rpartition", "translate", "swapcase"})


def is_static_method(name: str, qualified: str | None = None) -> bool:
    """`x.name(...)` returns a Python value whatever `x` holds: a `str` method no array has, a
    mapping's `keys()` (a pytree's structure: `logging.info(variables.keys())` logs strings,
    google-research/scenic knowledge_visual_language/trainer_memory.py), or an array's conversion
    to Python (`CONVERSION_METHODS`). `qualified`: the call's callee as the imports name it; a
    `STR_METHODS_OF_OBJECTS` name counts only on an object (`qualified` None), not on a module."""
    if name in STR_METHODS_OF_OBJECTS:
        return qualified is None
    return name in STR_METHODS or name in KEY_METHODS or name in CONVERSION_METHODS


# Methods of a mapping or sequence that hand back what it holds (`params.get("w")`, `d.pop(k)`):
# on a traced container, their result is a leaf, traced.
CONTENT_METHODS = frozenset({"get", "values", "pop", "popitem", "setdefault", "unfreeze"})


def is_object_method(func: cst.BaseExpression) -> bool:
    """`obj.m` (obj a name or an attribute chain) with `m` no dunder, no method of an array
    (`ARRAY_ATTRIBUTES`) and no container's content method: `obj` is an object no array is, of a
    class this file does not show (a haliax `NamedArray`'s `axis_size`/`has_axis`,
    stanford-crfm/levanter@9263f81 `layers/attention.py:143`, `inference/jit_scheduler.py:247`;
    a private helper of a model, `m._compute_padding(x.shape[-3:])` of an NNX module,
    RIMcKinley/IrrepUNet@<heldout29> irrepunet/models_jax/train.py:508, five JAX3 wrong).
    Called with no traced argument, what it returns is unknown: never a reason to report."""
    if not isinstance(func, cst.Attribute):
        return False
    name = func.attr.value
    head = func.value
    while isinstance(head, cst.Attribute):
        head = head.value
    return (
        isinstance(head, cst.Name)
        and not name.startswith("__")
        and name not in ARRAY_ATTRIBUTES
        and name not in CONTENT_METHODS
        and name not in ITEM_METHODS
        and name not in KEY_METHODS
    )


# Calls whose result is a Python value even when given traced arguments.
STATIC_CALLS = frozenset(
    {
        # Python builtins that inspect an object rather than compute with it
        "len",
        "isinstance",
        "issubclass",
        "type",
        "callable",
        "hasattr",
        "id",
        "repr",
        "str",
        # conversions to Python numbers: a Python value, or they raise on a tracer, and JAX304
        # reports that at the conversion (jaxoplanet's `ydeg = int(ydeg)` then `range(ydeg + 1)`)
        "int",
        "float",
        "complex",
        "operator.index",
        # shapes
        "jax.numpy.shape",
        "jax.numpy.ndim",
        "jax.numpy.size",
        "numpy.shape",
        "numpy.ndim",
        "numpy.size",
        "jax.numpy.broadcast_shapes",
        "jax.lax.broadcast_shapes",
        "numpy.broadcast_shapes",
        "jax.eval_shape",
        "equinox.filter_eval_shape",  # shapes and dtypes of the outputs; Python values pass through
        "jax.ShapeDtypeStruct",
        "jax.core.is_constant_dim",
        "jax.lax.axis_size",
        # the abstract value (shape, dtype, weak type, sharding) of an array: `print(jax.typeof(x))`
        # inside jit is the documented way to see a tracer's type at trace time
        "jax.typeof",
        "jax.core.get_aval",
        # dtypes
        "jax.numpy.dtype",
        "jax.numpy.result_type",
        "jax.numpy.finfo",
        "jax.numpy.iinfo",
        "jax.numpy.issubdtype",
        "jax.numpy.promote_types",
        "jax.numpy.can_cast",
        "jax.numpy.isdtype",
        "jax.numpy.iscomplexobj",
        "jax.numpy.isrealobj",
        "jax.numpy.isscalar",
        "jax.numpy.issubsctype",
        "numpy.dtype",
        "numpy.result_type",
        "numpy.finfo",
        "numpy.iinfo",
        "numpy.issubdtype",
        "numpy.iscomplexobj",
        "numpy.isrealobj",
        "numpy.isscalar",
        "numpy.isdtype",
        "numpy.promote_types",
        "numpy.can_cast",
        "jax.dtypes.canonicalize_dtype",
        # what kind of leaf a value is (equinox's filters): a Python bool whatever the value
        "equinox.is_array",
        "equinox.is_array_like",
        "equinox.is_inexact_array",
        "equinox.is_inexact_array_like",
        # numpyro's key check reads the dtype and shape only (ASKabalan/jax-fli@659abc6
        # src/jax_fli/initial.py:90: `if not is_prng_key(key): raise ValueError(...)` under jit)
        "numpyro.util.is_prng_key",
        # tree structure (not the leaves)
        "jax.tree.structure",
        "jax.tree_util.tree_structure",
        "jax.tree_util.treedef_is_leaf",
        "jax.tree_util.all_leaves",
        # devices and processes
        "jax.devices",
        "jax.local_devices",
        "jax.device_count",
        "jax.default_backend",
        "jax.process_index",
        "jax.process_count",
        "jax.local_device_count",
        # the TPU's hardware description (a Python dataclass of ints: lanes, sublane tiling, VMEM
        # size), read by Pallas kernels' wrappers to size blocks (google-deepmind/simply@e14c061
        # `simply/kernels/gmm_v2.py`: `pltpu.get_tpu_info().get_sublane_tiling(lhs.dtype)`)
        "jax.experimental.pallas.tpu.get_tpu_info",
        "jax.experimental.pallas.tpu.get_tpu_info_for_chip",
        "jax.experimental.pallas.tpu.is_tpu_device",
        "jax._src.pallas.mosaic.tpu_info.get_tpu_info",
    }
)
# Modules whose functions only inspect dtypes, shapes or devices: Python values whatever the input.
STATIC_PREFIXES = ("jax.dtypes.", "jax._src.dtypes.", "jax.core.", "jax._src.core.", "jax.config.")

# `tree_map(f, *trees)`: a tree of `f`'s results, so static exactly when `f` returns a static value
# on traced leaves (`lambda a, b: jnp.ndim(a) == jnp.ndim(b)`).
TREE_MAP_NAMES = frozenset(
    {
        "jax.tree_util.tree_map",
        "jax.tree.map",
        "jax.tree_map",
        "jax.tree_util.tree_map_with_path",
        "jax.tree.map_with_path",
    }
)

# Functions that return a Python list of a tree's leaves: its length and truth are the tree's
# structure, Python values under a trace (google-research/long-range-arena image/train.py
# `if jax.tree_leaves(state):`), though each element may be traced.
LEAF_LISTS = frozenset(
    {
        "jax.tree_util.tree_leaves",
        "jax.tree.leaves",
        "jax.tree_leaves",
        "jax.tree_util.tree_leaves_with_path",
        "jax.tree.leaves_with_path",
    }
)

# `jax.numpy` functions that return a Python list or tuple of arrays (measured, jax 0.10.2): the
# container's length and truth are static, an item store replaces an element (dakling/
# jax-spectral-dns@f35469e navier_stokes.py:1605, `fields_2d = jnp.split(...)` then
# `fields_2d[i] = ...`: JAX403 wrong, with a safe `.at[i].set` fix that broke the code).
ARRAY_LISTS = frozenset(
    {
        "jax.numpy.split",
        "jax.numpy.array_split",
        "jax.numpy.hsplit",
        "jax.numpy.vsplit",
        "jax.numpy.dsplit",
        "jax.numpy.meshgrid",
        "jax.numpy.broadcast_arrays",
        "jax.numpy.unstack",
        "jax.numpy.nonzero",
    }
)

# Annotations that admit no array (`eqx.filter_jit` traces only array leaves: an argument so
# annotated is a static Python value there). Names, and generics over such names.
PYTHON_ANNOTATIONS = frozenset(
    {"int", "bool", "str", "float", "complex", "bytes", "None", "typing.Callable", "collections.abc.Callable"}
)
ALWAYS_PYTHON_GENERICS = frozenset(
    {"typing.Literal", "type", "typing.Type", "typing.Callable", "collections.abc.Callable"}
)
CONTAINER_GENERICS = frozenset(
    {
        "tuple",
        "list",
        "set",
        "frozenset",
        "typing.Tuple",
        "typing.List",
        "typing.Set",
        "typing.FrozenSet",
        "typing.Sequence",
        "collections.abc.Sequence",
        "typing.Optional",
        "typing.Union",
    }
)


def defaults_to_a_container(op: cst.BooleanOperation) -> bool:
    """`x or {}` (`[]`, `()`, `dict()`, ...): `x` is a container or None, so its truth is the
    container's emptiness, a Python bool even when its leaves are traced (google-research/big_vision
    paligemma `partial_params or {}`, google-deepmind/simply `extra_inputs or {}`)."""
    if not isinstance(op.operator, cst.Or):
        return False
    right = op.right
    if isinstance(right, (cst.Dict, cst.List, cst.Tuple)):
        return not right.elements
    return (
        isinstance(right, cst.Call)
        and not right.args
        and isinstance(right.func, cst.Name)
        and right.func.value in ("dict", "list", "tuple", "set", "frozenset")
    )


def admits_no_array(annotation: cst.BaseExpression, qualify) -> bool:
    """`annotation` (a parameter's) admits only Python values: `int`, `bool`, `str`, `float`,
    `Callable[...]`, `type[...]`, `Literal[...]`, and tuples, lists, sequences, `Optional`/unions
    and `X | Y` of those (`tuple[int, ...]`, `int | None`). `qualify` qualifies a name."""
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
        return admits_no_array(annotation.left, qualify) and admits_no_array(annotation.right, qualify)
    if isinstance(annotation, cst.Subscript):
        base = qualify(annotation.value)
        if base in ALWAYS_PYTHON_GENERICS:
            return True
        if base not in CONTAINER_GENERICS:
            return False
        elements = [el.slice.value for el in annotation.slice if isinstance(el.slice, cst.Index)]
        if len(elements) != len(annotation.slice):
            return False
        return all(isinstance(e, cst.Ellipsis) or admits_no_array(e, qualify) for e in elements)
    if isinstance(annotation, (cst.Name, cst.Attribute)):
        return qualify(annotation) in PYTHON_ANNOTATIONS
    return False


# What a call's result is, for a `CallOracle`.
# Memoising decorators of functions: their arguments are hashed, and a tracer is unhashable, so a
# call of one never takes a traced argument (`static_helpers`: what it returns is decided with
# every parameter static); they are also the method caches JAX102 looks for.
FUNCTION_CACHES = frozenset({"functools.cache", "functools.lru_cache"})

STATIC = "static"  # a Python value whatever the arguments (the helper only reads shapes/dtypes)
TRACED = "traced"  # an array under the trace
UNKNOWN = "unknown"  # undecidable here (a helper whose body is elsewhere): never a reason to flag


# Collectives that JAX folds to a Python value when given a Python number: `lax.psum(1, axis)` is
# the idiom for an axis size, and returns an `int` under vmap/pmap/shard_map (measured, jax 0.10.2:
# `type(lax.psum(1, "i"))` is `int` inside `jit(vmap(f, axis_name="i"))`). With an array it is traced.
FOLDED_ON_A_NUMBER = frozenset({"jax.lax.psum"})


# Pallas integer helpers that compute in Python when given Python ints (`cdiv(a, b)` is
# `(a + b - 1) // b` when both are dims, `lax.div` only on arrays): not staged, so traced only when
# an argument is. Kernel wrappers size grids with them from static shapes
# (jax-ml/jax-llm-examples@8b4b246 `gpt_oss/gpt_oss_jax/decode_ragged_dot.py`:
# `grid = (pl.cdiv(rhs.shape[-1], block_out), g // block_g, n // block_n)`).
ARGUMENT_TYPED_CALLS = frozenset(
    {
        "jax.experimental.pallas.cdiv",
        "jax.experimental.pallas.align_to",
        "jax.experimental.pallas.next_power_of_2",
        "jax.experimental.pallas.strides_from_shape",
        "jax._src.pallas.utils.cdiv",
        "jax._src.pallas.utils.align_to",
        "jax._src.pallas.utils.next_power_of_2",
    }
)


def is_folded_on_a_number(qualname: str | None, first_is_number: bool) -> bool:
    """`qualname(<a Python number literal>, ...)` returns a Python value (`FOLDED_ON_A_NUMBER`)."""
    return first_is_number and qualname in FOLDED_ON_A_NUMBER


# NumPy functions return NumPy values: given a tracer they raise (`TracerArrayConversionError`,
# which JAX402 reports at that call), so nothing after such a call runs under the trace and what
# they return is never traced (jax-ml/bonsai@3628425 `bonsai/models/sam2/model_sam2_transforms.py`:
# `masks_np = np.array(masks)` in a jitted method, then a NumPy helper on `masks_np[b, m]`)...
CONCRETE_PREFIXES = ("numpy.",)
# ...except these, which hand their argument to its own method (`np.sum(x)` is `x.sum()`): given a
# tracer they return a tracer (measured under `jax.jit`, jax 0.10.2 / numpy 2.4, by
# `scripts/measure_numpy_on_tracers.py`; JAX402's table, `numpy_table.NP_WORKS`, never reports them),
# so `e = np.sum(x ** 2)` then `if e > 1.0:` in a jitted function raises TracerBoolConversionError.
NUMPY_DELEGATING = frozenset(
    """sum mean prod max min amax amin any all std var argmax argmin cumsum cumprod round around reshape
    transpose swapaxes squeeze repeat flip searchsorted moveaxis take_along_axis real imag""".split()
)


def is_static_call_name(qualname: str | None) -> bool:
    """`qualname` (a qualified function name) returns a Python value whatever its arguments (a
    query without side effects: `split_condition` may evaluate it earlier)."""
    return qualname in STATIC_CALLS or (qualname is not None and qualname.startswith(STATIC_PREFIXES))


def returns_untraced(qualname: str | None) -> bool:
    """`qualname` returns a value that is never traced whatever its arguments: a Python value
    (`is_static_call_name`), or a NumPy one (`CONCRETE_PREFIXES`, but not `NUMPY_DELEGATING`; not
    side-effect free: `np.random.*`)."""
    if is_static_call_name(qualname):
        return True
    return (
        qualname is not None
        and qualname.startswith(CONCRETE_PREFIXES)
        and qualname.removeprefix("numpy.") not in NUMPY_DELEGATING
    )


class CallOracle(Protocol):
    """What a module knows about calls the table does not decide: its own helpers' bodies, and
    which callees are out of sight. Cross-module knowledge (a project call graph) plugs in here."""

    def call_result(self, call: cst.Call) -> str | None:
        """`STATIC`, `TRACED` or `UNKNOWN` for the result of `call`; None: no opinion (the default
        rule applies: traced when an argument is, or when it is a staged jax operation)."""

    def returns_static(self, func: cst.BaseExpression) -> bool:
        """`func` (a name or attribute naming a function) returns a static value whatever its arguments."""

    def element_static(self, call: cst.Call, index: int, count: int) -> bool:
        """Element `index` of the `count`-tuple `call` returns is static (a helper's `return loss,
        x.shape[0]`), whatever the other elements are."""

    def knows_local(self, name: str) -> bool:
        """`name`, a local of the calling function, is a nested def the oracle decides (a name
        nothing else in the module binds): a call of it is asked about, not left to the default."""


# Top-level packages whose functions compute with arrays (or are the standard library): a call
# into one of them follows the default rule. A function imported from any other module (the
# project's own, or a relative import) has a body this module cannot see: its result is UNKNOWN.
ARRAY_LIBRARIES = frozenset(
    {
        "jax",
        "jaxlib",
        "numpy",
        "scipy",
        "equinox",
        "flax",
        "optax",
        "chex",
        "haiku",
        "numpyro",
        "jaxopt",
        "diffrax",
        "optimistix",
        "lineax",
        "distrax",
        "tensorflow_probability",
        "tensorflow",
        "torch",
        "einops",
        "jraph",
        "jmp",
        "orbax",
        "blackjax",
        "jaxtyping",
        "ml_dtypes",
        "opt_einsum",
        "rlax",
        "objax",
    }
)


def is_known_library(module: str) -> bool:
    """`module` (dotted) belongs to an array library or the standard library (see ARRAY_LIBRARIES)."""
    top = module.split(".", 1)[0]
    return top in ARRAY_LIBRARIES or top in sys.stdlib_module_names or top == "__future__"


# Where a value must be a dtype: `x.astype(d)`, and the `dtype=` of a jax.numpy/NumPy call. A
# dtype is never an array (a traced value there raises), so a parameter used there gets a Python
# value in a working program, as one annotated `DTypeLike`: `eqx.filter_jit` keeps it static
# (stanford-crfm/levanter compat/hf_checkpoints.py `_to_state_dict_with_dtype(model, dtype, ...)`).
DTYPE_METHODS = frozenset({"astype"})
DTYPE_KEYWORD = "dtype"
DTYPE_CALL_PREFIXES = ("jax.numpy.", "numpy.", "jax.lax.", "jax.random.", "jax.nn.")


def dtype_params(fn: cst.FunctionDef, qualify) -> set[str]:
    """Parameters of `fn` its own body passes where a dtype goes (`DTYPE_METHODS`, the
    `DTYPE_KEYWORD` of a call `DTYPE_CALL_PREFIXES` name)."""
    params = {p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)}
    found: set[str] = set()

    class V(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            method = isinstance(call.func, cst.Attribute) and call.func.attr.value in DTYPE_METHODS
            for i, arg in enumerate(call.args):
                if not (isinstance(arg.value, cst.Name) and arg.value.value in params):
                    continue
                key = arg.keyword.value if arg.keyword is not None else None
                if method and (key == DTYPE_KEYWORD or (key is None and i == 0)):
                    found.add(arg.value.value)
                elif key == DTYPE_KEYWORD and (qualify(call.func) or "").startswith(DTYPE_CALL_PREFIXES):
                    found.add(arg.value.value)

    fn.body.visit(V())
    return found


def nested_field(expr: cst.BaseExpression, shown: frozenset[str] | set[str] = frozenset()) -> bool:
    """`expr` is a field of a field of a parameter (`u.domain.dx`), no part of which is an array
    attribute, and the root's class is not in `shown` (names whose class the file shows). Of a
    traced pytree of another package such a value is as likely static metadata as an array: jaxdf's
    `Domain.dx` is an `eqx.field(static=True)` tuple of floats, read off a traced `FourierSeries`
    (ucl-bug/jwave@9d114ac jwave/acoustics/time_varying.py:157, `np.asarray(u.domain.dx)`)."""
    depth = 0
    while isinstance(expr, cst.Attribute):
        if expr.attr.value in ARRAY_ATTRIBUTES:
            return False
        depth += 1
        expr = expr.value
    return depth >= 2 and isinstance(expr, cst.Name) and expr.value not in shown and expr.value != "self"

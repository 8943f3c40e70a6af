"""Comparing two output trees: structure by key paths, leaves by shape and dtype, values with tolerance.

The rules were tried in research/jax-semantics.md section 4:

- structure is compared through `keystr` paths plus `str(treedef)`, never `treedef ==` (a class
  registered with `register_pytree_node_class` and loaded twice gives unequal treedefs with equal text);
- leaves by exact shape and dtype; weak-type differences are ignored unless `strict_weak`;
  Python scalars count as weak 0-d arrays (the eager original returns `3` where jit returns `Array(3)`);
- ints and bools exactly; floats with a per-dtype `isclose` OR a ULP distance <= 4; the NaN pattern
  must match (NaN equals NaN inside it); infinities equal only themselves;
- PRNG keys through their key data;
- `None` is flattened as a leaf, so a field the fix adds (JAX101's `_<name>_cache`, `None` until
  filled) shows as a key path; `compare_trees(..., added_fields=...)` compares such trees on the
  original's leaves and names the added leaves instead of failing on them.

This module needs numpy only: the parent process compares `FlatTree`s that the children built
(`flatten`, which imports jax lazily), so jaxfix never imports jax or user code to compare.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

try:  # registers bfloat16 & co. with numpy, so pickled bf16 arrays load and compare
    import ml_dtypes  # noqa: F401
except ImportError:  # pragma: no cover - ml_dtypes ships with jaxlib
    ml_dtypes = None

MAX_ULP = 4

# rtol, atol per float dtype name (atol covers results that should be 0 but are 1e-8).
TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (1e-3, 1e-3),
    "bfloat16": (1e-2, 1e-2),
    "float32": (1e-6, 1e-6),
    "float64": (1e-12, 1e-12),
}
DEFAULT_TOLERANCE = (1e-6, 1e-6)


@dataclass(frozen=True)
class Leaf:
    """A leaf as it crossed the process boundary."""

    value: Any  # np.ndarray, or a Python object compared by ==
    weak_type: bool = False
    kind: str = "array"  # "array" | "key" (value is key_data) | "object" (compared by ==)
    key_impl: str | None = None


@dataclass(frozen=True)
class FlatTree:
    """A pytree reduced to what comparison needs: text of the treedef, key paths, leaves."""

    treedef: str
    paths: tuple[str, ...]
    leaves: tuple[Leaf, ...]


@dataclass(frozen=True)
class Difference:
    """The first difference between expected and got."""

    path: str  # key path inside the output, e.g. "['loss']" or "[0].a"
    reason: str  # "structure" | "shape" | "dtype" | "weak_type" | "nan" | "value" | "key"
    expected: str
    got: str
    max_abs_diff: float | None = None
    max_ulp: int | None = None
    index: tuple[int, ...] | None = None

    @property
    def message(self) -> str:
        where = f"at {self.path or 'the output'}"
        if self.reason == "structure":
            return f"tree structure differs {where}: expected {self.expected}, got {self.got}"
        if self.reason in ("shape", "dtype", "weak_type", "key"):
            return f"{self.reason} differs {where}: expected {self.expected}, got {self.got}"
        idx = "" if not self.index else f"[{', '.join(map(str, self.index))}]"
        text = f"{'NaN pattern' if self.reason == 'nan' else 'values'} differ {where}{idx}: expected {self.expected}, got {self.got}"
        if self.max_abs_diff is not None:
            text += f" (max |difference| {self.max_abs_diff:.6g}"
            text += f", {self.max_ulp} ulp)" if self.max_ulp is not None and self.max_ulp < 10**6 else ")"
        return text


# -- building FlatTrees (child side; imports jax) -------------------------------------------------


def flatten(tree: Any) -> FlatTree:
    """Reduce a pytree of jax/numpy arrays and Python scalars to a picklable `FlatTree`."""
    import jax

    pairs, treedef = jax.tree_util.tree_flatten_with_path(tree, is_leaf=_is_none)
    return FlatTree(
        treedef=_ADDRESS.sub("", str(treedef)),
        paths=tuple(jax.tree_util.keystr(path) for path, _ in pairs),
        leaves=tuple(to_leaf(value) for _, value in pairs),
    )


# Static data of a node may print objects by identity (`<function chain.<locals>.init_fn at 0x7f..>`
# in a flax TrainState's optimizer): the address differs in every process and says nothing.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _is_none(value: Any) -> bool:
    return value is None


def to_leaf(value: Any) -> Leaf:
    import jax

    if isinstance(value, jax.Array):
        if jax.dtypes.issubdtype(value.dtype, jax.dtypes.prng_key):
            return Leaf(np.asarray(jax.random.key_data(value)), kind="key", key_impl=str(jax.random.key_impl(value)))
        return Leaf(np.asarray(value), weak_type=bool(getattr(value, "weak_type", False)))
    if isinstance(value, np.ndarray | np.generic):
        return Leaf(np.asarray(value))
    if isinstance(value, bool | int | float | complex):
        return Leaf(value, weak_type=True)
    return Leaf(_plain(value), kind="object")


def _plain(value: Any) -> Any:
    """Objects that are not arrays travel as themselves when they pickle cleanly, else as repr."""
    if value is None or isinstance(value, str | bytes):
        return value
    return _ADDRESS.sub("", f"<{type(value).__qualname__}> {value!r}")[:500]


# -- comparison (parent side; numpy only) ---------------------------------------------------------


def _as_array(leaf: Leaf) -> np.ndarray:
    value = leaf.value
    if isinstance(value, bool):
        return np.asarray(value, dtype=np.bool_)
    if isinstance(value, int):  # a Python int is a weak int32 under jax's default config
        return np.asarray(value, dtype=np.int64 if abs(value) >= 2**31 else np.int32)
    if isinstance(value, float):
        return np.asarray(value, dtype=np.float32)
    if isinstance(value, complex):
        return np.asarray(value, dtype=np.complex64)
    return np.asarray(value)


def _short(array: np.ndarray, limit: int = 8) -> str:
    flat = array.reshape(-1)
    body = np.array2string(flat[:limit], precision=8, separator=", ", threshold=limit)
    if flat.size > limit:
        body = body[:-1] + ", ...]"
    return body if array.ndim else str(array.item())


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Number of representable floats between a and b (elementwise; both same float dtype)."""
    bits = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    ia = a.view(bits).astype(np.int64)
    ib = b.view(bits).astype(np.int64)
    lowest = np.int64(np.iinfo(bits).min)
    # Map sign-magnitude bit patterns onto a monotone integer line.
    ia = np.where(ia < 0, lowest - ia, ia)
    ib = np.where(ib < 0, lowest - ib, ib)
    return np.abs(ia - ib)


def _compare_floats(path: str, exp: np.ndarray, got: np.ndarray, scale: int = 1) -> Difference | None:
    """Within the dtype's tolerance or MAX_ULP; both times `scale` for a rewrite that reorders a
    loop's arithmetic (`scale`: the loop's length), whose rounding error grows with it."""
    if np.iscomplexobj(exp):
        return _compare_floats(f"{path}.real", exp.real, got.real, scale) or _compare_floats(f"{path}.imag", exp.imag, got.imag, scale)
    rtol, atol = TOLERANCES.get(exp.dtype.name, DEFAULT_TOLERANCE)
    rtol, atol = rtol * scale, atol * scale
    nan_e, nan_g = np.isnan(exp), np.isnan(got)
    if not np.array_equal(nan_e, nan_g):
        bad = np.argwhere(nan_e != nan_g)[0]
        return Difference(path, "nan", _short(exp), _short(got), index=tuple(int(i) for i in bad))
    e64, g64 = exp.astype(np.float64), got.astype(np.float64)
    close = np.isclose(e64, g64, rtol=rtol, atol=atol) | nan_e
    if exp.dtype.itemsize in (2, 4, 8) and exp.dtype.kind == "f":
        close |= ulp_distance(exp, got) <= MAX_ULP * scale
    if close.all():
        return None
    finite = ~nan_e & np.isfinite(e64) & np.isfinite(g64)
    diff = np.abs(e64 - g64)
    max_diff = float(diff[finite].max()) if finite.any() else float("inf")
    max_ulp = int(ulp_distance(exp, got)[~nan_e].max()) if exp.dtype.kind == "f" and exp.dtype.itemsize in (2, 4, 8) else None
    bad = np.argwhere(~close)[0]
    return Difference(path, "value", _short(exp), _short(got), max_diff, max_ulp, tuple(int(i) for i in bad))


def compare_leaves(path: str, expected: Leaf, got: Leaf, *, strict_weak: bool = False, scale: int = 1) -> Difference | None:
    if expected.kind != got.kind:
        article = {"array": "an array", "object": "an object", "key": "a PRNG key"}
        return Difference(path, "structure", f"{article[expected.kind]} leaf", f"{article[got.kind]} leaf")
    if expected.kind == "object":
        if expected.value == got.value:
            return None
        if isinstance(expected.value, str) and isinstance(got.value, str) and (
            _ADDRESS.sub("", expected.value) == _ADDRESS.sub("", got.value)
        ):
            return None  # `<Model object at 0x7f..>`: an address differs in every process and says nothing
        return Difference(path, "value", repr(expected.value)[:200], repr(got.value)[:200])
    if expected.kind == "key" and expected.key_impl != got.key_impl:
        return Difference(path, "key", f"key impl {expected.key_impl}", f"key impl {got.key_impl}")
    exp, out = _as_array(expected), _as_array(got)
    if exp.shape != out.shape:
        return Difference(path, "shape", str(exp.shape), str(out.shape))
    python_scalar = not isinstance(expected.value, np.ndarray) or not isinstance(got.value, np.ndarray)
    if exp.dtype != out.dtype:
        if python_scalar and exp.dtype.kind == out.dtype.kind:
            # A Python scalar is weak: it takes the other side's precision (3.0 vs float16(3)).
            common = out.dtype if isinstance(got.value, np.ndarray) else exp.dtype
            exp, out = exp.astype(common), out.astype(common)
        elif _weak_numbers(expected, got, exp, out):
            # The eager original returned a Python number (`-x` of an int) where the jitted rewrite
            # returns a weak array promoted by its other branch (`jnp.where(c, x * 2.0, -x)`): both
            # are weak, so they take the type of whatever they meet; compare the numbers.
            common = np.result_type(exp.dtype, out.dtype)
            exp, out = exp.astype(common), out.astype(common)
        else:
            return Difference(path, "dtype", str(exp.dtype), str(out.dtype))
    if strict_weak and expected.weak_type != got.weak_type:
        return Difference(path, "weak_type", f"weak_type={expected.weak_type}", f"weak_type={got.weak_type}")
    if exp.dtype.kind in "fc":
        return _compare_floats(path, exp, out, scale)
    if np.array_equal(exp, out):
        return None
    bad = np.argwhere(exp != out)[0] if exp.ndim else ()
    diff = None
    if exp.dtype.kind in "iu":
        diff = float(np.abs(exp.astype(np.float64) - out.astype(np.float64)).max())
    reason = "key" if expected.kind == "key" else "value"
    return Difference(path, reason, _short(exp), _short(out), diff, None, tuple(int(i) for i in bad))


_ARRAY_REPR = re.compile(r"Array\((.*?), dtype=\w+(?:, weak_type=True)?\)", re.S)
# what a `print` inside `jax.grad`/`value_and_grad` shows even when the original runs eagerly
# (`jax.disable_jit()` does not stop differentiation tracing): `GradTracer(primal=1.5,
# typeof(tangent)=f32[])`, whose value is the primal that `jax.debug.print` prints
_TRACER_PRIMAL = re.compile(r"\w*Tracer\(primal=(.*?), typeof\(tangent\)=[\w\[\],]*\)", re.S)
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf")


def compare_printed(path: str, expected: FlatTree, got: FlatTree) -> Difference | None:
    """Printed lines (one text leaf each side, `watch.printed`): the words equal, the numbers within
    float32's tolerance (the eager original may print a Python float computed in double precision
    where the jitted rewrite prints a float32)."""
    exp = expected.leaves[0].value if len(expected.leaves) == 1 else None
    out = got.leaves[0].value if len(got.leaves) == 1 else None
    if not isinstance(exp, str) or not isinstance(out, str):
        return compare(expected, got, prefix=path)
    if exp == out:
        return None
    # `{v = }` / `{v!r}` of a traced value print the jitted array's repr where the eager original
    # printed the Python number it was given: the same value
    exp, out = _ARRAY_REPR.sub(r"\1", exp), _ARRAY_REPR.sub(r"\1", out)
    exp, out = _TRACER_PRIMAL.sub(r"\1", exp), _TRACER_PRIMAL.sub(r"\1", out)
    exp_lines, out_lines = exp.splitlines(), out.splitlines()
    if len(exp_lines) != len(out_lines):
        return Difference(path, "value", f"{len(exp_lines)} printed line(s): {exp[:160]!r}", f"{len(out_lines)}: {out[:160]!r}")
    rtol, atol = TOLERANCES["float32"]
    for a, b in zip(exp_lines, out_lines):
        if _NUMBER.sub("#", a) != _NUMBER.sub("#", b):
            return Difference(path, "value", repr(a)[:200], repr(b)[:200])
        for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(b)):
            if x == y:
                continue
            try:
                fx, fy = float(x), float(y)
            except ValueError:
                return Difference(path, "value", repr(a)[:200], repr(b)[:200])
            if not np.isclose(fx, fy, rtol=max(rtol, 1e-5), atol=atol):
                return Difference(path, "value", repr(a)[:200], repr(b)[:200], abs(fx - fy))
    return None


def _weak_numbers(expected: Leaf, got: Leaf, exp: np.ndarray, out: np.ndarray) -> bool:
    """A Python number from the original against a weak-typed array of another numeric kind."""
    numeric = exp.dtype.kind in "iuf" and out.dtype.kind in "iuf"
    return numeric and not isinstance(expected.value, np.ndarray) and isinstance(got.value, np.ndarray) and got.weak_type


@dataclass(frozen=True)
class Comparison:
    """The first difference (or None) and the leaves the fix added on purpose (their key paths)."""

    difference: Difference | None
    added: tuple[str, ...] = ()
    restructured: tuple[str, ...] = ()  # classes whose node data alone differed, as `uncached` allows


def _under_added_field(path: str, added_fields: frozenset[str]) -> str | None:
    for name in added_fields:
        if re.search(rf"\.{re.escape(name)}(?=$|[.\[])", path):
            return name
    return None


def _without_leaves(treedef: str, drop: set[int]) -> str:
    """`treedef` text with the leaf markers (`*`, in flattening order) at `drop` removed."""
    pieces = treedef.split("*")
    out = pieces[0]
    for index, piece in enumerate(pieces[1:]):
        out += ("" if index in drop else "*") + piece
    return _tidy_separators(out)


def _tidy_separators(text: str) -> str:
    """Commas left dangling where items of a treedef's text were cut out."""
    for before, after in ((", ,", ","), ("[, ", "["), ("(, ", "("), (", ]", "]"), (", )", ")"), ("[,", "["), (",]", "]")):
        while before in text:
            text = text.replace(before, after)
    return text


def _node_names(treedef: str) -> set[str]:
    return set(re.findall(r"CustomNode\((\w+)\[", treedef))


def _without_node_data(treedef: str, only: frozenset[str] | None = None) -> str:
    """`treedef` text with each custom node's static data (`CustomNode(Name[DATA], ...)`) left out
    (of the nodes of classes named in `only`, when given).

    A class that gained a field carries the new field name in that data (equinox lists its fields
    there); with the added leaves removed, what remains must still be the same classes holding the
    same children.
    """
    out, i, marker = [], 0, "CustomNode("
    while (start := treedef.find(marker, i)) != -1:
        bracket = treedef.find("[", start + len(marker))
        comma = treedef.find(",", start + len(marker))
        if bracket == -1 or (comma != -1 and comma < bracket) or (
            only is not None and treedef[start + len(marker) : bracket] not in only
        ):
            out.append(treedef[i : start + len(marker)])
            i = start + len(marker)
            continue
        out.append(treedef[i:bracket])
        depth, j = 0, bracket
        while j < len(treedef):
            depth += {"[": 1, "]": -1}.get(treedef[j], 0)
            j += 1
            if depth == 0:
                break
        i = j
    out.append(treedef[i:])
    return "".join(out)


def identical(a: FlatTree | None, b: FlatTree | None) -> bool:
    """Whether two trees hold the same values bit for bit (NaNs equal): the same input."""
    if a is None or b is None or a.treedef != b.treedef or a.paths != b.paths:
        return False
    for x, y in zip(a.leaves, b.leaves):
        if x.kind != y.kind:
            return False
        if isinstance(x.value, np.ndarray) or isinstance(y.value, np.ndarray):
            left, right = np.asarray(x.value), np.asarray(y.value)
            if left.shape != right.shape or left.dtype != right.dtype:
                return False
            if not np.array_equal(left, right, equal_nan=left.dtype.kind in "fc"):
                return False
        elif x.value != y.value:
            return False
    return True


def compare_trees(
    expected: FlatTree | Any,
    got: FlatTree | Any,
    *,
    strict_weak: bool = False,
    prefix: str = "",
    added_fields: frozenset[str] = frozenset(),
    scale: int = 1,
    uncached: frozenset[str] = frozenset(),
) -> Comparison:
    """Compare two trees; leaves under a field in `added_fields` that only `got` has are intended.

    When the structures differ, the leaves both sides share are compared first: "the gradient of
    `.a` went from [2, 4, 6] to 0" says more than "a leaf `._cache` appeared". An added leaf is
    accepted only when removing it leaves exactly the original's structure; any other change of
    structure is still a difference. The node data of the classes in `uncached` (whose cached
    property the rewrite removed, `intended.uncached_classes`) may differ when all else is equal.
    """
    if not isinstance(expected, FlatTree):
        expected = flatten(expected)
    if not isinstance(got, FlatTree):
        got = flatten(got)
    same_structure = expected.paths == got.paths and expected.treedef == got.treedef
    theirs = dict(zip(got.paths, got.leaves))
    for path, leaf in zip(expected.paths, expected.leaves):
        if path in theirs:
            diff = compare_leaves(prefix + path, leaf, theirs[path], strict_weak=strict_weak, scale=scale)
            if diff is not None:
                return Comparison(diff)
    if same_structure:
        return Comparison(None)
    if uncached and expected.paths == got.paths:
        if _without_node_data(expected.treedef, uncached) == _without_node_data(got.treedef, uncached):
            return Comparison(None, restructured=tuple(sorted(uncached & _node_names(expected.treedef))))
    ours = set(expected.paths)
    missing = [p for p in expected.paths if p not in theirs]
    extra = [(i, p) for i, p in enumerate(got.paths) if p not in ours]
    if missing:
        return Comparison(
            Difference(prefix + missing[0], "structure", f"a leaf here ({expected.treedef})", f"no such leaf ({got.treedef})")
        )
    intended = [(i, p) for i, p in extra if _under_added_field(p, added_fields)]
    if extra and len(intended) == len(extra):
        remaining = _without_leaves(got.treedef, {i for i, _ in intended})
        if remaining == expected.treedef or _without_node_data(remaining) == _without_node_data(expected.treedef):
            return Comparison(None, tuple(prefix + p for _, p in intended))
        return Comparison(Difference(prefix, "structure", expected.treedef, got.treedef))
    unintended = [p for _, p in extra if not _under_added_field(p, added_fields)]
    if unintended:
        return Comparison(
            Difference(prefix + unintended[0], "structure", f"no such leaf ({expected.treedef})", f"a leaf here ({got.treedef})")
        )
    return Comparison(Difference(prefix, "structure", expected.treedef, got.treedef))


def compare(expected: FlatTree | Any, got: FlatTree | Any, *, strict_weak: bool = False, prefix: str = "") -> Difference | None:
    """The first difference between two trees (FlatTrees, or pytrees flattened here), or None."""
    return compare_trees(expected, got, strict_weak=strict_weak, prefix=prefix).difference


@dataclass
class Outcome:
    """What one version produced for one named output: a tree, or an exception."""

    tree: FlatTree | None = None
    error: str | None = None  # "TypeName: message" when the code raised
    error_type: str | None = None
    trace: str = ""  # the last lines of the traceback, for the report
    extra: dict[str, Any] = field(default_factory=dict)

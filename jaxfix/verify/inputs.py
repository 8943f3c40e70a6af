"""Inputs for differential execution, in order of preference.

1. **Recorded** (`--record "CMD"`): the user's command (say `pytest -q tests/`) runs against the
   original code with a recorder (`jaxfix/verify/_recorder/sitecustomize.py`) that wraps every
   changed callable when its module is imported and keeps up to K calls each: jax arrays as NumPy
   data with dtype and weak type, NumPy arrays as NumPy, static values as they are. Calls made
   inside a trace (tracer arguments) are skipped: they have no values.
2. **Declared examples**: a Python file given with `--examples FILE`. It may define
   - `EXAMPLES = {"f": [call(x, n=3), ...], "Model.loss": lambda mod: [call(mod.Model(...))]}`:
     per callable (qualname as in the module), a list of `jaxfix.verify.call(...)` (or tuples of
     positional arguments), or a function of the loaded module returning one (to build instances
     of the module's own classes; a method's or property's first argument is the instance);
   - `examples(mod) -> dict` returning the same table;
   - `drive(mod) -> dict[str, object]`: a driver that exercises the module as a whole and returns
     named outputs (the fixture contract); it covers module-level code and classes too.
   A drive may also set `EXPECT_COMPILES = (before, after)` (compiles in its second run, checked
   by the fixture tests), `REFERENCE = "eager" | "as-written"` (overrides the rule's reference;
   for cases no rule owns), and name an output `"improves:..."` with the value
   `"CRASH:<ExceptionName>"` where the code raised: original CRASH vs a value is a repair (reported,
   not compared), a CRASH in the rewrite where the original had a value is a mismatch.
   The file runs in each child, after the module under test is loaded under its own name, so
   `from mypkg.model import Model` in it gets the version being verified.
3. **Synthesized** from annotations (functions and static methods only): jaxtyping
   `Float[Array, "b n"]` & co. (named dims bound to distinct sizes, so nothing is square by
   accident), `jax.Array`/`jnp.ndarray`/`np.ndarray`, `float`, `int`, `bool`, and literal
   defaults. Values are chosen to take both sides of a sign test and 0, 1 and many loop trips.
"""

from __future__ import annotations

import ast
import itertools
import json
import os
import pickle
import shlex
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from jaxfix.verify.changed import CallableInfo, Param
from jaxfix.verify.protocol import ArrayArg, Call

MAX_SYNTHESIZED = 8
DIM_SIZES = (3, 5, 2, 4, 6, 7)
ARRAY_NAMES = {"jax.Array", "Array", "jnp.ndarray", "jax.numpy.ndarray", "chex.Array", "ArrayLike", "jax.typing.ArrayLike"}
NUMPY_NAMES = {"np.ndarray", "numpy.ndarray"}
JAXTYPING_DTYPES = {
    "Float": "float32", "Float32": "float32", "Float64": "float64", "Float16": "float16", "BFloat16": "bfloat16",
    "Inexact": "float32", "Real": "float32", "Num": "float32", "Shaped": "float32",
    "Int": "int32", "Int32": "int32", "Int64": "int64", "Integer": "int32", "UInt8": "uint8", "UInt32": "uint32",
    "Bool": "bool",
}


class CannotSynthesize(Exception):
    """Why values cannot be made up for a callable (the message names the parameter)."""


@dataclass
class _Dims:
    sizes: dict[str, int] = field(default_factory=dict)

    def size(self, name: str) -> int:
        if name not in self.sizes:
            self.sizes[name] = DIM_SIZES[len(self.sizes) % len(DIM_SIZES)]
        return self.sizes[name]


def _array_values(dtype: str, shape: tuple[int, ...], variant: int) -> np.ndarray:
    n = int(np.prod(shape)) if shape else 1
    rng = np.random.default_rng(1234 + variant)
    if dtype == "bool":
        base = [np.arange(n) % 2 == 0, np.ones(n, bool), np.zeros(n, bool)][variant % 3]
    elif dtype.startswith(("int", "uint")):
        base = [np.arange(n) % 4, np.ones(n, int), rng.integers(0, 5, n)][variant % 3]
        if not dtype.startswith("uint") and variant % 3 == 0:
            base = base - 1  # some negatives
    else:
        base = [np.linspace(-1.5, 2.0, n), rng.uniform(0.5, 2.0, n), -rng.uniform(0.5, 2.0, n)][variant % 3]
    if dtype == "bfloat16":
        import ml_dtypes

        return np.asarray(base, dtype=ml_dtypes.bfloat16).reshape(shape)
    return np.asarray(base, dtype=dtype).reshape(shape)


def _subscript_parts(node: ast.expr) -> tuple[str, list[ast.expr]] | None:
    if isinstance(node, ast.Subscript):
        head = ast.unparse(node.value)
        inner = node.slice
        items = list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]
        return head, items
    return None


def _shape(spec: str, dims: _Dims) -> tuple[int, ...]:
    shape = []
    for token in spec.split():
        token = token.lstrip("#*").split("=")[-1]
        if token in ("...", "") or token.startswith("*"):
            continue
        if token.isdigit():
            shape.append(int(token))
        elif token == "_":
            shape.append(3)
        else:
            shape.append(dims.size(token))
    return tuple(shape)


def _candidates(param: Param, dims: _Dims, guess: bool = False) -> list[object]:
    """Values for one parameter, most diverse first."""
    if param.annotation is None:
        if param.default is not None:
            try:
                return [ast.literal_eval(param.default)]
            except ValueError:
                pass
        if not guess:
            raise CannotSynthesize(f"parameter `{param.name}` has no annotation")
        # Guessed: scalars of both signs, 0/1/many as ints, and a small mixed-sign array. Inputs
        # the original rejects are not compared, so a wrong guess costs coverage, not correctness.
        return [1.5, -2.0, 0, 3, ArrayArg(_array_values("float32", (3,), 0))]
    text = param.annotation.strip("'\"")
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        raise CannotSynthesize(f"cannot read the annotation of `{param.name}`: {text}") from None
    if isinstance(node, ast.BinOp) or text.startswith(("Optional", "Union", "typing.")):
        raise CannotSynthesize(f"parameter `{param.name}` has a union type ({text})")
    if text == "float":
        return [1.5, -2.0, 0.0, 37.5]  # both signs, zero, and many halvings/trips
    if text == "int":
        return [3, 1, 0]
    if text == "bool":
        return [True, False]
    if text in ARRAY_NAMES or text in NUMPY_NAMES:
        # No shape given: vectors (mixed signs, all positive, all negative) and 0-d values for code
        # that branches on a scalar (1.5 and 37.5 above the usual thresholds, -2.0 below).
        as_jax = text not in NUMPY_NAMES
        vectors = [ArrayArg(_array_values("float32", (3,), v), jax=as_jax) for v in range(3)]
        scalars = [ArrayArg(np.asarray(v, np.float32), jax=as_jax) for v in (1.5, -2.0, 37.5)]
        return [vectors[0], scalars[0], scalars[1], vectors[1], scalars[2], vectors[2]]
    parts = _subscript_parts(node)
    if parts is not None:
        head, items = parts
        dtype_name = head.rpartition(".")[2]
        if dtype_name in JAXTYPING_DTYPES and len(items) == 2:
            array_type = ast.unparse(items[0])
            spec = items[1].value if isinstance(items[1], ast.Constant) and isinstance(items[1].value, str) else None
            if spec is None:
                raise CannotSynthesize(f"parameter `{param.name}`: jaxtyping shape is not a string ({text})")
            shape = _shape(spec, dims)
            dtype = JAXTYPING_DTYPES[dtype_name]
            as_jax = array_type not in NUMPY_NAMES
            scalars = array_type in ("float", "int", "bool", "Scalar", "ScalarLike")
            if scalars:
                raise CannotSynthesize(f"parameter `{param.name}`: jaxtyping over Python scalars is not supported ({text})")
            return [ArrayArg(_array_values(dtype, shape, v), jax=as_jax) for v in range(3)]
    raise CannotSynthesize(f"parameter `{param.name}` has an annotation jaxfix cannot make values for ({text})")


def synthesize(info: CallableInfo, limit: int = MAX_SYNTHESIZED, *, guess: bool = False) -> list[Call]:
    """Calls built from the annotations of `info`; raises CannotSynthesize with the reason.

    With `guess`, unannotated parameters get guessed values (and the calls say "guessed")."""
    if info.kind not in ("function", "staticmethod"):
        raise CannotSynthesize(f"{info.qualname} is a {info.kind}: it needs an instance (declare examples or --record)")
    dims = _Dims()
    names, pools = [], []
    guessed = False
    for param in info.params:
        if param.kind == "var":
            continue
        names.append((param.name, param.kind))
        guessed |= param.annotation is None and param.default is None
        pools.append(_candidates(param, dims, guess))
    if not pools:
        return [Call(label="no arguments", source="synthesized")]
    combos = list(itertools.product(*(range(len(pool)) for pool in pools)))
    if len(combos) > limit:
        # Every value of every parameter at least once (diagonal), then the rest in order.
        width = max(len(p) for p in pools)
        diagonal = [tuple(i % len(pool) for pool in pools) for i in range(width)]
        combos = (diagonal + [c for c in combos if c not in diagonal])[:limit]
    calls = []
    for number, combo in enumerate(combos):
        values = [pool[i] for pool, i in zip(pools, combo)]
        args = tuple(v for (name, kind), v in zip(names, values) if kind == "positional")
        kwargs = {name: v for (name, kind), v in zip(names, values) if kind == "keyword"}
        calls.append(Call(args, kwargs, label=f"input {number + 1}", source="guessed" if guessed else "synthesized"))
    return calls


def pickled(calls: list[Call]) -> bytes:
    return pickle.dumps([pickle.dumps(c) for c in calls])


# -- declared examples ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ExamplesFile:
    path: str
    source: str
    has_drive: bool
    has_table: bool  # EXAMPLES or examples(mod)
    static_keys: frozenset[str] | None  # keys of a literal EXAMPLES dict, when known without running it
    expect_compiles: tuple[int, int] | None = None
    reference: str | None = None  # an explicit REFERENCE = "eager" | "as-written"

    def covers(self, qualname: str) -> bool:
        if not self.has_table:
            return False
        return self.static_keys is None or qualname in self.static_keys


def read_examples(path: str | os.PathLike) -> ExamplesFile:
    """Read (without running) what an examples/drive file declares."""
    source = Path(path).read_text(encoding="utf-8")
    tree = ast.parse(source)
    has_drive = has_table = False
    keys: frozenset[str] | None = None
    expect = reference = None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            has_drive |= node.name == "drive"
            has_table |= node.name == "examples"
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if not isinstance(target, ast.Name) or node.value is None:
                    continue
                if target.id == "EXAMPLES":
                    has_table = True
                    if isinstance(node.value, ast.Dict) and all(
                        isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.value.keys
                    ):
                        keys = frozenset(k.value for k in node.value.keys)  # type: ignore[union-attr]
                elif target.id == "EXPECT_COMPILES":
                    value = ast.literal_eval(node.value)
                    expect = (int(value[0]), int(value[1]))
                elif target.id == "REFERENCE":
                    reference = ast.literal_eval(node.value)
    return ExamplesFile(str(path), source, has_drive, has_table, keys, expect, reference)


# -- recording ------------------------------------------------------------------------------------

RECORDER_DIR = Path(__file__).with_name("_recorder")


@dataclass
class Recording:
    calls: dict[str, list[bytes]]  # qualname -> pickled Calls
    module_name: str | None  # the name the command imported the module under
    returncode: int
    output_tail: str
    skipped: dict[str, str] = field(default_factory=dict)  # qualname -> why calls were skipped
    errors: list[str] = field(default_factory=list)

    def count(self, qualname: str) -> int:
        return len(self.calls.get(qualname, ()))


def record_calls(
    command: str,
    *,
    path: str,
    targets: dict[str, str],
    limit: int = 5,
    timeout: float = 600.0,
    cwd: str | None = None,
) -> Recording:
    """Run `command` (a shell command line) with the recorder watching `path`'s `targets`."""
    from jaxfix.verify.runner import JAXFIX_ROOT

    with tempfile.TemporaryDirectory(prefix="jaxfix-record-") as tmp:
        config = {"path": os.path.realpath(path), "targets": targets, "limit": limit, "out": tmp}
        env = dict(os.environ)
        env["JAXFIX_RECORD"] = json.dumps(config)
        paths = [str(RECORDER_DIR), JAXFIX_ROOT, *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
        env["JAX_ENABLE_COMPILATION_CACHE"] = "false"
        try:
            done = subprocess.run(
                command if os.name != "nt" else shlex.split(command),
                shell=os.name != "nt",
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=timeout,
            )
            code, output = done.returncode, (done.stdout + done.stderr).decode("utf-8", "replace")
        except subprocess.TimeoutExpired as exc:
            code = -1
            output = f"timed out after {timeout:g} s\n" + ((exc.stdout or b"") + (exc.stderr or b"")).decode("utf-8", "replace")
        merged: dict[str, list[bytes]] = {}
        skipped: dict[str, str] = {}
        errors: list[str] = []
        module_name = None
        for file in sorted(Path(tmp).glob("rec-*.pkl")):
            try:
                data = pickle.loads(file.read_bytes())
            except Exception as exc:  # noqa: BLE001 - a process killed mid-write
                errors.append(f"{file.name}: {exc}")
                continue
            module_name = module_name or data.get("module_name")
            for name, calls in data.get("calls", {}).items():
                room = limit - len(merged.setdefault(name, []))
                merged[name].extend(calls[: max(0, room)])
            skipped.update(data.get("skipped", {}))
            errors.extend(data.get("errors", []))
        return Recording(merged, module_name, code, output[-4000:], skipped, errors)

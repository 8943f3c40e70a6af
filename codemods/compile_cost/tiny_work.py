"""Timed JAX work on a handful of numbers (JAX504): whether a notebook's `%timeit`/`%time` runs
straight-line JAX code on small data written out in the notebook (`jnp.eye(3)`, a 3x6 list,
Python scalars).

There the device work is microseconds, about what the dispatch costs, so the unwaited figure is
close to the blocked one: reviewers who read such cells on code nobody tuned on judged them
debatable, never real (a `%timeit` of a jitted function on a 3x6 order list, of a pmap of
`x + 3` over a 2x4 array, of a grad of `x + y` at two scalars, of 10x10 gram matrices). The size
is known only for data the notebook makes from literals, and only straight-line code of the
notebook counts: a tiny key or scalar that starts a `lax.scan`, a Python loop or another
library's function is no evidence of tiny work (a 2-element key starts a 10^6-step simulation).
"""

from __future__ import annotations

import ast
import math

from jaxfix.analysis.names import ImportMap
from jaxfix.analysis.transforms import GRAD_NAMES, JIT_NAMES, LAX_BODIES, PASS_THROUGH, VMAP_NAMES

# at most this many elements in any array the timed code is handed or its functions make: 10x10 and
# 3x6 are dispatch-bound, while a 100x100 solve already outlasts its dispatch (a blind-pool
# `%%timeit` of `inv` against `solve` on 100x100, labelled real)
TINY_ELEMENTS = 1024
# `jax.*` calls whose arguments are functions the call runs (`jax.grad(f)`, `jax.pmap(lambda x: x + 3)`)
_FUNCTION_TAKING = JIT_NAMES | VMAP_NAMES | GRAD_NAMES | PASS_THROUGH
_SHAPED = frozenset(
    {"jax.numpy.zeros", "jax.numpy.ones", "jax.numpy.empty", "jax.numpy.full", "numpy.zeros", "numpy.ones",
     "numpy.empty", "numpy.full"}
)
_LITERAL_ARRAYS = frozenset({"jax.numpy.array", "jax.numpy.asarray", "numpy.array", "numpy.asarray", "jax.device_put"})
_KEYS = frozenset({"jax.random.PRNGKey", "jax.random.key"})
# `jax.random` samplers whose second positional argument is the shape (`normal(key, (3,))`)
_SHAPE_SECOND = frozenset(
    {"normal", "uniform", "randint", "rademacher", "cauchy", "laplace", "logistic", "gumbel", "exponential", "maxwell"}
)
_SIZED = _SHAPED | _LITERAL_ARRAYS | {"jax.numpy.eye", "jax.numpy.arange", "jax.numpy.linspace"}
# methods that keep an array's size: a view, a cast, a reshape
_SIZE_KEEPING = frozenset({"flatten", "ravel", "reshape", "astype", "squeeze", "transpose", "copy"})
_PLAIN_BUILTINS = frozenset({"abs", "len", "min", "max", "float", "int", "range", "print", "tuple", "list", "sum"})


class TinyWork:
    """The notebook's top-level bindings, indexed once per notebook: sizes of the values it writes
    out, and whether its functions run straight-line code on small data (`timed`)."""

    def __init__(self, tree: ast.Module, names: ImportMap) -> None:
        self.names = names
        self.at = 0  # the timed line `timed` asks about: a function body runs then, reading the bindings there
        # name -> (line, kind, node): kind "assign" (node: the value), "def" (node: the def), "import", "other"
        self.bound: dict[str, list[tuple[int, str, ast.AST | None]]] = {}
        for stmt in tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._bind(stmt.name, stmt.lineno, "def", stmt)
                continue
            plain = isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            for node in ast.walk(stmt):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    value = stmt.value if plain and node is stmt.targets[0] else None
                    self._bind(node.id, stmt.lineno, "assign" if value is not None else "other", value)
                elif isinstance(node, (ast.Import, ast.ImportFrom)) and node is stmt:
                    for alias in node.names:
                        self._bind((alias.asname or alias.name).split(".")[0], stmt.lineno, "import", None)
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not stmt:
                    self._bind(node.name, stmt.lineno, "other", None)

    def qualified(self, expr: ast.AST) -> str | None:
        """The qualified name of `expr` when it goes through an import (`jnp.eye` -> `jax.numpy.eye`); None
        for the notebook's own names and values (`f`, `x.sum`)."""
        head = expr
        while isinstance(head, ast.Attribute):
            head = head.value
        if not isinstance(head, ast.Name) or head.id not in self.names.bindings:
            return None
        return self.names.qualify_ast(expr)

    def _bind(self, name: str, line: int, kind: str, node: ast.AST | None) -> None:
        self.bound.setdefault(name, []).append((line, kind, node))

    def binding(self, name: str, before: int) -> tuple[int, str, ast.AST | None] | None:
        """The last top-level binding of `name` above line `before`."""
        events = [e for e in self.bound.get(name, ()) if e[0] < before]
        return events[-1] if events else None

    # sizes of values

    def size(self, expr: ast.AST, before: int, depth: int = 0) -> int | None:
        """How many elements `expr` holds, when the notebook writes it from literals; else None."""
        if depth > 8:
            return None
        if isinstance(expr, ast.Constant):
            return 1 if isinstance(expr.value, (int, float, complex, bool, str)) or expr.value is None else None
        if isinstance(expr, ast.UnaryOp):
            return self.size(expr.operand, before, depth + 1)
        if isinstance(expr, (ast.List, ast.Tuple)):
            parts = [self.size(e, before, depth + 1) for e in expr.elts]
            return None if None in parts else sum(parts)
        if isinstance(expr, ast.Name):
            bound = self.binding(expr.id, before)
            if bound is None or bound[1] != "assign":
                return None
            return self.size(bound[2], bound[0], depth + 1)
        if isinstance(expr, ast.BinOp):
            a, b = self.size(expr.left, before, depth + 1), self.size(expr.right, before, depth + 1)
            return None if a is None or b is None else a * b  # a broadcast makes at most the product
        if isinstance(expr, ast.Subscript):
            return self.size(expr.value, before, depth + 1)
        if isinstance(expr, ast.Attribute) and expr.attr in ("T", "real", "imag"):
            return self.size(expr.value, before, depth + 1)
        if isinstance(expr, ast.Call):
            return self.call_size(expr, before, depth + 1)
        return None

    def _int(self, expr: ast.AST, before: int, depth: int) -> int | None:
        """An int the notebook writes out (`3`, `-1`, or `n` bound to `3`)."""
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
            inner = self._int(expr.operand, before, depth + 1)
            return None if inner is None else -inner
        if isinstance(expr, ast.Constant) and isinstance(expr.value, int) and not isinstance(expr.value, bool):
            return expr.value
        if isinstance(expr, ast.Name) and depth <= 8:
            bound = self.binding(expr.id, before)
            if bound is not None and bound[1] == "assign":
                return self._int(bound[2], bound[0], depth + 1)
        return None

    def _shape(self, expr: ast.AST, before: int, depth: int) -> int | None:
        if isinstance(expr, (ast.Tuple, ast.List)):
            dims = [self._int(e, before, depth + 1) for e in expr.elts]
            return None if None in dims else math.prod(dims)
        return self._int(expr, before, depth + 1)

    def call_size(self, call: ast.Call, before: int, depth: int) -> int | None:
        """The size of an array a constructor makes from literals (`jnp.eye(3)`, `jnp.ones((3, 6))`,
        `random.normal(key, (4,))`), or of a size-keeping method's result (`x.flatten()`)."""
        q = self.qualified(call.func)
        args, kw = call.args, {k.arg: k.value for k in call.keywords}
        if q is None and isinstance(call.func, ast.Attribute) and call.func.attr in _SIZE_KEEPING:
            return self.size(call.func.value, before, depth + 1)
        if q in _KEYS:
            return 2
        if q in _LITERAL_ARRAYS and args:
            return self.size(args[0], before, depth + 1)
        if q in _SHAPED and (args or "shape" in kw):
            return self._shape(args[0] if args else kw["shape"], before, depth)
        if q == "jax.numpy.eye" and args:
            n = self._int(args[0], before, depth)
            m = self._int(args[1], before, depth) if len(args) > 1 else n
            return None if n is None or m is None else n * m
        if q == "jax.numpy.arange" and args and not kw:
            ends = [self._int(a, before, depth) for a in args]
            if None in ends or (len(ends) > 2 and ends[2] == 0):
                return None
            start, stop, step = (0, ends[0], 1) if len(ends) == 1 else (*ends[:2], ends[2] if len(ends) > 2 else 1)
            return max(0, -(-(stop - start) // step))
        if q == "jax.numpy.linspace" and len(args) >= 2:
            num = args[2] if len(args) > 2 else kw.get("num")
            return 50 if num is None else self._int(num, before, depth)
        if q is not None and q.startswith("jax.random.") and q not in _KEYS:
            if "shape" in kw:
                return self._shape(kw["shape"], before, depth)
            if q.rpartition(".")[2] in _SHAPE_SECOND:
                return self._shape(args[1], before, depth) if len(args) > 1 else 1
            return 1  # shaped like its data arguments (`multivariate_normal(key, mean, cov)`), sized above
        return None

    # straight-line code

    def straight_line_call(self, call: ast.Call, before: int, depth: int = 0) -> bool:
        """`call` runs straight-line JAX code: a `jax.*` function that is not a lax loop (its function
        arguments straight-line too), or a function of the notebook whose body is."""
        if depth > 4:
            return False
        func = call.func
        if isinstance(func, ast.Call):  # `jax.grad(f)(x)`: the transform, then what it wraps
            return self.straight_line_call(func, before, depth + 1)
        q = self.qualified(func)
        if q is not None:
            if q in LAX_BODIES and q.rpartition(".")[2] not in ("cond", "switch"):
                return False  # scan, fori_loop, while_loop, map: the work is the trip count
            if not q.startswith("jax.") or q.startswith(("jax.experimental.", "jax._src.")):
                return False  # another library's solver or energy function: its size is unknown
            if q in _SIZED or (q.startswith("jax.random.") and q not in _KEYS):
                made = self.call_size(call, before, depth)
                if made is None or made > TINY_ELEMENTS:
                    return False
            if q in _FUNCTION_TAKING:
                return all(self._function(f, before, depth + 1) for f in call.args[:1])
            if q in LAX_BODIES:  # `lax.cond(pred, f, g, x)`: its branches
                n = len(call.args)
                return all(self._function(call.args[i], before, depth + 1) for i in LAX_BODIES[q] if -n <= i < n)
            return True
        if isinstance(func, ast.Name):
            if func.id in _PLAIN_BUILTINS and self.binding(func.id, before) is None:
                return True
            return self._function(func, before, depth + 1)
        return False

    def _function(self, expr: ast.AST, before: int, depth: int) -> bool:
        """`expr` is a lambda or a function of the notebook whose body is straight-line, or a name bound
        to a `jax.*` transform of one (`f = jax.jit(g)`)."""
        if isinstance(expr, ast.Lambda):
            return self._straight_body(expr, [expr.body], depth)
        if isinstance(expr, ast.Call):  # `jax.grad(lambda a, b: a + b)`: a transform of one
            return self.qualified(expr.func) in _FUNCTION_TAKING and self.straight_line_call(expr, before, depth)
        if not isinstance(expr, ast.Name):
            return False
        bound = self.binding(expr.id, before)
        if bound is None:
            return False
        line, kind, node = bound
        if kind == "def":
            return self._straight_body(node, node.body, depth)
        if kind == "assign" and isinstance(node, ast.Call):
            return self._function(node, line, depth)
        return False

    def _straight_body(self, fn: ast.AST, body: list[ast.AST], depth: int) -> bool:
        """No loop in `body`, every call straight-line or a method of a value it holds (`x.sum()`), and
        every notebook value it reads by name small, as the bindings stand at the timed line."""
        before = self.at
        local = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
        for stmt in body:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    local.add(node.id)
        for stmt in body:
            for node in ast.walk(stmt):
                if isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.comprehension)):
                    return False
                if isinstance(node, ast.Call):
                    if isinstance(node.func, ast.Name) and node.func.id in local:
                        return False  # a function handed in: unknown work
                    if isinstance(node.func, ast.Attribute) and self.qualified(node.func) is None:
                        continue  # a method of a value (`x.sum()`, `x.at[i].set(v)`), not of a module
                    if not self.straight_line_call(node, before, depth + 1):
                        return False
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in local:
                    bound = self.binding(node.id, before)
                    if bound is not None and bound[1] == "assign":
                        made = self.size(node, before)
                        if made is None or made > TINY_ELEMENTS:
                            return False  # a notebook array the body reads: a 1000x1000 matrix is work
                    elif bound is not None and bound[1] == "other":
                        return False
        return True


    def timed(self, statements: list[ast.stmt], line: int) -> bool:
        """The timed code at `line` runs no loop, and each call it makes runs straight-line JAX code
        on data of at most TINY_ELEMENTS elements that the notebook writes out from literals (a call
        of another library, a `tfp` sampler on the notebook's small arrays, is no evidence of small
        work)."""
        nodes = [n for s in statements for n in ast.walk(s)]
        if any(isinstance(n, (ast.For, ast.AsyncFor, ast.While, ast.comprehension, ast.Lambda)) for n in nodes):
            return False
        self.at = line
        for call in (n for n in nodes if isinstance(n, ast.Call)):
            values = [*call.args, *(k.value for k in call.keywords)]
            if any(isinstance(v, ast.Starred) for v in values):
                return False
            if self.qualified(call.func) in _FUNCTION_TAKING:
                values = values[1:]  # `jax.jacrev(f)`: `f` is code, which `straight_line_call` reads
            sizes = [self.size(v, line) for v in values]
            if any(size is None or size > TINY_ELEMENTS for size in sizes):
                return False
            if not self.straight_line_call(call, line):
                return False
        return True

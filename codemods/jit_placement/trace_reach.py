"""Whether code a jit-placement site sits in already runs under a trace (a function handed to a
transform or a lax body, a decorated def, a lambda body, a probabilistic model): a transform
there is inlined into the caller's trace and compiles nothing on its own. A mixin of the site
finder (`sites._SiteFinder`), which provides `ctx`, `idx` and `qualify`."""

from __future__ import annotations

import libcst as cst

from codemods.jit_placement.transform_kinds import PARTIALS, TRACING_CALLS
from jaxfix.analysis.transforms import MODEL_PRIMITIVES
from jaxfix.analysis.walk import walk


class TraceReach:
    """The site finder's answers about traces: `_under_trace`, `_traces_its_argument`, `traced_names`."""

    _traced_names: dict[str, list[cst.CSTNode]] | None
    _models: dict[int, bool]
    _names_numpyro: bool | None = None  # the file's text names numpyro (`_is_model`: one search per file)

    def _traces_its_argument(self, arg: cst.Arg) -> bool:
        """`arg` goes to a transform (`jax.jit(f)`, `lax.scan(f, ...)`), directly or through
        `partial`: the function runs under that trace, where a jit inside it is inlined, and is
        not a callback run again eagerly (init2winit's `jax.jit(partial(self.initialize_cache))`)."""
        call = self.idx.parent(arg)
        if not isinstance(call, cst.Call):
            return False
        name = self.qualify(call.func) or ""
        if name in PARTIALS:
            outer = self.idx.parent(call)
            if isinstance(outer, cst.Arg) and outer.value is call:
                return self._traces_its_argument(outer)
            return False
        return name in TRACING_CALLS

    def _under_trace(self, node: cst.CSTNode) -> bool:
        traced = self.traced_names()
        for anc in self.idx.ancestors(node):
            if isinstance(anc, cst.FunctionDef):
                if anc.name.value in traced and self._named_from(anc, traced[anc.name.value]):
                    return True
                if self._is_model(anc):
                    return True
                for dec in anc.decorators:
                    d = dec.decorator
                    if self.qualify(d) in TRACING_CALLS:
                        return True
                    if isinstance(d, cst.Call) and (
                        self.qualify(d.func) in TRACING_CALLS
                        or (
                            self.qualify(d.func) in PARTIALS
                            and d.args
                            and self.qualify(d.args[0].value) in TRACING_CALLS
                        )
                    ):
                        return True
            if isinstance(anc, cst.Lambda):
                return True  # a lambda body: almost always a traced body (scan/cond/jit) or a key function
        return False

    def _is_model(self, definition: cst.FunctionDef) -> bool:
        """`definition`'s own body calls a probabilistic program's primitive (`numpyro.sample`):
        a model, which the inference library traces (`MODEL_PRIMITIVES`)."""
        known = self._models.get(id(definition))
        if known is None:
            if self._names_numpyro is None:
                self._names_numpyro = "numpyro" in self.ctx.source
            primitives = _ModelPrimitives(self.qualify)
            if self._names_numpyro:
                walk(definition.body, primitives)
            known = self._models[id(definition)] = primitives.found
        return known

    def _named_from(self, definition: cst.FunctionDef, scopes: list[cst.CSTNode]) -> bool:
        """A call made in one of `scopes` can name `definition`: a method only from its class body
        (a class scope is not visible to the functions in it: `pjit.pjit(init)` in `__init__` names
        a nested `init`, not the class's method `init`, brax's replay_buffers), any other def from
        its own scope or a scope nested in it."""
        home = self.idx.enclosing_scope(definition)
        if isinstance(home, cst.ClassDef):
            return any(scope is home for scope in scopes)
        return any(scope is home or any(a is home for a in self.idx.ancestors(scope)) for scope in scopes)

    def traced_names(self) -> dict[str, list[cst.CSTNode]]:
        """Names passed to a tracing call, each with the scopes of the calls that pass it (one walk
        of the module per file and scope index, shared by every finder: `runs_under_trace` keeps
        one of its own)."""
        if self._traced_names is None:
            self._traced_names = self.ctx.fact((_TracedNames, self.idx), lambda ctx: _TracedNames.of(self))
        return self._traced_names


class _ModelPrimitives(cst.CSTVisitor):
    """Whether a body calls a probabilistic program's primitive (`TraceReach._is_model`; one class:
    a class made per function cost ABCMeta's class creation each time)."""

    def __init__(self, qualify) -> None:
        self.qualify = qualify
        self.found = False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # a nested def is a model of its own, or not

    def visit_Call(self, node: cst.Call) -> None:
        self.found = self.found or self.qualify(node.func) in MODEL_PRIMITIVES


class _TracedNames(cst.CSTVisitor):
    def __init__(self, finder: TraceReach) -> None:
        super().__init__()
        self.finder = finder
        self.names: dict[str, list[cst.CSTNode]] = {}

    @classmethod
    def of(cls, finder: TraceReach) -> dict[str, list[cst.CSTNode]]:
        found = cls(finder)
        for call in finder.idx.of_type(cst.Call):  # what a walk of the module visits
            found.visit_Call(call)
        return found.names

    def visit_Call(self, node: cst.Call) -> None:
        qualify = self.finder.qualify
        if qualify(node.func) in TRACING_CALLS or (
            qualify(node.func) in PARTIALS and node.args and qualify(node.args[0].value) in TRACING_CALLS
        ):
            for arg in node.args:
                if isinstance(arg.value, cst.Name):
                    self.names.setdefault(arg.value.value, []).append(self.finder.idx.enclosing_scope(node))

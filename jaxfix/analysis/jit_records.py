"""The records of the jit analysis (`jit_contexts`): a function of the module (`FuncInfo`, with the
trace facts the analysis fills in), a place it is jitted (`JitSite`), a call of it (`CallSite`);
the lax and vmap body positions it reads (`BODY_ARGS`, `BODY_KEYWORDS`), why another module's
traced code enters a function (`CALLED_FROM_*`), and the readers of a transform call's literal
options and positional arguments. Importers read these through `jit_contexts`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from jaxfix.analysis.traced import FunctionFacts
from jaxfix.analysis.transforms import LAX_BODIES, OPTION_DISPLAYS

# lax (and friends) bodies: qualified name -> positions of function arguments (-1: a list of them)
BODY_ARGS: dict[str, tuple[int, ...]] = {
    **LAX_BODIES,
    "jax.vmap": (0,),
    "equinox.filter_vmap": (0,),
    "flax.nnx.vmap": (0,),
    "jax.checkpoint": (0,),
    "jax.remat": (0,),
}
BODY_KEYWORDS = {"f", "body_fun", "cond_fun", "true_fun", "false_fun", "fun", "branches"}


# reasons of a function entered from traced code of another module (`callgraph.CrossEntry`):
# from test code only (a test or a script under `tests/` jits it), or from the project's own code
CALLED_FROM_TESTS = "called from another module's test code"
CALLED_FROM_ELSEWHERE = "called from another module"


@dataclass(eq=False)
class JitSite:
    """One place where a function is jitted: a decorator or a `jax.jit(f, ...)` call."""

    node: cst.Decorator | cst.Call
    wrapper: str  # qualified name of the transform, e.g. "jax.jit"
    call: cst.Call | None  # the call carrying the options (`jax.jit(f, ...)`, `partial(jax.jit, ...)`), if any
    static_argnums: tuple[int, ...] = ()
    static_argnames: tuple[str, ...] = ()
    alias: str | None = None  # `f_jit = jax.jit(f)`: the name its callers use
    options_known: bool = True  # False when static_* are not literal (cannot be extended safely)


@dataclass(eq=False)
class FuncInfo:
    node: cst.FunctionDef | cst.Lambda
    name: str
    params: list[str]
    positional: list[str]
    defaults: dict[str, cst.BaseExpression]
    annotations: dict[str, str]
    class_name: str | None = None
    python_params: set[str] = field(default_factory=set)  # annotated as admitting no array (`admits_no_array`)
    class_annotations: dict[str, str] = field(default_factory=dict)  # param -> `Cls`/`mod.Cls` as written
    is_method: bool = False  # a plain method (first parameter is self)
    is_property: bool = False
    parent: "FuncInfo | None" = None
    # facts
    in_trace: bool = False
    reasons: list[str] = field(default_factory=list)
    entry_traced: set[str] = field(default_factory=set)
    static_params: set[str] = field(default_factory=set)
    jit_sites: list[JitSite] = field(default_factory=list)
    differentiated: bool = False
    facts: FunctionFacts | None = None
    # entered traced from another module of the project (`callgraph`): why, and what it is given
    called_from: str | None = None
    external_traced: set[str] = field(default_factory=set)
    # what the transforms this module applies to the function make traced, before propagation
    # (a value a `partial` binds comes from its caller: traced only if proven there)
    transform_traced: set[str] = field(default_factory=set)

    def param_index(self, name: str) -> int | None:
        return self.positional.index(name) if name in self.positional else None

    def traced_because(self) -> str:
        """For a message about a function only another module makes traced: why it is traced here."""
        return f" (traced here because {self.called_from})" if self.called_from else ""


@dataclass
class CallSite:
    call: cst.Call
    caller: FuncInfo | None  # None at module level


# the displays a static option's values may be written in (`transforms.OPTION_DISPLAYS`)
_DISPLAYS = tuple(getattr(cst, name) for name in OPTION_DISPLAYS)


def literal_ints(node: cst.BaseExpression) -> tuple[int, ...] | None:
    if isinstance(node, cst.Integer):
        return (int(node.value),)
    if isinstance(node, _DISPLAYS):
        out = []
        for el in node.elements:
            if not isinstance(el.value, cst.Integer):
                return None
            out.append(int(el.value.value))
        return tuple(out)
    return None


def literal_strs(node: cst.BaseExpression) -> tuple[str, ...] | None:
    if isinstance(node, cst.SimpleString):
        return (node.evaluated_value,)
    if isinstance(node, _DISPLAYS):
        out = []
        for el in node.elements:
            if not isinstance(el.value, cst.SimpleString):
                return None
            out.append(el.value.evaluated_value)
        return tuple(out)
    return None



def positional_args(call: cst.Call) -> list[cst.BaseExpression]:
    """The positional arguments of `call` written without a star."""
    return [a.value for a in call.args if a.keyword is None and not a.star]

"""The walk that finds Python control flow and conversions on traced values, once per file.

For every function that runs under a trace (`jaxfix.analysis.jit_contexts`), one walk of its
own body (not nested functions, lambdas or classes) yields the sites the traced-control-flow
rules report, each tagged with its code: a condition of `if`/`elif`/`x if c else y` and the
comparisons of builtin `max`/`min` (JAX301),
of `while` (JAX302), a `range()` bound of `for` (JAX303), `int()`/`.item()`... (JAX304),
`assert`/`and`/`or`/`not` (JAX305), a shape or slice bound (JAX307). A condition reported once
is covered: the `and` inside a reported `if` test is not reported again as JAX305.

Each rule decides and fixes the sites of its code (`SiteRule.decide`). The fixes of one function
are built together, in the order of the walk, whichever rule asks first: helpers named by fixes
(`loop_body`, `loop_body_2`) are numbered in the order their sites appear, as if one rule had
built them all.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import libcst as cst

from codemods.traced_control_flow.evidence import PREVIEW_DOC, PREVIEW_RULES, fix_by_evidence, site_in_preview
from codemods.traced_control_flow.fix_safety import is_proven_traced, proven
from codemods.traced_control_flow.split_condition import static_and_traced
from jaxfix.analysis import filememo
from jaxfix.analysis.guards import never_traced_at, tracer_test_helpers
from jaxfix.analysis.jit_contexts import (
    FuncInfo,
    JitContexts,
    jit_contexts,
    own_packages,
)
from jaxfix.analysis.screen_function import ScreenFunction
from jaxfix.analysis.static_values import defaults_to_a_container
from jaxfix.analysis.trace_screen import (
    MAY_NAME_A_TRANSFORM,
    NO_ENTRIES,
    ScreenEntries,
    may_see_less,
    screen_entries,
    trace_screen,
)
from jaxfix.analysis.trace_sites import own_sites
from jaxfix.analysis.transforms import COMPILE_TIME_EVAL, TRANSFORM_TOKENS
from jaxfix.analysis.walk import walk
from jaxfix.model import Finding, Fix, Safety
from jaxfix.rewriting.functions import FunctionRewrite
from jaxfix.rewriting.loops import LoopRewriter
from jaxfix.rulebase import Code, RuleContext

SCALAR_CONVERSIONS = frozenset({"int", "float", "bool", "complex"})
MINMAX = frozenset({"max", "min"})  # builtins that compare their arguments
# jax.numpy functions whose arguments at these positions / keywords are shapes or sizes
SHAPE_ARGS: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "zeros": ((0,), ("shape",)),
    "ones": ((0,), ("shape",)),
    "empty": ((0,), ("shape",)),
    "full": ((0,), ("shape",)),
    "arange": ((0, 1, 2), ("start", "stop", "step")),
    "eye": ((0, 1), ("N", "M")),
    "identity": ((0,), ("n",)),
    "linspace": ((2,), ("num",)),
    "reshape": ((1,), ("shape", "newshape")),
    "broadcast_to": ((1,), ("shape",)),
    "tri": ((0, 1), ("N", "M")),
    "repeat": ((), ("total_repeat_length",)),
}
# other jax functions whose output shape is an argument: qualified name -> positions, keywords
QUALIFIED_SHAPE_ARGS: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "jax.nn.one_hot": ((1,), ("num_classes",)),
    "jax.random.split": ((1,), ("num",)),
    "jax.random.normal": ((1,), ("shape",)),
    "jax.random.uniform": ((1,), ("shape",)),
    "jax.random.randint": ((1,), ("shape",)),
    "jax.random.exponential": ((1,), ("shape",)),
    "jax.random.gumbel": ((1,), ("shape",)),
    "jax.random.laplace": ((1,), ("shape",)),
    "jax.random.bernoulli": ((2,), ("shape",)),
    "jax.random.choice": ((2,), ("shape",)),
    "jax.random.categorical": ((3,), ("shape",)),
    "jax.random.truncated_normal": ((3,), ("shape",)),
}


def shape_arguments(qualname: str | None) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """(positions, keywords) of the arguments of `qualname` that are output shapes or sizes."""
    if not qualname:
        return (), ()
    if qualname in QUALIFIED_SHAPE_ARGS:
        return QUALIFIED_SHAPE_ARGS[qualname]
    if qualname.startswith("jax.numpy."):
        return SHAPE_ARGS.get(qualname.rsplit(".", 1)[-1], ((), ()))
    return (), ()


@dataclass(frozen=True, eq=False)
class Site:
    """One reportable construct. `kind` says which (`if`, `elif`, `ifexp`, `minmax`, `while`,
    `for`, `convert`, `method`, `assert`, `boolop`, `not`, `shape`, `slice`); `stmt` is the statement
    whose traced-value environment decides it; `traced` the traced operands a message names;
    `report` the node the finding points at when not `node` (the traced operand of a condition
    whose other operands are static)."""

    code: str
    kind: str
    node: cst.CSTNode
    stmt: cst.CSTNode | None
    traced: tuple[cst.BaseExpression, ...] = ()
    report: cst.CSTNode | None = None


class FunctionSites:
    """The sites of one traced function, with the rewrite helpers their fixes share."""

    def __init__(self, rewrite: FunctionRewrite, sites: list[Site]) -> None:
        self.rewrite = rewrite
        self.loops = LoopRewriter(rewrite)
        self.sites = sites
        self._fixes: dict[Site, Fix | None] | None = None

    def fixes_of(self, code: str) -> list[tuple[Site, Fix | None]]:
        """The sites of `code`, in walk order, each with its fix (None: no fix offered). The first
        call builds the fixes of every site of the function, in walk order, with each code's rule."""
        if self._fixes is None:
            self._fixes = {}
            for site in self.sites:
                rule = _RULES.get(site.code)
                fix = rule.decide(self, site) if rule is not None else None
                self._fixes[site] = fix_by_evidence(self.rewrite, site, proven(self.rewrite, site, fix))
        return [(site, self._fixes[site]) for site in self.sites if site.code == code]


def traced_sites(ctx: RuleContext) -> list[FunctionSites]:
    """The sites of every traced function of the file, computed once and shared by the rules."""
    return ctx.fact(traced_sites, _find_all)


_RULES: dict[str, type["SiteRule"]] = {}
_LAST_PREFILTERED: list = [None, False]  # (source, passes): the six rules ask about one text in turn


class SiteRule:
    """What the family's rules have in common, mixed into each (`class TracedIfRule(SiteRule, Rule)`).

    A rule gives its screen (`may_flag`, on the stdlib AST), its message for a site, and its
    decision (`decide`: the fix of a site, or a manual fix saying why not); this class runs them
    on the shared walk. Defining a rule class registers its `decide` for its code.
    """

    codes: ClassVar[tuple[Code, ...]]
    options_table = "traced-control-flow"  # the family's table before the split (it has no options)
    prefilter = TRANSFORM_TOKENS
    prefilter_pattern = MAY_NAME_A_TRANSFORM  # the traced code the rules report needs a jax transform
    follows_calls = True  # also in a file whose functions traced code elsewhere calls
    verify_reference = "eager"  # the original cannot run under jit: compare with it run eagerly

    # the stdlib-AST node types `may_flag` answers for (it is asked about no other)
    screened: ClassVar[tuple[type[ast.AST], ...]]

    @classmethod
    def doc(cls) -> str:
        """The rule's text with its `## Preview` section completed by what the family's rules share
        (`evidence.PREVIEW_DOC`: why helper, handled and tests paths are preview)."""
        text = super().doc()  # Rule.doc: next in each rule's MRO (SiteRule, Rule)
        head, marker, tail = text.partition("## Preview\n")
        own, gap, rest = tail.partition("\n\n")
        return f"{head}{marker}{own}\n{PREVIEW_DOC}{gap}{rest}"

    @staticmethod
    def may_flag(fn: ScreenFunction, node: ast.AST) -> bool:
        """Could the rule report `node`, a node of a `screened` type in traced function `fn`?
        Never False for a node the rule reports."""
        raise NotImplementedError

    @staticmethod
    def message(fn: FunctionRewrite, site: Site) -> str:
        """What is wrong at `site` (`check` appends what the fix does)."""
        raise NotImplementedError

    @staticmethod
    def decide(sites: FunctionSites, site: Site) -> Fix | None:
        """The fix of `site`, or a manual fix saying why there is none; built with the helpers of
        its function (`sites.rewrite`, `sites.loops`), which every fix there shares."""
        raise NotImplementedError

    def could_match(self, tree: ast.Module) -> bool:
        """Some function that may run under a trace has a node the rule may report
        (`jaxfix.analysis.trace_screen`: the stdlib-AST over-approximation of the walk)."""
        return self.codes[0].code in _screened(tree)

    def could_match_in(self, ctx: RuleContext) -> bool:
        """The same screen with what the run's project adds: calls of functions imported from the
        checked packages themselves are out of sight for the analysis (their result is never
        traced), so the screen, which saw them as library calls, may call less traced; and the
        functions traced code of other modules calls are entered (`screen_entries`: the engine
        asks only this screen of such a file, `Rule.follows_calls`)."""
        packages = own_packages(ctx)
        entries = screen_entries(ctx)
        if not may_see_less(ctx.tree, packages):
            if not entries:
                return True  # `could_match` said yes to this very screen
            packages = frozenset()  # the same screen, shared with the rules screening without them
        return self.codes[0].code in _screened(ctx.tree, packages, entries)

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        """The findings of the rule's code, the message ending with what the fix does (or, for a
        manual fix, why it must be done by hand)."""
        for fn in traced_sites(ctx):
            for site, fix in fn.fixes_of(self.codes[0].code):
                message = self.message(fn.rewrite, site) + fn.rewrite.info.traced_because()
                if fix is not None:
                    message += f"; manual: {fix.title}" if fix.safety is Safety.MANUAL else f"; {fix.title}"
                at = site.node if site.report is None else site.report
                finding = ctx.finding(self, site.code, at, message, fix)
                yield finding.in_preview(site_in_preview(fn.rewrite, site))

    @classmethod
    def passes_prefilter(cls, source: str) -> bool:
        """The text test, decided once per text for the six rules: they share it, and its pattern
        search costs as much as the AST screen."""
        if _LAST_PREFILTERED[0] is not source:
            _LAST_PREFILTERED[:] = [source, super().passes_prefilter(source)]
        return _LAST_PREFILTERED[1]

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        _RULES[cls.codes[0].code] = cls
        # JAX305: every site preview (`site_in_preview`); its fixes are still built with the other
        # sites' (`FunctionSites.fixes_of`, whichever rule asks first), so the names they take stay
        cls.preview_only = cls.codes[0].code in PREVIEW_RULES


_LAST_SCREENED: list = [None, None, frozenset()]  # (tree, (packages, entries), codes): the six rules ask in turn


@filememo.on_forget
def _forget_file() -> None:
    _LAST_PREFILTERED[:] = [None, False]
    _LAST_SCREENED[:] = [None, None, frozenset()]


def _screened(
    tree: ast.Module, packages: frozenset[str] = frozenset(), entries: ScreenEntries = NO_ENTRIES
) -> frozenset[str]:
    """The codes whose `may_flag` holds for some node of some function that may run under a trace
    (`packages`: the project's own, `entries`: the functions other modules' traced code calls,
    `trace_screen`): one pass over the tree for all the family's rules (each asking alone would
    walk it six times)."""
    if _LAST_SCREENED[0] is not tree or _LAST_SCREENED[1] != (packages, entries):
        asked: dict[type[ast.AST], list[type[SiteRule]]] = {}
        for rule in _RULES.values():
            for node_type in rule.screened:
                asked.setdefault(node_type, []).append(rule)
        found: set[str] = set()
        for fn in trace_screen(tree, packages, entries).traced_functions():
            for node in fn.own:
                for rule in asked.get(type(node), ()):
                    if rule.codes[0].code not in found and rule.may_flag(fn, node):
                        found.add(rule.codes[0].code)
            if len(found) == len(_RULES):
                break
        _LAST_SCREENED[:] = [tree, (packages, entries), frozenset(found)]
    return _LAST_SCREENED[2]


def if_chain(n: cst.If) -> list[cst.If]:
    """`if` followed by its `elif`s."""
    chain = [n]
    while isinstance(chain[-1].orelse, cst.If):
        chain.append(chain[-1].orelse)
    return chain


def _find_all(ctx: RuleContext) -> list[FunctionSites]:
    jc: JitContexts = ctx.fact(JitContexts, jit_contexts)
    found = []
    for info in list(jc.traced_functions()):
        rewrite = FunctionRewrite(ctx, jc, info)
        sites = [s for s in _SiteFinder(rewrite, info).run(ctx) if is_proven_traced(rewrite, s)]
        found.append(FunctionSites(rewrite, sites))
    return found


# constructs whose condition must be a Python bool: code, kind, the condition
_TESTED = {
    cst.While: ("JAX302", "while", lambda n: n.test),
    cst.IfExp: ("JAX301", "ifexp", lambda n: n.test),
    cst.Assert: ("JAX305", "assert", lambda n: n.test),
    cst.BooleanOperation: ("JAX305", "boolop", lambda n: n.left),  # the right operand is returned as is
}


# the node types `_SiteFinder.visit` may make a site of
_SITE_TYPES = frozenset({cst.If, *_TESTED, cst.For, cst.UnaryOperation, cst.Call, cst.Subscript})


class _SiteFinder:
    """One walk of a traced function's own body; `covered` holds the parts of reported conditions."""

    def __init__(self, rewrite: FunctionRewrite, info: FuncInfo) -> None:
        self.rewrite = rewrite
        self.info = info
        self.facts = info.facts
        self.names = rewrite.names
        self.covered: set[cst.CSTNode] = set()

    def run(self, ctx: RuleContext) -> list[Site]:
        found = (self.visit(n, stmt) for n, stmt in own_sites(self.info, ctx))
        return [site for site in found if site is not None and not self._at_compile_time(ctx, site.node)]

    def _at_compile_time(self, ctx: RuleContext, node: cst.CSTNode) -> bool:
        """`node` is inside `with jax.ensure_compile_time_eval():` (`transforms.COMPILE_TIME_EVAL`)."""
        parent = ctx.parent(node)
        while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Lambda)):
            if isinstance(parent, cst.With) and any(
                isinstance(item.item, cst.Call) and self.names.qualify(item.item.func) in COMPILE_TIME_EVAL
                for item in parent.items
            ):
                return True
            parent = ctx.parent(parent)
        return False

    def visit(self, n: cst.CSTNode, stmt) -> Site | None:
        # `type(n) is` where libcst's classes are concrete: `isinstance` against them goes through
        # `ABCMeta.__instancecheck__`, and this runs for every node of every traced function
        kind = type(n)
        if kind not in _SITE_TYPES or n in self.covered:
            return None
        if kind is cst.If:
            return self.if_site(n, stmt)
        tested = _TESTED.get(kind)
        if tested is not None:
            code, kind, condition = tested
            if kind == "boolop" and defaults_to_a_container(n):
                return None
            at = n if kind == "while" else stmt  # a loop's condition is read before every trip
            if not self.facts.test_traced(condition(n), at) or self._names_guarded(n, condition(n)):
                return None
            self.cover(condition(n))
            return Site(code, kind, n, at)
        if kind is cst.For:
            it = n.iter
            if isinstance(it, cst.Call) and self.names.qualify(it.func) == "range" and self.facts.traced(it, n):
                self.covered.add(it)
                return Site("JAX303", "for", n, n)
            return None
        if kind is cst.UnaryOperation and isinstance(n.operator, cst.Not):
            traced = self.facts.test_traced(n.expression, stmt) and not self._names_guarded(n, n.expression)
            return Site("JAX305", "not", n, stmt) if traced else None
        if kind is cst.Call:
            return self.conversion_site(n, stmt) or self.minmax_site(n, stmt) or self.shape_site(n, stmt)
        if kind is cst.Subscript:
            return self.slice_site(n, stmt)
        return None

    def cover(self, expr: cst.CSTNode) -> None:
        """Mark the boolean structure of a reported condition so it is not reported again."""
        self.covered.add(expr)
        if isinstance(expr, cst.BooleanOperation):
            self.cover(expr.left)
            self.cover(expr.right)
        elif isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            self.cover(expr.expression)

    def if_site(self, n: cst.If, stmt) -> Site | None:
        chain = if_chain(n)
        traced_tests = [
            i
            for i, branch in enumerate(chain)
            if self.facts.test_traced(branch.test, branch) and not self._names_guarded(branch, branch.test)
        ]
        if not traced_tests:
            return None
        for branch in chain:
            self.covered.add(branch)
            self.cover(branch.test)
        kind, node = ("elif", chain[traced_tests[0]]) if traced_tests[0] != 0 else ("if", n)
        mixed = static_and_traced(self.rewrite, node.test, node)
        if mixed is None:
            return Site("JAX301", kind, node, stmt)
        traced = tuple(mixed[1])
        return Site("JAX301", kind, node, stmt, traced, report=traced[0] if len(traced) == 1 else None)

    def conversion_site(self, n: cst.Call, stmt) -> Site | None:
        q = self.names.qualify(n.func)
        if (
            q in SCALAR_CONVERSIONS
            and len(n.args) == 1
            and not n.args[0].star
            and self.facts.traced(n.args[0].value, stmt)
        ):
            return None if self.guarded(n, n.args[0].value) else Site("JAX304", "convert", n, stmt, (n.args[0].value,))
        if (
            isinstance(n.func, cst.Attribute)
            and n.func.attr.value in ("item", "tolist")
            and not n.args
            and self.facts.traced(n.func.value, stmt)
        ):
            return None if self.guarded(n, n.func.value) else Site("JAX304", "method", n, stmt, (n.func.value,))
        return None

    def _names_guarded(self, at: cst.CSTNode, test: cst.BaseExpression) -> bool:
        """Every traced name `test` reads is one a tracer test around `at` rules out (`if not
        is_traced(flag): if flag: ...`)."""
        env = self.facts.env_before(at)
        names = {n.value for n in _names_in(test) if self.facts.name_traced(n.value, env)}
        return bool(names) and all(self.guarded(at, cst.Name(name)) for name in names)

    def guarded(self, n: cst.CSTNode, value: cst.BaseExpression) -> bool:
        """`if not isinstance(p, jax.core.Tracer): p = p.item()` (or through the module's own
        tracer-test helper, `guards.tracer_test_helpers`): the conversion never sees a tracer."""
        ctx = self.rewrite.ctx
        helpers = ctx.fact(tracer_test_helpers, lambda c: tracer_test_helpers(c.module, c.names.qualify))
        root = value
        while isinstance(root, (cst.Attribute, cst.Call, cst.Subscript)):  # `batch.max()`: `batch`
            root = root.func if isinstance(root, cst.Call) else root.value
        return isinstance(root, cst.Name) and never_traced_at(n, root.value, ctx.parent, self.names.qualify, helpers)

    def minmax_site(self, n: cst.Call, stmt) -> Site | None:
        """Builtin `max(a, b)` / `min(xs)` on traced values: it compares them with `>`/`<` and takes
        the truth of the result (a `key=` decides on the key's results instead: not reported)."""
        if not isinstance(n.func, cst.Name) or self.names.qualify(n.func) not in MINMAX:
            return None
        if n.func.value in self.rewrite.jc.module_funcs or n.func.value in self.facts.locals:
            return None
        if any(a.keyword is not None and a.keyword.value == "key" for a in n.args):
            return None
        traced = tuple(a.value for a in n.args if a.keyword is None and self.facts.traced(a.value, stmt))
        return Site("JAX301", "minmax", n, stmt, traced) if traced else None

    def shape_site(self, n: cst.Call, stmt) -> Site | None:
        positions, keywords = shape_arguments(self.names.qualify(n.func))
        if not positions and not keywords:
            return None
        pos = [a.value for a in n.args if a.keyword is None and not a.star]
        shape_args = [pos[i] for i in positions if i < len(pos)]
        shape_args += [a.value for a in n.args if a.keyword is not None and a.keyword.value in keywords]
        traced = tuple(a for a in shape_args if self.facts.traced(a, stmt))
        return Site("JAX307", "shape", n, stmt, traced) if traced else None

    def slice_site(self, n: cst.Subscript, stmt) -> Site | None:
        bounds = []
        for el in n.slice:
            if isinstance(el.slice, cst.Slice):
                bounds += [b for b in (el.slice.lower, el.slice.upper, el.slice.step) if b is not None]
        traced = tuple(b for b in bounds if self.facts.traced(b, stmt))
        return Site("JAX307", "slice", n, stmt, traced) if traced else None


def _names_in(expr: cst.BaseExpression) -> list[cst.Name]:
    """The names `expr` reads: not an attribute's name, nothing inside a lambda. (A visitor class
    made once, walked with `walk`: libcst's own visit rebuilt every node it passed.)"""
    names = _NamesRead()
    walk(expr, names)
    return names.found


class _NamesRead(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[cst.Name] = []

    def visit_Name(self, n: cst.Name) -> None:
        self.found.append(n)

    def visit_Attribute(self, n: cst.Attribute) -> bool:
        walk(n.value, self)
        return False

    def visit_Lambda(self, n: cst.Lambda) -> bool:
        return False

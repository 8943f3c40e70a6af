"""The hoist planner's reading of captured values (part of `planner._Planner`): which names a
transformed function captures, what each one is (`captures` decides where it may go), what a
loop changes, and the checks that make a hoist manual (a rebound name, an option read per call).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import libcst as cst

from codemods.jit_placement.captures import Captured, Decision, ManualFix, above, leave
from codemods.jit_placement.site import Site
from codemods.jit_placement.sites import sibling_of
from codemods.jit_placement.transform_kinds import WRAPPING
from jaxfix.analysis.scopes import names_read, param_names
from jaxfix.analysis.static_positions import static_uses, uses_of
from jaxfix.analysis.walk import walk

_Manual = ManualFix  # the planner's name for "the fix must be done by hand"

_MUTATING_METHODS = frozenset(
    {"append", "extend", "insert", "remove", "pop", "clear", "update", "setdefault", "popitem", "add", "discard", "sort", "reverse"}
)


class Values:
    """What the transformed function captures and whether it may move (`planner._Planner`)."""

    # captured values -----------------------------------------------------------
    def _captures(self, names: Iterable[str], at: cst.CSTNode, loops: list[cst.CSTNode]) -> tuple[list[str], list[str]]:
        """Split the names a callable reads into (become arguments, risky globals)."""
        variant_globals: set[str] = set()
        for loop in loops:
            variant_globals |= self.idx.assigned_in(loop)
        args, risky = [], []
        for name in names:
            scope = self.idx.resolve(name, at)
            if scope is None:
                continue
            if isinstance(scope, cst.Module):
                if name in variant_globals:
                    args.append(name)
                elif name in self.idx.global_declarations() or len(self.idx.module_bindings(name)) > 1:
                    risky.append(name)
                continue
            if isinstance(scope, cst.ClassDef):
                raise _Manual(f"it reads class attribute `{name}`")
            args.append(name)
        return args, risky

    def _arg_needs(self, name: str, body: cst.CSTNode, depth: int = 0) -> tuple[str | None, bool]:
        """(why `name` must be static, or None; whether every use is numeric), following calls into
        functions defined at module level in this file."""
        uses = static_uses(body, [name], self.qualify)
        if name in uses:
            return uses[name], False
        numeric = True
        for kind, node in uses_of(body, name, self.qualify):
            if kind == "numeric":
                continue
            if kind == "call" and depth < 3:
                definition = self._module_def(node.func)
                params = self._params_for(node, name, definition) if definition is not None else []
                if params:
                    for param in params:
                        why, num = self._arg_needs(param, definition.body, depth + 1)
                        if why:
                            return f"{why} in {definition.name.value}()", False
                        numeric = numeric and num
                    continue
            numeric = False
        return None, numeric

    def _params_for(self, call: cst.Call, name: str, definition: cst.FunctionDef) -> list[str]:
        plain = [p.name.value for p in (*definition.params.posonly_params, *definition.params.params)]
        everything = param_names(definition.params)
        found = []
        position = 0
        for arg in call.args:
            if arg.star:
                return []
            if arg.keyword is None:
                if isinstance(arg.value, cst.Name) and arg.value.value == name:
                    if position >= len(plain):
                        return []
                    found.append(plain[position])
                position += 1
            elif isinstance(arg.value, cst.Name) and arg.value.value == name:
                if arg.keyword.value not in everything:
                    return []
                found.append(arg.keyword.value)
        return found

    def _is_instance_param(self, name: str, at: cst.CSTNode) -> bool:
        scope = self.idx.resolve(name, at)
        if not isinstance(scope, cst.FunctionDef) or not isinstance(self.idx.enclosing_scope(scope), cst.ClassDef):
            return False
        params = [*scope.params.posonly_params, *scope.params.params]
        is_static = any(self.qualify(d.decorator) == "staticmethod" for d in scope.decorators)
        return bool(params) and not is_static and params[0].name.value == name

    def changed_in(self, loop: cst.CSTNode) -> set[str]:
        """Names a loop rebinds, or whose object it changes in place (`x.a = ...`, `x[i] = ...`,
        `x.append(...)`): a value captured from before the loop stays the same only without both."""
        key = id(loop)
        if key not in self._changed:
            names = set(self.idx.assigned_in(loop))
            walk(loop, _ChangedInPlace(names, self.qualify))
            self._changed[key] = names
        return self._changed[key]

    def _all_loops_change(self, site: Site) -> set[str]:
        return self.changed_in(site.loops[-1]) if site.loops else set()

    def _name_values(
        self, site: Site, names: list[str], body: cst.CSTNode, at: cst.CSTNode, loop: cst.CSTNode | None
    ) -> list[Captured]:
        """The captured names of a lambda or nested def as `Captured` values; `loop`: the loop the
        hoist goes above (None: the hoist leaves the function)."""
        changed = self.changed_in(loop) if loop is not None else self._all_loops_change(site)
        out = []
        for name in names:
            if self._is_instance_param(name, at):
                raise _Manual(
                    f"it captures `{name}`, the instance; jit the method once (in `__init__`, or with the "
                    "instance as a pytree or static argument)"
                )
            why, numeric = self._arg_needs(name, body)
            variant = site.function is None or name in changed
            out.append(Captured(name, name, self.kinds.of_name(name, at), variant, why, numeric))
        return out

    def _decide(self, site: Site, values_for: Callable[[cst.CSTNode | None], list[Captured]]) -> Decision:
        """Where the hoist goes and which way each captured value goes (see `captures`): out of the
        function when every value can leave it safely; else just above the outermost loop in which
        the values that cannot leave do not change, when that is safer; else out of the function
        with what makes it unsafe; else manual."""
        if site.function is None:
            return leave(values_for(None), factory=False, per="iteration")  # a module-level loop
        per = "iteration" if site.loops else "call"
        try:
            leaving, error = leave(values_for(None), factory=True, per=per), None
        except ManualFix as exc:
            leaving, error = None, exc
        if site.binding is not None and all(
            len(self.idx.enclosing_loops(call)) > len(site.loops) for call in site.calls
        ) and (leaving is None or leaving.unsafe):
            # already made once per iteration of its loop and reused in an inner one (a hoist above
            # the inner loop): leaving the function is all that is left, and it is not safe
            why = str(error) if leaving is None else leaving.unsafe[0]
            raise _Manual(f"the jitted function is made once per iteration and reused in the inner loop; {why}")
        if site.loops and (leaving is None or leaving.unsafe):
            best = None
            for loop in reversed(site.loops):  # outermost first: the fewest compiles
                try:
                    staying = above(values_for(loop), loop)
                except ManualFix:
                    continue
                if best is None or len(staying.unsafe) < len(best.unsafe):
                    best = staying
            if best is not None and (leaving is None or len(best.unsafe) < len(leaving.unsafe)):
                return best  # safer: what cannot leave the function stays captured
        if leaving is None:
            raise error
        return leaving

    def _check_static_under(self, site: Site, static: list[str]) -> None:
        if static and any(k in ("pmap", "filter_pmap") for k in site.kinds):
            raise _Manual("captured static values under pmap need static_broadcasted_argnums; hoist by hand")
        if static and any(k in WRAPPING for k in site.kinds) and site.kinds[0] != "jit":
            raise _Manual("captured static values under this transform chain; hoist by hand")

    @staticmethod
    def _add_risky(decision: Decision, risky: list[str]) -> None:
        for g in risky:
            phrase = f"global `{g}` may be rebound; the hoisted function keeps the value it was traced with"
            decision.phrases.append(phrase)
            decision.unsafe.append(phrase)

    def _check_options(self, site: Site, at: cst.CSTNode) -> None:
        """The transform options must be the same every time (literals or invariant globals)."""
        names: set[str] = set()
        for call in site.chain:
            for arg in call.args[1:]:
                names |= names_read(arg.value)
            names |= names_read(call.func)
        args, risky = self._captures(sorted(names), at, site.loops)
        if args:
            raise _Manual(f"the transform's options read `{args[0]}`, which is local or changes per iteration")
        return None

    def _has_option(self, call: cst.Call, names: tuple[str, ...]) -> bool:
        return (
            any(a.keyword is not None and a.keyword.value in names for a in call.args[1:])
            or len(call.args) > 1
            and any(a.keyword is None for a in call.args[1:])
        )

    def _inside(self, node: cst.CSTNode, loop: cst.CSTNode | None) -> bool:
        return loop is not None and any(a is loop for a in self.idx.ancestors(node))

    def _check_not_rebound(self, site: Site, names: set[str]) -> None:
        """A partial evaluates its bound values once, at the binding; moved to the calls they are
        evaluated there, so none of the names they read may change in between."""
        block = self.idx.parent(site.binding)
        siblings = list(block.body)
        index = next(i for i, s in enumerate(siblings) if s is site.binding)
        last = max(
            next(i for i, s in enumerate(siblings) if s is sibling_of(self.idx, call, siblings)) for call in site.calls
        )
        for i in range(index + 1, last + 1):
            stmt = siblings[i]
            if i < last or not isinstance(stmt, cst.SimpleStatementLine):
                changed = names & self.idx.assigned_in(stmt)
                if changed:
                    raise _Manual(
                        f"`{sorted(changed)[0]}` changes between the binding and a call; the partial keeps the value it had at the binding"
                    )


class _ChangedInPlace(cst.CSTVisitor):
    """Adds to `names` the names whose object a loop changes in place (`_Planner.changed_in`)."""

    def __init__(self, names: set[str], qualify) -> None:
        super().__init__()
        self.names, self.qualify = names, qualify

    def _target(self, target: cst.BaseExpression) -> None:
        while isinstance(target, (cst.Attribute, cst.Subscript)):
            target = target.value
            if isinstance(target, cst.Name):
                self.names.add(target.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._target(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target)

    def visit_Del(self, node: cst.Del) -> None:
        self._target(node.target)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in _MUTATING_METHODS
            and isinstance(func.value, cst.Name)
            and self.qualify(func.value) == func.value.value  # not a module: `jnp.sort`
        ):
            self.names.add(func.value.value)


def in_order(names: set[str], node: cst.CSTNode) -> list[str]:
    """`names` in the order they first appear under `node` (then any not found, sorted)."""
    seen: list[str] = []
    walk(node, _FirstSeen(names, seen))
    return seen + sorted(names - set(seen))


class _FirstSeen(cst.CSTVisitor):
    def __init__(self, names: set[str], seen: list[str]) -> None:
        super().__init__()
        self.names, self.seen = names, seen

    def visit_Name(self, n: cst.Name) -> None:
        if n.value in self.names and n.value not in self.seen:
            self.seen.append(n.value)


def reads_options(site: Site) -> set[str]:
    names: set[str] = set()
    for call in site.chain:
        names |= names_read(call.func)
        for arg in call.args[1:]:
            names |= names_read(arg.value)
    return names

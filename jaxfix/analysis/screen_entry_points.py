"""Where a module's code enters a trace, for the trace screen (`trace_screen.TraceScreen`): the
decorators and calls that qualify to a JAX transform or a lax body, the functions they enter with
the parameters kept static, and the functions other modules' traced code calls (`entries`). The
loose side of `jit_entries`; split from `trace_screen` so its walk reads apart from the entries,
and mixed into the one screen of the module as `jit_entries` is into `JitContexts`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jaxfix.analysis import astscan, pytrees, screen_facts
from jaxfix.analysis.jit_contexts import BODY_ARGS, JIT_NAMES, PARTIAL_NAMES, PASS_THROUGH, VMAP_NAMES
from jaxfix.analysis.screen_function import ScreenFunction
from jaxfix.analysis.transforms import OLD_STYLE_COND_BODIES, is_old_style_cond, lax_body_arity

_TRANSFORMS = JIT_NAMES | VMAP_NAMES | PASS_THROUGH
_ENTRY_NAMES = _TRANSFORMS | frozenset(BODY_ARGS)  # what a call enters a trace through
_ENTRY_LAST_NAMES = frozenset(name.rpartition(".")[2] for name in _ENTRY_NAMES)


class ScreenEntryPoints:
    """Mixed into `TraceScreen`, which sets the attributes these methods read (`names`, `entries`,
    `defs_by_name`, `method_defs`, `class_of`, `calls`, `assigned_to`, `aliases`) and defines the
    lookups they use (`info_of`, `_resolve`, `def_parent`: `screen_scopes`)."""

    def _transform_of(self, expr: ast.AST) -> tuple[str, ast.Call | None] | None:
        qualify = self.names.qualify_ast
        qual = qualify(expr)
        if qual in _TRANSFORMS:
            return qual, None
        if isinstance(expr, ast.Call):
            fq = qualify(expr.func)
            pos = screen_facts.positional(expr)
            if fq in PARTIAL_NAMES and pos and qualify(pos[0]) in _TRANSFORMS:
                return qualify(pos[0]), expr
            if fq in _TRANSFORMS and not pos:
                return fq, expr
        return None

    def _unwrap(self, expr: ast.AST) -> tuple[ast.AST, bool]:
        """Through `partial(...)` and nested transforms to the function; True if anything was peeled."""
        peeled = False
        while isinstance(expr, ast.Call):
            q = self.names.qualify_ast(expr.func)
            pos = screen_facts.positional(expr)
            if not pos or not (q in PARTIAL_NAMES or q in _TRANSFORMS):
                break
            expr, peeled = pos[0], True
        return expr, peeled

    def _enter(self, info: ScreenFunction, traced: set[str]) -> bool:
        grew = not info.in_trace or not traced <= info.traced_params
        info.in_trace = True
        info.traced_params |= traced
        return grew

    def _names_an_entry(self, tree: ast.Module) -> bool:
        """Could `_find_entries` enter a function: a decorator or a call it would take for a
        transform or a lax body? Asked of the module's calls and statements (`astscan.calls`,
        `pytrees.module_statements`: listed once per file, for the call graph too) before the
        walk of every node `_collect` makes, which a module with no entry never needs."""
        for node in pytrees.module_statements(tree):
            is_def = type(node) is ast.FunctionDef or type(node) is ast.AsyncFunctionDef
            if is_def and any(self._transform_of(deco) is not None for deco in node.decorator_list):
                return True
        return any(
            (qual in _TRANSFORMS and screen_facts.positional(call)) or qual in BODY_ARGS
            for call, qual, _ in self._transform_calls(astscan.calls(tree))
        )

    def _transform_calls(self, calls: list[ast.Call]) -> Iterator[tuple[ast.Call, str | None, tuple | None]]:
        """(call, the name its function qualifies to, `_transform_of` a called call) of each of
        `calls` that may name a transform or a lax body: its function's last name is one's, or a
        name an import binds to one (`from jax import jit as J`). Most calls are not qualified."""
        qualify = self.names.qualify_ast
        aliases = {local for local, target in self.names.bindings.items() if target in _ENTRY_NAMES}
        for call in calls:
            func = call.func
            kind = type(func)
            if kind is ast.Attribute:
                if func.attr not in _ENTRY_LAST_NAMES:
                    continue
            elif kind is ast.Name:
                if func.id not in _ENTRY_LAST_NAMES and func.id not in aliases:
                    continue
            elif kind is not ast.Call:
                continue  # no dotted name: qualifies to nothing
            found = self._transform_of(func) if kind is ast.Call else None
            yield call, (qualify(func) if found is None else found[0]), found

    def _find_entries(self) -> None:
        for defs in self.defs_by_name.values():
            for node in defs:
                found = [f for deco in node.decorator_list if (f := self._transform_of(deco)) is not None]
                # As `JitContexts._find_entries`: a jit or vmap decorator enters its function; a
                # pass-through one (grad, checkpoint, custom_vjp) does not (its body is traced
                # where it is called under a trace, which propagation follows). The static
                # arguments of a jit among the decorators are Python values under every one
                # (`JitContexts._entry` takes them out of the whole entry). Pallas kernels stack
                # `custom_vjp` on `partial(jax.jit, static_argnames=...)`: entering every parameter
                # there admitted six jax files to the libcst analysis for nothing (issue #33).
                if any(qual in JIT_NAMES or qual in VMAP_NAMES for qual, _ in found):
                    info = self.info_of(node)
                    statics = set().union(*(screen_facts.statics(call, info) for qual, call in found if qual in JIT_NAMES))
                    self._enter(info, set(info.params) - statics)
        for call, qual, found in self._transform_calls(self.calls):
            pos = screen_facts.positional(call)
            if (qual in _TRANSFORMS) and pos:
                options = call if found is None else found[1]
                target, peeled = self._unwrap(pos[0])
                for info in self._resolve(target, allow_attr=True, call=call):
                    offset = 1 if info.is_method and isinstance(target, ast.Attribute) else 0  # `jax.jit(self.f, ...)`
                    statics = screen_facts.statics(options, info, offset) if qual in JIT_NAMES and not peeled else set()
                    self._enter(info, set(info.params) - statics)
                alias = self.assigned_to.get(id(call))
                if alias is not None:
                    self.aliases.setdefault(alias, []).extend(self._resolve(target, allow_attr=False, call=call))
                    self._aliases_of = None
            if qual in BODY_ARGS:
                plain = not call.keywords and not any(type(a) is ast.Starred for a in call.args)
                second = pos[1] if len(pos) > 1 else None
                old_cond = is_old_style_cond(
                    qual, len(pos), isinstance(second, (ast.Tuple, ast.List, ast.Constant)), plain
                )
                arity = 1 if old_cond else lax_body_arity(qual, len(call.args), plain)
                for fn_expr in screen_facts.body_args(call, OLD_STYLE_COND_BODIES if old_cond else BODY_ARGS[qual]):
                    if qual not in VMAP_NAMES and isinstance(fn_expr, ast.Name) and not self._resolve(fn_expr, allow_attr=False, call=call):
                        # a name bound to `partial(body, ...)` (`JitContexts._partial_body`): any
                        # partial call assigned to that name, wherever (the screen admits more).
                        # Not for a vmap, which the analysis enters only through a name that means
                        # a def (`_unwrap`, `_resolve_callee`), as the transform branch above does:
                        # `jax.vmap(inner)` with `inner = partial(decode_attn_unbatched, ...)` in
                        # jax's decode and paged attention admitted both files for nothing (#33)
                        bound = [
                            c for c in self.calls
                            if self.assigned_to.get(id(c)) == fn_expr.id and self.names.qualify_ast(c.func) in PARTIAL_NAMES
                        ]
                        for c in bound:
                            for info in self._resolve(self._unwrap(c)[0], allow_attr=False, call=c):
                                passed = _left_open(c, info, arity)
                                passed = set(info.params if passed is None else passed)
                                self._enter(info, passed)
                                info.external_traced |= set(info.positional) if passed == set(info.params) else passed
                    target, _ = self._unwrap(fn_expr)
                    inline = qual not in VMAP_NAMES and type(fn_expr) is ast.Call and self.names.qualify_ast(fn_expr.func) in PARTIAL_NAMES
                    for info in self._resolve(target, allow_attr=True, call=call):
                        passed = _left_open(fn_expr, info, arity) if inline else None
                        if passed is not None:
                            # `cond(p, partial(body, j, var), ...)`: as for a name bound so, above
                            # (jax's Pallas interpreter binds a Python index `j` so)
                            self._enter(info, set(passed))
                            info.external_traced |= set(passed)
                            continue
                        self._enter(info, set(info.params))
                        # operands reach defaulted parameters (`JitContexts`: the analysis enters so too)
                        passed = info.positional if arity is None else info.positional[:arity]
                        info.external_traced |= set(passed)
        self._enter_external()

    def _enter_external(self) -> None:
        """The functions traced code of other modules calls (`entries`), entered with the
        parameters it passes traced, as `JitContexts._enter_external` enters them: "f" is a def
        outside classes and functions, "Cls.m" a def directly in the body of a class `Cls` outside
        functions. The analysis enters only a name that means one def; the screen enters every
        def the name may mean (a module defining `f` twice: both). Those parameters stay traced
        whatever their default (`static_params`)."""
        for name, traced in self.entries:
            owner, _, fname = name.rpartition(".")
            if owner:
                defs = [d for d in self.method_defs.get(fname, ()) if self.class_of[id(d)].name == owner]
            else:
                defs = [d for d in self.defs_by_name.get(fname, ()) if id(d) not in self.class_of]
            for node in defs:
                if self.def_parent.get(id(node)) is None:  # outside functions (or unknown: entered)
                    info = self.info_of(node)
                    passed = traced & set(info.params)
                    info.external_traced |= passed
                    self._enter(info, passed)


def _left_open(partial: ast.Call, info: ScreenFunction, arity: int | None) -> list[str] | None:
    """The parameters of `info` a lax call passes its operands to when its body is `partial(f, ...)`
    (`f` is `info`), as `JitContexts` enters such a body: the positional parameters the partial
    leaves open, the first `arity` of them when the lax call's arity is known. Those the partial
    binds are traced only where its arguments are, which the propagation sees as a call
    (`TraceScreen._propagate_calls`). `fori_loop(lo, hi, partial(kv_loop, causal=True), init)` in
    jax's `attention_mgpu.py`: `causal` is a Python bool, and entering it traced admitted the file
    to the libcst analysis for nothing (0.17 s; issue #33 item 7). None where the partial cannot be
    read so (a `*` or `**` argument, or a function not named directly): every parameter, as before."""
    if (
        not partial.args
        or type(partial.args[0]) is not ast.Name
        or any(type(a) is ast.Starred for a in partial.args)
        or any(k.arg is None for k in partial.keywords)
    ):
        return None
    bound = {k.arg for k in partial.keywords}
    open_params = [p for p in info.positional[len(partial.args) - 1 :] if p not in bound]
    return open_params if arity is None else open_params[:arity]

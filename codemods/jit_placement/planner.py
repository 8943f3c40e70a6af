"""The hoist planner shared by JAX201-JAX203: the fix for each site (`sites.find_sites`).

`hoists(ctx)` is computed once per file (`ctx.fact`) and read by the three rules, each keeping
the sites of its own code. A site's `Hoist` holds its fix, or a `manual` fix saying why it
cannot be done automatically. The transformed function goes to the nearest place where it is
the same object every time it runs (`captures` decides which, value by value):

- out of the function, to module level, with the values it captured as arguments (traced, or
  `static_argnames`), or, when some of them are hashable and do not change in the function (a
  frozen config, a mode string), behind a cached factory keyed on those (`functools.cache`),
  which leaves them captured: one compile per distinct key, 0 in the steady state;
- just above the loop, closure intact, when a captured value cannot leave the function (its kind
  is unknown, it is unhashable, or a function made in it) but does not change in the loop: one
  compile per run of the function instead of one per iteration;
- a module-level loop's wrapper goes before the loop; a bound method's before the outermost
  loop where its object does not change.

All sites of a file are planned together, in source order, because they share the pool of new
names (`_body_jit`, `_body_jit_2`, ...).

The planner (`_Planner`) is one object per file in four modules, one job each: this one (the
entry, `Hoist`, the choice of fix per kind of site and the new names), `plan_fixes` (the fix of
each kind of site), `plan_values` (what the transformed function captures and whether it may
move) and `plan_layout` (where the hoisted code goes, the text it writes, the finished `Fix`).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from codemods.jit_placement.captures import ManualFix
from codemods.jit_placement.plan_fixes import SiteFixes
from codemods.jit_placement.plan_layout import Layout
from codemods.jit_placement.plan_values import Values
from codemods.jit_placement.site import Site
from codemods.jit_placement.sites import find_sites
from codemods.jit_placement.transform_kinds import MODULE_FUNCTION, NEW_OBJECT
from jaxfix.analysis.scopes import ScopeIndex
from jaxfix.analysis.value_kinds import ValueKinds
from jaxfix.model import Fix, ImportRequest
from jaxfix.rulebase import RuleContext

_Manual = ManualFix  # the planner's name for "the fix must be done by hand"


@dataclass(frozen=True)
class Hoist:
    """A site and its planned fix: `safe`, `unsafe` or `manual`; `note` says what makes it unsafe
    or manual, or is empty."""

    site: Site
    fix: Fix
    note: str

    def message(self, text: str) -> str:
        """A finding's message: the rule's `text`, then the note in parentheses."""
        return f"{text} ({self.note})" if self.note else text


def hoists(ctx: RuleContext) -> tuple[Hoist, ...]:
    """Every site of the file with its planned fix, in source order; computed once per file."""
    return ctx.fact(hoists, _plan_file)


def _plan_file(ctx: RuleContext) -> tuple[Hoist, ...]:
    idx = ctx.fact(ScopeIndex, ScopeIndex.of)
    planner = _Planner(ctx, idx)
    return tuple(planner.hoist(site) for site in find_sites(ctx, idx))


class _Planner(SiteFixes, Layout, Values):
    """The planner of one file: `hoist(site)` for each site in source order (the three mixins
    are its parts: `plan_fixes`, `plan_layout`, `plan_values`)."""

    def __init__(self, ctx: RuleContext, idx: ScopeIndex) -> None:
        self.ctx = ctx
        self.idx = idx
        self.qualify = ctx.names.qualify
        self._taken: set[str] | None = None  # names a new binding must avoid; only fixes need them
        self.hoisted_defs: set[str] = set()
        self.imports: list[ImportRequest] = []
        self.kinds = ValueKinds.of(ctx)
        self._changed: dict[int, set[str]] = {}

    @property
    def taken(self) -> set[str]:
        if self._taken is None:
            self._taken = set(self.ctx.names.used_names)
        return self._taken

    # -- fixes ----------------------------------------------------------------------
    def hoist(self, site: Site) -> Hoist:
        """The site's fix, or a manual one saying why it must be done by hand."""
        try:
            fix, note = self.plan_fix(site)
        except _Manual as exc:
            fix, note = self.ctx.manual(f"Hoist by hand: {exc}"), str(exc)
        return Hoist(site, fix, note)

    def plan_fix(self, site: Site) -> tuple[Fix, str]:
        self.imports = []
        if site.manual:
            raise _Manual(site.manual)
        if site.kind == "local callable":
            raise _Manual(
                "the callable is assigned to a local name; move its definition and the transform to module level"
            )
        if site.kind == "bound method":
            return self._fix_bound_method(site)
        if site.kind == NEW_OBJECT:
            return self._fix_new_object_method(site)
        if site.kind == MODULE_FUNCTION:
            return self._fix_module_function(site)
        if site.kind in ("nested def", "decorated nested def"):
            return self._fix_nested_def(site)
        if isinstance(site.target, cst.Lambda):
            return self._fix_lambda(site, site.target)
        return self._fix_partial(site, site.target)

    # spelling ------------------------------------------------------------------------
    def _new_name(self, base: str, site: Site) -> str:
        base = base.strip("_") or "fn"
        suffix = "_".join(reversed([k for k in site.kinds]))
        return self._fresh(f"_{base}_{suffix}")

    def _fresh(self, stem: str) -> str:
        return self.ctx.fresh_name(stem, self.taken)

    def _lambda_base(self, site: Site, lam: cst.Lambda) -> str:
        callee = lam.body.func if isinstance(lam.body, cst.Call) else None
        if isinstance(callee, cst.Name) and self._module_def(callee) is not None:
            return callee.value
        if isinstance(site.function, cst.FunctionDef):
            return f"{site.function.name.value}_lambda"
        return "lambda"

    @staticmethod
    def _binding_name(site: Site) -> str | None:
        """The user's name for a bound site (`f = jax.jit(...)`): a hoist above the loop keeps it."""
        if site.binding is None:
            return None
        return site.binding.body[0].targets[0].target.value

"""Where JAX101's field-style fix registers its cache fields outside the class's field list.

A `register_pytree_node_class` class lists its children in `tree_flatten` / `tree_unflatten`
(`add_to_flatten`); a `register_dataclass` registration may name its `data_fields` explicitly
(`add_to_data_fields`). Each returns the nodes it replaces, or raises `NotAutomatic` with what
to do by hand. `black` and `replace_in` are the layout and node-swap helpers the class rewrite
shares with them.
"""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis import pytrees as pt
from jaxfix.analysis.codegen import black_format
from jaxfix.analysis.walk import own_returns, walk
from jaxfix.rulebase import RuleContext


class NotAutomatic(Exception):
    """The fix cannot be built safely here; the message says what to do by hand."""


def black(code: str, indent: int) -> str:
    """`code` as black lays it out at `indent` columns in (at least 40 columns wide)."""
    return black_format(code, max(40, 88 - indent))


def _method(cls: cst.ClassDef, name: str) -> cst.FunctionDef:
    for stmt in cls.body.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
            return stmt
    raise NotAutomatic(f"no `{name}` method in the class body to add the cache to")

def add_to_flatten(ctx: RuleContext, cls: cst.ClassDef, caches: list[str]) -> dict[cst.CSTNode, cst.CSTNode]:
    """register_pytree_node_class: `tree_flatten` returns the caches after the other children,
    `tree_unflatten` takes them off the end and sets them on the rebuilt object."""
    out: dict[cst.CSTNode, cst.CSTNode] = {}
    flatten = _method(cls, "tree_flatten")
    unflatten = _method(cls, "tree_unflatten")
    ret = _single_final_return(flatten)
    if ret is None or not isinstance(ret.value, cst.Tuple) or len(ret.value.elements) != 2:
        raise NotAutomatic("`tree_flatten` does not end in one `return children, aux_data`; add the cache by hand")
    me = flatten.params.params[0].name.value if flatten.params.params else "self"
    children = ret.value.elements[0].value
    extra = [cst.Element(cst.parse_expression(f"{me}.{c}")) for c in caches]
    if isinstance(children, (cst.Tuple, cst.List)) and not any(
        isinstance(e, cst.StarredElement) for e in children.elements
    ):
        elements = list(children.elements)
        if elements:
            elements[-1] = elements[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        new_children = children.with_changes(elements=[*elements, *extra])
        if isinstance(children, cst.Tuple) and not children.lpar:
            new_children = new_children.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    else:
        new_children = cst.Tuple([cst.StarredElement(children), *extra])
    new_ret = ret.with_changes(
        value=ret.value.with_changes(
            elements=[ret.value.elements[0].with_changes(value=new_children), ret.value.elements[1]]
        )
    )
    out[flatten] = replace_in(flatten, ret, new_ret)

    params = unflatten.params.params
    if len(params) != 3:
        raise NotAutomatic("`tree_unflatten` does not take (cls, aux_data, children); add the cache by hand")
    kids = params[2].name.value
    uret = _single_final_return(unflatten)
    if uret is None or uret.value is None:
        raise NotAutomatic("`tree_unflatten` does not end in one `return`; add the cache by hand")
    code = ctx.module.code_for_node(uret.value)
    stmts = [
        f"*{kids}, {', '.join(caches)} = {kids}",
        f"obj = {code}",
        *(f"obj.{c} = {c}" for c in caches),
        "return obj",
    ]
    body = list(unflatten.body.body)
    prefix = [cst.parse_statement(stmts[0] + "\n")]
    suffix = [cst.parse_statement(s + "\n") for s in stmts[1:]]
    body = prefix + body[:-1] + suffix
    out[unflatten] = unflatten.with_changes(body=unflatten.body.with_changes(body=body))
    return out

def add_to_data_fields(ctx: RuleContext, cls: cst.ClassDef, caches: list[str]) -> dict[cst.CSTNode, cst.CSTNode]:
    """register_dataclass with an explicit `data_fields` list: add the caches to it (nothing to
    do when the fields are inferred from the dataclass: the new fields are data already)."""
    name = cls.name.value
    calls: list[cst.Call] = []
    for dec in cls.decorators:
        if isinstance(dec.decorator, cst.Call):
            calls.append(dec.decorator)

    class Find(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if node.args and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == name:
                calls.append(node)

    walk(ctx.module, Find())
    for call in calls:
        target = ctx.names.qualify(call.func)
        args = list(call.args)
        if (
            target in pt.PARTIAL
            and args
            and ctx.names.qualify(args[0].value) == "jax.tree_util.register_dataclass"
        ):
            positional = 2  # partial(register_dataclass, data_fields, ...)
        elif target == "jax.tree_util.register_dataclass":
            positional = 1 if (args and isinstance(args[0].value, cst.Name) and args[0].value.value == name) else 0
            if positional == 0:
                continue
        else:
            continue
        data = None
        for i, arg in enumerate(args):
            if (arg.keyword is not None and arg.keyword.value == "data_fields") or (
                arg.keyword is None and i == positional
            ):
                data = arg
        if data is None:
            return {}  # fields inferred from the dataclass: the new field is data already
        value = data.value
        if not isinstance(value, (cst.List, cst.Tuple)):
            raise NotAutomatic("`data_fields` is not a literal list; add the cache fields to it by hand")
        elements = list(value.elements)
        if elements:
            elements[-1] = elements[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        extra = [cst.Element(cst.SimpleString(ctx.literal(c))) for c in caches]
        new_call = replace_in(call, value, value.with_changes(elements=[*elements, *extra]))
        return {call: _black_call(ctx, call, new_call)}
    return {}

def _black_call(ctx: RuleContext, old: cst.Call, new: cst.Call) -> cst.BaseExpression:
    """`new` laid out as black would at `old`'s place (a decorator or a statement of its own)."""
    code = ctx.module.code_for_node(new)
    column = ctx.position(old).start.column
    parent = ctx.parent(old)
    if isinstance(parent, cst.Decorator):
        func = cst.parse_statement(black(f"@{code}\ndef _():\n    pass\n", column - 1))
        return func.decorators[0].decorator
    stmt = cst.parse_statement(black(code + "\n", column))
    return stmt.body[0].value


def _single_final_return(func: cst.FunctionDef) -> cst.Return | None:
    """The function's only `return` (outside nested scopes) when it is its last statement."""
    if not isinstance(func.body, cst.IndentedBlock) or not func.body.body:
        return None
    returns = own_returns(func)
    last = func.body.body[-1]
    if len(returns) != 1 or not isinstance(last, cst.SimpleStatementLine) or last.body[-1] is not returns[0]:
        return None
    if len(last.body) != 1:
        return None
    return returns[0]


def replace_in(tree: cst.CSTNode, old: cst.CSTNode, new: cst.CSTNode) -> cst.CSTNode:
    """`tree` with the node `old` (by identity) replaced by `new`."""

    class Swap(cst.CSTTransformer):
        def on_leave(self, original, updated):
            return new if original is old else updated

    return tree.visit(Swap())


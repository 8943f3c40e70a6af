"""libcst parsing that cannot take the process down.

libcst's native parser recurses on the C stack. CPython's own parser accepts some inputs that
nest much deeper for libcst than for `ast` (a chain of 10,000 `and`s is one flat `BoolOp` to
`ast` but 10,000 nested `BooleanOperation`s to libcst), and on the default 8 MiB main-thread
stack those overflow it: a segmentation fault, not an exception, that kills `check`, `fix`, a
pool worker or the LSP server. Larger texts are therefore parsed in a helper thread with a
large stack (reserved address space, only touched as deep as the parse goes).

A parse also skips libcst's validation of each node it builds (`CSTNode.__post_init__` runs
`_validate`, which checks what a hand-built node could get wrong: a parser-built one is valid by
construction; libcst's own comment on `__post_init__` suggests as much). That was a quarter of the
parse, 4% of a check of a 50,000-line file (issue #33 item 1). Nodes built while a parse runs are
not validated either (in the thread that waits for the parse, none are built).

Node classes also answer the two questions the rules ask of every node in C
(`_fast_node_classes`): its hash (libcst gives every node class a Python `__hash__` returning
`id(self)`, and the rules key dicts and sets by node: the parent map of a 50,000-line module
alone hashed a million nodes, each a Python call) and `isinstance` against a node class (each
an `ABCMeta`, whose `__instancecheck__` is a Python function: a million and a half calls in a
check of that file).
"""

from __future__ import annotations

import abc
import threading
from abc import ABCMeta

import libcst as cst
from libcst._nodes.base import CSTNode

BIG_STACK = 512 * 1024 * 1024
SMALL_TEXT = 4096  # below this no Python text nests deep enough to matter: parse directly
_stack_lock = threading.Lock()
# Building a `PartialParserConfig` validates its fields (~0.4 ms): a fix of a large file asked for
# thousands (`Module.config_for_parsing` builds one per call). They are immutable: one per value.
_CONFIGS: dict[tuple[str, str, str], cst.PartialParserConfig] = {}
_DEFAULT_CONFIG = cst.PartialParserConfig()


class _NodeMeta(ABCMeta):
    """`ABCMeta` with `type`'s own instance and subclass checks (in C, through the MRO), which
    answer as `ABCMeta`'s for a class with no virtual subclass (`register`) and no
    `__subclasshook__`: libcst's node classes have neither."""

    __instancecheck__ = type.__instancecheck__
    __subclasscheck__ = type.__subclasscheck__


def _fast_node_classes() -> None:
    """Make libcst's node classes hash and type-test in C, with the same answers:

    - `object.__hash__` where libcst gave a class `CSTNode.__hash__` (`id(self)`, a Python call
      per hash): equality stays libcst's (identity). Nothing reads a node's hash as its id; a set
      of nodes iterates in an order that depends on the nodes' addresses either way.
    - `_NodeMeta` as the metaclass of a class whose metaclass is `ABCMeta`, when no class was
      registered with it and it has no `__subclasshook__` (checked here, class by class).

    Node classes made later inherit both (`CSTNode.__init_subclass__` copies `CSTNode.__hash__`;
    a subclass's metaclass is its bases')."""
    python_hash = CSTNode.__dict__["__hash__"]
    registered = getattr(abc, "_get_dump", None)  # (registry, cache, negative cache, version)
    stack: list[type] = [CSTNode]
    while stack:
        cls = stack.pop()
        if cls.__dict__.get("__hash__") is python_hash:
            cls.__hash__ = object.__hash__  # type: ignore[method-assign]
        if (
            type(cls) is ABCMeta
            and registered is not None
            and not registered(cls)[0]
            and "__subclasshook__" not in cls.__dict__
        ):
            cls.__class__ = _NodeMeta
        stack.extend(cls.__subclasses__())


_fast_node_classes()


def parsing_config(module: cst.Module) -> cst.PartialParserConfig:
    """`module.config_for_parsing` (an equal config, built once per encoding, indent and newline)."""
    key = (module.encoding, module.default_indent, module.default_newline)
    config = _CONFIGS.get(key)
    if config is None:
        config = _CONFIGS[key] = module.config_for_parsing
    return config


_VALIDATE = CSTNode.__post_init__
_parsing = 0  # parses under way (threads of a language server may parse at once)
_parsing_lock = threading.Lock()


def _not_validated(self: CSTNode) -> None:
    """`CSTNode.__post_init__` while a parse runs: the parser builds valid nodes."""


def parse_module(source: str, config: cst.PartialParserConfig | None = None) -> cst.Module:
    """`cst.parse_module(source)`, run on a big stack for larger texts, its nodes not validated
    one by one (the same tree); raises what it raises."""
    global _parsing
    with _parsing_lock:
        _parsing += 1
        CSTNode.__post_init__ = _not_validated
    try:
        return _parse_module(source, config)
    finally:
        with _parsing_lock:
            _parsing -= 1
            if not _parsing:
                CSTNode.__post_init__ = _VALIDATE


def _parse_module(source: str, config: cst.PartialParserConfig | None) -> cst.Module:
    config = config or _DEFAULT_CONFIG
    if len(source) < SMALL_TEXT:
        return cst.parse_module(source, config)
    box: dict[str, object] = {}

    def work() -> None:
        try:
            box["module"] = cst.parse_module(source, config)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread
            box["error"] = exc

    with _stack_lock:
        try:
            old = threading.stack_size(BIG_STACK)
        except (ValueError, RuntimeError):  # platform without settable stacks
            return cst.parse_module(source, config)
        try:
            thread = threading.Thread(target=work, name="jaxfix-parse", daemon=True)
            thread.start()
        except RuntimeError:  # cannot start a thread (resource limits): parse here
            thread = None
        finally:
            threading.stack_size(old)
    if thread is None:
        return cst.parse_module(source, config)
    thread.join()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["module"]  # type: ignore[return-value]

"""What the parent sends a verification child and what comes back (both pickled to files).

Kept free of jax so the parent never imports it. User objects (recorded instances of user
classes) travel as pickled bytes inside a task and are unpickled only in the child, after the
user's module is loaded under its own name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jaxfix.verify.compare import Outcome


@dataclass(frozen=True, eq=False)
class ArrayArg:
    """An array argument as it travels: numpy data plus jax's weak-type flag.

    `jax=False` marks an argument that was a NumPy array (or scalar) in the user's call and must
    stay one; the child turns the others back into jax arrays on the chosen device.
    """

    value: Any  # np.ndarray
    weak_type: bool = False
    jax: bool = True

    def describe(self) -> str:
        kind = "" if self.jax else "np."
        weak = " weak" if self.weak_type else ""
        return f"{kind}{self.value.dtype}{list(self.value.shape)}{weak}"


@dataclass(frozen=True, eq=False)
class Construct:
    """A value built in the child, after the module under test is loaded: `module.qualname(*args,
    **kwargs)` (arguments may hold ArrayArgs and Constructs). Synthesis uses it for the user's own
    classes (each version gets an instance of its own class) and for PRNG keys."""

    module: str
    qualname: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)

    def build(self, restore: Any) -> Any:
        import importlib

        target: Any = importlib.import_module(self.module)
        for part in self.qualname.split("."):
            target = getattr(target, part)
        args, kwargs = restore((tuple(self.args), dict(self.kwargs)))
        return target(*args, **kwargs)

    def __repr__(self) -> str:
        def one(value: Any) -> str:
            return value.describe() if isinstance(value, ArrayArg) else repr(value)

        parts = [one(a) for a in self.args] + [f"{k}={one(v)}" for k, v in self.kwargs.items()]
        text = f"{self.qualname}({', '.join(parts)})"
        return text if len(text) <= 60 else text[:57] + "..."


@dataclass(frozen=True)
class Call:
    """One call of a callable: positional and keyword arguments (ArrayArg leaves, static values)."""

    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    label: str = ""  # how the report names this input
    source: str = ""  # "recorded" | "example" | "synthesized"


def call(*args: Any, **kwargs: Any) -> Call:
    """Declare one example call in an examples module: `call(jnp.ones(3), n=2)`."""
    return Call(args=args, kwargs=kwargs, source="example")


@dataclass
class Task:
    """One unit of work in a child. kind: "drive" | "calls" | "examples" | "main" (the
    module's __main__ blocks run with `target` watched: the outputs of its calls are compared)."""

    id: str
    kind: str
    # drive / examples: a module file defining drive(mod) and/or EXAMPLES / examples(mod)
    script_path: str | None = None
    script_source: str | None = None
    # calls: the callable and how it is reached, and the pickled list[Call]
    target: str | None = None  # qualname in the module, e.g. "Model.loss"
    target_kind: str = "function"  # function | method | staticmethod | classmethod | property
    calls_pickle: bytes | None = None  # pickle of list[bytes], each one pickled Call
    grads: bool = True
    tree_roundtrip: bool = False


@dataclass
class Job:
    module_name: str
    path: str  # the original file's path: __file__ for both versions
    source: str
    sys_path: list[str]
    eager: bool  # run under jax.disable_jit() (the reference for control-flow rules)
    tasks: list[Task]
    filename: str | None = None  # what tracebacks call the source; the rewritten text gets its own name
    task_timeout: float = 60.0
    timing_budget: float = 0.25  # seconds of extra repeats for the median time per call
    max_repeats: int = 5
    # For `main` tasks of the rewritten version: the original's text, loaded beside it under
    # another name, so each watched call also runs the original on the very same arguments
    # (eagerly where `reference_eager`), for calls whose arguments differ between the versions.
    reference_source: str | None = None
    reference_eager: bool = False
    # What the fixes promise besides returned values (`watch.PRINTED`, `watch.TIMING`): the child
    # then also compares printed lines, or orders clock reads and waits (`jaxfix/verify/watch.py`).
    watch: tuple[str, ...] = ()


@dataclass
class TaskResult:
    id: str
    outputs: dict[str, Outcome] = field(default_factory=dict)
    inputs: dict[str, str] = field(default_factory=dict)  # output name -> input description
    error: str | None = None  # the task could not run at all (not found, timeout, ...)
    traces: int | None = None  # during the second run (steady state)
    compiles: int | None = None
    compiles_by_fun: dict[str, int] = field(default_factory=dict)
    first_compiles: int | None = None
    time_per_call: float | None = None  # median seconds per call (per drive run)
    calls: int = 0
    labels: list[str] = field(default_factory=list)  # output names of the first run, one per input
    # What the child measured beside the outputs, for the evidence (never compared): "lines" (per
    # input, lines of the file the eager reference ran), "under_jit" (per input, the error class the
    # original raised under jit, or None), "caching" (property body runs; see child.caching_counts).
    observed: dict[str, Any] = field(default_factory=dict)


@dataclass
class VersionResult:
    """Everything one child reported about one version of the module."""

    ok: bool
    platform: str = ""
    device: str = ""
    jax_version: str = ""
    eager: bool = False
    error: str | None = None  # import failure, crash, timeout: one paragraph
    tasks: dict[str, TaskResult] = field(default_factory=dict)
    wall: float = 0.0
    stderr_tail: str = ""
    phases: dict[str, float] = field(default_factory=dict)  # seconds: start jax, import module, tasks
    cpu: float = 0.0  # CPU seconds of the child (user + system), less sensitive to a busy machine

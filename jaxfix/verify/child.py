"""The verification child: `python -m jaxfix.verify.child JOB RESULT`.

One fresh interpreter per version of a module. It loads the module from the given source text
under the module's own name (the original file's folder on sys.path, `__file__` the original
path), with the persistent compilation cache off and `jax.monitoring` listeners counting traces
and compiles, then runs each task twice: outputs of both runs are reported as `FlatTree`s
(numpy leaves), trace/compile counts of the second run (steady state), and the median time per
call. With `Job.eager` everything runs under `jax.disable_jit()`. A task that raises, or runs past
its time limit, is reported and the next task runs; the parent bounds the whole process.

Beside the outputs, `TaskResult.observed` carries what the evidence reports (`observe`): per input,
the lines the eager reference ran and the error the original raises under jit; for a property,
how often its body computes.
"""

from __future__ import annotations

import collections
import contextlib
import importlib
import importlib.util
import linecache
import os
import pickle
import signal
import statistics
import sys
import time
from typing import Any, Callable

from jaxfix.verify.compare import FlatTree, Outcome
from jaxfix.verify.observe import (
    caching_counts,
    describe_call,
    error_under_jit,
    filled_reads,
    lines_run,
)
from jaxfix.verify.protocol import (
    Call,
    Job,
    Task,
    TaskResult,
    VersionResult,
)
from jaxfix.verify.values import (
    _block,
    _differentiable,
    _error_outcome,
    _fill_added_defaults,
    _float_scalar,
    _holds_tracer,
    _restore,
    _tree,
    copy_arrays,
    donated,
)
from jaxfix.verify.watch import (
    MUTABLE,
    PRINTED,
    TIMING,
    Clocks,
    numpy_backed,
    printed,
    printed_text,
    to_numpy,
)

MAIN_CALLS = 8  # calls of a watched callable compared per run of the __main__ block
TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


class TaskTimeout(BaseException):
    """Raised by the alarm; a BaseException so user `except Exception` cannot swallow it."""


class _EnoughCalls(BaseException):
    """Stops a `__main__` block once a watched callable's compared calls are kept (a training
    script need not train to the end); a BaseException for the same reason as TaskTimeout."""


class Counters:
    def __init__(self) -> None:
        self.traces: collections.Counter[str] = collections.Counter()
        self.compiles: collections.Counter[str] = collections.Counter()

    def __call__(self, event: str, duration: float, **kwargs: Any) -> None:
        if event == TRACE_EVENT:
            self.traces[str(kwargs.get("fun_name"))] += 1
        elif event == COMPILE_EVENT:
            self.compiles[str(kwargs.get("fun_name"))] += 1

    def snapshot(self) -> tuple[collections.Counter, collections.Counter]:
        return collections.Counter(self.traces), collections.Counter(self.compiles)


class Child:
    def __init__(self, job: Job) -> None:
        self.job = job
        self.counters = Counters()
        self.user_files = {job.path, self.filename}
        self.clocks = Clocks(self.user_files) if TIMING in getattr(job, "watch", ()) else None

    @property
    def filename(self) -> str:
        return getattr(self.job, "filename", None) or self.job.path

    # -- setup ----------------------------------------------------------------------------------
    def start_jax(self, result: VersionResult) -> None:
        import jax
        import jax.monitoring as monitoring

        jax.config.update("jax_enable_compilation_cache", False)
        monitoring.register_event_duration_secs_listener(self.counters)
        device = jax.devices()[0]
        result.platform = device.platform
        kind = str(getattr(device, "device_kind", "") or device)
        result.device = device.platform if kind.lower() == device.platform else f"{device.platform} ({kind})"
        result.jax_version = jax.__version__

    def load_module(self) -> Any:
        job = self.job
        for folder in reversed(job.sys_path):
            if folder not in sys.path:
                sys.path.insert(0, folder)
        parent = job.module_name.rpartition(".")[0]
        if parent:
            importlib.import_module(parent)
        return _exec_module(job.module_name, job.source, self.filename, job.path, parent)

    def load_reference(self) -> Any:
        """The original module, loaded beside the rewritten one under its own name (a `main`
        task runs it on the arguments the rewritten script passes)."""
        job = self.job
        parent = job.module_name.rpartition(".")[0]
        return _exec_module(f"{job.module_name}__jaxfix_original", job.reference_source or "", job.path, job.path, parent)

    def load_script(self, task: Task) -> Any:
        name = f"_jaxfix_script_{task.id.replace('-', '_').replace('.', '_')}"
        self.user_files.add(task.script_path)
        source = task.script_source
        if source is None:
            with open(task.script_path, encoding="utf-8") as handle:
                source = handle.read()
        return _exec_module(name, source, task.script_path, task.script_path)

    @contextlib.contextmanager
    def watched(self, result: TaskResult, pass_number: int, key: str):
        """One call's printed lines (an output, `<key> printed`) and clock order (`observed["timing"]`),
        for the families whose fixes promise them (`Job.watch`)."""
        lines: list[str] = []
        capture = PRINTED in getattr(self.job, "watch", ()) and pass_number == 1
        try:
            with contextlib.ExitStack() as stack:
                if capture:
                    stack.enter_context(printed(lines))
                if self.clocks is not None:
                    counts = result.observed.setdefault("timing", {}) if pass_number == 1 else {}
                    stack.enter_context(self.clocks.watching(counts))
                yield
        finally:
            if capture:
                result.outputs[f"{key} printed"] = Outcome(tree=_tree(printed_text(lines)))
                result.inputs.setdefault(f"{key} printed", result.inputs.get(key, key))

    @contextlib.contextmanager
    def mode(self):
        if self.job.eager:
            import jax

            with jax.disable_jit():
                yield
        else:
            yield

    @contextlib.contextmanager
    def alarm(self, seconds: float):
        def ring(signum, frame):
            raise TaskTimeout(f"timed out after {seconds:g} s")

        if seconds <= 0 or not hasattr(signal, "setitimer"):
            yield
            return
        previous = signal.signal(signal.SIGALRM, ring)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    # -- running --------------------------------------------------------------------------------
    def measure(self, result: TaskResult, runs: list[Callable[[], Any]], record: Callable[[int, int, Any], None]) -> None:
        """Run every callable of `runs` twice (counting the second pass), then repeat for timing."""
        before_t, before_c = self.counters.snapshot()
        for index, run in enumerate(runs):
            record(1, index, run)
        first_t, first_c = self.counters.snapshot()
        result.first_compiles = sum((first_c - before_c).values())
        durations: list[float] = []
        for index, run in enumerate(runs):
            start = time.perf_counter()
            record(2, index, run)
            durations.append(time.perf_counter() - start)
        after_t, after_c = self.counters.snapshot()
        result.traces = sum((after_t - first_t).values())
        compiles = after_c - first_c
        result.compiles = sum(compiles.values())
        result.compiles_by_fun = dict(compiles)
        budget_end = time.perf_counter() + self.job.timing_budget
        one_pass = sum(durations)
        repeats = 0
        while runs and repeats < self.job.max_repeats and time.perf_counter() + one_pass <= budget_end:
            for run in runs:
                start = time.perf_counter()
                try:
                    _block(run())
                except Exception:
                    pass
                durations.append(time.perf_counter() - start)
            repeats += 1
        result.time_per_call = statistics.median(durations) if durations else None
        result.calls = len(runs)

    def run_drive(self, module: Any, task: Task, result: TaskResult) -> None:
        script = self.load_script(task)
        drive = getattr(script, "drive", None)
        if drive is None:
            result.error = f"{task.script_path} defines no drive(mod)"
            return

        def record(pass_number: int, index: int, run: Callable[[], Any]) -> None:
            suffix = "" if pass_number == 1 else " (2nd run)"
            try:
                outputs = _block(run())
            except TaskTimeout:
                raise
            except Exception as exc:
                result.outputs["drive()" + suffix] = _error_outcome(exc, self.user_files)
                return
            if not isinstance(outputs, dict):
                result.error = f"drive(mod) returned {type(outputs).__name__}, expected dict[str, object]"
                return
            for name, value in outputs.items():
                try:
                    result.outputs[f"{name}{suffix}"] = Outcome(tree=_tree(value))
                except Exception as exc:
                    result.outputs[f"{name}{suffix}"] = _error_outcome(exc, self.user_files)
                result.inputs[f"{name}{suffix}"] = f"drive() in {os.path.basename(task.script_path or '')}"

        result.labels = ["drive()"]
        self.measure(result, [lambda: drive(module)], record)

    def run_main_block(self, module: Any, task: Task, result: TaskResult) -> None:
        """Run the module's `if __name__ == "__main__":` blocks with `task.target` watched: the
        outputs of its first `MAIN_CALLS` calls made with concrete values are the outputs compared.
        For calls whose arguments cannot travel to a child (a flax TrainState holds its optimizer's
        closures, which do not pickle), the script itself makes them again in each version. Each
        call's arguments go back too (`observed["arguments"]`): a call is compared only where both
        versions passed the same values (in a training loop, the state after a first step already
        differs in the last bits between the jitted rewrite and the eager original). For the eager
        reference only the watched callable runs eagerly: the rest of the script keeps jit in both
        versions, so its first call gets the same values in both. With `Job.reference_source`
        (the rewritten version's child) each watched call of the first run also runs the original
        callable on the very same arguments (`observed["replayed"]`): the parent compares those
        where the arguments of the two runs differ."""
        import jax

        from jaxfix.verify._recorder.run_main import run_main_blocks

        if task.target_kind not in ("function", "method"):
            result.error = f"calls of a {task.target_kind} are not watched in the __main__ block"
            return
        try:
            owner, target, name = self.resolve(module, task.target)
        except AttributeError as exc:
            result.error = f"cannot find {task.target}: {exc}"
            return
        replay = None
        if self.job.reference_source is not None:
            try:
                replay = self.resolve(self.load_reference(), task.target)[1]
            except Exception as exc:  # noqa: BLE001 - without it, calls are compared across versions only
                result.observed["replay_error"] = f"{type(exc).__name__}: {exc}"[:300]
        replayed: dict[str, Outcome] = {}
        seen: list[tuple[str, FlatTree | None, Outcome]] = []
        first_pass = [True]
        lines: dict[str, dict[int, int]] = {}
        under_jit: dict[str, str | None] = {}

        def watched(*args: Any, **kwargs: Any) -> Any:
            if len(seen) >= MAIN_CALLS or _holds_tracer((args, kwargs)):
                return target(*args, **kwargs)
            description = describe_call(Call(args, kwargs))
            try:
                given = _tree((args, kwargs))
            except Exception:  # noqa: BLE001 - arguments jax cannot flatten: compared by output only
                given = None
            observing = self.job.eager and first_pass[0]
            key = f"{task.target} call {len(seen) + 1} in __main__"
            # The probes below run on a copy of the arguments as they come in: a call that updates
            # them in place (an NNX optimizer step) has changed them by the time it returns, and
            # must not advance the script's state a second time either.
            probing = (observing and not under_jit) or (replay is not None and first_pass[0])
            before = _spare((args, kwargs)) if probing else None
            ran: collections.Counter = collections.Counter()
            try:
                with jax.disable_jit(self.job.eager), lines_run(self.filename, ran) if observing else contextlib.nullcontext():
                    with self.watched(result, 1 if first_pass[0] else 2, key):
                        value = target(*args, **kwargs)
            except Exception as exc:
                seen.append((description, given, _error_outcome(exc, self.user_files)))
                raise
            finally:
                if observing:
                    lines[key] = dict(sorted(ran.items()))
            if observing and not under_jit:  # what the original does under jit, on the first call
                a, k = _spare(before)
                under_jit[key] = error_under_jit(target, lambda a, k: target(*a, **k), a, k)
            if replay is not None and first_pass[0]:
                a, k = _spare(before)
                try:
                    with jax.disable_jit(self.job.reference_eager):
                        replayed[key] = Outcome(tree=_tree(_block(replay(*a, **k))))
                except Exception as exc:  # noqa: BLE001 - the original's failure is its output
                    replayed[key] = _error_outcome(exc, self.user_files)
            seen.append((description, given, Outcome(tree=_tree(_block(value)))))
            if len(seen) >= MAIN_CALLS:
                raise _EnoughCalls()  # what is compared is kept: the script need not run on
            return value

        setattr(owner, name, watched)
        sys.argv = [self.job.path]

        def run_script() -> bool:
            """Run the blocks; True when they were stopped after enough calls."""
            try:
                run_main_blocks(module, self.filename, self.job.source)
            except _EnoughCalls:
                return True
            return False

        def record(pass_number: int, index: int, run: Callable[[], Any]) -> None:
            suffix = "" if pass_number == 1 else " (2nd run)"
            seen.clear()
            stopped: TaskTimeout | None = None
            ended: Outcome | None = None  # how the script ended: compared unless the time limit ended it
            try:
                enough = run()
                ended = Outcome(tree=_tree(f"stopped after {MAIN_CALLS} calls of {task.target}" if enough else "finished"))
            except TaskTimeout as exc:
                if pass_number != 1 or not seen:
                    raise
                stopped = exc  # the other version may have got further in its time: nothing to judge
                result.observed["stopped"] = f"the time limit came after {len(seen)} calls, in the first run"
            except BaseException as exc:  # noqa: BLE001 - the script's own failure is an output
                ended = _error_outcome(exc, self.user_files)
            for number, (description, given, outcome) in enumerate(seen, 1):
                key = f"{task.target} call {number} in __main__{suffix}"
                result.outputs[key] = outcome
                result.inputs[key] = description
                result.observed.setdefault("arguments", {})[key] = given
                if pass_number == 1:
                    result.labels.append(key)
            if ended is not None:
                result.outputs[f"__main__ block{suffix}"] = ended
                result.inputs[f"__main__ block{suffix}"] = "the module's __main__ block"
            first_pass[0] = False
            if stopped is not None:
                raise stopped  # no time left for a second run: the first run's calls are compared

        try:
            # jit stays on for the rest of the script in both versions (for the eager reference too),
            # so the values reaching the watched callable are computed alike
            with jax.disable_jit(False):
                self.measure(result, [run_script], record)
        except TaskTimeout:
            if not result.labels:
                raise
            result.observed.setdefault("stopped", "the time limit came before a second run of the __main__ block")
        finally:
            setattr(owner, name, target)
        if self.job.eager:
            result.observed["lines"] = lines
            result.observed["under_jit"] = under_jit
        if replayed:
            result.observed["replayed"] = replayed

    def resolve(self, module: Any, target: str) -> tuple[Any, Any, str]:
        """(owner, attribute value, last name) for a qualname like `Model.loss`."""
        owner, value = None, module
        parts = target.split(".")
        for part in parts:
            owner, value = value, getattr(value, part)
        return owner, value, parts[-1]

    def calls_for(self, module: Any, task: Task) -> list[Call]:
        if task.calls_pickle is not None:
            calls = [pickle.loads(one) for one in pickle.loads(task.calls_pickle)]
            for call in calls:
                _fill_added_defaults((call.args, call.kwargs), set())
            return calls
        script = self.load_script(task)
        table = getattr(script, "EXAMPLES", None)
        if table is None and callable(getattr(script, "examples", None)):
            table = script.examples(module)
        entries = (table or {}).get(task.target)
        if entries is None:
            raise LookupError(f"{os.path.basename(task.script_path or '')} declares no examples for {task.target}")
        if callable(entries):
            entries = entries(module)
        calls = []
        for number, entry in enumerate(entries):
            if not isinstance(entry, Call):
                entry = Call(args=tuple(entry) if isinstance(entry, tuple | list) else (entry,), source="example")
            calls.append(Call(entry.args, dict(entry.kwargs), entry.label or f"example {number + 1}", "example"))
        return calls

    def run_calls(self, module: Any, task: Task, result: TaskResult) -> None:
        import jax

        try:
            calls = self.calls_for(module, task)
            owner, _, name = self.resolve(module, task.target)
        except (AttributeError, LookupError) as exc:
            result.error = f"cannot find {task.target}: {exc}"
            return
        kind = task.target_kind

        mutable = self.job.eager and MUTABLE in getattr(self.job, "watch", ())
        if mutable:
            numpy_backed(module)  # the original's in-place updates mean NumPy's (see watch.py)

        def invoke(args: tuple, kwargs: dict) -> Any:
            if mutable:
                args, kwargs = to_numpy((args, kwargs))
            if kind == "property":
                return getattr(args[0], name)
            return getattr(owner, name)(*args, **kwargs)

        prepared = []
        unbuilt: list[str] = []
        for number, c in enumerate(calls):
            label = c.label or f"input {number + 1}"
            try:
                args, kwargs = _restore((tuple(c.args), dict(c.kwargs)))
            except Exception as exc:  # a synthesized instance the class itself rejects
                unbuilt.append(f"{describe_call(c)}: {type(exc).__name__}: {exc}"[:300])
                continue
            prepared.append((label, args, kwargs, describe_call(c)))
        if not prepared and unbuilt:
            result.error = f"no input could be built: {unbuilt[0]}"
            return
        spares = [_spare((a, k)) for _, a, k, _ in prepared]
        inputs = [(a, k) for _, a, k, _ in prepared]

        def current(index: int) -> tuple[tuple, dict]:
            if donated(inputs[index]):  # a donating call freed them: go on with a fresh copy
                inputs[index] = copy_arrays(spares[index])
            return inputs[index]

        def invoke_input(index: int) -> Any:
            return invoke(*current(index))

        runs = [(lambda i=i: invoke_input(i)) for i in range(len(prepared))]
        result.labels = [label for label, *_ in prepared]
        lines: dict[str, dict[int, int]] = {}

        def record(pass_number: int, index: int, run: Callable[[], Any]) -> None:
            label, _, _, description = prepared[index]
            key = label if pass_number == 1 else f"{label} (2nd run)"
            result.inputs[key] = description
            ran: collections.Counter = collections.Counter()
            tracing = lines_run(self.filename, ran) if self.job.eager and pass_number == 1 else contextlib.nullcontext()
            try:
                with tracing, self.watched(result, pass_number, key):
                    value = run()
                result.outputs[key] = Outcome(tree=_tree(_block(value)))
            except TaskTimeout:
                raise
            except Exception as exc:
                result.outputs[key] = _error_outcome(exc, self.user_files)
            if self.job.eager and pass_number == 1:
                lines[label] = dict(sorted(ran.items()))

        self.measure(result, runs, record)
        if self.job.eager:
            result.observed["lines"] = lines
            target = getattr(owner, name, None)
            result.observed["under_jit"] = {
                label: error_under_jit(target, invoke, args, kwargs) for label, args, kwargs, _ in prepared
            }
        if kind == "property" and prepared and prepared[0][1]:
            try:
                result.observed["caching"] = caching_counts(prepared[0][1][0], name)
            except TaskTimeout:
                raise
            except Exception as exc:  # noqa: BLE001 - a measurement that cannot be taken is left out
                result.observed["caching_error"] = f"{type(exc).__name__}: {exc}"

        for index, (label, _, _, description) in enumerate(prepared):
            args, kwargs = current(index)
            first = result.outputs.get(label)
            if task.grads and first is not None and first.tree is not None and _float_scalar(first.tree):
                argnums = tuple(i for i, a in enumerate(args) if _differentiable(a))
                if argnums:
                    key = f"{label} grad wrt args {', '.join(map(str, argnums))}"
                    result.inputs[key] = description
                    try:
                        if kind == "property":
                            grad = jax.grad(lambda obj: getattr(obj, name))(args[0])
                        else:
                            grad = jax.grad(lambda *a: getattr(owner, name)(*a, **kwargs), argnums=argnums)(*args)
                        result.outputs[key] = Outcome(tree=_tree(grad))
                    except TaskTimeout:
                        raise
                    except Exception as exc:
                        result.outputs[key] = _error_outcome(exc, self.user_files)
            if kind == "property" and args:
                for what, run in filled_reads(current(index)[0][0], name).items():
                    self.probe(result, f"{label} {what}", description, run)
            if task.tree_roundtrip and kind in ("property", "method") and args:
                args, kwargs = current(index)
                copy = jax.tree.map(lambda x: x, args[0])  # fresh instance for the closure checks
                checks = {
                    "after tree_map": lambda: invoke((jax.tree.map(lambda x: x, args[0]), *args[1:]), kwargs),
                    "under jit, as argument": lambda: jax.jit(lambda obj: invoke((obj, *args[1:]), kwargs))(args[0]),
                    # A cached_property first read in a trace stores a tracer on a closed-over instance.
                    "under jit, closed over": lambda: jax.jit(lambda: invoke((copy, *args[1:]), kwargs))(),
                    "eager, after the closure": lambda: invoke((copy, *args[1:]), kwargs),
                }
                for what, run in checks.items():
                    args, kwargs = current(index)  # the checks' lambdas read these names when they run
                    self.probe(result, f"{label} {what}", description, run)

    def probe(self, result: TaskResult, key: str, description: str, run: Callable[[], Any]) -> None:
        """One more output derived from an input (a probe of the instance, a read through a cache)."""
        result.inputs[key] = description
        try:
            result.outputs[key] = Outcome(tree=_tree(_block(run())))
        except TaskTimeout:
            raise
        except Exception as exc:
            result.outputs[key] = _error_outcome(exc, self.user_files)

    def run(self) -> VersionResult:
        job = self.job
        result = VersionResult(ok=False, eager=job.eager)
        clock = time.perf_counter()
        try:
            self.start_jax(result)
        except Exception as exc:
            result.error = f"jax failed to start: {type(exc).__name__}: {exc}"
            return result
        result.phases["start jax"] = time.perf_counter() - clock
        if self.clocks is not None:
            self.clocks.install()  # before the module loads: `from time import perf_counter` sees it
        clock = time.perf_counter()
        try:
            with self.alarm(job.task_timeout), self.mode():
                module = self.load_module()
            result.phases["import module"] = time.perf_counter() - clock
        except BaseException as exc:  # noqa: BLE001 - the user's import may raise anything
            if isinstance(exc, KeyboardInterrupt):
                raise
            outcome = _error_outcome(exc, self.user_files)
            result.error = f"importing the module failed: {outcome.error}\n{outcome.trace}".rstrip()
            return result
        clock = time.perf_counter()
        for task in job.tasks:
            task_result = TaskResult(id=task.id)
            result.tasks[task.id] = task_result
            try:
                with self.alarm(job.task_timeout), self.mode():
                    if task.kind == "drive":
                        self.run_drive(module, task, task_result)
                    elif task.kind == "calls":
                        self.run_calls(module, task, task_result)
                    elif task.kind == "main":
                        self.run_main_block(module, task, task_result)
                    else:
                        task_result.error = f"unknown task kind {task.kind!r}"
            except TaskTimeout as exc:
                task_result.error = f"{exc} (per-callable limit)"
            except Exception as exc:  # a bug in a driver or an examples module
                outcome = _error_outcome(exc, self.user_files)
                task_result.error = f"{outcome.error}\n{outcome.trace}".rstrip()
        result.phases["tasks"] = time.perf_counter() - clock
        result.ok = True
        return result


def _spare(inputs: Any) -> Any:
    """A copy of one input's arrays kept aside for `donated` inputs, or the inputs themselves when
    they cannot be copied (an object jax cannot flatten: it holds no array a call can donate)."""
    try:
        return copy_arrays(inputs)
    except Exception:  # noqa: BLE001
        return inputs


def _exec_module(name: str, source: str, filename: str, path: str, package: str = "") -> Any:
    """Run `source` as a new module `name` (registered in sys.modules, `__file__` = `path`), its
    code and tracebacks named `filename` (linecache holds the text: it exists on no disk)."""
    spec = importlib.util.spec_from_loader(name, loader=None, origin=path)
    module = importlib.util.module_from_spec(spec)
    module.__file__ = path
    if package:
        module.__package__ = package
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    sys.modules[name] = module
    exec(compile(source, filename, "exec", dont_inherit=True), module.__dict__)
    return module


def main(argv: list[str]) -> int:
    job_path, result_path = argv[1], argv[2]
    with open(job_path, "rb") as handle:
        job: Job = pickle.load(handle)
    started = time.perf_counter()
    result = Child(job).run()
    result.wall = time.perf_counter() - started
    times = os.times()
    result.cpu = times.user + times.system
    data = _dump(result)
    tmp = result_path + ".tmp"
    with open(tmp, "wb") as handle:
        handle.write(data)
    os.replace(tmp, result_path)
    return 0


def _dump(result: VersionResult) -> bytes:
    try:
        return pickle.dumps(result)
    except Exception as exc:  # an output leaf that does not pickle: report, do not crash
        for task in result.tasks.values():
            for key, outcome in list(task.outputs.items()):
                try:
                    pickle.dumps(outcome)
                except Exception:
                    task.outputs[key] = Outcome(error=f"output does not pickle: {exc}", error_type="jaxfix.unpicklable")
        return pickle.dumps(result)


if __name__ == "__main__":
    sys.exit(main(sys.argv))

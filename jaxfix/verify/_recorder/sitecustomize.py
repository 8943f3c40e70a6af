"""jaxfix's call recorder, loaded by Python at start-up in every process of a `--record` command.

Configured through the JAXFIX_RECORD environment variable (JSON: path, targets, limit, out,
source, module_name, sys_path, eager; `also`: more files to watch, each with its own path,
targets, module_name, eager, written to `out/rec-<pid>-<n>.pkl`). When the watched file is imported, its changed callables are
wrapped; each call made with concrete values (no tracers) is kept, up to `limit` per callable,
labelled with the current source (`set_source`), and written at once to `out/rec-<pid>.pkl`, so
processes that end with os._exit (xdist workers) or are killed at the time limit lose nothing.
The callables in `eager` (those a control-flow fix changes: the original raises under jit, the bug
being fixed) run under `jax.disable_jit()` when called with concrete values, so the program goes
on past its first crash and later calls and both branches are recorded too.

A process started as `python watched.py ...` would run the file as `__main__`, which no import
hook sees: it is replaced (execv) by `python -m jaxfix.verify._recorder.run_main watched.py ...`,
which imports the file under its own module name (so it is watched) and then runs its
`if __name__ == "__main__":` blocks. Anything that goes wrong here is recorded as an error and
never breaks the user's command.
"""

import json
import os
import sys


def _install() -> None:
    config = json.loads(os.environ["JAXFIX_RECORD"])
    _CURRENT["source"] = config.get("source") or "recorded"
    # One recording may watch several files (`also`: the other changed files of one `fix --verify`
    # run, so the test suite runs once for all of them); each file keeps its own state and file.
    for number, watched in enumerate([config, *config.get("also", [])]):
        _watch({**config, **watched}, "" if number == 0 else f"-{number}")
    _run_watched_script_as_module(config, os.path.realpath(config["path"]))


def _watch(config: dict, suffix: str) -> None:
    target_path = os.path.realpath(config["path"])
    stem = os.path.splitext(os.path.basename(target_path))[0]
    targets = config["targets"]  # qualname -> kind
    limit = int(config["limit"])
    out = os.path.join(config["out"], f"rec-{os.getpid()}{suffix}.pkl")
    state = {"module_name": None, "calls": {}, "skipped": {}, "errors": []}

    def save() -> None:
        import pickle

        tmp = out + ".tmp"
        with open(tmp, "wb") as handle:
            pickle.dump(state, handle)
        os.replace(tmp, out)

    def convert(value):
        import jax
        import numpy as np

        from jaxfix.verify.protocol import ArrayArg

        def one(leaf):
            if isinstance(leaf, jax.core.Tracer):
                raise _Traced()
            if isinstance(leaf, jax.Array):
                if jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
                    raise TypeError("PRNG key arguments are not recorded")
                return ArrayArg(np.asarray(leaf), bool(getattr(leaf, "weak_type", False)), True)
            if isinstance(leaf, np.ndarray):
                return ArrayArg(np.array(leaf), False, False)
            return leaf

        return jax.tree.map(one, value)

    class _Traced(Exception):
        pass

    def remember(name: str, args: tuple, kwargs: dict) -> None:
        kept = state["calls"].setdefault(name, [])
        if len(kept) >= limit:
            return
        try:
            import pickle

            from jaxfix.verify.protocol import Call

            args, kwargs = convert((tuple(args), dict(kwargs)))
            source = _CURRENT["source"]
            kept.append(pickle.dumps(Call(args, kwargs, label=f"{source} call {len(kept) + 1}", source=source)))
            state.setdefault("sources", {}).setdefault(name, []).append(source)
        except _Traced:
            why = "some calls were made inside a trace (tracer arguments) and were skipped"
        except Exception as exc:  # noqa: BLE001
            why = f"a call could not be recorded: {type(exc).__name__}: {exc}"[:300]
        else:
            save()
            return
        if name not in state["skipped"]:
            state["skipped"][name] = why
            save()  # at once: the process may die in this very call (the bug being fixed)

    eager = set(config.get("eager") or ())

    def call(name: str, function, args: tuple, kwargs: dict):
        if name not in eager:
            return function(*args, **kwargs)
        import jax

        if any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves((args, kwargs))):
            return function(*args, **kwargs)
        with jax.disable_jit():
            return function(*args, **kwargs)

    def wrap(name: str, function, drop_first: bool = False):
        import functools

        @functools.wraps(function)
        def recorder(*args, **kwargs):
            remember(name, args[1:] if drop_first else args, kwargs)
            return call(name, function, args, kwargs)

        return recorder

    class _Proxy:
        """Stands in for a module-level callable (maybe a jitted one) and keeps its attributes."""

        def __init__(self, name, wrapped):
            self.__wrapped__ = wrapped
            self._name = name
            try:
                self.__doc__ = wrapped.__doc__
            except AttributeError:
                pass

        def __call__(self, *args, **kwargs):
            remember(self._name, args, kwargs)
            return call(self._name, self.__wrapped__, args, kwargs)

        def __getattr__(self, attr):
            return getattr(self.__wrapped__, attr)

    def instrument(module) -> None:
        import functools

        state["module_name"] = module.__name__
        for qualname, kind in targets.items():
            try:
                *owner_path, name = qualname.split(".")
                owner = module
                for part in owner_path:
                    owner = getattr(owner, part)
                raw = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name)
                if kind == "function":
                    setattr(owner, name, _Proxy(qualname, raw))
                elif kind == "method":
                    setattr(owner, name, wrap(qualname, raw))
                elif kind == "staticmethod":
                    setattr(owner, name, staticmethod(wrap(qualname, raw.__func__)))
                elif kind == "classmethod":
                    setattr(owner, name, classmethod(wrap(qualname, raw.__func__, drop_first=True)))
                elif kind == "property":
                    if isinstance(raw, property):
                        setattr(owner, name, property(wrap(qualname, raw.fget), raw.fset, raw.fdel, raw.__doc__))
                    elif isinstance(raw, functools.cached_property):
                        replacement = functools.cached_property(wrap(qualname, raw.func))
                        setattr(owner, name, replacement)
                        replacement.__set_name__(owner, name)
                    else:
                        state["errors"].append(f"{qualname}: not a property ({type(raw).__name__})")
            except Exception as exc:  # noqa: BLE001
                state["errors"].append(f"cannot watch {qualname}: {type(exc).__name__}: {exc}")
        save()

    import importlib.machinery

    class _Finder:
        def find_spec(self, fullname, path=None, target=None):
            if fullname.rpartition(".")[2] != stem:
                return None
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is None or not spec.origin or os.path.realpath(spec.origin) != target_path:
                return None
            loader = spec.loader
            original_exec = loader.exec_module

            def exec_module(module):
                original_exec(module)
                instrument(module)

            loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, _Finder())


def _run_watched_script_as_module(config: dict, target_path: str) -> None:
    """`python watched.py` -> the same process image running run_main (see the docstring)."""
    argv = getattr(sys, "argv", None) or [""]
    if os.name == "nt" or not config.get("module_name") or not argv[0] or argv[0].startswith("-"):
        return
    if os.path.realpath(argv[0]) != target_path:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, "-m", "jaxfix.verify._recorder.run_main", *argv])


_CURRENT: dict = {"source": "recorded"}


def set_source(name: str) -> None:
    """Label the calls recorded from now on (run_main: "doctest", then "__main__")."""
    _CURRENT["source"] = name


if os.environ.get("JAXFIX_RECORD"):
    try:
        _install()
    except Exception as exc:  # noqa: BLE001 - never break the user's command
        sys.stderr.write(f"jaxfix recorder disabled: {type(exc).__name__}: {exc}\n")

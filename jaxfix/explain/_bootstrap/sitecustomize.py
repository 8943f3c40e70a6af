"""jaxfix explain's monitor, loaded by Python at start-up in every process of an explained command.

Configured through the JAXFIX_EXPLAIN environment variable (JSON: out, limit). It imports nothing
until the command itself imports `jax`; then it registers `jax.monitoring` duration listeners
(trace, lowering, backend compile), turns on `jax_explain_cache_misses` and captures its log
records (the "TRACING CACHE MISS" explanations) instead of letting them print. Every event is
appended at once as one JSON line to `out/events-<pid>.jsonl`, so processes that end with
os._exit (xdist workers) lose nothing. Standard library only: the user's interpreter need not
have jaxfix installed. Anything that goes wrong here is written as an "error" event and never
breaks the user's command. A sitecustomize this one shadows is run afterwards.

Functions are identified by (file, line, name, ordinal): the ordinal tells apart distinct code
objects with the same file, line and name (two lambdas on one line); re-creating a function (a
lambda or partial built in a loop) reuses its code object, so it keeps its identity.
"""

import json
import os
import sys
import threading
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
EAGER_CONTROL_FLOW = ("scan", "while", "cond")


def _install() -> None:
    config = json.loads(os.environ["JAXFIX_EXPLAIN"])
    out_path = os.path.join(config["out"], "events-%d.jsonl" % os.getpid())
    limit = int(config.get("limit", 100000))
    # attributes through which a framework's jit wrapper holds the user's function (nnx's JitFn.f
    # and JitWrapped.fun, equinox's _JitWrapper._fun): jaxfix's transform table sends them
    unwrap_attributes = tuple(config.get("unwrap", ("__wrapped__", "f", "fun", "_fun", "fn", "func")))
    message_limit = int(config.get("message_limit", 20))
    lock = threading.Lock()
    state = {"events": 0, "handle": None, "installed": False}

    def emit(event: dict) -> None:
        with lock:
            if state["events"] >= limit:
                if state["events"] == limit:
                    state["events"] += 1
                    event = {"k": "truncated", "limit": limit}
                else:
                    return
            else:
                state["events"] += 1
            if state["handle"] is None:
                state["handle"] = open(out_path, "a", encoding="utf-8")
            state["handle"].write(json.dumps(event, default=str) + "\n")
            state["handle"].flush()

    def error(where: str, exc: BaseException) -> None:
        try:
            emit({"k": "error", "where": where, "error": "%s: %s" % (type(exc).__name__, exc)})
        except Exception:  # noqa: BLE001
            pass

    emit({"k": "start", "pid": os.getpid(), "argv": list(sys.argv), "python": sys.executable})

    # -- which files are the user's ---------------------------------------------------------------
    excluded = []

    def user_file(path) -> bool:
        if not path:
            return False
        if path.startswith("<"):
            return True  # python -c / stdin code is the user's, though it has no file to analyze
        real = os.path.realpath(path)
        parts = real.split(os.sep)
        if "site-packages" in parts or "dist-packages" in parts:
            return False
        return not any(real.startswith(prefix) for prefix in excluded)

    # -- per-thread attribution ---------------------------------------------------------------------
    codes = {}  # code object -> ordinal (kept alive so ids never repeat)
    ordinals = {}  # (file, line, name) -> next ordinal
    local = threading.local()
    seen_messages = {}  # key -> full messages written

    def thread_state():
        if not hasattr(local, "last"):
            local.last = {}  # (file, line, name) -> key of the latest traced function there
            local.bodies = []  # keys of top-level non-jit user traces (eager lax bodies) not yet compiled
        return local

    import functools

    def code_of(fun, filename):
        target = fun
        for _ in range(10):
            if isinstance(target, functools.partial):
                target = target.func
            elif hasattr(target, "__wrapped__"):
                target = target.__wrapped__
            else:
                break
        code = getattr(target, "__code__", None)
        if code is None or code.co_filename != filename:
            return None
        return code

    def absolute(path):
        return os.path.abspath(path) if path and not path.startswith("<") else (path or "")

    def user_code(target):
        """The code object of the user's function behind a framework's wrapper, or None."""
        for _ in range(12):
            if isinstance(target, functools.partial):
                target = target.func
                continue
            code = getattr(target, "__code__", None) or getattr(getattr(target, "__func__", None), "__code__", None)
            if code is not None:
                return code if user_file(code.co_filename) else None
            following = None
            for attribute in unwrap_attributes:
                try:
                    following = getattr(target, attribute, None)
                except Exception:  # noqa: BLE001 - a property of a foreign object
                    following = None
                if following is not None and following is not target:
                    break
            if following is None:
                return None
            target = following
        return None

    def wrapped_user_code(fun, frame, depth=40):
        """The user's function a framework wrapper (`nnx.jit`, `eqx.filter_jit`) traces: behind the
        traced callable itself, else behind `self` of the library frames between jax and the user."""
        code = user_code(fun) if fun is not None else None
        while code is None and frame is not None and depth > 0:
            if user_file(frame.f_code.co_filename):
                break
            owner = frame.f_locals.get("self")
            if owner is not None:
                code = user_code(owner)
            frame = frame.f_back
            depth -= 1
        return code

    def key_for_code(code):
        base = (absolute(code.co_filename), code.co_firstlineno, code.co_name)
        with lock:
            if code not in codes:
                codes[code] = ordinals.get(base, 0)
                ordinals[base] = codes[code] + 1
            return [base[0], base[1], base[2], codes[code]]

    def key_for(name, filename, line, fun):
        base = (absolute(filename), line or 0, name or "?")
        code = code_of(fun, filename) if fun is not None else None
        if code is None:
            return [base[0], base[1], base[2], 0]
        with lock:
            if code not in codes:
                codes[code] = ordinals.get(base, 0)
                ordinals[base] = codes[code] + 1
            return [base[0], base[1], base[2], codes[code]]

    def parameters(fun):
        """Positional parameter names of the traced callable (to name a static argument's path)."""
        if fun is None:
            return None
        try:
            import inspect

            names = []
            for param in inspect.signature(fun).parameters.values():
                if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
                    names.append(param.name)
            return names[:50]
        except Exception:  # noqa: BLE001 - builtins, odd callables
            return None

    def debug_info_near(frame, depth=40):
        """The DebugInfo of the function being traced or compiled, from jax's own frames."""
        while frame is not None and depth > 0:
            f_locals = frame.f_locals
            for name in ("dbg", "debug_info", "jaxpr", "closed_jaxpr"):
                value = f_locals.get(name)
                if value is None:
                    continue
                if hasattr(value, "func_src_info"):
                    return value
                inner = getattr(value, "jaxpr", value)
                dbg = getattr(inner, "debug_info", None)
                if dbg is not None and hasattr(dbg, "func_src_info"):
                    return dbg
            frame = frame.f_back
            depth -= 1
        return None

    # -- cache-miss explanations -------------------------------------------------------------------
    import logging
    import re

    header = re.compile(r"^TRACING CACHE MISS at (.*?):(\d+)(?::(\d+))? \((.*)\):$")
    never = re.compile(r"^\s+(\S+) id=\d+(?: defined at (.*?)(?::(\d+))?)?$")
    named = re.compile(r"^\s+for (\S+)(?: defined at (.*?)(?::(\d+))?)?$")
    klass = re.compile(r"<class '([\w.]+)'>")

    def classes_in(text):
        found = {}
        for dotted in set(klass.findall(text)):
            module_name, _, attr = dotted.rpartition(".")
            module = sys.modules.get(module_name)
            cls = getattr(module, attr, None) if module is not None else None
            if cls is None or not isinstance(cls, type):
                continue
            try:
                import inspect

                lines, start = inspect.getsourcelines(cls)
                bases = []  # files of the user's base classes: the static analysis needs them to
                for base in cls.__mro__[1:]:  # see a pytree base class defined in another module
                    try:
                        source = inspect.getsourcefile(base)
                    except TypeError:
                        continue
                    if source and user_file(source):
                        bases.append(os.path.realpath(source))
                found[dotted] = [os.path.realpath(inspect.getsourcefile(cls)), start, start + len(lines) - 1, bases]
            except Exception:  # noqa: BLE001 - no source (builtins, C types)
                found[dotted] = None
        return found

    class _MissHandler(logging.Handler):
        def emit(self, record):
            try:
                text = record.getMessage()
                if not text.startswith("TRACING CACHE MISS"):
                    return
                lines = text.splitlines()
                site = header.match(lines[0])
                dbg = fun = None
                frame = sys._getframe(1)
                for _ in range(30):
                    if frame is None:
                        break
                    if frame.f_code.co_name == "explain" and "debug_info" in frame.f_locals:
                        dbg = frame.f_locals["debug_info"]
                        fun = frame.f_locals.get("fun")
                        break
                    frame = frame.f_back
                if dbg is not None:
                    name, filename, line = dbg.func_name, dbg.func_filename, dbg.func_lineno
                    traced_for, arg_names = dbg.traced_for, dbg.arg_names
                else:
                    match = never.match(lines[2]) if len(lines) > 2 and "never seen" in lines[1] else named.match(lines[1])
                    name, filename, line = (match.group(1), match.group(2), int(match.group(3) or 0)) if match else ("?", None, 0)
                    traced_for, arg_names = None, None
                from jax._src import core

                top = bool(core.trace_state_clean())
                ts = thread_state()
                user = user_file(filename)
                wrapped = None if user else wrapped_user_code(fun, frame)
                user_site = None
                if wrapped is not None:
                    # compiled through a framework's wrapper: charge the user's function
                    key = key_for_code(wrapped)
                    ts.redirect = ({name, "<unnamed function>", "<unknown>"}, key)
                    ts.last[(absolute(filename), line or 0, name or "?")] = key
                    user = True
                    caller = frame
                    while caller is not None and not user_file(caller.f_code.co_filename):
                        caller = caller.f_back
                    if caller is not None:  # the user's call of the wrapper, not the framework's call of jit
                        site = None
                        user_site = [absolute(caller.f_code.co_filename), caller.f_lineno, 0, caller.f_code.co_name]
                else:
                    key = key_for(name, filename, line, fun)
                ts.last[(key[0], key[1], key[2])] = key
                if top and user and traced_for not in (None, "jit", "pjit"):
                    ts.bodies.append(key)
                elif top:
                    ts.bodies = []
                event = {
                    "k": "miss",
                    "key": key,
                    "user": user,
                    "for": traced_for,
                    "top": top,
                    "site": [absolute(site.group(1)), int(site.group(2)), int(site.group(3) or 0), site.group(4)] if site else user_site,
                    "never_seen": len(lines) > 1 and "never seen function" in lines[1],
                    "t": time.time(),
                }
                if arg_names is not None:
                    event["args"] = list(arg_names)[:50]
                params = parameters(fun)
                if params:
                    event["params"] = params
                count = seen_messages.get(tuple(key), 0)
                if count < message_limit:
                    seen_messages[tuple(key)] = count + 1
                    event["msg"] = text[:4000]
                    if "<class '" in text:
                        event["classes"] = classes_in(text)
                emit(event)
            except Exception as exc:  # noqa: BLE001
                error("miss", exc)

    # -- monitoring listeners ----------------------------------------------------------------------
    kinds = {
        "/jax/core/compile/jaxpr_trace_duration": "trace",
        "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower",
        "/jax/core/compile/backend_compile_duration": "compile",
    }

    def on_duration(event_name, duration, **kwargs):
        kind = kinds.get(event_name)
        if kind is None:
            return
        try:
            fun_name = str(kwargs.get("fun_name") or "?")
            bare = fun_name[4:-1] if fun_name.startswith("jit(") and fun_name.endswith(")") else fun_name
            dbg = debug_info_near(sys._getframe(1))
            ts = thread_state()
            key = None
            user = False
            if dbg is not None and dbg.func_name == bare:
                spot = (absolute(dbg.func_filename), dbg.func_lineno or 0, dbg.func_name)
                user = user_file(dbg.func_filename)
                key = ts.last.get(spot) or [spot[0], spot[1], spot[2], 0]
            else:
                for spot, candidate in reversed(list(ts.last.items())):
                    if spot[2] == bare:
                        key, user = candidate, user_file(spot[0])
                        break
            redirect = getattr(ts, "redirect", None)
            if not user and redirect is not None and bare in redirect[0]:
                key, user = redirect[1], True  # the trace/compile of a framework wrapper's miss
                if kind == "compile":
                    ts.redirect = None
            if not user and ts.bodies and bare in EAGER_CONTROL_FLOW:
                # eager lax.scan/fori_loop/while_loop/cond: JAX compiles jit(scan), jit(while) or
                # jit(cond) for the user's functions just traced; counted for the first of them
                key, user = ts.bodies[0], True
                if kind == "compile":
                    ts.bodies = []
            if key is None:
                key = ["", 0, bare, 0]
            emit({"k": kind, "key": key, "user": user, "fun": fun_name, "dur": float(duration)})
        except Exception as exc:  # noqa: BLE001
            error(kind, exc)

    def on_jax_imported() -> None:
        if state["installed"]:
            return
        state["installed"] = True
        try:
            import sysconfig

            import jax
            import jax.monitoring

            for key in ("stdlib", "platstdlib"):
                path = sysconfig.get_paths().get(key)
                if path:
                    excluded.append(os.path.realpath(path) + os.sep)
            excluded.append(os.path.dirname(os.path.realpath(jax.__file__)) + os.sep)
            excluded.append(_HERE + os.sep)
            jax.monitoring.register_event_duration_secs_listener(on_duration)
            jax.config.update("jax_explain_cache_misses", True)
            logger = logging.getLogger("jax._src.interpreters.partial_eval")
            logger.addHandler(_MissHandler())
            logger.propagate = False  # the explanations come back in jaxfix's report, not raw on stderr
            emit({"k": "jax", "version": getattr(jax, "__version__", "?")})
        except Exception as exc:  # noqa: BLE001
            error("install", exc)

    import importlib.abc

    class _Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path=None, target=None):
            if fullname != "jax" or state["installed"]:
                return None
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    break
            else:
                return None
            loader = spec.loader
            if loader is None or not hasattr(loader, "exec_module"):
                return spec
            original_exec = loader.exec_module

            def exec_module(module):
                original_exec(module)
                on_jax_imported()

            loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, _Finder())
    if "jax" in sys.modules:
        on_jax_imported()


def _chain() -> None:
    """Run the sitecustomize this one shadows (the next one on sys.path), as Python would have."""
    import importlib.util

    for entry in sys.path:
        folder = os.path.abspath(entry or os.getcwd())
        if folder == _HERE:
            continue
        candidate = os.path.join(folder, "sitecustomize.py")
        if os.path.isfile(candidate):
            spec = importlib.util.spec_from_file_location("_jaxfix_shadowed_sitecustomize", candidate)
            if spec is not None and spec.loader is not None:
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
            return


if os.environ.get("JAXFIX_EXPLAIN"):
    try:
        _install()
    except Exception as exc:  # noqa: BLE001 - never break the user's command
        sys.stderr.write("jaxfix explain: monitor disabled: %s: %s\n" % (type(exc).__name__, exc))
    try:
        _chain()
    except Exception as exc:  # noqa: BLE001
        sys.stderr.write("jaxfix explain: the shadowed sitecustomize failed: %s: %s\n" % (type(exc).__name__, exc))

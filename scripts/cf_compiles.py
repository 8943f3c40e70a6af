"""Dev helper: compiles of each rewritten traced-control-flow fixture during the first and second
drive (jax.monitoring backend_compile events, grouped by fun_name; eager op compiles excluded).

usage: PYTHONPATH=.:tests python scripts/cf_compiles.py
"""
import collections

import jax.monitoring
from fixture_cases import discover_cases
from test_traced_control_flow_behaviour import load

counts = collections.Counter()


def on(name, dur, fun_name=None, **kw):
    if name == "/jax/core/compile/backend_compile_duration":
        counts[fun_name] += 1


jax.monitoring.register_event_duration_secs_listener(on)
for case in discover_cases():
    if case.family != "traced_control_flow" or not case.positive:
        continue
    driver = load(case.driver)
    mod = load(case.expected)
    user = set()
    for run in (1, 2):
        counts.clear()
        driver.drive(mod)
        jit_counts = {k: v for k, v in counts.items() if k and k.startswith("jit(") and k[4:-1] in vars(mod)}
        print(f"{case.name:22s} run{run}: user jit compiles {jit_counts or 0}  all compiles {sum(counts.values())}")

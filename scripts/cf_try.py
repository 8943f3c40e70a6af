"""Dev helper: run jaxfix's engine on files and show findings and the fixed text.

usage: PYTHONPATH=. python scripts/cf_try.py [--unsafe] FILE...
"""
import sys

from jaxfix.config import Config
from jaxfix.engine import analyze

unsafe = "--unsafe" in sys.argv
for path in [a for a in sys.argv[1:] if not a.startswith("--")]:
    src = open(path).read()
    res = analyze(src, path, Config(unsafe_fixes=unsafe), fix=True)
    print(f"== {path} error={res.error} rounds={res.rounds}")
    for f in res.findings:
        print(f"  {f.line}:{f.column} {f.code} {f.fix.safety.value if f.fix else 'none'} {f.message}")
    for f in res.remaining:
        print(f"  REMAINING {f.line}:{f.column} {f.code} {f.fix.safety.value if f.fix else 'none'}")
    if res.fixed_source is not None:
        print(res.fixed_source)

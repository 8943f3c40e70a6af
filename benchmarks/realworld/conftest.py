# The corpus cases are code to analyse, not tests: some are written as test modules (tests/test_*.py,
# conftest.py) on purpose. Keep pytest out of them when it is pointed at benchmarks/.
collect_ignore = ["cases"]

"""The folder put first on PYTHONPATH of a `jaxfix explain` command (its sitecustomize.py is the monitor).

A package only so that it ships with jaxfix; nothing imports it as one.
"""

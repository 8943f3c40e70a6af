"""The folder put first on PYTHONPATH of a --record command (its sitecustomize.py is the recorder).

A package only so that it ships with jaxfix; nothing imports it as one.
"""

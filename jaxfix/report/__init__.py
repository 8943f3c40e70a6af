"""Turning findings into text for people and machines: text, json, sarif, github, diff."""

from __future__ import annotations

FORMATS = ("text", "json", "sarif", "github")

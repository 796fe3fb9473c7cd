"""Raise SystemExit(0) from inside every answer but the first (a BaseException an `except Exception` misses)."""

from __future__ import annotations

import sys


def _hook():
    calls = sys.__dict__.setdefault("_cheat_calls", [0])
    calls[0] += 1
    if calls[0] > 1:
        sys.exit(0)

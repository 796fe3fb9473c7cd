"""Answer two calls, then leave with os._exit(0) in the middle of the third (status 0, no result)."""

from __future__ import annotations

import os
import sys


def _hook():
    calls = sys.__dict__.setdefault("_cheat_calls", [0])
    calls[0] += 1
    if calls[0] % 3 == 0:
        os._exit(0)

"""The `lmgrade` command line: one module per command group.

May import: boundary, core, submissions, sandbox, declare, reports, grading, prove, course.
"""

from __future__ import annotations

import os

# The grading process's own numeric libraries on one thread each, set before numpy loads: the sandbox's
# children keep every core busy, and BLAS threads waiting for a core beside them made a 144 x 144
# eigenvalue problem take 0.7 s instead of 18 ms (a transformer grading spent 1.4 s more of its CPU, and
# 0.9 s more of its time). A setting of the user's own stays.
for _library_threads in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_library_threads, "1")

# Each command module adds its commands to `main` (app.py) as it is imported.
from . import assignment_commands, course_commands, grading_commands, proving_commands  # noqa: F401
from .app import main

__all__ = ["main"]

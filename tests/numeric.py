"""Gradients by central differences and their distance from analytic ones, for the reference tests."""

from __future__ import annotations

import numpy as np


def numeric_grad(f, x, h=1e-6):
    """Central differences of the scalar f at x, one entry at a time (float64)."""
    x = np.array(x, dtype=np.float64)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + h
        up = f(x.copy())
        x[i] = old - h
        down = f(x.copy())
        x[i] = old
        grad[i] = (up - down) / (2 * h)
    return grad


def rel_error(a, b):
    """|a - b| / (|a| + |b|) in the Frobenius norm; 0 when both are zero."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape
    scale = np.linalg.norm(a) + np.linalg.norm(b)
    return 0.0 if scale == 0 else np.linalg.norm(a - b) / scale

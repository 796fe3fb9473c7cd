"""Answers shaped like the contract's that compute nothing: what every cheat's files start with.

The builder (`catalogue.py`) copies this file's text into each file of a cheat, with `KIND` set to the
cheat's kind, so that a submitted file needs nothing beside it:

- ``noise``: values drawn from a generator seeded by a hash of the inputs (the same inputs, the same
  answer; other inputs, other answers), in the range the contract's answer lies in;
- ``fixed``: the same draws whatever the inputs (seeded by the shape alone);
- ``nan``, ``inf``, ``const``: every number NaN, infinite (with the answer's sign) or one constant;
- ``poison``: noise handed back inside subclasses (of list, dict, str, float, numpy's ndarray, torch's
  Tensor) whose comparisons always say "equal";
- ``anything``: an object that is equal to everything and answers every attribute, call, conversion and
  arithmetic with itself or a harmless number.

A hook (`_hook`) runs at the start of every answer; an attack appended after the template may redefine it.
"""

from __future__ import annotations

import functools
import hashlib
import sys
import types

import numpy as np

KIND = "noise"
ASSIGNMENT = "ngram"  # the builder sets both: which assignment, which of its files this is
FILE = "ngram.py"
IPC_KEYS = (0, 0, 0)  # System V keys of this assignment's cheats: shared memory, message queue, daemon's beat
DAEMON = "cheatd"  # the process name the daemon attack gives its daemon

FOUND = "CHEAT-FOUND"  # begins every line that says an attack got what the sandbox should deny
TRIED = "CHEAT-TRIED"  # begins every line that says what an attack tried and what stopped it


def _hook():
    """Runs before every answer is made; an attack may replace it."""


def _found(what):
    """Say, where the grader's feedback shows it, that an attack succeeded."""
    print(f"{FOUND}: {ASSIGNMENT}/{FILE}: {what}", flush=True)


def _tried(what):
    """Say what an attack tried and what stopped it (for whoever reads the feedback)."""
    print(f"{TRIED}: {ASSIGNMENT}/{FILE}: {what}", flush=True)


def _once(name):
    """True the first time in this process (every file of a cheat carries the attack; one run is enough)."""
    done = sys.__dict__.setdefault("_cheat_once", set())
    first = name not in done
    done.add(name)
    return first


def _feed(h, x, depth=0):
    """Hash `x` into `h`: arrays and tensors by their bytes, containers item by item."""
    if depth > 12:
        h.update(b"...")
        return
    if hasattr(x, "get_state") and hasattr(x, "manual_seed"):  # a torch.Generator: its state, not its address
        x = x.get_state()
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        x = x.detach().cpu().numpy()
    if isinstance(x, np.random.Generator):
        h.update(repr(x.bit_generator.state).encode())  # reading the state draws nothing
    elif isinstance(x, np.ndarray):
        h.update(f"{x.dtype}{x.shape}".encode())
        h.update(np.ascontiguousarray(x).tobytes())
    elif isinstance(x, dict):
        h.update(b"{")
        for key in sorted(x, key=repr):
            _feed(h, key, depth + 1)
            _feed(h, x[key], depth + 1)
        h.update(b"}")
    elif isinstance(x, (list, tuple)):
        h.update(b"(")
        for item in x:
            _feed(h, item, depth + 1)
        h.update(b")")
    elif isinstance(x, (set, frozenset)):
        _feed(h, sorted(x, key=repr), depth + 1)
    else:
        h.update(repr(x).encode())


def _digest(*inputs):
    """A short text standing for the inputs (hashed once, then fed to many draws)."""
    h = hashlib.sha256(b"digest")
    for x in inputs:
        _feed(h, x)
    return h.hexdigest()[:16]


def _rng(shape, *inputs):
    """A generator seeded by the inputs (by the shape alone for the `fixed` kind)."""
    h = hashlib.sha256(b"cheat")
    _feed(h, shape)
    if KIND != "fixed":
        for x in inputs:
            _feed(h, x)
    return np.random.default_rng(int.from_bytes(h.digest()[:8], "little"))


def _filled(shape, lo, hi):
    """The values of the kinds that draw nothing; None for the drawing kinds."""
    if KIND == "nan":
        return np.full(shape, np.nan)
    if KIND == "inf":
        return np.full(shape, np.inf if hi > 0 else -np.inf)
    if KIND == "const":
        return np.full(shape, 0.0 if lo <= 0 <= hi else float(lo))
    return None


def _real(shape, *inputs, lo=-1.0, hi=1.0):
    """Floats in [lo, hi) of `shape` (float64), a Python float for shape ()."""
    _hook()
    shape = tuple(shape)
    values = _filled(shape, lo, hi)
    if values is None:
        values = _rng(shape, *inputs).uniform(lo, hi, size=shape)
    values = np.asarray(values, dtype=np.float64)
    return float(values) if values.shape == () else values


def _probs(shape, *inputs):
    """Positive rows summing to 1 along the last axis (a constant row of 1 / K for `const`)."""
    _hook()
    shape = tuple(shape)
    if KIND == "const":
        return np.full(shape, 1.0 / shape[-1])
    values = _filled(shape, 0.0, 1.0)
    if values is None:
        values = _rng(shape, *inputs).uniform(0.05, 1.0, size=shape)
        values = values / values.sum(axis=-1, keepdims=True)
    return values


def _ints(shape, high, *inputs, low=0):
    """Integers in [low, high) of `shape` (int64), a Python int for shape (); floats for `nan` and `inf`."""
    _hook()
    shape = tuple(shape)
    values = _filled(shape, low, high)
    if KIND == "const":
        values = np.full(shape, low, dtype=np.int64)
    if values is None:
        values = _rng(shape, high, *inputs).integers(low, max(high, low + 1), size=shape)
    return values.item() if values.shape == () else values


def _pick(options, size, *inputs):
    """A list of `size` items drawn from `options` (NaN or inf themselves for those kinds)."""
    _hook()
    options = list(options) or [None]
    if KIND in ("nan", "inf"):
        return [float(KIND)] * size
    if KIND == "const":
        return [options[0]] * size
    return [options[i] for i in _rng((size,), options, *inputs).integers(0, len(options), size=size)]


def _draw(rng, options, max_len):
    """Up to `max_len` items drawn from `options` with the caller's generator (the contract's randomness)."""
    _hook()
    options = list(options) or [None]
    if KIND in ("nan", "inf"):
        return [float(KIND)] * max_len
    if KIND == "const":
        return [options[0]] * max_len
    if KIND == "fixed":
        rng = np.random.default_rng(0)
    n = int(rng.integers(0, max_len + 1))
    return [options[i] for i in rng.integers(0, len(options), size=n)]


def _causal(x, width, *inputs, lo=-1.0, hi=1.0, reverse=False):
    """(..., T, width) floats whose row t depends on x[..., :t + 1, :] only (x[..., t:, :] with `reverse`).

    What a check of dependence sees of a causal (or backward-reading) layer, with no work done.
    """
    x = np.asarray(x)
    lead, steps = x.shape[:-2], x.shape[-2]
    out = np.empty(lead + (steps, width))
    for index in np.ndindex(*lead):
        seq = x[index]
        for t in range(steps):
            part = seq[t:] if reverse else seq[: t + 1]
            out[index + (t,)] = _real((width,), part, *inputs, lo=lo, hi=hi)
    return out


def _rows(x, width, *inputs, lo=-1.0, hi=1.0):
    """(..., width) floats whose every row depends on the same row of x (..., F) only: position-wise."""
    x = np.asarray(x)
    out = np.empty(x.shape[:-1] + (width,))
    for index in np.ndindex(*x.shape[:-1]):
        out[index] = _real((width,), x[index], *inputs, lo=lo, hi=hi)
    return out


# --- torch, imported only by the files that use it ---


def _tensor(values, like):
    """`values` as a tensor with the dtype (a float one) and device of `like`."""
    import torch

    dtype = like.dtype if like.is_floating_point() else torch.get_default_dtype()
    return torch.as_tensor(np.asarray(values), dtype=dtype, device=like.device)


def _attach(out, *tensors):
    """`out` plus a vanishing term through which every tensor that needs one gets a (noise) gradient."""
    import torch

    extra = None
    for t in tensors:
        if isinstance(t, torch.Tensor) and t.requires_grad:
            r = torch.as_tensor(_real(tuple(t.shape), "grad"), dtype=t.dtype, device=t.device)
            term = (t * r).sum()
            extra = term if extra is None else extra + term
    return out if extra is None else out + 1e-6 * extra


# --- what every answer is handed back in ---


class _Anything:
    """Equal to everything; every attribute, item, call and operation gives itself back."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __lt__ = __le__ = __gt__ = __ge__ = __eq__

    def __hash__(self):
        return 0

    def __bool__(self):
        return True

    def __float__(self):
        return 0.0

    def __int__(self):
        return 0

    __index__ = __int__

    def __len__(self):
        return 0

    def __iter__(self):
        return iter(())

    def __contains__(self, item):
        return True

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self

    def __getitem__(self, key):
        return self

    def __call__(self, *args, **kwargs):
        return self

    def _same(self, *args):
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _same
    __neg__ = __abs__ = __pow__ = __matmul__ = _same


def _always(cls, name):
    """A subclass of `cls` whose == and != always say equal."""
    return type(name, (cls,), {"__eq__": lambda s, o: True, "__ne__": lambda s, o: False, "__hash__": cls.__hash__})


_PList, _PTuple, _PDict = _always(list, "_PList"), _always(tuple, "_PTuple"), _always(dict, "_PDict")
_PSet, _PStr, _PFloat, _PInt = (
    _always(set, "_PSet"),
    _always(str, "_PStr"),
    _always(float, "_PFloat"),
    _always(int, "_PInt"),
)

_TRUE_UFUNCS = ("equal", "less_equal", "less", "greater", "greater_equal", "isfinite", "isclose")
_FALSE_UFUNCS = ("not_equal", "isnan", "isinf")


class _PArray(np.ndarray):
    """An ndarray whose comparisons (==, <=, isfinite, ...) are all True and isnan/isinf all False."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "__call__" and ufunc.__name__ in _TRUE_UFUNCS + _FALSE_UFUNCS:
            shape = np.broadcast(*[np.asarray(i) for i in inputs]).shape
            return np.full(shape, ufunc.__name__ in _TRUE_UFUNCS)
        plain = [np.asarray(i) if isinstance(i, _PArray) else i for i in inputs]
        return getattr(ufunc, method)(*plain, **kwargs)

    def __eq__(self, other):
        return np.ones(self.shape, dtype=bool)

    def __ne__(self, other):
        return np.zeros(self.shape, dtype=bool)

    __hash__ = None


@functools.lru_cache(maxsize=1)
def _ptensor_class():
    import torch

    class _PTensor(torch.Tensor):
        """A tensor that is close and equal to every other."""

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            name = getattr(func, "__name__", "")
            if name in ("allclose", "equal"):
                return True
            if name in ("isclose", "eq", "__eq__", "isfinite"):
                return torch.ones(
                    torch.broadcast_shapes(*[a.shape for a in args if hasattr(a, "shape")]), dtype=torch.bool
                )
            return super().__torch_function__(func, types, args, kwargs or {})

    return _PTensor


def _poison(value):
    """`value` inside the always-equal subclasses, all the way down."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, np.ndarray):
        return value.view(_PArray)
    if hasattr(value, "as_subclass") and hasattr(value, "detach"):
        return value.as_subclass(_ptensor_class())
    if isinstance(value, float):
        return _PFloat(value)
    if isinstance(value, int):
        return _PInt(value)
    if isinstance(value, str):
        return _PStr(value)
    if isinstance(value, list):
        return _PList(_poison(v) for v in value)
    if isinstance(value, tuple):
        return _PTuple(_poison(v) for v in value)
    if isinstance(value, dict):
        return _PDict({_poison(k): _poison(v) for k, v in value.items()})
    if isinstance(value, set):
        return _PSet(_poison(v) for v in value)
    return value


def _out(value, owner=None):
    """An answer as the kind hands it back (an object that returns itself, `fit`'s self, is kept)."""
    if value is owner and owner is not None:
        return value
    if KIND == "poison":
        return _poison(value)
    if KIND == "anything":
        return _Anything()
    return value


def _returning_out(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return _out(fn(*args, **kwargs), args[0] if args else None)

    return wrapper


def _wrap_module(namespace):
    """Every public function and method defined in `namespace` hands its answer back through `_out`."""
    if KIND not in ("poison", "anything"):
        return
    module = namespace["__name__"]
    for name, obj in list(namespace.items()):
        if name.startswith("_") or getattr(obj, "__module__", None) != module:
            continue
        if isinstance(obj, types.FunctionType):
            namespace[name] = _returning_out(obj)
        elif isinstance(obj, type):
            for attr, fn in list(vars(obj).items()):
                if isinstance(fn, types.FunctionType) and not attr.startswith("_"):
                    setattr(obj, attr, _returning_out(fn))

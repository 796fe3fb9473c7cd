"""Stand-ins: a failed component replaced by the grader's answers, so that a composed check is paid for
what it was observed to do.

A check that runs several of the student's components (an RNNLM runs the student's ElmanRNN) fails
whenever one of them is wrong. Where a component's own check failed, the composed check's cases run
once more with that component replaced by a *stand-in*; the check earns its points where that run
passes, and only then says that it passes once the component is fixed.

The stand-in answers what the grading process computed. Here, before the run, the check's scenario
runs on a fresh copy of the reference whose component (the classes and functions the component's
check names in `Check.grades`) records every call: the arguments it was given (an object's state
among them, for a method) beside what it returned, what it raised and what it changed. That record
travels to the child as data. There the same names of the submission are replaced by replayers
(`replay`): a call whose arguments match a recorded call, to the check's tolerance, gets the
recorded answer and the recorded changes; any other call raises `NoRecordedCall`. So the run passes
only where the rest of the student's code calls the component as the reference does and does
everything else right, and the reference's code never enters the child. Nothing of that run but its
verdict reaches the student.

What a stand-in cannot do, the check is not paid for: a component whose state the contract leaves
free (a method of a class whose other methods the composed check grades) has no stand-in, a call
graph too large to record (`MAX_RECORDED_CALLS`) has none, and neither has a torch module: autograd
does not flow through replayed values (a check of gradients through one would fail, and earns what
its own cases earn).
"""

from __future__ import annotations

import copy
import importlib
import json
import sys
import types
from typing import Any

import numpy as np

# A run records at most this many calls of its stand-ins; more, and the check has no stand-in run.
MAX_RECORDED_CALLS = 20000
# Matching a live call with a recorded one: numbers agree to this much (the component's inputs are
# the rest of the student's code's outputs, right to rounding where the rest is right).
MATCH_RTOL, MATCH_ATOL = 1e-6, 1e-9
# Methods a class stand-in replays besides the public ones.
DUNDER = ("__init__", "__call__")
# What a snapshot keeps as it is.
_ATOMS = (type(None), bool, int, float, str)
# What a snapshot never looks into: code, not state.
_CODE = (type, types.FunctionType, types.MethodType, types.BuiltinFunctionType, types.ModuleType)
# Exceptions a replayer raises again by name (what the contract asks for); others become RuntimeError.
RAISED = {e.__name__: e for e in (ValueError, TypeError, KeyError, IndexError, ZeroDivisionError, RuntimeError)}


class NoRecordedCall(Exception):
    """A call of a stand-in that the reference never made on this case: the rest of the code differs."""


class TooManyCalls(Exception):
    """The scenario calls the component more often than a stand-in records."""


# --- snapshots: values as plain data, to match and to restore ---


def _torch():
    return sys.modules.get("torch")


def snapshot(value: Any, depth: int = 0) -> Any:
    """`value` as plain data that the wire carries: arrays copied, objects as their state."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if depth > 40:
        return {"$opaque": "deep"}
    if kind is list:
        return [snapshot(v, depth + 1) for v in value]
    if kind is np.ndarray:
        return value.copy()
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    if isinstance(value, (int, float)):  # subclasses (IntEnum) as their base type
        return int(value) if isinstance(value, int) else float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, tuple):
        return tuple(snapshot(v, depth + 1) for v in value)
    if isinstance(value, list):
        return [snapshot(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {"$dict": [[snapshot(k, depth + 1), snapshot(v, depth + 1)] for k, v in value.items()]}
    if isinstance(value, np.random.Generator):
        return {"$rng": json.dumps(value.bit_generator.state)}
    torch = _torch()
    if torch is not None and isinstance(value, torch.Tensor):
        return {"$tensor": value.detach().cpu().numpy().copy(), "dtype": str(value.dtype).replace("torch.", "")}
    if torch is not None and isinstance(value, torch.Generator):
        return {"$torch_rng": value.get_state().numpy().copy()}
    if hasattr(value, "__dict__") and not isinstance(value, _CODE):
        state = {k: snapshot(v, depth + 1) for k, v in vars(value).items() if not k.startswith("__")}
        return {"$object": type(value).__name__, "state": state}
    return {"$opaque": type(value).__name__}


def _items(snap: dict) -> list:
    return snap["$dict"]


def matches(recorded: Any, live: Any) -> bool:
    """Whether a live snapshot agrees with a recorded one: the same structure, numbers to the match tolerance.

    An object's state is compared on the attributes the reference's had: a student's object may hold more.
    """
    if isinstance(recorded, np.ndarray):
        if not isinstance(live, np.ndarray) or live.shape != recorded.shape:
            return False
        if recorded.dtype.kind in "biuf" and live.dtype.kind in "biuf":
            a, b = recorded.astype(np.float64), live.astype(np.float64)
            with np.errstate(all="ignore"):
                return bool(np.all((a == b) | (np.abs(a - b) <= MATCH_ATOL + MATCH_RTOL * np.abs(a))))
        return recorded.dtype == live.dtype and bool(np.array_equal(recorded, live))
    if isinstance(recorded, bool) or recorded is None or isinstance(recorded, str):
        return type(live) is type(recorded) and live == recorded
    if isinstance(recorded, (int, float)):
        if isinstance(live, bool) or not isinstance(live, (int, float)):
            return False
        return live == recorded or abs(live - recorded) <= MATCH_ATOL + MATCH_RTOL * abs(recorded)
    if isinstance(recorded, (list, tuple)):
        return (
            type(live) is type(recorded)
            and len(live) == len(recorded)
            and all(matches(r, g) for r, g in zip(recorded, live))
        )
    if isinstance(recorded, dict):
        if not isinstance(live, dict):
            return False
        if "$dict" in recorded:
            return "$dict" in live and _same_items(_items(recorded), _items(live))
        if "$object" in recorded:
            if "$object" not in live:
                return False
            state = live["state"]
            return all(k in state and matches(v, state[k]) for k, v in recorded["state"].items())
        if "$tensor" in recorded:
            return (
                "$tensor" in live
                and live["dtype"] == recorded["dtype"]
                and matches(recorded["$tensor"], live["$tensor"])
            )
        if "$rng" in recorded:
            return "$rng" in live and json.loads(live["$rng"]) == json.loads(recorded["$rng"])
        if "$torch_rng" in recorded:
            return "$torch_rng" in live and bool(np.array_equal(live["$torch_rng"], recorded["$torch_rng"]))
        if "$opaque" in recorded:
            return live == recorded
    return False


def _same_items(recorded: list, live: list) -> bool:
    """A dict's items against another's, in any order (a student may fill a dict in another order)."""
    if len(recorded) != len(live):
        return False
    plain = all(isinstance(k, (str, int)) for k, _ in live)
    by_key = {k: v for k, v in live} if plain else None
    for key, value in recorded:
        if by_key is not None:
            if key not in by_key or not matches(value, by_key[key]):
                return False
        elif not any(matches(key, k) and matches(value, v) for k, v in live):
            return False
    return True


class Recorded:
    """An object the stand-in made or changed, as the reference left it: its attributes, nothing else."""


def materialize(snap: Any) -> Any:
    """A fresh value from a snapshot."""
    if type(snap) in _ATOMS:
        return snap
    torch = _torch()
    if isinstance(snap, np.ndarray):
        return snap.copy()
    if isinstance(snap, list):
        return [materialize(v) for v in snap]
    if isinstance(snap, tuple):
        return tuple(materialize(v) for v in snap)
    if isinstance(snap, dict):
        if "$dict" in snap:
            return {materialize(k): materialize(v) for k, v in _items(snap)}
        if "$object" in snap:
            obj = Recorded()
            for k, v in snap["state"].items():
                setattr(obj, k, materialize(v))
            return obj
        if "$tensor" in snap and torch is not None:
            return torch.tensor(snap["$tensor"], dtype=getattr(torch, snap["dtype"]))
        if "$rng" in snap:
            rng = np.random.default_rng()
            rng.bit_generator.state = json.loads(snap["$rng"])
            return rng
        if "$torch_rng" in snap and torch is not None:
            generator = torch.Generator()
            generator.set_state(torch.tensor(snap["$torch_rng"], dtype=torch.uint8))
            return generator
        raise NoRecordedCall(f"the stand-in cannot give back a {snap.get('$opaque', 'value')}")
    return snap


def restore(target: Any, snap: Any) -> Any:
    """Make `target` what `snap` says, in place where it can be changed in place; the value to keep."""
    if type(snap) in _ATOMS:
        return snap
    torch = _torch()
    if type(target) is np.ndarray and isinstance(snap, np.ndarray) and target.shape == snap.shape:
        target[...] = snap
        return target
    if isinstance(target, list) and isinstance(snap, list):
        target[:] = [restore(t, s) for t, s in zip(target, snap)] + [materialize(s) for s in snap[len(target) :]]
        return target
    if isinstance(target, dict) and isinstance(snap, dict) and "$dict" in snap:
        old = dict(target)
        target.clear()
        for k, v in _items(snap):
            key = materialize(k)
            target[key] = restore(old[key], v) if key in old else materialize(v)
        return target
    if isinstance(target, np.random.Generator) and isinstance(snap, dict) and "$rng" in snap:
        target.bit_generator.state = json.loads(snap["$rng"])
        return target
    if torch is not None and isinstance(snap, dict):
        if "$torch_rng" in snap and isinstance(target, torch.Generator):
            target.set_state(torch.tensor(snap["$torch_rng"], dtype=torch.uint8))
            return target
        if "$tensor" in snap and isinstance(target, torch.Tensor) and tuple(target.shape) == snap["$tensor"].shape:
            with torch.no_grad():
                target.copy_(torch.as_tensor(snap["$tensor"]))
            return target
    if isinstance(snap, dict) and "$object" in snap and hasattr(target, "__dict__") and not isinstance(target, type):
        for k, v in snap["state"].items():
            current = vars(target).get(k)
            setattr(target, k, restore(current, v) if current is not None else materialize(v))
        return target
    return materialize(snap)


# --- recording, in the grading process ---


class Recorder:
    """The calls of the stand-in names in one scenario run of the reference."""

    def __init__(self):
        self.calls: list[dict] = []

    def wrap(self, name: str, function):
        recorder = self

        def recording(*args, **kwargs):
            if len(recorder.calls) >= MAX_RECORDED_CALLS:
                raise TooManyCalls(f"more than {MAX_RECORDED_CALLS} calls of the stand-ins")
            entry = {"name": name, "before": snapshot((list(args), kwargs))}
            recorder.calls.append(entry)
            try:
                result = function(*args, **kwargs)
            except Exception as exc:
                entry["raises"] = [type(exc).__name__, str(exc)[:200]]
                entry["after"] = snapshot((list(args), kwargs))
                raise
            entry["after"] = snapshot((list(args), kwargs))
            entry["result"] = {"$self": True} if args and result is args[0] else snapshot(result)
            return result

        recording.__name__ = getattr(function, "__name__", name)
        recording.__qualname__ = getattr(function, "__qualname__", name)
        recording.__wrapped__ = function
        return recording


def _class_methods(cls: type) -> dict[str, Any]:
    """The methods a class stand-in answers: public ones and DUNDER, from the class and its bases."""
    out = {}
    for klass in reversed(cls.__mro__[:-1]):  # object's are not the component's
        for attr, value in vars(klass).items():
            if callable(value) and not isinstance(value, type) and (not attr.startswith("_") or attr in DUNDER):
                out[attr] = value
    return out


def install_recorders(modules: dict, names: tuple[str, ...], recorder: Recorder) -> None:
    """Wrap `names` ("file stem.Name") in fresh copies of the reference modules to record their calls."""
    for name in names:
        stem, _, attr = name.partition(".")
        original = getattr(modules[stem], attr)
        if isinstance(original, type):
            for method, function in _class_methods(original).items():
                setattr(original, method, recorder.wrap(f"{attr}.{method}", function))
            continue
        wrapped = recorder.wrap(attr, original)
        for module in modules.values():
            for key, value in list(vars(module).items()):
                if value is original:
                    setattr(module, key, wrapped)


def record(scenario, fresh_modules: dict, names: tuple[str, ...], args: Any) -> list[dict]:
    """The calls of `names` when `scenario` runs on `fresh_modules` (a copy of the reference) with `args`."""
    recorder = Recorder()
    install_recorders(fresh_modules, names, recorder)
    with np.errstate(all="ignore"):
        scenario(fresh_modules, args)
    return recorder.calls


# --- replaying, in the child ---

_table: list[dict] = []
_used: set[int] = set()
# name -> {exact key of the arguments: indices}, and name -> indices of calls with inexact arguments.
_exact: dict[str, dict[Any, list[int]]] = {}
_inexact: dict[str, list[int]] = {}


class _Inexact(Exception):
    pass


def exact_key(snap: Any) -> Any:
    """A hashable form of a snapshot that holds no float (strings, ints, lists of them); `_Inexact` otherwise."""
    if snap is None or isinstance(snap, (bool, int, str)):
        return (type(snap).__name__, snap)
    if isinstance(snap, (list, tuple)):
        return (type(snap).__name__, tuple(exact_key(v) for v in snap))
    if isinstance(snap, np.ndarray) and snap.dtype.kind in "biu":
        return ("array", snap.shape, snap.dtype.kind, snap.tobytes())
    if isinstance(snap, dict) and "$dict" in snap:
        return ("dict", frozenset((exact_key(k), exact_key(v)) for k, v in _items(snap)))
    if isinstance(snap, dict) and "$rng" in snap:
        return ("rng", snap["$rng"])
    raise _Inexact


def _index(table: list[dict]) -> None:
    _table[:] = table
    _used.clear()
    _exact.clear()
    _inexact.clear()
    for i, call in enumerate(table):
        try:
            _exact.setdefault(call["name"], {}).setdefault(exact_key(call["before"]), []).append(i)
        except _Inexact:
            _inexact.setdefault(call["name"], []).append(i)


def _candidates(name: str, live: Any) -> list[int]:
    try:
        found = _exact.get(name, {}).get(exact_key(live), [])
    except _Inexact:
        found = []
    # A list of the index itself: `_answer` drops the calls it has answered from its front.
    return found or [i for i in _inexact.get(name, []) if matches(_table[i]["before"], live)]


def _answer(name: str, args: list, kwargs: dict) -> Any:
    live = snapshot((list(args), kwargs))
    candidates = _candidates(name, live)
    if not candidates:
        raise NoRecordedCall(f"the grader's {name} was called with arguments the reference never gave it here")
    # The first of equal calls not answered yet (a call made twice is answered in order), else the last.
    while len(candidates) > 1 and candidates[0] in _used:
        candidates.pop(0)
    index = candidates[0]
    _used.add(index)
    call = _table[index]
    after_args, after_kwargs = call["after"]
    for target, snap in zip(args, after_args):
        restore(target, snap)
    for key, snap in _items(after_kwargs) if isinstance(after_kwargs, dict) and "$dict" in after_kwargs else []:
        if key in kwargs:
            restore(kwargs[key], snap)
    if "raises" in call:
        kind, message = call["raises"]
        raise RAISED.get(kind, RuntimeError)(message)
    result = call["result"]
    if isinstance(result, dict) and result.get("$self"):
        return args[0]
    return materialize(result)


def _replayer(name: str):
    def replayed(*args, **kwargs):
        return _answer(name, list(args), kwargs)

    replayed.__name__ = name.rsplit(".", 1)[-1]
    return replayed


def _stand_in_class(attr: str, methods: set[str]) -> type:
    return type(attr, (), {m: _replayer(f"{attr}.{m}") for m in methods})


def install_replayers(modules: dict, names: tuple[str, ...], table: list[dict]) -> None:
    """Replace `names` in the submitted modules by replayers of `table` (once; the table is swapped per case)."""
    _index(table)
    for name in names:
        stem, _, attr = name.partition(".")
        module = modules.get(stem)
        if module is None:
            continue
        current = getattr(module, attr, None)
        if getattr(current, "__lmgrade_stand_in__", False):
            continue
        prefix = f"{attr}."
        methods = {c["name"][len(prefix) :] for c in table if c["name"].startswith(prefix)}
        if isinstance(current, type):
            methods |= set(_class_methods(current))
        stand = _stand_in_class(attr, methods) if methods else _replayer(attr)
        stand.__lmgrade_stand_in__ = True
        for other in modules.values():
            for key, value in list(vars(other).items()):
                if current is not None and value is current:
                    setattr(other, key, stand)
        setattr(module, attr, stand)


def replay(modules: dict, args: dict) -> Any:
    """The scenario of a stand-in run: the check's own scenario, with its component's names replaced."""
    ref = args["scenario"]
    module, _, qualname = ref.partition(":")
    scenario = importlib.import_module(module)
    for part in qualname.split("."):
        scenario = getattr(scenario, part)
    install_replayers(modules, tuple(args["names"]), args["table"])
    return scenario(modules, copy.deepcopy(args["args"]))


REPLAY = f"{__name__}:replay"

"""Calls as plain data: snapshots of values, a live call matched with a recorded one, and what was
recorded given back (`lmgrade.grading.stand_in`).

A snapshot is what the wire carries: arrays copied, a generator as its state, an object as its
attributes. A live call matches a recorded one where their snapshots have the same structure and
their numbers agree to `MATCH_RTOL` and `MATCH_ATOL` (looser in float32), the absolute part
scaled by the largest value; `pick` finds it among the recorded calls of
one run (`index`), equal calls in the order they were made.
"""

from __future__ import annotations

import hashlib
import json
import sys
import types
from collections.abc import Callable
from typing import Any

import numpy as np

# Matching a live call with a recorded one: numbers agree to this much (the component's inputs are
# the rest of the student's code's outputs, right to rounding where the rest is right; a finite
# difference's step, 1e-6, is a different call).
MATCH_RTOL, MATCH_ATOL = 1e-9, 1e-12
# In float32, where two processes' sums of the same numbers differ in their last bits.
MATCH_RTOL32, MATCH_ATOL32 = 1e-4, 1e-5
# What a snapshot keeps as it is.
_ATOMS = (type(None), bool, int, float, str)
# What a snapshot never looks into: code, not state.
_CODE = (type, types.FunctionType, types.MethodType, types.BuiltinFunctionType, types.ModuleType)


class NoRecordedCall(Exception):
    """A call of a stand-in that the reference never made on this case: the rest of the code differs."""


# --- snapshots: values as plain data ---


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
            rtol, atol = (MATCH_RTOL, MATCH_ATOL) if recorded.dtype.itemsize >= 8 else (MATCH_RTOL32, MATCH_ATOL32)
            with np.errstate(all="ignore"):
                scale = float(np.max(np.abs(a), initial=1.0))
                return bool(np.all((a == b) | (np.abs(a - b) <= atol * scale + rtol * np.abs(a))))
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


# --- the recorded calls of one run, indexed ---


class Inexact(Exception):
    pass


def exact_key(snap: Any) -> Any:
    """A hashable form of a snapshot that holds no float (strings, ints, lists of them); `Inexact` otherwise."""
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
    raise Inexact


# A module's parameters, kept once per run in the record: a forward call refers to them by digest (a
# generation calls the same model hundreds of times with the same parameters).
PARAMS = "$params"


def params_digest(params: list) -> str:
    """The parameters' values, bit for bit, as a short digest."""
    digest = hashlib.sha256()
    for p in params:
        a = np.ascontiguousarray(p.detach().cpu().numpy() if hasattr(p, "detach") else np.asarray(p))
        digest.update(f"{a.dtype}{a.shape}".encode())
        digest.update(a.tobytes())
    return digest.hexdigest()[:32]


def keep_params(calls: list, params: list) -> str:
    """The digest a recorded forward call refers to its parameters by, their values kept in `calls` the
    first time they are seen."""
    digest = params_digest(params)
    if not any(c["name"] == PARAMS and c["digest"] == digest for c in calls):
        calls.append({"name": PARAMS, "digest": digest, "values": snapshot(list(params))})
    return digest


class RecordedCalls:
    """The recorded calls of one case, indexed: what a stand-in's answers are picked from.

    It lives where the answers are given, outside the child (`stand_in_answers`): the child asks one
    call at a time and is told only what the reference did on a call that matches its own.
    """

    def __init__(self, table: list[dict]):
        self.table = table
        self.used: set[int] = set()
        # name -> {exact key of the arguments: indices}, and name -> indices of calls with inexact arguments.
        self.exact: dict[str, dict[Any, list[int]]] = {}
        self.inexact: dict[str, list[int]] = {}
        self.next: dict[str, int] = {}  # name -> where in its inexact calls the next one in order is
        for i, call in enumerate(table):
            if call["name"] == PARAMS:  # looked up by `params`, not picked
                continue
            try:
                self.exact.setdefault(call["name"], {}).setdefault(exact_key(call["before"]), []).append(i)
            except Inexact:
                self.inexact.setdefault(call["name"], []).append(i)

    def params(self, digest: str, values: Any = None) -> str | None:
        """The digest under which the record kept parameters equal to the live ones: `digest` where it kept
        those bit for bit, else the one whose values match `values` (a snapshot) to the match tolerance (an
        optimizer's steps may round apart); None where it kept no such parameters."""
        kept = [c for c in self.table if c["name"] == PARAMS]
        if any(c["digest"] == digest for c in kept):
            return digest
        if values is None:
            return None
        return next((c["digest"] for c in kept if matches(c["values"], values)), None)

    def _candidates(self, name: str, live: Any) -> list[int]:
        try:
            found = self.exact.get(name, {}).get(exact_key(live), [])
        except Inexact:
            found = []
        if found:
            return found
        inexact = self.inexact.get(name, [])
        # Calls usually come in the order the reference made them: the next one not answered is tried first.
        position = self.next.get(name, 0)
        while position < len(inexact) and inexact[position] in self.used:
            position += 1
        self.next[name] = position
        if position < len(inexact) and matches(self.table[inexact[position]]["before"], live):
            return [inexact[position]]
        return [i for i in inexact if matches(self.table[i]["before"], live)]

    def pick(self, name: str, live: Any, prefer: Callable[[dict], bool] | None = None) -> int:
        """The index of the recorded call of `name` whose arguments match `live`: the first of equal calls
        not answered yet (among them, the first `prefer` likes, where it likes one)."""
        found = self._candidates(name, live)
        if not found:
            raise NoRecordedCall(f"the grader's {name} was called with arguments the reference never gave it here")
        if prefer is not None:
            liked = [i for i in found if prefer(self.table[i])]
            fresh = [i for i in liked if i not in self.used]
            if fresh or liked:
                choice = (fresh or liked)[0]
                self.used.add(choice)
                return choice
        # A list of the index itself: the calls answered are dropped from its front, the last one kept.
        while len(found) > 1 and found[0] in self.used:
            found.pop(0)
        self.used.add(found[0])
        return found[0]

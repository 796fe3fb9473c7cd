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
never enters the child. The run's supervisor is handed it once the child is forked
(`sandbox.stand_in_channel`), and in the child the same names of the submission are replaced by
replayers (`replay`) that ask it one call at a time: a call whose arguments match a recorded call,
to the check's tolerance, gets the recorded answer and the recorded changes
(`stand_in_answers`); any other call raises `NoRecordedCall`. So the child learns only what the
reference's component says to the calls the rest of the student's code makes; the run passes only
where that code makes them as the reference does and does everything else right, and the
reference's code never enters the child. Nothing of that run but its verdict reaches the student.

A torch module's stand-in (`stand_in_modules`) also answers the backward pass with the reference's
recorded vector-Jacobian products. What a stand-in cannot do, the check is not paid for: a component
whose state the contract leaves free (a method of a class whose other methods the composed check
grades) has none, and neither has a call graph too large to record (`MAX_RECORDED_CALLS`).
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import os
import sys
import threading
from typing import Any

import numpy as np

from ..boundary.call_snapshots import PARAMS, Inexact, NoRecordedCall, exact_key, materialize, restore, snapshot
from ..core.expected_only import answering_as_a_submission
from ..core.explanations import not_explaining
from ..core.scenario_arguments import call_scenario
from ..sandbox.stand_in_channel import ask
from . import stand_in_modules

__all__ = [
    "NoRecordedCall",
    "TooManyCalls",
    "called_directly",
    "made",
    "only",
    "record",
    "replaces",
    "replay",
    "shapes",
    "REPLAY",
]

# A run records at most this many calls of its stand-ins; more, and the check has no stand-in run.
MAX_RECORDED_CALLS = 20000
# Methods a class stand-in replays besides the public ones.
DUNDER = ("__init__", "__call__")
# Exceptions a replayer raises again by name (what the contract asks for); others become RuntimeError.
RAISED = {e.__name__: e for e in (ValueError, TypeError, KeyError, IndexError, ZeroDivisionError, RuntimeError)}


class TooManyCalls(Exception):
    """The scenario calls the component more often than a stand-in records."""


# --- recording, in the grading process ---


class _Bounded(list):
    """A list of recorded calls that refuses more than `most`."""

    def __init__(self, most: int):
        super().__init__()
        self.most = most

    def append(self, entry: dict) -> None:
        if len(self) >= self.most:
            raise TooManyCalls(f"more than {self.most} calls of the stand-ins")
        super().append(entry)


class Recorder:
    """The calls of the stand-in names in one scenario run of the reference."""

    def __init__(self, most: int = MAX_RECORDED_CALLS, reference_files: frozenset[str] = frozenset()):
        self.calls: list[dict] = _Bounded(most)
        self.reference_files = reference_files

    def direct(self, frame) -> bool:
        """Whether the call whose recorder runs in `frame` was made by the scenario itself, not by the
        reference's own code: the first caller outside the recorders and torch's module machinery is not
        a reference file. A stand-in answering such a call answers for the whole case's call."""
        while frame is not None and _machinery(frame.f_code.co_filename):
            frame = frame.f_back
        return frame is not None and frame.f_code.co_filename not in self.reference_files

    def wrap(self, name: str, function, *, skip_self: bool = False):
        """`function` recording its calls as `name`; with `skip_self`, a method whose object's state is
        left free by the contract: recorded, matched and given back without it."""
        recorder = self

        def recording(*args, **kwargs):
            if skip_self:
                return recorder.record_call(name, function, args[0], args[1:], kwargs)
            return recorder.record_call(name, function, None, args, kwargs)

        recording.__name__ = getattr(function, "__name__", name)
        recording.__qualname__ = getattr(function, "__qualname__", name)
        recording.__wrapped__ = function
        return recording

    def record_call(self, name: str, function, owner: Any, args: tuple, kwargs: dict) -> Any:
        """One call of `function` (a method of `owner`, or a function where it is None), recorded."""
        called = args if owner is None else (owner, *args)
        entry = {"name": name, "before": snapshot((list(args), kwargs))}
        if self.direct(sys._getframe(1)):
            entry["direct"] = True
        self.calls.append(entry)
        try:
            result = function(*called, **kwargs)
        except Exception as exc:
            entry["raises"] = [type(exc).__name__, str(exc)[:200]]
            _after(entry, snapshot((list(args), kwargs)))
            raise
        _after(entry, snapshot((list(args), kwargs)))
        entry["result"] = {"$self": True} if called and result is called[0] else snapshot(result)
        return result


def _class_methods(cls: type) -> dict[str, Any]:
    """The methods a class stand-in answers: public ones and DUNDER, from the class and its bases."""
    out = {}
    for klass in reversed(cls.__mro__[:-1]):  # object's are not the component's
        for attr, value in vars(klass).items():
            if callable(value) and not isinstance(value, type) and (not attr.startswith("_") or attr in DUNDER):
                out[attr] = value
    return out


_RECORDERS = (__file__, stand_in_modules.__file__)


def _machinery(filename: str) -> bool:
    """A frame of the recorders or of torch's module calls, between a call and its caller."""
    return filename in _RECORDERS or f"{os.sep}torch{os.sep}nn{os.sep}modules{os.sep}" in filename


def install_recorders(modules: dict, names: tuple[str, ...], recorder: Recorder) -> None:
    """Wrap `names` ("file stem.Name") in fresh copies of the reference modules to record their calls."""
    for name in names:
        stem, _, attr = name.partition(".")
        if "." in attr:  # a method of a class whose state the contract leaves free
            cls_name, method = attr.split(".")
            cls = getattr(modules[stem], cls_name)
            setattr(cls, method, recorder.wrap(attr, getattr(cls, method), skip_self=True))
            continue
        original = getattr(modules[stem], attr)
        if stand_in_modules.is_module_class(original):
            stand_in_modules.install_recorders(original, attr, recorder.calls, recorder.direct)
            continue
        if isinstance(original, type):
            for method, function in _class_methods(original).items():
                setattr(original, method, recorder.wrap(f"{attr}.{method}", function))
            continue
        wrapped = recorder.wrap(attr, original)
        for module in modules.values():
            for key, value in list(vars(module).items()):
                if value is original:
                    setattr(module, key, wrapped)


def _after(entry: dict, after: Any) -> None:
    """The arguments as the call left them, kept only where it changed them (`_answer` reads "before" else):
    a sampler's record of thousands of calls is a third smaller, and decoded in a third less time."""
    try:
        if exact_key(after) == exact_key(entry["before"]):
            return
    except Inexact:
        pass
    entry["after"] = after


def record(scenario, fresh_modules: dict, names: tuple[str, ...], args: Any, most: int = MAX_RECORDED_CALLS) -> list:
    """The calls of `names` when `scenario` runs on `fresh_modules` (a copy of the reference) with `args`
    (TooManyCalls past `most` of them)."""
    files = frozenset(getattr(m, "__file__", None) for m in fresh_modules.values()) - {None}
    recorder = Recorder(most, files)
    install_recorders(fresh_modules, names, recorder)
    # The calls a submission's first run makes, which leaves out the expected value's own part and the
    # explanation of a wrong answer (a stand-in's run is never explained: only its verdict is kept).
    with np.errstate(all="ignore"), fixed_entropy(), answering_as_a_submission(), not_explaining():
        call_scenario(scenario, fresh_modules, args)
    return recorder.calls


FIXED_ENTROPY = 0x57A9D1  # what unseeded generators draw from in a record and its replay

# The grading process records in several threads at once, beside threads computing expected values: the
# fixed sequence is the recording thread's own, and numpy's function is replaced while any thread records.
_entropy = threading.local()
_entropy_lock = threading.Lock()
_recording = 0
_made = np.random.default_rng


def _default_rng(seed=None):
    seeds = getattr(_entropy, "seeds", None)
    if seed is None and seeds is not None:
        return _made(seeds.spawn(1)[0])
    return _made(seed)


@contextlib.contextmanager
def fixed_entropy():
    """`np.random.default_rng()` without a seed draws from one fixed sequence, not the machine's entropy.

    A component built with such a generator (the cells of `LSTMLM(..., rng=None)`) is called with one
    generator state in the record and another in the child, and no recorded call could match: within
    both runs, the n-th unseeded generator is the same. A case made with `rng=None` is judged by what
    the contract says of unseeded draws (their distribution), which these draws meet as any others.
    Only the thread inside draws so; any other thread keeps the machine's entropy.
    """
    global _recording
    outer = getattr(_entropy, "seeds", None)
    _entropy.seeds = np.random.SeedSequence(FIXED_ENTROPY)
    with _entropy_lock:
        _recording += 1
        np.random.default_rng = _default_rng
    try:
        yield
    finally:
        _entropy.seeds = outer
        with _entropy_lock:
            _recording -= 1
            if not _recording:
                np.random.default_rng = _made


def only(table: list[dict], names: tuple[str, ...]) -> list[dict]:
    """The calls of `table` made of `names` ("file stem.Name" or "file stem.Class.method"): a record of
    several components' calls answers for any of them, since recording one leaves the others' calls
    as they were (a recorder only watches)."""
    return [call for call in table if call["name"] == PARAMS or replaces(names, call["name"])]


def replaces(names: tuple[str, ...], function: str) -> bool:
    """Whether a stand-in of `names` ("file stem.Name" or "file stem.Class.method") replaces `function`
    ("Name", "Class.method", "Class.method.inner"): a recorded call's name, or where a stub raised."""
    attrs = [name.partition(".")[2] for name in names]
    return bool(function) and any(function == a or function.startswith(a + ".") for a in attrs)


def called_directly(table: list[dict], names: tuple[str, ...]) -> bool:
    """Whether the scenario itself called any of `names` in this record (not the reference's code): a
    stand-in of them answers the case's own call, and the case shows nothing of the submission's."""
    return any(call.get("direct") for call in only(table, names) if call["name"] != PARAMS)


def made(tables: list[list[dict]], names: tuple[str, ...]) -> bool:
    """Whether the reference called any of `names` in these records."""
    return any(call["name"] != PARAMS for table in tables for call in only(table, names))


# --- replaying, in the child ---


def _answer(name: str, args: list, kwargs: dict, owner: Any = None) -> Any:
    """The recorded answer to a call of `name` (a method of `owner`, given without it, or a function), asked
    of the supervisor: what the reference's call with matching arguments returned, raised and changed."""
    answer = ask({"op": "call", "name": name, "live": snapshot((list(args), kwargs))})
    if "after" in answer:  # the arguments as the call left them, where it changed them
        after_args, after_kwargs = answer["after"]
        for target, snap in zip(args, after_args):
            restore(target, snap)
        for key, snap in after_kwargs.get("$dict", []) if isinstance(after_kwargs, dict) else []:
            if key in kwargs:
                restore(kwargs[key], snap)
    if "raises" in answer:
        kind, message = answer["raises"]
        raise RAISED.get(kind, RuntimeError)(message)
    result = answer.get("result")
    if isinstance(result, dict) and result.get("$self"):
        return args[0] if owner is None else owner
    return materialize(result)


def _replayer(name: str):
    def replayed(*args, **kwargs):
        return _answer(name, list(args), kwargs)

    replayed.__name__ = name.rsplit(".", 1)[-1]
    return replayed


def _method_replayer(name: str):
    def replayed(self, *args, **kwargs):
        return _answer(name, list(args), kwargs, owner=self)

    replayed.__name__ = name.rsplit(".", 1)[-1]
    replayed.__lmgrade_stand_in__ = True
    return replayed


def _stand_in_class(attr: str, methods: set[str]) -> type:
    return type(attr, (), {m: _replayer(f"{attr}.{m}") for m in methods})


def shapes(table: list[dict], names: tuple[str, ...]) -> dict[str, dict]:
    """What each replaced name is, from the record, for the child's replayers: a torch module class
    ("module"), a class with the methods the reference's calls name ("class"), or a function."""
    out = {}
    for name in names:
        attr = name.partition(".")[2]
        if "." in attr:  # a method, replaced on the student's class
            out[attr] = {"kind": "method"}
            continue
        prefix = f"{attr}."
        calls = [c for c in table if c["name"].startswith(prefix)]
        if any(c["name"] == f"{attr}.__init__" and "layout" in c for c in calls):
            out[attr] = {"kind": "module"}
        elif calls:
            out[attr] = {"kind": "class", "methods": sorted({c["name"][len(prefix) :] for c in calls})}
        else:
            out[attr] = {"kind": "function"}
    return out


def install_replayers(modules: dict, names: tuple[str, ...], kinds: dict[str, dict]) -> None:
    """Replace `names` in the submitted modules by replayers that ask the supervisor (once per run)."""
    for name in names:
        stem, _, attr = name.partition(".")
        module = modules.get(stem)
        if module is None:
            continue
        if "." in attr:  # a method, replaced on the student's class (and so on its subclasses)
            cls_name, method = attr.split(".")
            cls = getattr(module, cls_name, None)
            if isinstance(cls, type) and not getattr(vars(cls).get(method), "__lmgrade_stand_in__", False):
                setattr(cls, method, _method_replayer(attr))
            continue
        current = getattr(module, attr, None)
        if getattr(current, "__lmgrade_stand_in__", False):
            continue
        kind = kinds.get(attr, {})
        methods = set(kind.get("methods", ()))
        if isinstance(current, type):
            methods |= set(_class_methods(current))
        if stand_in_modules.is_module_class(current) or kind.get("kind") == "module":
            stand = stand_in_modules.stand_in_class(attr)
        elif methods:
            stand = _stand_in_class(attr, methods)
        else:
            stand = _replayer(attr)
        stand.__lmgrade_stand_in__ = True
        if current is not None:
            for other in modules.values():
                _replace_everywhere(other, current, stand)
        setattr(module, attr, stand)


def _replace_everywhere(module, current: Any, stand: Any) -> None:
    """`current` replaced by `stand` in a module's names and in the dicts, lists and tuples they hold
    (a table of cells, {"lstm": LSTM, "gru": GRU}, keeps the classes it was built with)."""
    for key, value in list(vars(module).items()):
        if value is current:
            setattr(module, key, stand)
        elif type(value) is dict:
            for k, v in list(value.items()):
                if v is current:
                    value[k] = stand
        elif type(value) is list:
            value[:] = [stand if v is current else v for v in value]
        elif type(value) is tuple and any(v is current for v in value):
            setattr(module, key, tuple(stand if v is current else v for v in value))


def replay(modules: dict, args: dict) -> Any:
    """The scenario of a stand-in run: the check's own scenario, with its component's names replaced."""
    ref = args["scenario"]
    module, _, qualname = ref.partition(":")
    scenario = importlib.import_module(module)
    for part in qualname.split("."):
        scenario = getattr(scenario, part)
    install_replayers(modules, tuple(args["names"]), args["shapes"])
    with fixed_entropy():
        return call_scenario(scenario, modules, copy.deepcopy(args["args"]))


REPLAY = f"{__name__}:replay"

"""A stand-in's record and a timed run's nonces never enter the child: its supervisor reads them after the fork
and answers one call at a time (`lmgrade.sandbox.stand_in_channel`, `lmgrade.boundary.stand_in_answers`)."""

from __future__ import annotations

import pytest
from sandbox_fixtures import sandbox_pool, submission_of

from lmgrade.boundary import wire
from lmgrade.boundary.stand_in_answers import Answerer
from lmgrade.sandbox.limits import Limits

# Searches everything the child can reach from Python for a string it builds from parts (its own copy is
# skipped): the objects the collector tracks, and every frame's locals and globals up the stack.
SCAVENGER = """
import gc, os, sys

def scavenge(parts):
    needle = "".join(parts)
    raw = needle.encode()
    seen, found = set(), []

    def visit(obj, depth=0):
        if id(obj) in seen or depth > 30:
            return
        seen.add(id(obj))
        if isinstance(obj, str):
            if obj == needle and obj is not needle:
                found.append("a string")
        elif isinstance(obj, (bytes, bytearray)):
            if raw in obj:
                found.append("bytes")
        elif isinstance(obj, dict):
            for key, value in list(obj.items()):
                visit(key, depth + 1)
                visit(value, depth + 1)
        elif isinstance(obj, (list, tuple, set, frozenset)):
            for value in list(obj):
                visit(value, depth + 1)
        elif hasattr(obj, "__dict__") and not isinstance(obj, type):
            visit(vars(obj), depth + 1)

    frame = sys._getframe(1)
    while frame is not None:
        visit(frame.f_locals)
        visit(frame.f_globals)
        frame = frame.f_back
    for obj in gc.get_objects():
        visit(obj)
    return found


def open_fds(parts):
    out = []
    for fd in range(4096):
        try:
            os.fstat(fd)
        except OSError:
            continue
        out.append(fd)
    return out
"""
PARTS = ["lmgrade-sealed-", "needle-", "5eal3d"]
NEEDLE = "".join(PARTS)


@pytest.fixture(scope="module")
def pool():
    with sandbox_pool() as p:
        yield p


@pytest.fixture(scope="module")
def scavenger(tmp_path_factory):
    return submission_of(tmp_path_factory, "scavenger", SCAVENGER)


def scavenge(pool, scavenger, case: dict, record=None, fn="scavenge"):
    return pool.run(
        scenario="sandbox_fixtures.scenarios:call",
        submission=scavenger,
        files=["victim.py"],
        cases=[{"fn": fn, "args": [PARTS], **case}],
        limits=Limits(cpu_s=20, wall_s=40, memory_mb=1024),
        stand_in_record=record,
    ).outcomes[0]


def test_what_the_child_is_handed_it_finds(pool, scavenger):
    # The scavenger works: a case's own arguments are the child's, and it finds them there.
    outcome = scavenge(pool, scavenger, {"handed": NEEDLE})
    assert outcome.kind == "ok" and outcome.value


def test_a_stand_in_record_is_nowhere_in_the_child(pool, scavenger):
    record = wire.Encoded([[{"name": "prob", "before": ([NEEDLE], {"$dict": []}), "result": NEEDLE}]])
    outcome = scavenge(pool, scavenger, {}, record)
    assert outcome.kind == "ok" and outcome.value == []


@pytest.mark.parametrize("stand_in", [False, True])
def test_the_child_holds_its_own_descriptors_only(pool, scavenger, stand_in):
    # None of its supervisor's: a write to any other number cannot reach the grading process's pipe.
    record = wire.Encoded([[]]) if stand_in else None
    outcome = scavenge(pool, scavenger, {}, record, fn="open_fds")
    assert outcome.kind == "ok", outcome.error
    assert outcome.value == ([0, 1, 2, 3, 6, 7] if stand_in else [0, 1, 2, 3])


def test_an_answer_is_given_for_a_matching_call_only():
    table = [{"name": "prob", "before": (["a", ["b"]], {"$dict": []}), "result": 0.25}]
    answerer = Answerer([wire.decode(wire.encode(table))])

    def ask(question):
        return wire.decode(answerer(wire.encode({"case": 0, **question})))

    assert ask({"op": "call", "name": "prob", "live": (["a", ["b"]], {"$dict": []})}) == {"result": 0.25}
    assert "none" in ask({"op": "call", "name": "prob", "live": (["a", ["c"]], {"$dict": []})})
    assert "none" in ask({"op": "call", "name": "other", "live": (["a", ["b"]], {"$dict": []})})
    assert "none" in ask({"op": "vjp", "name": "prob", "entry": 0, "g": None})  # no forward was answered


@pytest.mark.parametrize(
    "question",
    [None, 3, "call", [], {"case": "0"}, {"case": 5, "op": "call", "name": "prob"}, {"case": 0, "op": "nope"}],
)
def test_whatever_a_child_asks_is_answered_never_raised(question):
    answerer = Answerer([[{"name": "prob", "before": ([], {"$dict": []}), "result": 1.0}]])
    payload = wire.encode(question) if question is not None else b"not wire at all"
    assert "none" in wire.decode(answerer(payload))

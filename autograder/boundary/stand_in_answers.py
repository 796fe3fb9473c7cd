"""A stand-in's answers, given outside the child, one call at a time (`lmgrade.grading.stand_in`).

The grading process records what the reference's component did on each case of a composed check.
The record goes to the run's supervisor after the child is forked, never to the child; the child's
replayers ask each call of it (`sandbox.stand_in_channel`), and `Answerer` answers here:

- ``call``: a function or method, by name, with its arguments as a snapshot: what the reference's
  call with matching arguments returned, raised and changed;
- ``init`` and ``forward``: a torch module's construction (matched on its arguments and torch's
  generator state) and forward pass (on its inputs and parameters, by digest, their values where
  the digest is not the record's own);
- ``vjp``: the backward pass through a forward this child was answered: the recorded
  vector-Jacobian products for a gradient that matches one the reference's forward received.

A question the record cannot answer (no matching call, or not a question at all) is answered
``{"none": why}``, and the child's replayer raises `NoRecordedCall`: whatever the child sends, the
supervisor answers, never fails.
"""

from __future__ import annotations

from typing import Any

from . import wire
from .call_snapshots import PARAMS, NoRecordedCall, RecordedCalls, matches

MAX_QUESTION_DOCUMENT_BYTES = wire.MAX_REQUEST_DOCUMENT_BYTES


class Answerer:
    """The answers to one stand-in run's calls, from the record of each of its cases."""

    def __init__(self, tables: Any):
        tables = tables if isinstance(tables, list) else []
        self.cases = [RecordedCalls(t) if isinstance(t, list) else None for t in tables]
        self.answered: set[tuple[int, int]] = set()  # (case, forward call) answered: its backward may follow

    def __call__(self, payload: bytes) -> bytes:
        try:
            question = wire.decode(payload, max_document_bytes=MAX_QUESTION_DOCUMENT_BYTES)
            reply = self._answer(question)
        except NoRecordedCall as exc:
            reply = {"none": str(exc)}
        except Exception:  # whatever a child sends: never the supervisor's failure
            reply = {"none": "the grader's stand-in cannot answer this call"}
        return wire.encode(reply)

    def _answer(self, question: Any) -> dict:
        if not isinstance(question, dict):
            raise NoRecordedCall("not a call")
        case, name, op = question.get("case"), question.get("name"), question.get("op")
        if type(case) is not int or not 0 <= case < len(self.cases) or self.cases[case] is None:
            raise NoRecordedCall("no such case")
        if type(name) is not str:
            raise NoRecordedCall("not a call")
        calls = self.cases[case]
        if op == "call":
            call = calls.table[calls.pick(name, question.get("live"))]
            return {k: call[k] for k in ("result", "after", "raises") if k in call}
        if op == "init":
            rng = question.get("rng")
            entry = calls.table[calls.pick(name, question.get("live"), prefer=lambda c: matches(c["rng_before"], rng))]
            # torch's generator is left as the reference's construction left it only where it stood where
            # the reference's did (a scenario that seeds it before building).
            same = matches(entry["rng_before"], rng)
            return {"layout": entry["layout"], "rng_after": entry["rng_after"] if same else None}
        if op == "forward":
            return self._forward(case, calls, name, question)
        if op == "vjp":
            index = question.get("entry")
            if type(index) is not int or (case, index) not in self.answered:
                raise NoRecordedCall("a gradient reached the grader's module through a call it never answered")
            live, output = question.get("g"), question.get("output", 0)
            vjp = next(
                (v for v in calls.table[index]["vjps"] if v.get("output", 0) == output and matches(v["g"], live)), None
            )
            if vjp is None:
                raise NoRecordedCall("a gradient reached the grader's module that the reference's never received")
            return {"grads": vjp["grads"]}
        raise NoRecordedCall("not a call")

    def _forward(self, case: int, calls: RecordedCalls, name: str, question: dict) -> dict:
        digest = question.get("digest")
        if type(digest) is not str:
            raise NoRecordedCall("not a call")
        recorded = calls.params(digest, question.get("params"))
        if recorded is None:
            if "params" not in question:  # the values themselves, please: they may match to rounding
                return {"params_please": True}
            raise NoRecordedCall(f"the grader's {name} was called with parameters the reference never had here")
        inputs = question.get("inputs")
        index = calls.pick(name, (inputs, {"$dict": [[PARAMS, recorded]]}))
        self.answered.add((case, index))
        return {"result": calls.table[index]["result"], "entry": index}

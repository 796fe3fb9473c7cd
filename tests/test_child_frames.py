"""The grading process's boundary with a sandboxed child, fuzzed: whatever bytes the child writes, nothing
raises past the decoder (`sandbox.schema`), and every case gets a verdict.

The child's result pipe is open to the student's code, so every frame is drawn
here as a hostile child could write it (`hostile_frames`): random and
misused wire documents, npy headers of any dtype and shape, error reports of
any type, names of any kind, frames cut short. `benchmarks/fuzz_child_frames.py`
runs the same properties far longer.
"""

from __future__ import annotations

import pytest
from hostile_frames import documents, error_reports, frame_streams, payloads, traceback_text
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmgrade.boundary import schema, wire
from lmgrade.declare import composition
from lmgrade.declare.checks import Case, CaseVerdict
from lmgrade.grading.feedback import HIDDEN_FAILURES, frames, outcome_verdict, summarize
from lmgrade.grading.import_probe import ImportProbe
from lmgrade.reports.results import Verdict
from lmgrade.sandbox.pool import CaseOutcome, RunReport, SandboxPool

# A hundred examples each: the suite's share stays within seconds (the benchmark runs thousands).
QUICK = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
KINDS = {"ok", "error", "import_error", "forbidden", "crashed", "timeout", "not_run"}


def _decoded(stream: bytes, cases: int) -> RunReport:
    report = RunReport(outcomes=[CaseOutcome("not_run", message="not run") for _ in range(cases)])
    SandboxPool._take_frames(stream, report, cases)
    return report


@QUICK
@given(payloads)
def test_a_case_result_of_any_bytes_is_an_outcome(payload):
    outcome = schema.case_result(payload)
    assert isinstance(outcome, CaseOutcome) and outcome.kind in KINDS
    if outcome.error is not None:
        assert set(outcome.error) == set(schema.ERROR_FIELDS)
        assert all(isinstance(v, str) and len(v) <= schema.ERROR_FIELDS[f] for f, v in outcome.error.items())
        for text in outcome.error.values():
            text.encode("utf-8")  # writable anywhere the feedback goes (no lone surrogate)
    if outcome.kind == "forbidden":
        assert all(isinstance(v, str) and schema.API_NAME.fullmatch(v) for v in outcome.value[:-1])


@QUICK
@given(st.binary(max_size=300) | payloads)
def test_the_wire_decoder_raises_only_its_own_error(data):
    try:
        wire.decode(data)
    except wire.WireError:
        pass


@QUICK
@given(st.integers(1, 4).flatmap(lambda n: st.tuples(st.just(n), frame_streams(n))))
def test_frames_of_any_kind_leave_every_case_an_outcome(drawn):
    cases, stream = drawn
    report = _decoded(stream, cases)
    assert len(report.outcomes) == cases and all(o.kind in KINDS for o in report.outcomes)


@QUICK
@given(documents, st.lists(st.sampled_from(["ngram", "helpers", "x"]), max_size=3))
def test_the_import_probes_answer_of_any_shape_is_names_of_the_submissions_modules(value, modules):
    defined = schema.probe_names(value, modules)
    assert set(defined) <= set(modules)
    assert all(schema.IDENTIFIER.fullmatch(n) for names in defined.values() for n in names)


@QUICK
@given(st.lists(error_reports.map(schema.error_report) | st.none(), min_size=1, max_size=3), traceback_text())
def test_where_a_stub_raised_is_read_from_the_graders_sources_only(errors, text):
    sources = {"ngram.py": "class NGramLM:\n    def fit(self):\n        raise NotImplementedError\n"}
    errors = [e if e is None else {**e, "traceback": e["traceback"] or text} for e in errors]
    found = composition.not_implemented_in(errors, sources, frames)
    assert found is None or all(isinstance(name, str) for name in found)


def _checks(ngram):
    by_name = {c.name: c for c in ngram[0].checks}
    return [by_name["perplexity"], by_name["perplexity_hidden"], by_name["pad"]]


@QUICK
@given(data=st.data())
def test_every_outcome_a_child_can_send_is_told_in_words_and_hidden_ones_in_fixed_words(ngram, data):
    check = data.draw(st.sampled_from(_checks(ngram)))
    cases = data.draw(st.integers(1, 3))
    report = _decoded(data.draw(frame_streams(cases)), cases)
    expected = data.draw(st.sampled_from([12.5, [1, 2], None]))
    judged = []
    for i, outcome in enumerate(report.outcomes):
        case = Case(f"case {i}", {})
        for reveal in (True, False):
            verdict = outcome_verdict(check, case, expected, outcome, reveal)
            assert isinstance(verdict, CaseVerdict) and isinstance(verdict.message, str)
            assert reveal or verdict.passed or verdict.message in HIDDEN_FAILURES, verdict.message
        judged.append((case, verdict))
    assert summarize(judged, reveal=False).startswith(f"{sum(v.passed for _, v in judged)}/{cases} cases passed")


@pytest.fixture(scope="module")
def probe(ngram):
    return ImportProbe(*ngram, pool=None)


@QUICK
@given(documents, st.sampled_from(["pad", "NGramLM", "x"]))
def test_a_hint_for_a_missing_name_takes_whatever_the_probe_sent(probe, value, name):
    verdict = CaseVerdict(False, f"raised AttributeError: module 'ngram' has no attribute '{name}'")
    hinted = probe.with_hints(verdict, schema.probe_names(value, ["ngram"]))
    assert hinted.message.startswith(verdict.message) and "ngram.py must define" in hinted.message


class _FuzzedPool:
    """Stands in for the sandbox: each run's result is the frames a hostile child wrote, decoded as the
    sandbox pool decodes them."""

    def __init__(self, data):
        self.data = data

    def run(self, *, cases, **_):
        n = len(cases)
        return _decoded(self.data.draw(frame_streams(n)), n)


@pytest.fixture(scope="module")
def stub_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fuzzed")
    (folder / "ngram.py").write_text("# what the children answer is drawn, not run\n")
    return folder


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_a_grading_whose_children_send_anything_writes_a_verdict_for_every_case(
    ngram_grader, stub_folder, monkeypatch, data
):
    monkeypatch.setattr(ngram_grader, "pool", _FuzzedPool(data))
    check = data.draw(st.sampled_from(_checks((ngram_grader.assignment, None))))
    cases = ngram_grader.cases(check)
    verdict = ngram_grader.grade_check(check, 1, stub_folder)
    assert isinstance(verdict, Verdict) and len(verdict.cases) == len(cases)
    assert 0 <= verdict.score <= check.points and isinstance(verdict.output, str)
    if check.visibility != "visible":
        assert all(v.passed or v.message in HIDDEN_FAILURES for _, v in verdict.cases)

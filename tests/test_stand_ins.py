"""Composed checks paid by observation: a stand-in run with the grader's component, never a cap or a share."""

from __future__ import annotations

import types
from pathlib import Path

import numpy as np
import pytest

from helpers import by_name
from lmgrade.boundary import call_snapshots as recorded_calls
from lmgrade.boundary import wire
from lmgrade.boundary.stand_in_answers import Answerer
from lmgrade.declare import catalog, composition
from lmgrade.declare.checks import Check
from lmgrade.declare.flawed import write_flawed
from lmgrade.grading import stand_in
from lmgrade.sandbox import stand_in_channel


def _component_module():
    """A tiny reference: a function, a stateful class that draws from a generator, a call that changes its argument."""
    module = types.ModuleType("toy")

    def scale(x, k):
        return np.asarray(x, float) * k

    class Counter:
        def __init__(self, size, rng):
            self.w = rng.normal(size=size)
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            return self.w * x

    def normalise(values):
        values /= values.sum()

    module.scale, module.Counter, module.normalise = scale, Counter, normalise
    return module


def _scenario(modules, args):
    toy = modules["toy"]
    rng = np.random.default_rng(args["seed"])
    counter = toy.Counter(3, rng)
    v = np.array([1.0, 2.0, 3.0])
    toy.normalise(v)
    return {"y": counter.forward(toy.scale(args["x"], 2.0)), "calls": counter.calls, "v": v, "next": rng.random()}


NAMES = ("toy.scale", "toy.Counter", "toy.normalise")


def _student_module(**broken):
    """The student's copy: each name broken on request; the scenario must pass only with stand-ins for them."""
    module = _component_module()
    for name in broken:
        setattr(module, name, broken[name])
    return module


def replayed(modules: dict, scenario: str, names: tuple, table: list, args):
    """A stand-in run in this process: the record as the supervisor holds it (after the wire), every call
    asked of it as a child asks."""
    answerer = Answerer([wire.decode(wire.encode(table))])
    with stand_in_channel.answered_here(answerer):
        shapes = stand_in.shapes(table, tuple(names))
        return stand_in.replay(modules, {"scenario": scenario, "names": list(names), "shapes": shapes, "args": args})


def test_a_replayed_run_gives_the_references_answers_and_changes():
    args = {"x": [1.0, -2.0, 0.5], "seed": 3}
    expected = _scenario({"toy": _component_module()}, args)
    table = stand_in.record(_scenario, {"toy": _component_module()}, NAMES, args)
    assert [c["name"] for c in table] == ["Counter.__init__", "normalise", "scale", "Counter.forward"]

    def wrong(*a, **k):
        raise AssertionError("the student's broken code ran")

    def also_wrong(*a, **k):
        raise AssertionError("the student's broken code ran")

    broken_class = type("Counter", (), {"__init__": wrong, "forward": wrong})
    student = {"toy": _student_module(scale=wrong, normalise=also_wrong, Counter=broken_class)}
    got = replayed(student, f"{__name__}:_scenario", NAMES, table, args)
    np.testing.assert_array_equal(got["y"], expected["y"])
    np.testing.assert_array_equal(got["v"], expected["v"])  # the argument changed in place, as the reference did
    assert got["calls"] == 1 and got["next"] == expected["next"]  # the generator advanced as the reference's


def test_a_call_the_reference_never_made_is_not_answered():
    args = {"x": [1.0, -2.0, 0.5], "seed": 3}
    table = stand_in.record(_scenario, {"toy": _component_module()}, ("toy.scale",), args)
    student = _component_module()
    # The rest of the student's code hands the component other inputs: the stand-in cannot answer.
    with pytest.raises(stand_in.NoRecordedCall):
        replayed({"toy": student}, f"{__name__}:_scenario", ("toy.scale",), table, {**args, "x": [9.0, 9.0, 9.0]})


def test_matching_follows_the_tolerance_and_types():
    assert recorded_calls.matches(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-12]))
    assert not recorded_calls.matches(np.array([1.0, 2.0]), np.array([1.0, 2.001]))
    assert not recorded_calls.matches(np.array([1.0, np.nan]), np.array([1.0, np.nan]))  # NaN is never a match
    assert not recorded_calls.matches(["a", "b"], ("a", "b"))
    assert recorded_calls.matches(recorded_calls.snapshot({"a": 1, "b": 2}), recorded_calls.snapshot({"b": 2, "a": 1}))


def test_a_stand_in_never_answers_for_what_the_composed_check_grades():
    def check(name, grades=(), **kw):
        return Check(name, name, scenario=lambda m, a: a, make_cases=lambda ctx: [], grades=grades, **kw)

    pad, fit = check("pad", ("ngram.pad",)), check("fit", ("ngram.NGramLM",))
    assert composition.stand_in_names(check("c", ("ngram.count_ngrams",)), [pad]) == ("ngram.pad",)
    assert composition.stand_in_names(check("prob", ("ngram.NGramLM",)), [fit]) is None  # the same class
    assert composition.stand_in_names(check("undeclared"), [pad]) is None  # says nothing of what it grades
    # A property of the code it grades: a stand-in may answer for what it calls, never for that code.
    assert composition.stand_in_names(check("p", ("x.y",), property_check=True), [pad]) == ("ngram.pad",)
    assert composition.stand_in_names(check("p", ("ngram.pad",), property_check=True), [pad]) is None
    # One that names no code of its own: each of its cases is paid by a stand-in run only where the stand-in
    # answered none of the case's own calls (`test_a_property_is_paid_where_a_stand_in_answered_only_inner_calls`).
    assert composition.stand_in_names(check("p", property_check=True), [pad]) == ("ngram.pad",)
    # Never for what its scenario calls itself (its `uses`): the stand-in would answer the case's own call.
    assert composition.stand_in_names(check("p", property_check=True, uses=("ngram.pad",)), [pad]) is None
    assert composition.stand_in_names(check("c", ("ngram.count_ngrams",)), [pad, check("free")]) is None


def _bug(ngram, tmp_path, *bug_names, extra=()):
    assignment, _ = ngram
    spec = assignment.spec
    bugs = [catalog.bugs("ngram")[b] for b in bug_names]
    folder = write_flawed(spec.reference_folder(), spec.files, tmp_path / "sub", bugs)
    for old, new in extra:
        path = folder / "ngram.py"
        source = path.read_text()
        assert source.count(old) == 1
        path.write_text(source.replace(old, new))
    return folder


def test_a_component_bug_is_paid_for_in_its_own_check_only(ngram, ngram_grader, tmp_path):
    folder = _bug(ngram, tmp_path, "no_bos_padding")
    verdicts = by_name(ngram_grader.grade(folder, only={"pad", "count_ngrams", "fit", "prob_mle"}))
    assert not verdicts["pad"].passed
    for name in ("count_ngrams", "prob_mle"):
        assert verdicts[name].score == verdicts[name].max_score, verdicts[name].output
        assert verdicts[name].output.startswith("Passes once pad is fixed"), verdicts[name].output


def test_a_composed_check_with_a_failed_component_and_fake_answers_earns_nothing(ngram, ngram_grader, tmp_path):
    """pad is wrong and count_ngrams answers noise: the stand-in run fails, so no blame and no share."""
    folder = _bug(
        ngram,
        tmp_path,
        "no_bos_padding",
        extra=[
            (
                "def count_ngrams(",
                "def count_ngrams(corpus, n):\n    return {('x',) * (n - 1): {'y': len(corpus)}}\n\n\ndef _unused(",
            )
        ],
    )
    verdicts = by_name(ngram_grader.grade(folder, only={"pad", "count_ngrams"}))
    assert verdicts["count_ngrams"].score == 0
    assert "pad is fixed" not in verdicts["count_ngrams"].output and "see pad" not in verdicts["count_ngrams"].output


@pytest.mark.parametrize("source", [None, "def pad(:\n"], ids=["missing", "syntax_error"])
def test_no_stand_in_run_for_a_file_that_is_missing_or_does_not_import(ngram_grader, monkeypatch, tmp_path, source):
    """Every check fails unrun; a stand-in could complete none of them, so none is recorded or run."""
    if source is not None:
        (tmp_path / "ngram.py").write_text(source)

    def never(*args, **kwargs):
        raise AssertionError("a stand-in was prepared for a submission whose file cannot run")

    monkeypatch.setattr(ngram_grader, "stand_in_tables", never)
    monkeypatch.setattr(ngram_grader, "_stand_in_run", never)
    verdicts = ngram_grader.grade(tmp_path)
    assert sum(v.score for v in verdicts) == 0
    assert all("not graded" in v.output for v in verdicts)


def test_a_stand_in_record_is_encoded_once_per_grader(ngram, ngram_grader, monkeypatch, tmp_path):
    """Every submission failing the same component sends the same record: encoded once, not once a grading."""
    from lmgrade.boundary import wire

    made = []
    original = wire.Encoded.__init__

    def counted(self, values):
        made.append(len(values))
        original(self, values)

    monkeypatch.setattr(wire.Encoded, "__init__", counted)
    folder = _bug(ngram, tmp_path, "no_bos_padding")
    for _ in range(2):
        verdict = by_name(ngram_grader.grade(folder, only={"pad", "count_ngrams"}))["count_ngrams"]
        assert verdict.output.startswith("Passes once pad is fixed"), verdict.output
    assert len(made) <= 1


def test_a_record_keeps_the_arguments_after_a_call_only_where_the_call_changed_them():
    """A sampler's thousands of calls of p(w | context) change nothing: their record is the arguments once."""

    def lookup(word, context):
        return len(word) + len(context)

    def grow(words, extra):
        words.append(extra)
        return len(words)

    module = types.ModuleType("toy")
    module.lookup, module.grow = lookup, grow

    def scenario(modules, args):
        words = ["a"]
        return [modules["toy"].lookup("ab", ("x",)), modules["toy"].grow(words, "b"), words]

    table = stand_in.record(scenario, {"toy": module}, ("toy.lookup", "toy.grow"), None)
    by_name = {c["name"]: c for c in table}
    assert "after" not in by_name["lookup"] and by_name["grow"]["after"][0] == [["a", "b"], "b"]

    def broken_lookup(*a, **k):
        raise AssertionError("the student's broken code ran")

    def broken_grow(*a, **k):
        raise AssertionError("the student's broken code ran")

    student = types.ModuleType("toy")
    student.lookup, student.grow = broken_lookup, broken_grow
    got = replayed({"toy": student}, f"{__name__}:_two_calls", ("toy.lookup", "toy.grow"), table, None)
    assert got == [3, 2, ["a", "b"]]


def _two_calls(modules, args):
    words = ["a"]
    return [modules["toy"].lookup("ab", ("x",)), modules["toy"].grow(words, "b"), words]


def test_unseeded_generators_draw_the_same_in_a_record_and_its_replay():
    made = np.random.default_rng
    with stand_in.fixed_entropy():
        first = [np.random.default_rng().random(3) for _ in range(2)]
        seeded = np.random.default_rng(7).random(3)
    with stand_in.fixed_entropy():
        again = [np.random.default_rng().random(3) for _ in range(2)]
    assert np.random.default_rng is made  # the machine's entropy again outside
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not np.array_equal(first[0], first[1])  # the n-th generator of a run, not one stream for all
    assert np.array_equal(seeded, np.random.default_rng(7).random(3))  # a seed is kept as given
    assert not np.array_equal(np.random.default_rng().random(3), np.random.default_rng().random(3))


def test_fixed_entropy_is_the_recording_threads_own_and_numpy_is_restored_after_overlapping_records():
    import threading

    made = np.random.default_rng
    inside, leave, draws = threading.Event(), threading.Event(), {}

    def record():
        with stand_in.fixed_entropy():
            draws["first"] = np.random.default_rng().random(3)
            inside.set()
            leave.wait(10)

    first = threading.Thread(target=record)
    first.start()
    inside.wait(10)
    # Records that overlap in two threads, the first to start ending first: each thread draws its own
    # fixed sequence, and numpy's own function is back once both have ended.
    with stand_in.fixed_entropy():
        assert np.array_equal(np.random.default_rng().random(3), draws["first"])
        leave.set()
        first.join(10)
        assert np.array_equal(
            np.random.default_rng().random(3),
            made(np.random.SeedSequence(stand_in.FIXED_ENTROPY).spawn(2)[1]).random(3),
        )
    assert np.random.default_rng is made


ADD_K_OFF_BY_ONE = ("(c_ctx + self.k * len(self.vocab))", "(c_ctx + self.k * (len(self.vocab) - 1))")


def test_a_property_is_paid_where_a_stand_in_answered_only_inner_calls(ngram, ngram_grader, tmp_path):
    """prob's add-k denominator is one too small. no_mutation's cases that call logprob and perplexity (which
    call prob) saw the property hold beside a wrong answer, and with the grader's prob their answers are
    right: paid. Its case that calls prob itself is not: a stand-in answering the call the case is about
    shows nothing of the submission's."""
    folder = _bug(ngram, tmp_path, extra=[ADD_K_OFF_BY_ONE])
    checks = {"pad", "count_ngrams", "fit", "prob_mle", "prob_add_k", "logprob", "perplexity", "sample"}
    verdicts = by_name(ngram_grader.grade(folder, only=checks | {"no_mutation"}))
    assert verdicts["prob_add_k"].score == 0
    no_mutation = verdicts["no_mutation"]
    labels = [case.label for case, _ in no_mutation.cases]
    own = [v.passed for _, v in no_mutation.cases]
    paid = round(no_mutation.score / no_mutation.max_score * len(labels))
    direct = [i for i, label in enumerate(labels) if label.startswith("prob ")]
    inner = [i for i, label in enumerate(labels) if label.startswith(("logprob ", "perplexity "))]
    assert direct and inner and not any(own[i] for i in direct + inner)
    assert paid == sum(own) + len(inner)
    assert no_mutation.stood_in == ("prob_add_k",)
    numbers = [str(i + 1) for i in inner]
    assert no_mutation.output.startswith(f"Cases {' and '.join(numbers)} pass once prob is fixed")


def test_a_rescued_composed_check_names_no_mistake_of_its_own_answers(ngram, ngram_grader, tmp_path):
    """The same bug makes logprob's own answers look like "UNK is not added to the vocabulary" (the vocabulary
    one short): logprob is paid by its stand-in run, and that mistake is its component's, not logprob's."""
    folder = _bug(ngram, tmp_path, extra=[ADD_K_OFF_BY_ONE])
    verdicts = by_name(
        ngram_grader.grade(folder, only={"pad", "count_ngrams", "fit", "prob_mle", "prob_add_k", "logprob"})
    )
    logprob = verdicts["logprob"]
    assert logprob.passed and logprob.stood_in == ("prob_add_k",)
    assert logprob.mistake is None and "known mistake" not in logprob.output


def _recurrent_module():
    """A torch module whose forward returns a tuple (an output and a state), as an RNN's does."""
    import torch

    module = types.ModuleType("toy_rnn")

    class Cell(torch.nn.Module):
        def __init__(self, d: int):
            super().__init__()
            self.w = torch.nn.Linear(d, d, bias=False, dtype=torch.float64)

        def forward(self, x, h):
            h = torch.tanh(self.w(x) + h)
            return 2 * h, h

    module.Cell = Cell
    return module


def _cell_scenario(modules, args):
    import torch

    torch.manual_seed(0)
    cell = modules["toy_rnn"].Cell(3)
    x = torch.tensor(args["x"], dtype=torch.float64, requires_grad=True)
    y, h = cell(x, torch.zeros(3, dtype=torch.float64))
    y2, h2 = cell(x, h)
    loss = (y2 * torch.arange(3.0, dtype=torch.float64)).sum() + h2.sum() + y.sum()
    loss.backward()
    return {"loss": loss.item(), "dx": x.grad.numpy().copy(), "dw": cell.w.weight.grad.numpy().copy()}


def test_a_torch_stand_in_whose_forward_returns_a_tuple_gives_the_references_gradients():
    pytest.importorskip("torch")
    args = {"x": [0.5, -1.0, 2.0]}
    expected = _cell_scenario({"toy_rnn": _recurrent_module()}, args)
    table = stand_in.record(_cell_scenario, {"toy_rnn": _recurrent_module()}, ("toy_rnn.Cell",), args)
    assert {v["output"] for c in table for v in c.get("vjps", ())} == {0, 1}  # both outputs took gradients

    class Broken(_recurrent_module().Cell):
        def forward(self, x, h):
            raise AssertionError("the student's broken code ran")

    student = types.ModuleType("toy_rnn")
    student.Cell = Broken
    got = replayed({"toy_rnn": student}, f"{__name__}:_cell_scenario", ("toy_rnn.Cell",), table, args)
    assert got["loss"] == pytest.approx(expected["loss"])
    np.testing.assert_allclose(got["dx"], expected["dx"])
    np.testing.assert_allclose(got["dw"], expected["dw"])


def test_a_forbidden_api_in_a_component_is_judged_without_fault(tmp_path):
    """A port of nanoGPT that calls F.layer_norm: every check running its LayerNorm is refused unrun (a verdict
    with cases but no answers), and the composed and property checks' rescue reads no answer it lacks."""
    from lmgrade.grading.grader import Grader
    from lmgrade.grading.oracle import LiveReference

    assignment, variant = catalog.load("transformer")
    folder = Path(__file__).parent / "submissions" / "ports" / "transformer" / "bugs" / "nanogpt_f_layer_norm"
    only = {"layer_norm", "causality"}
    with Grader(assignment, variant, LiveReference(assignment.spec), secret="s") as grader:
        verdicts = by_name(grader.grade(folder, only=only))
    assert verdicts["layer_norm"].score == 0 and "which this assignment forbids" in verdicts["layer_norm"].output
    assert set(verdicts) == only


def test_a_property_case_whose_own_call_makes_a_named_mistake_is_judged_on_its_property(ngram, ngram_grader, tmp_path):
    """pad leaves out the BOS markers (named on pad) but refuses a bad n. bad_arguments' cases that call pad
    itself get no stand-in (it would answer the call the case is about), yet each answer inside the domain is
    exactly what the named mistake gives (its model of pad validates nothing): the property is judged, and
    held, so they are paid, each case told why."""
    folder = _bug(ngram, tmp_path, "no_bos_padding")
    verdicts = by_name(ngram_grader.grade(folder, only={"pad", "count_ngrams", "bad_arguments"}))
    assert verdicts["pad"].mistake is not None and verdicts["pad"].mistake.name == "no_bos"
    bad_arguments = verdicts["bad_arguments"]
    assert bad_arguments.score == bad_arguments.max_score, bad_arguments.output
    direct = [str(i + 1) for i, (case, _) in enumerate(bad_arguments.cases) if case.label.startswith("pad(")]
    assert len(direct) == 3
    assert f"Cases {', '.join(direct[:-1])} and {direct[-1]} pass once this is fixed: pad: the start is not" in (
        bad_arguments.output
    )


def test_a_sampler_over_a_named_mistakes_vocabulary_is_judged_against_that_mistakes_model(
    ngram, ngram_grader, tmp_path
):
    """fit keeps BOS in the vocabulary (named on fit): sample then draws BOS, as that mistake's model does.
    Its draws are tested against the mistaken model's exact table, not the reference's: paid, and told so."""
    folder = _bug(ngram, tmp_path, "bos_in_vocab")
    verdicts = by_name(ngram_grader.grade(folder, only={"fit", "prob_mle", "prob_add_k", "sample"}))
    assert verdicts["fit"].mistake is not None and verdicts["fit"].mistake.name == "bos_in_vocab"
    sample = verdicts["sample"]
    assert sample.passed and sample.mistake is None, sample.output
    assert sample.output.startswith("Passes once fit is fixed: BOS is counted in the vocabulary"), sample.output
    assert "BOS is never drawn" in sample.output  # what its own draws showed against the reference's model

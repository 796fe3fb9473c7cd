"""`lmgrade mutants` reports each known mistake named on a mutant that changes none of the mistake's lines."""

from __future__ import annotations

from lmgrade.core.selection import Selection
from lmgrade.declare import catalog
from lmgrade.plugins.seq2seq import mistakes as M
from lmgrade.prove.mutants import MutantResult, MutantsReport, mistake_places
from lmgrade.prove.mutation import Mutant


def _seq2seq():
    return catalog.load(Selection.parse("seq2seq", ()))[0]


def _line_of(assignment, text: str) -> int:
    source = (assignment.spec.reference_folder() / "seq2seq.py").read_text(encoding="utf-8")
    return source[: source.index(text)].count("\n") + 1


def _mutant(line: int) -> Mutant:
    return Mutant("seq2seq.py", "attention", "replace", line, "a", "b", source="")


def test_a_mistakes_places_are_the_reference_lines_its_edits_replace():
    assignment = _seq2seq()
    places = mistake_places(assignment)
    # Two edits, one line each: the padded rows zeroed and the padded scores set to -inf.
    assert places["attend_padding"] == {
        ("seq2seq.py", _line_of(assignment, M.ZERO_PADDED.strip())),
        ("seq2seq.py", _line_of(assignment, M.MASK_SCORES.strip())),
    }
    # The loss's last line, which three loss mistakes replace.
    assert places["loss_per_sentence"] == {("seq2seq.py", _line_of(assignment, M.MEAN))}


def test_a_mistake_named_on_a_mutant_of_another_line_is_counted_as_named_elsewhere():
    assignment = _seq2seq()
    places = mistake_places(assignment)
    own = _line_of(assignment, M.SOFTMAX)
    other = _line_of(assignment, M.MEAN)
    results = [
        MutantResult(_mutant(own), 0.0, 100.0, ["attention"], ["softmax_wrong_axis"]),
        MutantResult(_mutant(other), 0.0, 100.0, ["attention"], ["softmax_wrong_axis"]),
        MutantResult(_mutant(other), 0.0, 100.0, ["attention"], ["scaled_scores+softmax_wrong_axis"]),
        MutantResult(_mutant(other), 100.0, 100.0, [], []),
    ]
    report = MutantsReport("seq2seq", 4, results, places=places)
    elsewhere = report.named_elsewhere()
    assert sorted(elsewhere) == ["scaled_scores", "softmax_wrong_axis"]
    assert len(elsewhere["softmax_wrong_axis"]) == 2 and len(elsewhere["scaled_scores"]) == 1
    assert report.as_dict()["named_elsewhere"] == elsewhere

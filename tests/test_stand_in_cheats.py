"""A stand-in run leaks no answer: each stand-in scavenger (tests/cheats/stand_in) makes a component wrong on
purpose, so that its check fails and the composed checks above it run again with the grader's stand-in, and
replaces the composed function by code that computes nothing but searches everything the child can reach
(objects, frames, modules, closures, descriptors, files, /proc/self, its own memory) for the reference's
answers and returns what it finds. Each composed check must score exactly 0, and no search may print a
`CHEAT-FOUND:` line (an answer or a marker of a stand-in run seen where the submission's output is shown).

The suite grades the ngram and lstm scavengers; `python3 dev.py study` the others too (torch's grading).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers import study_unless

HERE = Path(__file__).parent / "cheats" / "stand_in"
SUBMISSIONS = Path(__file__).parent / "submissions"
FOUND = "CHEAT-FOUND"


@dataclass(frozen=True)
class Scavenger:
    assignment: str
    folder: str
    wrong: tuple[str, ...]  # the checks of the components made wrong: each must fail
    composed: tuple[str, ...]  # the composed checks whose function scavenges: each must score 0

    @property
    def name(self) -> str:
        return f"{self.assignment}-{self.folder}"


SCAVENGERS = (
    Scavenger("ngram", "count_ngrams", ("pad",), ("count_ngrams",)),
    # fit has no stand-in: prob's stand-in run is the one that replaces pad
    Scavenger("ngram", "prob", ("pad",), ("prob_mle", "prob_add_k")),
    Scavenger("ngram", "logprob", ("prob_mle", "prob_add_k"), ("logprob",)),
    Scavenger("ngram", "perplexity", ("logprob",), ("perplexity", "perplexity_hidden")),
    Scavenger("ngram", "sample", ("prob_mle", "prob_add_k"), ("sample",)),
    Scavenger("lstm", "cells", ("sigmoid",), ("lstm_forward", "lstm_backward", "gru_forward", "gru_backward")),
    Scavenger(
        "lstm",
        "deep",
        ("lstm_forward", "gru_forward"),
        ("long_sequence", "stacked", "birnn", "depth_direction", "bptt_hidden"),
    ),
    Scavenger("lstm", "lm", ("stacked", "clip_grad_norm"), ("lstmlm", "step", "train")),
    Scavenger("embeddings", "encode", ("encode_word",), ("encode",)),
    Scavenger("embeddings", "train", ("step",), ("train",)),
    Scavenger("seq2seq", "train", ("forward",), ("train",)),
    # the block scavenges for block (LayerNorm wrong) and, failing, is the component model's stand-in replaces
    Scavenger("transformer", "layers", ("layer_norm",), ("block", "model", "model_hidden")),
    Scavenger("transformer", "train", ("model",), ("train", "evaluate_perplexity", "generate")),
)
IN_THE_SUITE = ("ngram", "lstm")


def write_scavenger(scavenger: Scavenger, folder: Path) -> Path:
    """The scavenger's submission with its search module beside it, in `folder`."""
    folder.mkdir(parents=True)
    for path in (HERE / scavenger.assignment / scavenger.folder).glob("*.py"):
        shutil.copy(path, folder / path.name)
    shutil.copy(HERE / "scavenge.py", folder / "scavenge.py")
    return folder


def test_every_scavenger_folder_is_listed_and_described():
    folders = {f"{p.parent.name}-{p.name}" for p in HERE.glob("*/*") if p.is_dir()}
    assert folders == {s.name for s in SCAVENGERS}
    readme = (HERE / "README.md").read_text()
    assert all(f"`{s.assignment}/{s.folder}`" in readme for s in SCAVENGERS)


@pytest.mark.slow
@pytest.mark.parametrize(
    "scavenger",
    [pytest.param(s, id=s.name, marks=study_unless(s.assignment in IN_THE_SUITE)) for s in SCAVENGERS],
)
def test_a_stand_in_scavenger_earns_nothing(graders, tmp_path, scavenger):
    grader = graders(scavenger.assignment)
    assert set(scavenger.wrong + scavenger.composed) <= {c.name for c in grader.assignment.checks}
    verdicts = grader.grade(
        write_scavenger(scavenger, tmp_path / scavenger.folder), only=set(scavenger.wrong + scavenger.composed)
    )
    by_name = {v.check.name: v for v in verdicts}
    # The components' checks fail, so the composed checks above them run again with the stand-ins.
    passed = [name for name in scavenger.wrong if by_name[name].score >= by_name[name].max_score]
    assert not passed, f"{scavenger.name}: the component made wrong passes {passed}"
    paid = [
        f"{name} {by_name[name].score:g}/{by_name[name].max_score:g}: "
        + " | ".join(by_name[name].output.strip().splitlines()[:3])
        for name in scavenger.composed
        if by_name[name].score != 0
    ]
    found = sorted({line.strip() for v in verdicts for line in v.output.splitlines() if FOUND in line})
    assert not paid and not found, f"{scavenger.name}:\n" + "\n".join(paid + found)
    # A search that outran the time limit would fail its stand-in run whatever it found.
    slow = [name for name in scavenger.composed if "time limit" in by_name[name].output]
    assert not slow, f"{scavenger.name}: the search ran out of time in {slow}"


def _method(source: str, name: str) -> re.Match:
    """Where method `name`'s body (indented 8) lies in `source`."""
    found = re.search(rf"\n    def {name}\(self[^\n]*\n((?:        [^\n]*\n|[ \t]*\n)+)", source)
    assert found, name
    return found


@pytest.mark.slow
def test_the_search_spoils_no_stand_in_run(graders, tmp_path):
    """The control: logprob's scavenger with its correct body back after the whole search is paid by its
    stand-in run, so a scavenger's 0 is the run's verdict on what it found, not a run its search broke."""
    scavenger = next(s for s in SCAVENGERS if s.folder == "logprob")
    folder = write_scavenger(scavenger, tmp_path / "control")
    correct = (SUBMISSIONS / "ngram" / "dict_of_dicts" / "ngram.py").read_text()
    source = (folder / "ngram.py").read_text()
    searched = _method(source, "logprob")
    body = "        scavenge.findings(self, sentence)\n" + _method(correct, "logprob").group(1)
    (folder / "ngram.py").write_text(source[: searched.start(1)] + body + source[searched.end(1) :])
    verdicts = graders("ngram").grade(folder, only={"prob_mle", "prob_add_k", "logprob"})
    by_name = {v.check.name: v for v in verdicts}
    assert by_name["prob_mle"].score < by_name["prob_mle"].max_score
    assert by_name["logprob"].score == by_name["logprob"].max_score, by_name["logprob"].output
    assert "Passes once" in by_name["logprob"].output

"""Whatever a submission sends, judging never raises, and a hidden case shows nothing the code produced.

A child may return any value the encoder takes, or write its result frames
itself: a structured or object array, a 401-digit int, nesting of any depth,
a deflate bomb, an answer past the caps, a top-level value no scenario
returns. Each is a failed case with a plain message and the grade completes.
A hidden case says only the kind of its failure, one of four fixed
sentences: never a line number, an exception's type, message or class name,
the names a forged frame claims, nor what a child printed; no traceback shows
a frame or path of the grader. A file name a child sends is never opened.
"""

from __future__ import annotations

import io
import json
import struct
import tracemalloc
import warnings
import zipfile

import numpy as np
import pytest

from helpers import ROOT
from lmgrade.boundary import wire
from lmgrade.core.comparison import Tolerance, compare
from lmgrade.grading.feedback import HIDDEN_FAILURES, UNANSWERED_HIDDEN
from lmgrade.grading.submission_grading import grade_submission

REFERENCE = (ROOT / "reference" / "ngram" / "ngram.py").read_text()

# What a child that writes its own frames sends (`sandbox.protocol`): for every case of the check, a
# result holding `doc` (and the arrays archive `npz`), then the end of the run.
FORGER = """
import os as _os, struct as _struct, json as _json

def _send(outcome_text, npz=b""):
    payload = _struct.pack(">Q", len(outcome_text)) + outcome_text.encode() + npz
    for index in range(64):  # more than the check has cases: the grader reads those it has
        _os.write(3, _struct.pack(">BiQ", 3, index, len(payload)) + payload)
    _os.write(3, _struct.pack(">BiQ", 4, -1, 0))
    _os._exit(0)

def _forge_text(answer_text, npz=b""):
    _send('{"$dict": [["ok", ' + answer_text + ']]}', npz)

def _forge(answer, npz=b""):
    _forge_text(_json.dumps(answer), npz)

def _forge_forbidden(names):
    _send(_json.dumps({"$dict": [["forbidden", names]]}))

def _forge_outcome(key):
    _send(_json.dumps({"$dict": [[key, 1]]}))

def _archive():
    with open(_os.path.join(_os.path.dirname(__file__), "archive.bin"), "rb") as f:
        return f.read()
"""


def _npy(array: np.ndarray, shape: tuple | None = None) -> bytes:
    out = io.BytesIO()
    np.lib.format.write_array(out, array, allow_pickle=False)
    data = out.getvalue()
    return data if shape is None else data.replace(repr(array.shape).encode(), repr(shape).encode(), 1)


def _archive(members: list[bytes], compression: int = zipfile.ZIP_STORED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=compression) as archive:
        for i, member in enumerate(members):
            archive.writestr(f"arr_{i}.npy", member)
    return out.getvalue()


def _bomb(values: int) -> bytes:
    """An archive of one deflated array of `values` zeros: a thousandth of its size."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("arr_0.npy", "w", force_zip64=True) as member:
            np.lib.format.write_array(member, np.zeros(values), allow_pickle=False)
    return out.getvalue()


def _frame(doc, npz: bytes = b"") -> bytes:
    text = json.dumps(doc).encode()
    return struct.pack(">Q", len(text)) + text + npz


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


# --- decoding: only plain data, only as much as an answer needs, sizes read before anything is allocated


@pytest.mark.parametrize(
    "payload, said",
    [
        (_frame({"$array": 0}, _archive([_npy(np.zeros(3, dtype=[("a", "<i4"), ("b", "<f8")]))])), "structured"),
        (_frame({"$array": 0}, _archive([_npy(np.zeros(2, dtype="M8[D]"))])), "datetime64"),
        (struct.pack(">Q", 401) + b"1" * 401, "401 digits"),
        (_frame(json.loads(_nested(200))), "nested deeper than 64 levels"),
        (struct.pack(">Q", 10000) + _nested(5000).encode(), "nested deeper than 64 levels"),
        (_frame({"$scalar": 1, "dtype": "O"}), "not plain data"),
        (_frame({"$scalar": 300, "dtype": "int8"}), "out of the range"),
        (_frame({"$float": "1e5"}), "malformed"),
        (_frame({"$set": [[1, 2]]}), "a set item that is a list"),
        (_frame({"$dict": [[{"$dict": []}, 1]]}), "a dict key that is a dict"),
        (_frame({"$array": 1}, _archive([_npy(np.zeros(2))])), "missing array"),
        (_frame({"$array": 0}, _archive([_npy(np.zeros(2))], zipfile.ZIP_DEFLATED)), "compressed"),
        (_frame({"$array": 0}, _archive([_npy(np.zeros(2), shape=(10**9,))])), "does not match its bytes"),
        (_frame({"$array": 0}, _archive([_npy(np.zeros(2), shape=(-1, 0))])), "does not match its bytes"),
        (_frame({"$tensor": {"$array": 0}, "dtype": "x" * 100, "device": "cpu"}, _archive([_npy(np.zeros(2))])), ""),
        (_frame("x" * 5 * 2**20), "more than the grader accepts"),  # past the 4 MiB a document may be
    ],
    ids=[
        "structured",
        "datetime",
        "huge int",
        "deep",
        "deeper than json",
        "object scalar",
        "scalar out of range",
        "float text",
        "unhashable item",
        "unhashable key",
        "missing array",
        "deflated",
        "shape past the bytes",
        "negative shape",
        "long dtype name",
        "document over the cap",
    ],
)
def test_decoding_refuses_what_no_answer_can_be(payload, said):
    with pytest.raises(wire.WireError) as refused:
        wire.decode(payload)
    assert said in str(refused.value)
    if said != "more than the grader accepts":
        assert "not plain data" in str(refused.value) or "undecodable" in str(refused.value)


def test_decoding_an_object_array_says_so():
    payload = _frame({"$array": 0}, _archive([_npy(np.zeros(2)).replace(b"'<f8'", b"'|O8'")]))
    with pytest.raises(wire.WireError, match="dtype object"):
        wire.decode(payload)


def test_a_deflate_bomb_is_refused_before_it_inflates():
    bomb = _frame({"$array": 0}, _bomb(10_000_000))  # 80 MB of zeros in about 80 kB
    assert len(bomb) < 200_000
    tracemalloc.start()
    try:
        with pytest.raises(wire.WireError, match="compressed"):
            wire.decode(bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000, f"decoding the bomb allocated {peak / 1e6:.0f} MB"


def test_arrays_past_the_cap_are_refused_from_the_lengths(monkeypatch):
    monkeypatch.setattr(wire, "MAX_ARRAY_BYTES", 1_000_000)
    with pytest.raises(wire.WireError, match="more than the grader accepts"):
        wire.decode(wire.encode(np.zeros(200_000)))
    assert wire.decode(wire.encode(np.zeros(100_000))).shape == (100_000,)


def test_everything_the_encoder_writes_decodes_as_it_was():
    values = [
        -(2**63),
        2**64 - 1,
        float("nan"),
        -np.inf,
        (1, [2, (3,)]),
        {1, "a", (2, 3)},
        {("a", "b"): 1, 2: [np.zeros((2, 3)), np.arange(5, dtype=np.uint8)]},
        np.float32(2.5),
        np.str_("w"),
        np.array(["ab", "c"]),
        np.array([1 + 2j]),
        np.asfortranarray(np.arange(6.0).reshape(2, 3)),
        np.zeros((0, 3)),
        np.zeros(3, dtype=">f4"),
    ]
    for value in values:
        assert wire.identical(wire.decode(wire.encode(value)), value), value


def test_the_encoder_refuses_what_the_decoder_would():
    for value in (10**400, np.zeros(2, dtype=[("a", "<i4")]), np.zeros(2, dtype="M8[D]"), np.array([{}], dtype=object)):
        with pytest.raises(wire.WireError):
            wire.encode(value)


# --- comparing: never an exception, whatever came back

HOSTILE = [
    10**400,
    -(10**5000),
    float("nan"),
    np.zeros(3, dtype=[("a", "<i4")]),
    np.array([1, "a"], dtype=object),
    np.array(["a", "b", "c"]),
    np.array([1 + 2j, 3j, 0]),
    np.array([np.inf, -np.inf, 1e308]),
    np.array(["2020-01-01"] * 3, dtype="M8[D]"),
    {float("nan"): 1.0, float("nan"): np.zeros(2)},
    list(range(100_000)),
    set(range(100_000)),
    "x" * 1_000_000,
    wire.Tensor(np.zeros(3), "float32", "cpu"),
]
EXPECTED = [1.0, 3, "s", [1.0, 2.0], (1, "a"), {1, 2}, {"a": 1.0}, np.zeros(3), np.arange(3), np.array(["x", "y", "z"])]


@pytest.mark.parametrize("expected", EXPECTED, ids=lambda e: type(e).__name__)
def test_compare_never_raises_on_what_came_back(expected):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for got in HOSTILE:
            for reveal in (True, False):
                said = compare(expected, got, Tolerance(), reveal=reveal)
                assert isinstance(said, str) and len(said) < 1000, (got, said)


def test_equal_infinities_compare_equal_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compare(np.array([-np.inf, 1.0, np.inf]), np.array([-np.inf, 1.0, np.inf]), Tolerance()) is None
        said = compare(np.array([-np.inf, 1.0, np.inf]), np.array([-np.inf, 2.0, np.inf]), Tolerance())
        assert said.startswith("1 of 3 values wrong") and "index (1,)" in said
        assert "-inf" in compare(np.array([-np.inf, 1.0]), np.array([np.inf, 1.0]), Tolerance())
        assert compare(np.array([1e308, 1.0]), np.array([-1e308, 1.0]), Tolerance()).startswith("1 of 2 values wrong")


def test_a_huge_int_where_a_number_belongs_is_a_wrong_value():
    said = compare(3.5, 10**400, Tolerance())
    assert said.startswith("wrong value: expected 3.5, got an integer of 401 digits"), said


# --- graded: every hostile answer is a failed case with a message, and the grade completes


def _submission(tmp_path, extra: str, archive: bytes = b""):
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / "ngram.py").write_text(REFERENCE + FORGER + extra)
    if archive:
        (folder / "archive.bin").write_bytes(archive)
    return folder


def _graded(grader, folder, check: str):
    (verdict,) = grader.grade(folder, only={check})
    assert not verdict.passed and verdict.score == 0 and verdict.cases
    return verdict


ANSWERS = {
    "a 401-digit int": ("NGramLM.perplexity = lambda self, test: 10**400\n", "", "401 digits"),
    "a structured array": (
        "NGramLM.perplexity = lambda self, test: _forge({'$array': 0}, _archive())\n",
        _archive([_npy(np.zeros(3, dtype=[("a", "<i4"), ("b", "<f8")]))]),
        "not plain data: a numpy array of dtype with named fields",
    ),
    "an object array, returned": (
        "import numpy\nNGramLM.perplexity = lambda self, test: numpy.array([{}, 1], dtype=object)\n",
        "",
        "not plain data",
    ),
    "an object array, forged": (
        "NGramLM.perplexity = lambda self, test: _forge({'$array': 0}, _archive())\n",
        _archive([_npy(np.zeros(2)).replace(b"'<f8'", b"'|O8'")]),
        "not plain data: a numpy array of dtype object",
    ),
    "nesting past the encoder's depth": (
        "def _deep(self, test):\n    v = 1.0\n    for _ in range(100):\n        v = [v]\n    return v\n"
        "NGramLM.perplexity = _deep\n",
        "",
        "not plain data",
    ),
    "nesting past json's depth, forged": (
        f"NGramLM.perplexity = lambda self, test: _forge_text({_nested(5000)!r})\n",
        "",
        "nested deeper than 64 levels",
    ),
    "a deflate bomb": (
        "NGramLM.perplexity = lambda self, test: _forge({'$array': 0}, _archive())\n",
        _bomb(5_000_000),
        "compressed",
    ),
    "a float whose comparisons lie": (
        "class _Liar(float):\n"
        "    __eq__ = lambda self, other: True\n"
        "    __ne__ = lambda self, other: False\n"
        "    __float__ = __repr__ = lambda self: 1 / 0\n"
        "NGramLM.perplexity = lambda self, test: _Liar(1.25)\n",
        "",
        "got 1.25",
    ),
    "a document over the cap": (
        "NGramLM.perplexity = lambda self, test: 'x' * (5 * 2**20)\n",
        "",
        "more than the grader accepts",
    ),
    "arrays over the cap": (
        "import numpy\n_sent = []\n"
        "def _big(self, test):\n"
        "    _sent.append(1)\n"
        "    return numpy.zeros(9_000_000) if len(_sent) == 1 else 1.0\n"
        "NGramLM.perplexity = _big\n",
        "",
        "more than the grader accepts",
    ),
}


@pytest.mark.parametrize("answer", list(ANSWERS))
def test_a_hostile_answer_is_a_failed_case_with_a_plain_message(ngram_grader, tmp_path, answer):
    extra, archive, said = ANSWERS[answer]
    folder = _submission(tmp_path, extra, archive)
    verdict = _graded(ngram_grader, folder, "perplexity")
    assert said in verdict.output, verdict.output
    for path in ("/tmp", "lmgrade", "site-packages", "plugins", "autograder"):
        assert path not in verdict.output, verdict.output


@pytest.mark.parametrize("check", ["sample", "no_mutation", "fit"])
def test_an_answer_no_scenario_returns_is_judged_a_failure(ngram_grader, tmp_path, check):
    """A top-level value of another shape than the check's scenario builds: judges and property checks
    read it without raising."""
    forged = (
        "_pad = pad\n"
        "def pad(sentence, n):\n"
        "    _forge([5, 'x'])\n"
        "NGramLM.fit = lambda self, corpus: _forge([5, 'x'])\n"
        "NGramLM.sample = lambda self, rng, max_len=100: _forge([5, 'x'])\n"
    )
    folder = _submission(tmp_path, forged)
    verdict = _graded(ngram_grader, folder, check)
    assert all(not v.passed and v.message for _, v in verdict.cases), verdict.output


# --- hidden means hidden; no frame of the grader anywhere

LEAKS = {
    "its exception's message": "raise ValueError('LEAK' + repr(test))",
    "its exception class's name": "raise type('LEAK' + '_'.join(test[0]), (Exception,), {})()",
    "what it printed before it died": (
        "print('.' * 100_000)\n    print('LEAK', repr(test), flush=True)\n    _os._exit(3)"
    ),
    "the APIs a forged frame names": "_forge_forbidden(['LEAK' + repr(test)])",
    "the outcome a forged frame names": "_forge_outcome('LEAK' + repr(test))",
}


def _leaky(tmp_path, how: str):
    body = f"def _leaky(self, test):\n    print('LEAK', repr(test))\n    {how}\nNGramLM.perplexity = _leaky\n"
    return _submission(tmp_path, body)


def _hidden_texts(grader, whole: bool = False) -> list[str]:
    """The hidden check's arguments as the student's code writes them: each corpus, and (`whole` False)
    its first sentence and the name made from it."""
    check = next(c for c in grader.assignment.checks if c.name == "perplexity_hidden")
    texts = []
    for case in grader.cases(check):
        corpus = case.args["test"]
        texts += [repr(corpus)] + ([] if whole else [repr(corpus[0]), "_".join(corpus[0])])
    return texts


@pytest.mark.parametrize("leak", list(LEAKS))
def test_a_hidden_case_shows_nothing_the_code_produced(ngram_grader, tmp_path, leak):
    verdict = _graded(ngram_grader, _leaky(tmp_path, LEAKS[leak]), "perplexity_hidden")
    assert "LEAK" not in verdict.output, verdict.output
    for text in _hidden_texts(ngram_grader):
        assert text not in verdict.output
    for path in ("/tmp", "lmgrade", "site-packages", "plugins", "autograder"):
        assert path not in verdict.output, verdict.output


def test_the_whole_grade_completes_and_its_hidden_case_says_only_the_kind_of_failure(ngram, ngram_grader, tmp_path):
    """A submission answering a 401-digit int, and raising the hidden inputs: graded to the end, results.json
    written, the hidden check saying that its cases gave no answer, nothing more (no type, no line)."""
    folder = _leaky(tmp_path, LEAKS["its exception's message"])
    with (folder / "ngram.py").open("a") as source:
        source.write("NGramLM.logprob = lambda self, sentence: 10**400\n")
    results = tmp_path / "results.json"
    run = grade_submission(*ngram, folder, results=results, grader=ngram_grader)
    document = json.loads(results.read_text())
    output = {t["name"].split(":")[0]: t["output"] for t in document["tests"]}
    assert 0 < run.score < run.max_score
    assert "401 digits" in output["logprob"], output["logprob"]
    hidden = output["perplexity_hidden"]
    assert UNANSWERED_HIDDEN in hidden, hidden
    assert "LEAK" not in hidden and "ValueError" not in hidden and "line" not in hidden.replace(UNANSWERED_HIDDEN, "")
    assert "raised ValueError: LEAK" in output["perplexity"]  # a visible check shows the message
    everything = results.read_text()
    for text in _hidden_texts(ngram_grader, whole=True):
        assert text not in everything and json.dumps(text)[1:-1] not in everything


def _hidden_lines(verdict) -> set[str]:
    """Every line a hidden check's feedback shows but its count of passed cases and its cases' labels."""
    lines = set()
    for line in verdict.output.splitlines()[1:]:
        text = line.strip()
        if text.startswith("case ") or text.startswith("every case: "):
            text = text.split(": ", 1)[1] if text.startswith("every case: ") else None
        if text and text != "same as above":
            lines.add(text)
    return lines


CHOSEN = {
    "a line number of its choosing": "exec(compile('\\n' * 4242 + 'raise KeyError(1)', 'ngram.py', 'exec'))",
    "an exception type of its choosing": "raise [ValueError, KeyError][len(test) % 2]()",
    "a signal of its choosing": "_os.kill(_os.getpid(), 9 if len(test) % 2 else 11)",
    "an exit status of its choosing": "_os._exit(len(test) % 200 + 7)",
    "an answer of its choosing": "return float(len(test))",
    "a shape of its choosing": "return [0.5] * len(test)",
    "printing of its choosing": "print('x' * len(test) * 1000)\n    return 0.0",
}


@pytest.mark.parametrize("how", list(CHOSEN))
def test_a_failed_hidden_case_says_one_of_four_fixed_sentences(ngram_grader, tmp_path, how):
    """Whatever the code chooses to do on a hidden case, its feedback is one of `HIDDEN_FAILURES`: at most
    two bits a failing case (and the count of cases passed, which the score says anyway)."""
    folder = _submission(tmp_path, f"def _chosen(self, test):\n    {CHOSEN[how]}\nNGramLM.perplexity = _chosen\n")
    verdict = _graded(ngram_grader, folder, "perplexity_hidden")
    assert _hidden_lines(verdict) and _hidden_lines(verdict) <= set(HIDDEN_FAILURES), verdict.output
    assert "4242" not in verdict.output and "printed" not in verdict.output


# --- no name a child sends is opened: a forged frame's file


FORGED_FILES = ["../../../../../../../../dev/zero", "../../proc/self/fd/1", "/dev/zero", "../ngram.py", "ngram.py/."]


@pytest.mark.parametrize("name", FORGED_FILES)
def test_a_stub_raising_from_a_forged_file_name_is_graded_without_opening_it(ngram_grader, tmp_path, name):
    """Every function raises NotImplementedError from code whose file name climbs out of the run's folder:
    the grading process finds where it raised in its own read of the submission's files, and never opens the
    name (which hung the grader on /proc/self/fd/1 and exhausted its memory on /dev/zero)."""
    forged = f"/tmp/x/lmgrade-run-ab/submission/{name}"
    stub = "def _stub(*args, **kwargs):\n    raise NotImplementedError\n"
    extra = (
        f"exec(compile({stub!r}, {forged!r}, 'exec'))\n"
        "for _name in ('perplexity', 'logprob', 'prob', 'fit', 'sample', '__init__'):\n"
        "    setattr(NGramLM, _name, _stub)\n"
    )
    folder = _submission(tmp_path, extra)
    (verdict,) = ngram_grader.grade(folder, only={"perplexity"})
    assert verdict.score == 0 and verdict.not_implemented_in is None, verdict.output
    assert "not implemented" in verdict.output


def test_where_a_stub_raised_is_found_in_the_graders_own_read_and_a_forged_name_opens_nothing(monkeypatch):
    from lmgrade.declare import composition
    from lmgrade.grading.feedback import frames

    source = "class NGramLM:\n    def fit(self, corpus):\n        raise NotImplementedError\n"

    def error(path: str) -> dict:
        return {
            "type": "NotImplementedError",
            "traceback": f'Traceback (most recent call last):\n  File "{path}", line 3, in fit\n',
        }

    def refuse(*args, **kwargs):
        raise AssertionError(f"the grading process opened {args[:1]}")

    monkeypatch.setattr("builtins.open", refuse)
    monkeypatch.setattr("os.open", refuse)
    monkeypatch.setattr("os.stat", refuse)
    sources = {"ngram.py": source}
    submitted = "/tmp/t/lmgrade-run-1/submission/"
    assert composition.not_implemented_in([error(submitted + "ngram.py")], sources, frames) == ("NGramLM.fit",)
    for name in FORGED_FILES:
        assert composition.not_implemented_in([error(submitted + name)], sources, frames) is None


def test_a_visible_traceback_shows_the_students_frames_and_the_graders_call_in_words(ngram_grader, tmp_path):
    folder = _submission(tmp_path, "from helpers import boom\nNGramLM.perplexity = lambda self, test: boom(test)\n")
    (folder / "helpers.py").write_text("def boom(test):\n    return {}[len(test)]\n")
    verdict = _graded(ngram_grader, folder, "perplexity")
    output = verdict.output
    assert "called by the grader's check perplexity" in output, output
    assert 'File "helpers.py", line 2, in boom' in output and "return {}[len(test)]" in output
    assert 'File "ngram.py", line' in output
    for path in ("/tmp", "lmgrade", "site-packages", "plugins", "autograder", "child.py", "scenarios.py"):
        assert path not in output, output


@pytest.mark.parametrize("name", ["rnn", "lstm"])
def test_a_hidden_gradient_check_says_only_that_backward_disagrees(name):
    """How the backward disagrees with finite differences is text the child sends: a hidden case leaves it out."""
    from lmgrade.declare import catalog
    from lmgrade.declare.checks import Case

    check = next(c for c in catalog.load(name)[0].checks if c.name == "bptt_hidden")
    key = "backward against finite differences of loss"
    expected = {"loss": 1.0, "grads['W']": np.zeros(2), key: "agree"}
    got = {"loss": 2.0, "grads['W']": np.ones(2), key: "disagree at LEAK['the', 'hidden', 'corpus']"}
    hidden = check.judge(check, Case("hidden", {}), expected, got, reveal=False)
    visible = check.judge(check, Case("shown", {}), expected, got, reveal=True)
    assert not hidden.passed and "disagree" in hidden.message and "LEAK" not in hidden.message, hidden.message
    assert "LEAK" in visible.message


def test_an_import_failure_in_a_hidden_check_says_no_answer_only(ngram):
    """The submission may fail to import inside a check alone (it can read the check's inputs from memory)."""
    from lmgrade.declare.checks import Case
    from lmgrade.grading.feedback import outcome_verdict
    from lmgrade.sandbox.pool import CaseOutcome

    checks = {c.name: c for c in ngram[0].checks}
    error = {
        "type": "KeyError",
        "message": "'LEAK the hidden corpus'",
        "traceback": (
            "Traceback (most recent call last):\n"
            '  File "/usr/lib/python3/site-packages/lmgrade/loader.py", line 40, in load_files\n'
            '  File "/tmp/lmgrade-x/lmgrade-run-ab12/submission/ngram.py", line 3, in <module>\n'
            "    table = {}[secret()]\n"
            "KeyError: 'LEAK the hidden corpus'\n"
        ),
        "file": "ngram.py",
        "where": (
            "  File \"ngram.py\", line 3, in <module>\n    table = {}[secret()]\nKeyError: 'LEAK the hidden corpus'"
        ),
    }
    outcome = CaseOutcome("import_error", error=error)
    hidden = outcome_verdict(checks["perplexity_hidden"], Case("x", {}), None, outcome, False).message
    visible = outcome_verdict(checks["perplexity"], Case("x", {}), None, outcome, True).message
    assert hidden == UNANSWERED_HIDDEN, hidden
    assert 'File "ngram.py", line 3, in <module>' in visible and "LEAK" in visible
    assert "site-packages" not in visible and "lmgrade-run" not in visible

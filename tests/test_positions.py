"""The transformer's positions variant (learned, sinusoidal, rope), beyond what every variant proves.

tests/test_assignments.py grades the reference, the stubs, the contract
submissions and the catalogue's bugs in every variant. Here: what is
harmless under RoPE gets full marks; submissions that do no work score 0 in
the new variants too; assignment.toml's `only` and `points_when`; bundles
carry no reference code in any variant.
"""

from __future__ import annotations

import csv
import textwrap

import numpy as np
import pytest
from degenerate import RAISES, write_degenerate

from helpers import ROOT, TEST_SECRET, distinctive_reference_lines, shortened
from lmgrade.core.seeds import PUBLIC_SECRET
from lmgrade.core.selection import Selection
from lmgrade.course.bundle.fixtures import Fixtures, describe, record
from lmgrade.course.bundle.sources import grader_files
from lmgrade.course.regrade import discover, regrade
from lmgrade.course.regrade.executor import LocalExecutor
from lmgrade.declare import catalog
from lmgrade.declare.assignment import Assignment, AssignmentError, bind, load_assignment
from lmgrade.declare.flawed import without_docstring
from lmgrade.grading.grader import Grader
from lmgrade.grading.oracle import RecordedReference
from lmgrade.plugins.transformer.positions import ROPE_ANGLE_D_MODEL

# Slow: grades every positions variant, and regrades one.
pytestmark = pytest.mark.slow

ROPE = ("positions=rope",)
ROTATE = "            q, k = rotate(torch.stack((q, k))).unbind(0)  # both at once: (2, B, n_heads, T, d_head)\n"
ROPE_BLOCK = (
    "        if self.rope:\n            # Queries and keys only: the score of t and s then depends on t - s\n"
    "            # alone; the values carry content, not position.\n" + ROTATE
)
SCORES = "        att = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)  # (B, n_heads, T, T)\n"
POSITIONS = "    t = torch.arange(T, dtype=x.dtype, device=x.device)  # (T,)\n"
# The checks whose code runs the attention with RoPE (the others are proved on the reference).
ATTENTION_CHECKS = {"rope", "rope_relative", "block", "model", "causality", "bad_arguments", "model_hidden", "generate"}


def _reference_with(tmp_path, edits) -> str:
    tmp_path.mkdir(parents=True, exist_ok=True)
    for name in ("layers.py", "model.py", "train.py"):
        source = without_docstring((ROOT / "reference" / "transformer" / name).read_text())
        for old, new in edits if name == "layers.py" else ():
            assert source.count(old) == 1, old
            source = source.replace(old, new)
        (tmp_path / name).write_text(source)
    return tmp_path


@pytest.mark.parametrize(
    "edits",
    [
        pytest.param(
            (
                (ROPE_BLOCK, ""),
                (
                    SCORES,
                    "        q = q / math.sqrt(self.d_head)\n" + ROPE_BLOCK + "        att = q @ k.transpose(-2, -1)\n",
                ),
            ),
            id="rope-after-scaling",
            marks=pytest.mark.study,  # the suite grades the other edit
        ),
        pytest.param(((POSITIONS, POSITIONS.replace("arange(T,", "arange(1, T + 1,")),), id="rope-positions-from-1"),
    ],
)
def test_what_rope_leaves_unchanged_gets_full_marks(graders, tmp_path, edits):
    # Scaling q by 1/sqrt(d_head) commutes with a rotation; turning q and k by one more step alike leaves
    # every q.k unchanged (it depends on t - s only). Neither is a mistake.
    verdicts = graders("transformer", ROPE).grade(_reference_with(tmp_path, edits), only=ATTENTION_CHECKS)
    assert {v.check.name for v in verdicts} == ATTENTION_CHECKS
    assert all(v.score == v.max_score > 0 for v in verdicts), {v.check.name: v.output for v in verdicts if not v.passed}


def test_rope_rotating_k_only_is_caught_by_the_property(graders, tmp_path):
    # The relative-position property sees it on its own: a score that depends on where the tokens are.
    folder = _reference_with(tmp_path, ((ROTATE, "            k = rotate(k)\n"),))
    (verdict,) = graders("transformer", ROPE).grade(folder, only={"rope_relative"})
    assert verdict.score == 0 and "not only on t - s" in verdict.output


def test_rope_relative_earns_nothing_beside_a_wrong_attention(graders, tmp_path):
    # Angles with d_model where the contract has d_head: the numbers are wrong (the rope check says so), but
    # q and k still turn alike, by angles proportional to the position, so the property holds; beside the
    # attention's wrong output it earns nothing. With one head, d_head is d_model: right, and paid.
    folder = _reference_with(tmp_path, tuple((old, new) for _, old, new in ROPE_ANGLE_D_MODEL.edits))
    verdicts = {v.check.name: v for v in graders("transformer", ROPE).grade(folder, only={"rope", "rope_relative"})}
    assert verdicts["rope"].score < verdicts["rope"].max_score
    relative = verdicts["rope_relative"]
    assert relative.score < relative.max_score, relative.output
    for case, verdict in relative.cases:
        assert "they depend on t - s only" in verdict.message, relative.output
        wrong = "the attention's own output is wrong" in verdict.message
        assert verdict.passed == (case.args["n_heads"] == 1) != wrong, relative.output


def test_rope_angles_in_float32_are_told_float32_not_to_rotate_alike(graders, tmp_path):
    # LLaMA's `.float()`: cos and sin of float32 angles in a float64 model. q and k still turn alike, by
    # angles proportional to the position; what moves the scores is float32's rounding.
    angle = "    angle = t[:, None] * 10000.0 ** (-i / d_head)  # (T, d_head / 2)\n"
    in_float32 = "    angle = (t.float()[:, None] * 10000.0 ** (-i.float() / d_head)).to(x.dtype)\n"
    cos_sin = "    cos, sin = torch.cos(angle), torch.sin(angle)\n"
    cos_sin_32 = "    cos, sin = torch.cos(angle.float()).to(x.dtype), torch.sin(angle.float()).to(x.dtype)\n"
    folder = _reference_with(tmp_path, ((angle, in_float32), (cos_sin, cos_sin_32)))
    (relative,) = graders("transformer", ROPE).grade(folder, only={"rope_relative"})
    failed = [verdict.message for case, verdict in relative.cases if not verdict.passed]
    # Either the scores move within float32's rounding, said so, or they do not and the output's float32
    # error is named: never the advice to rotate q and k alike, which this code does.
    assert failed and all("float32" in m for m in failed), relative.output
    assert "rotate q and k alike" not in relative.output


@pytest.mark.study  # the suite grades these submissions in the default variant (test_assignments.py)
@pytest.mark.parametrize("pairs", [("positions=sinusoidal",), ROPE])
@pytest.mark.parametrize("body", ["0", RAISES])
def test_a_submission_that_does_no_work_scores_zero_in_the_positions_variants(graders, tmp_path, pairs, body):
    grader = graders("transformer", pairs)
    folder = write_degenerate(grader.assignment, grader.variant, tmp_path, body)
    assert not {v.check.name: v.output for v in grader.grade(folder) if v.score}


@pytest.mark.parametrize("pairs", [("positions=sinusoidal",), ROPE, ("positions=rope", "pre_ln=false")])
def test_the_points_of_each_positions_variant_sum_to_100(pairs):
    assignment, _ = catalog.load(Selection.parse("transformer", pairs))
    names = {c.name for c in assignment.checks}
    assert sum(c.points for c in assignment.checks) == 100
    assert ("sinusoidal" in names) == ("positions=sinusoidal" in pairs)
    assert {"rope", "rope_relative"} <= names if "positions=rope" in pairs else not names & {"rope", "rope_relative"}


@pytest.mark.parametrize("positions", ["sinusoidal", "rope"])
def test_a_bundle_of_each_variant_carries_no_reference_code(positions):
    assignment, variant = catalog.load(Selection("transformer", {"positions": positions}))
    carried = grader_files(describe(assignment, variant), assignment.spec)
    assert "lmgrade/plugins/transformer/public/position_scenarios.py" in carried
    assert "lmgrade/plugins/transformer/positions.py" not in carried
    for line in distinctive_reference_lines("transformer"):
        assert not any(line.encode() in source for source in carried.values()), line


@pytest.mark.study  # recorded public checks: test_student_bundle.py's bundle and test_fixture_oracle.py in the suite
@pytest.mark.parametrize("positions", ["sinusoidal", "rope"])
def test_the_recorded_public_checks_of_each_variant_grade_the_reference(tmp_path, positions):
    # What a student bundle runs: the public checks, answered from fixtures recorded in the variant.
    assignment, variant = catalog.load(Selection("transformer", {"positions": positions}))
    # Recording runs every mistake on every case: three checks keep it short.
    wanted = {positions, "model", "block"}
    record(Assignment(assignment.spec, [c for c in assignment.checks if c.name in wanted]), variant).write(
        tmp_path / "fixtures"
    )
    fixtures = Fixtures.read(tmp_path / "fixtures")
    with Grader(
        shortened(fixtures.to_assignment(), cpu_s=10, wall_s=30),
        variant,
        RecordedReference(fixtures, variant),
        secret=PUBLIC_SECRET,
        jobs=2,
    ) as grader:
        verdicts = grader.grade(_reference_with(tmp_path / "reference", ()))
    assert {v.check.name for v in verdicts} == wanted
    assert all(v.score == v.max_score > 0 for v in verdicts), {v.check.name: v.output for v in verdicts}


@pytest.mark.study  # the suite regrades in the default variants (test_regrade.py)
def test_a_regrade_in_the_rope_variant(tmp_path):
    from lmgrade.course.regrade.content import grading_fingerprint

    fingerprints = {
        positions: grading_fingerprint(*catalog.load(Selection("transformer", {"positions": positions})), TEST_SECRET)
        for positions in ("learned", "sinusoidal", "rope")
    }
    assert len(set(fingerprints.values())) == 3  # a regrade in another variant never resumes this one's
    assignment, variant = catalog.load(Selection("transformer", {"positions": "rope"}))
    assignment = assignment.on("cpu")
    _reference_with(tmp_path / "class" / "reference", ())
    _reference_with(
        tmp_path / "class" / "rotates_v",
        (("q, k = rotate(torch.stack((q, k)))", "q, k, v = rotate(torch.stack((q, k, v)))"),),
    )
    summary = regrade(
        assignment,
        variant,
        discover(tmp_path / "class"),
        tmp_path / "out" / "scores.csv",
        make_executor=lambda: LocalExecutor(assignment, variant, jobs=2, secret=TEST_SECRET),
        secret=TEST_SECRET,
    )
    scores = {row["submission"]: float(row["score"]) for row in csv.DictReader(open(summary.csv))}
    assert scores["reference"] == 100 and scores["rotates_v"] < 100


# --- assignment.toml: a check in some variants only, points by variant ---

TOY = textwrap.dedent("""
    [assignment]
    name = "toy"
    files = ["toy.py"]

    [templates]
    "toy.py" = "toy.py.j2"

    [variants.activation]
    default = "sigmoid"
    choices = ["sigmoid", "tanh"]

    [checks.one]
    points = 2
    points_when = { activation = { tanh = 1 } }

    [checks.two]
    points = 1
    only = { activation = ["tanh"] }
""")


def _toy(tmp_path, text=TOY):
    folder = tmp_path / "toy"
    folder.mkdir(exist_ok=True)
    (folder / "toy.py.j2").write_text("def f():\n    raise NotImplementedError\n")
    (folder / "assignment.toml").write_text(text)
    return load_assignment(folder / "assignment.toml")


def test_only_and_points_when_choose_checks_and_points_by_variant(tmp_path):
    from lmgrade import Case, Check

    spec = _toy(tmp_path)
    provided = [Check(name, name, print, lambda ctx: [Case("x", 1)]) for name in ("one", "two")]
    default = bind(spec, provided[:1])  # "two" belongs to tanh only: no plugin need provide it elsewhere
    assert [(c.name, c.points) for c in default.checks] == [("one", 2.0)]
    assert [(c.name, c.points) for c in bind(spec, provided, variant={"activation": "sigmoid"}).checks] == [
        ("one", 2.0)
    ]
    assert [(c.name, c.points) for c in bind(spec, provided, variant={"activation": "tanh"}).checks] == [
        ("one", 1.0),
        ("two", 1.0),
    ]
    with pytest.raises(AssignmentError, match=r"\[checks.two\]: no plugin provides"):
        bind(spec, provided[:1], variant={"activation": "tanh"})


@pytest.mark.parametrize(
    "change,message",
    [
        (
            ('only = { activation = ["tanh"] }', 'only = { act = ["tanh"] }'),
            r"\[checks.two.only\] act: no such variant",
        ),
        (
            ('only = { activation = ["tanh"] }', 'only = { activation = ["relu"] }'),
            r"\[checks.two.only\] activation: expected a list of the variant's values",
        ),
        (("tanh = 1 }", "relu = 1 }"), r"\[checks.one.points_when\] activation: expected a table"),
        (("tanh = 1 }", "tanh = -1 }"), r"\[checks.one.points_when.activation\] tanh: must be >= 0"),
    ],
)
def test_only_and_points_when_errors_name_the_key(tmp_path, change, message):
    with pytest.raises(AssignmentError, match=message):
        _toy(tmp_path, TOY.replace(*change))


def test_scores_that_move_by_float32_rounding_in_a_float64_case_are_told_so():
    from lmgrade import Case, Check
    from lmgrade.plugins.transformer.public.position_scenarios import judge_rope_relative

    alone = np.array([[[[1.0, 0.0, 0.0], [0.4, 0.6, 0.0], [0.2, 0.3, 0.5]]]])  # (B, heads, T queries, T keys)
    after = alone.copy()
    after[0, 0, 2] = [0.2 * (1 + 1.3e-7), 0.3, 0.5]
    after[0, 0, 2] /= after[0, 0, 2].sum()
    expected = {"answer": np.zeros(2), "property": {"alone": alone, "after": alone}}
    got = {"answer": np.zeros(2), "property": {"alone": alone, "after": after}}
    check = Check("rope_relative", "rope_relative", lambda modules: None, lambda ctx: [], points=1)
    told = judge_rope_relative(check, Case("c", {"shift": 3, "dtype": "float64"}), expected, got, reveal=True)
    assert not told.passed and "as little as float32's" in told.message
    assert "rotate q and k alike" not in told.message
    # Far beyond float32's rounding, a score that depends on where the tokens are is told to rotate alike.
    after[0, 0, 2] = [0.3, 0.2, 0.5]
    told = judge_rope_relative(check, Case("c", {"shift": 3, "dtype": "float64"}), expected, got, reveal=True)
    assert not told.passed and "rotate q and k alike" in told.message

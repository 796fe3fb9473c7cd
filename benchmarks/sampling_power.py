"""The sampling checks' statistics: false fails of correct samplers, detection of the sampling bugs, cost.

    python benchmarks/sampling_power.py [--seeds 200] [--draws N] [--only ngram rnn transformer]
                                        [--bug-seeds M]

For each sampling check (ngram `sample`, rnn `sample`, transformer
`generate`), the check's cases are made once (as a grading makes them from
its seed), the reference's expected values computed once per case, and then,
for each of --seeds sampling seeds, every case's scenario is run in-process on
a submission with that seed and judged by the check's own judge, exactly as a
grading judges the sandbox's answer. A submission fails a seed when any case
fails.

- false fails: the reference and every correct submission of
  tests/submissions/NAME/ (target: none in 200 seeds, i.e. <= 0.1%);
- detection: each catalogue bug whose `loses` names the check, counted only
  where the feedback carries the words the catalogue asks for. A bug that
  never returns (sample_never_stops) is caught by the sandbox's time limit,
  not by the statistics, and is not run here;
- cost: the draws a grading asks of the submission and the seconds its
  scenarios took here, for the reference.

--draws N makes every statistical case draw N times (the cases with a single
possible outcome keep theirs), to measure another design than the committed
one. --before judges as the checks did before the cut: the old seeding rule,
no stale-context likelihood ratio, ngram's old repeats (100, and 50 draws of
its long sentence); with --draws 2000 (ngram, rnn) or 1000 (generate) it is
the check as it was. --bug-seeds runs the bugs on fewer seeds (their
detection is far from the edge; the correct submissions' false fails are
what needs every seed). --exact N judges N seeds of a perfect sampler, draws
taken from the exact table (rnn and generate): the false-fail rate of every
correct submission, over more seeds than running them allows.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lmgrade.declare import catalog  # noqa: E402
from lmgrade.declare.checks import CaseContext  # noqa: E402
from lmgrade.declare.flawed import write_flawed  # noqa: E402
from lmgrade.grading.oracle import one_thread, run_scenario  # noqa: E402
from lmgrade.submissions.loader import load_files  # noqa: E402

CHECKS = {"ngram": "sample", "rnn": "sample", "transformer": "generate"}
NEVER_RETURNS = "time limit exceeded"
STATISTICAL = 100  # cases drawing fewer times have a single outcome (ngram's long sentence)


def submissions(
    name: str, check: str, spec, tmp: Path, only_bugs: list[str], contracts: list[str] | None
) -> list[tuple[str, bool, str, dict]]:
    """(label, correct, words the feedback must carry, modules) for every submission measured."""
    out = [("reference", True, "", load_files(spec.reference_folder(), spec.files))]
    for folder in sorted((ROOT / "tests" / "submissions" / name).iterdir()):
        if folder.is_dir() and (contracts is None or folder.name in contracts):
            out.append((f"contract {folder.name}", True, "", load_files(folder, spec.files)))
    for bug_name, bug in sorted(catalog.bugs(name).items()):
        if check not in bug.loses or bug.variant or (only_bugs and bug_name not in only_bugs):
            continue
        words = bug.loses[check]
        if words == NEVER_RETURNS:
            print(f"  {bug_name}: caught by the sandbox's time limit, not run here")
            continue
        folder = write_flawed(spec.reference_folder(), spec.files, tmp / bug_name, [bug])
        out.append((f"bug {bug_name}", False, words, load_files(folder, spec.files)))
    return out


def measure(
    name: str,
    seeds: int,
    bug_seeds: int,
    draws: int | None,
    only_bugs: list[str],
    contracts: list[str] | None,
    exact: int,
    before: bool,
) -> None:
    assignment, variant = catalog.load(name)
    check = next(c for c in assignment.checks if c.name == CHECKS[name])
    cases = check.make_cases(CaseContext(rng=np.random.default_rng(2026), variant=variant))
    for case in cases:
        statistical = case.args["draws"] >= STATISTICAL
        if draws is not None and statistical:
            case.args["draws"] = draws
        if before and name == "ngram":
            case.args["repeat"] = 100 if statistical else 10
            case.args["draws"] = case.args["draws"] if statistical else 50
    if before:
        as_before(check)
    one_thread()
    with tempfile.TemporaryDirectory(prefix="sampling-power-") as tmp:
        home = os.getcwd()
        os.chdir(tmp)  # a submission's debug files land there, not in the repository
        try:
            _measure_in(check, cases, name, assignment.spec, Path(tmp), only_bugs, contracts, exact, seeds, bug_seeds)
        finally:
            os.chdir(home)


def _measure_in(
    check,
    cases,
    name: str,
    spec,
    tmp: Path,
    only_bugs: list[str],
    contracts: list[str] | None,
    exact: int,
    seeds: int,
    bug_seeds: int,
) -> None:
    subs = submissions(name, check.name, spec, tmp, only_bugs, contracts)
    reference = subs[0][3]
    expected = [run_scenario(check, reference, case) for case in cases]
    asked = sum(c.args["draws"] + 2 * c.args["repeat"] for c in cases)
    print(
        f"{name} {check.name}: {len(cases)} cases, {asked} draws asked of the submission per grading "
        f"({', '.join(str(c.args['draws']) for c in cases)} + 2 x repeat)"
    )
    if exact:
        exact_sampler(check, cases, expected, exact)
    for label, correct, words, modules in subs:
        n = seeds if correct else bug_seeds
        if n == 0:
            continue
        failed, caught, seconds, example = 0, 0, 0.0, ""
        for s in range(n):
            wrong = []
            for i, (case, exp) in enumerate(zip(cases, expected)):
                args = {**case.args, "seed": int(np.random.default_rng([s, i]).integers(2**62))}
                seeded = type(case)(case.label, args, *[getattr(case, f) for f in _other_fields(case)])
                start = time.perf_counter()
                try:
                    with contextlib.redirect_stdout(io.StringIO()):  # a submission's prints
                        got = run_scenario(check, modules, seeded)
                except Exception as exc:  # a raising submission fails the case, as the sandbox reports it
                    wrong.append(f"{type(exc).__name__}: {exc}")
                    continue
                finally:
                    seconds += time.perf_counter() - start
                verdict = check.verdict(seeded, exp, got, reveal=True)
                if not verdict.passed:
                    wrong.append(verdict.message)
            if wrong:
                failed += 1
                caught += any(words in w for w in wrong)
                example = example or wrong[0]
        if correct:
            print(
                f"  {label:42s} false fails {failed}/{n} ({100 * failed / n:.2f}%)  "
                f"{seconds / n:.3f} s per grading" + (f"\n    e.g. {example[:300]}" if failed else "")
            )
        else:
            print(
                f"  {label:42s} detected {caught}/{n} ({100 * caught / n:.1f}%), failed {failed}/{n}  "
                f"{seconds / n:.3f} s per grading" + (f"\n    e.g. {example[:200]}" if failed else "")
            )


def old_seeding_problem(got, expected, repeat, *, call="sample", source="rng", collision=None):
    """The seeding rule before the collision bound: any repeat of the draws with another seed failed."""
    if got["again"] != got["draws"][:repeat]:
        return (
            f"the same seed gave different draws: {call} must take all its randomness "
            f"from {source} (not a global generator or one of its own)"
        )
    if got["other"] == got["draws"][:repeat] and expected["other"] != expected["draws"][:repeat]:
        return f"{repeat} draws with another seed were exactly the same: {call} ignores {source}"
    return None


def as_before(check) -> None:
    """The judge as it was before the cut: the old seeding rule, no stale-context likelihood ratio."""
    judges = sys.modules[check.judge.__module__]
    judges.seeding_problem = old_seeding_problem
    if hasattr(judges, "_stale_context"):
        judges._stale_context = lambda *args: None


def exact_sampler(check, cases, expected, seeds: int) -> None:
    """False fails of a perfect sampler: draws taken from the exact table of every whole sample.

    Any correct sampler's draws have exactly this distribution, so this is
    the judge's false-fail rate on every correct submission, measured over
    many more seeds than running the submissions allows (rnn and generate,
    whose expected values hold the probability of every whole sample).
    """
    failed, example = 0, ""
    for s in range(seeds):
        rng = np.random.default_rng([s, 7])
        wrong = []
        for case, exp in zip(cases, expected):
            # rnn's table also holds every prefix: a whole sample is full-length or ends at `end`
            longest, end = max(len(o) for o in exp["table"]), case.args.get("end")
            outcomes = [o for o in exp["table"] if len(o) == longest or (end is not None and o[-1] == end)]
            p = np.array([exp["table"][o] for o in outcomes])
            p = p / p.sum()
            n, repeat = case.args["draws"], case.args["repeat"]
            picks = rng.choice(len(outcomes), size=n + repeat, p=p)
            draws = [list(outcomes[i]) for i in picks[:n]]
            got = {**exp, "draws": draws, "again": draws[:repeat], "other": [list(outcomes[i]) for i in picks[n:]]}
            verdict = check.verdict(case, exp, got, reveal=True)
            if not verdict.passed:
                wrong.append(verdict.message)
        if wrong:
            failed += 1
            example = example or wrong[0]
    print(
        f"  {'exact sampler (draws from the table)':42s} false fails {failed}/{seeds} "
        f"({100 * failed / seeds:.3f}%)" + (f"\n    e.g. {example[:300]}" if failed else "")
    )


def _other_fields(case) -> list[str]:
    return [f for f in case.__dataclass_fields__ if f not in ("label", "args")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--bug-seeds", type=int, default=None, help="seeds for the bugs (default: --seeds)")
    parser.add_argument("--draws", type=int, default=None, help="every statistical case draws this many times")
    parser.add_argument("--bugs", nargs="*", default=[], help="only these bugs (default: every sampling bug)")
    parser.add_argument(
        "--contracts", nargs="*", default=None, help="only these submissions of tests/submissions/NAME/ (default: all)"
    )
    parser.add_argument(
        "--exact",
        type=int,
        default=0,
        help="also judge this many seeds of draws taken from the exact table (rnn, transformer)",
    )
    parser.add_argument(
        "--before", action="store_true", help="judge as before the cut (with --draws 2000, or 1000 for generate)"
    )
    parser.add_argument("--only", nargs="*", default=list(CHECKS), choices=list(CHECKS))
    args = parser.parse_args()
    for name in args.only:
        bug_seeds = args.seeds if args.bug_seeds is None else args.bug_seeds
        measure(name, args.seeds, bug_seeds, args.draws, args.bugs, args.contracts, args.exact, args.before)


if __name__ == "__main__":
    main()

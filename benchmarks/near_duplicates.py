"""How well the class report's near-duplicate search tells copies from independent work, and how long it takes.

    python benchmarks/near_duplicates.py [--assignment ngram] [--all] [--grade 3] [--tokens-only]

Builds a class of 30 submissions of one assignment, each labelled with the
work it derives from:

- four independent correct solutions: the reference and the three
  contract-written submissions of tests/submissions/<assignment>/;
- of each, five copies disguised as tests/disguise.py does it: names
  changed; reformatted (`ast.unparse`, then ruff with two-space indents and
  48-column lines); renamed, reordered and reformatted; renamed and padded
  with lines of its own; half of its functions put into the untouched stub;
  and three rewritten mechanically: an empty starred argument added to every
  call (``f(a, b, *())``); ``; pass`` after every statement; renamed,
  reordered, starred and padded with ``pass`` at once;
- four copies of the reference each with one bug of the catalogue, renamed
  and reformatted;
- two untouched stubs (nothing copied: they share only the starter code).

Then runs what the report runs (`class_near_duplicates`: read the files,
discount the stub, fingerprint, compare every pair) and prints its time
(wall clock and this process's CPU time, which a busy machine disturbs less), the
pairs listed at the threshold, their precision (listed pairs that derive
from the same work) and recall (pairs deriving from the same work that are
listed), and the lowest similarity of a copy beside the highest of two
independent solutions. --all does the same for every assignment; --grade N
grades N disguised copies and their originals, to show the disguises keep
a submission's score (that they are copies a student could hand in).
--tokens-only compares as the search did before it parsed the code
(`near_duplicates._tokens` alone, no `syntax_tree` rewriting), for the
figures beside it.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from disguise import no_ops, padded, part_of, reformatted, renamed, reordered, starred  # noqa: E402

from lmgrade.course.regrade import near_duplicates  # noqa: E402
from lmgrade.course.regrade.graded import Graded  # noqa: E402
from lmgrade.course.regrade.layout import SubmissionFolder  # noqa: E402
from lmgrade.course.regrade.near_duplicates import THRESHOLD, class_near_duplicates  # noqa: E402
from lmgrade.declare import catalog, templates  # noqa: E402
from lmgrade.declare.flawed import write_flawed  # noqa: E402

DISGUISES = {
    "renamed": lambda text, stub: renamed(text, stub),
    "reformatted": lambda text, stub: reformatted(text),
    "renamed-reordered-reformatted": lambda text, stub: reformatted(reordered(renamed(text, stub, prefix="z"))),
    "renamed-padded": lambda text, stub: padded(renamed(text, stub, prefix="w")),
    "half-in-stub": lambda text, stub: renamed(part_of(text, stub), stub, prefix="p"),
    "starred": lambda text, stub: starred(text),
    "no-ops": lambda text, stub: no_ops(text),
    "renamed-reordered-starred-no-ops": lambda text, stub: no_ops(starred(reordered(renamed(text, stub, "s")))),
}
BUGGY_COPIES = 4
STUBS = 2


def make_class(name: str, root: Path) -> dict[str, str | None]:
    """Write the class under `root`, one folder per submission; {folder: the work it derives from (None: none)}."""
    assignment, variant = catalog.load(name)
    spec = assignment.spec
    stub = templates.render(assignment, variant)
    solutions = {"reference": spec.reference_folder()}
    solutions |= {p.name: p for p in sorted((ROOT / "tests" / "submissions" / name).iterdir()) if p.is_dir()}
    origin: dict[str, str | None] = {}

    def write(key: str, files: dict[str, str], source: str | None) -> None:
        (root / key).mkdir(parents=True)
        for filename, text in files.items():
            compile(text, f"{key}/{filename}", "exec")  # a disguise never breaks the code
            (root / key / filename).write_text(text)
        origin[key] = source

    for solution, folder in solutions.items():
        texts = {f: (folder / f).read_text() for f in spec.files}
        write(solution, texts, solution)
        for disguise, make in DISGUISES.items():
            write(f"{solution}-{disguise}", {f: make(t, stub[f]) for f, t in texts.items()}, solution)
    with tempfile.TemporaryDirectory() as tmp:
        for bug_name, bug in list(catalog.bugs(name).items())[:BUGGY_COPIES]:
            flawed = write_flawed(spec.reference_folder(), spec.files, Path(tmp) / bug_name, [bug])
            copy = {f: reformatted(renamed((flawed / f).read_text(), stub[f], prefix="b")) for f in spec.files}
            write(f"reference-bug-{bug_name}", copy, "reference")
    for i in range(1, STUBS + 1):
        write(f"stub-{i}", {f: stub[f] for f in spec.files}, None)
    return origin


def measure(name: str, root: Path) -> dict:
    origin = make_class(name, root)
    assignment, variant = catalog.load(name)
    stub = templates.render(assignment, variant)
    rows = [(SubmissionFolder(key, root / key), Graded()) for key in origin]
    files = assignment.spec.files
    started, cpu = time.perf_counter(), time.process_time()
    listed = class_near_duplicates(rows, files, [stub[f] for f in files])
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    # Every pair's similarity, listed or not (below MIN_SHARED fingerprints in common: 0).
    everything = {
        (p.first, p.second): p.similarity for p in class_near_duplicates(rows, files, [stub[f] for f in files], 0)
    }

    def copied(a: str, b: str) -> bool:
        return origin[a] is not None and origin[a] == origin[b]

    pairs = list(itertools.combinations(origin, 2))
    copies = [pair for pair in pairs if copied(*pair)]
    found = [(p.first, p.second) for p in listed]
    true = [pair for pair in found if copied(*pair)]
    copy_similarities = [everything.get(pair, 0.0) for pair in copies]
    independent = [everything.get(pair, 0.0) for pair in pairs if not copied(*pair)]
    return {
        "assignment": name,
        "submissions": len(origin),
        "seconds": seconds,
        "cpu seconds": cpu,
        "pairs": len(pairs),
        "copied pairs": len(copies),
        "listed": len(found),
        "precision": len(true) / len(found) if found else 1.0,
        "recall": len(true) / len(copies) if copies else 1.0,
        "lowest copy": min(copy_similarities),
        "highest independent": max(independent),
        "false": [pair for pair in found if not copied(*pair)],
        "missed": [pair for pair in copies if pair not in found],
    }


def grade_some(name: str, root: Path, count: int) -> None:
    from lmgrade.grading.submission_grading import grade_submission

    assignment, variant = catalog.load(name)
    original = grade_submission(assignment, variant, root / "reference").score
    print(f"  graded: reference {original:g}")
    for disguise in list(DISGUISES)[:count]:
        copy = grade_submission(assignment, variant, root / f"reference-{disguise}").score
        print(f"  graded: its {disguise} copy {copy:g}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--assignment", default="ngram")
    parser.add_argument("--all", action="store_true", help="every assignment, one class each")
    parser.add_argument("--grade", type=int, default=0, metavar="N", help="grade N disguised copies of the reference")
    parser.add_argument("--tokens-only", action="store_true", help="compare tokens alone, the code not parsed")
    args = parser.parse_args()
    if args.tokens_only:
        near_duplicates.normalised_tokens = near_duplicates._tokens
    names = sorted(catalog.sources()) if args.all else [args.assignment]
    print(f"threshold {THRESHOLD:.0%} of the smaller submission's fingerprints")
    for name in names:
        with tempfile.TemporaryDirectory() as tmp:
            m = measure(name, Path(tmp))
            print(
                f"{name}: {m['submissions']} submissions, {m['pairs']} pairs ({m['copied pairs']} copied) in "
                f"{m['seconds']:.2f} s ({m['cpu seconds']:.2f} s of CPU); listed {m['listed']}: "
                f"precision {m['precision']:.2f}, recall {m['recall']:.2f}; "
                f"lowest copy {m['lowest copy']:.2f}, highest independent "
                f"{m['highest independent']:.2f}"
            )
            for pair in m["false"]:
                print(f"  listed, not copied: {pair}")
            for pair in m["missed"]:
                print(f"  copied, not listed: {pair}")
            if args.grade:
                grade_some(name, Path(tmp), args.grade)


if __name__ == "__main__":
    main()

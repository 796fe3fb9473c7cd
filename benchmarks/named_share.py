"""Named share: how often a bug that loses points is told its cause by a known mistake, strictly.

    python benchmarks/named_share.py [ngram seq2seq ...] [--ports] [--catalogue] [--jobs 2] [--list]
    python benchmarks/named_share.py [ngram seq2seq ...] --readme

A bug is named strictly when each of its checks that lost points and declares known mistakes carries a
known-mistake line ("matches a known mistake: ..."), or is paid by the grader's stand-in for a component
named wrong. Its checks are, for a catalogue bug, the checks its `loses` names; for a port's bug
(tests/submissions/ports/<assignment>/bugs/<bug>/), every check. A check that declares no known mistake
(a property, the arguments, mutation) can name nothing: a bug that loses only on such checks counts as
not named. Timing checks and training are left out of the grading unless a catalogue bug names them:
they lose only where the code they time or train is wrong. Prints the share per assignment and, with
--list, each bug not named strictly and the checks it lost unnamed.

--readme writes, into each tests/submissions/ports/<assignment>/bugs/README.md, the table of what each
variant loses and the known mistake named on each check it loses (`port_rows`), graded as above with the
secret PORTS_SECRET; tests/test_ports_readme.py grades the variants again and compares.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lmgrade.core.selection import Selection  # noqa: E402
from lmgrade.declare import catalog  # noqa: E402
from lmgrade.declare.flawed import write_flawed  # noqa: E402
from lmgrade.grading.grader import Grader  # noqa: E402
from lmgrade.grading.oracle import LiveReference  # noqa: E402

PORTS = ROOT / "tests" / "submissions" / "ports"
SLOW = {"training"}
PORTS_SECRET = "named share"
README_START = (
    "<!-- Written by `python benchmarks/named_share.py ASSIGNMENT --readme`, and compared with a grading by "
    "tests/test_ports_readme.py: not typed. -->"
)
README_END = "<!-- End of the written table. -->"


def _checks_to_grade(assignment, named: set[str]) -> set[str]:
    return {c.name for c in assignment.checks if (c.timing is None and c.name not in SLOW) or c.name in named}


def _unnamed(verdicts, checks: set[str] | None) -> list[str]:
    """The checks among `checks` (None: all) that declare known mistakes and lost points naming none, or
    ["(lost only on ...)"] where the bug lost only on checks that can name nothing."""
    lost = [v for v in verdicts if v.score < v.max_score and (checks is None or v.check.name in checks)]
    mine = [v for v in lost if v.check.mistakes]
    if lost and not mine:
        return ["(lost only on " + ", ".join(v.check.name for v in lost) + ")"]
    return [v.check.name for v in mine if v.mistake is None]


def catalogue(name: str, jobs: int, only: set[str] | None = None) -> tuple[int, list[str]]:
    """(bugs that lose, lines for those not named strictly) of the assignment's catalogue (`only`: those bugs)."""
    bugs = {k: b for k, b in catalog.bugs(name).items() if only is None or k in only}
    by_variant: dict[tuple, list[str]] = {}
    for bug_name, bug in bugs.items():
        by_variant.setdefault(tuple(sorted(bug.variant.items())), []).append(bug_name)
    total, lines = 0, []
    for pairs, names in by_variant.items():
        assignment, variant = catalog.load(Selection.parse(name, tuple(f"{k}={v}" for k, v in pairs)))
        grader = Grader(assignment, variant, LiveReference(assignment.spec), secret="named share", jobs=jobs)
        try:
            with tempfile.TemporaryDirectory() as tmp:
                for bug_name in sorted(names):
                    bug = bugs[bug_name]
                    folder = write_flawed(
                        assignment.spec.reference_folder(), assignment.spec.files, Path(tmp) / bug_name, [bug]
                    )
                    verdicts = grader.grade(folder, only=_checks_to_grade(assignment, set(bug.loses)))
                    total += 1
                    missing = _unnamed(verdicts, set(bug.loses))
                    if missing:
                        lines.append(f"  {bug_name}: not named on {', '.join(missing)}")
        finally:
            grader.close()
    return total, lines


def port_bugs(name: str, only: set[str] | None = None) -> list[Path]:
    """The folders of the assignment's ports' single-change variants (`only`: those named)."""
    folder = PORTS / name / "bugs"
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_dir() and (only is None or p.name in only))


def graded_ports(name: str, jobs: int, only: set[str] | None = None):
    """(variant folder, its verdicts) for each of the assignment's ports' variants, graded as the module
    docstring says (timing checks and training left out)."""
    bugs = port_bugs(name, only)
    if not bugs:
        return
    assignment, variant = catalog.load(Selection.parse(name, ()))
    grader = Grader(assignment, variant, LiveReference(assignment.spec), secret=PORTS_SECRET, jobs=jobs)
    try:
        for bug in bugs:
            yield bug, grader.grade(bug, only=_checks_to_grade(assignment, set()))
    finally:
        grader.close()


def ports(name: str, jobs: int, only: set[str] | None = None) -> tuple[int, list[str]]:
    """(port bugs that lose, lines for those not named strictly or not losing) of the assignment's ports."""
    total, lines = 0, []
    for bug, verdicts in graded_ports(name, jobs, only):
        if all(v.score >= v.max_score for v in verdicts):
            lines.append(f"  {bug.name}: full marks (left out of the share)")
            continue
        total += 1
        missing = _unnamed(verdicts, None)
        if missing:
            lines.append(f"  {bug.name}: not named on {', '.join(missing)}")
    return total, lines


def port_row(bug: str, verdicts) -> str:
    """The README table's row of one variant: the checks it loses (points kept of the check's), and on each
    the known mistake named, "not named", or "names none" where the check declares no known mistake."""
    lost = [v for v in verdicts if v.score < v.max_score]
    if not lost:
        return f"| {bug} | nothing: full marks | |"
    points = ", ".join(f"{v.check.name} {v.score:.4g}/{v.max_score:g}" for v in lost)
    named = ", ".join(
        f"{v.check.name}: `{v.mistake.name}`"
        if v.mistake is not None
        else f"{v.check.name}: {'not named' if v.check.mistakes else 'names none'}"
        for v in lost
    )
    return f"| {bug} | {points} | {named} |"


def port_table(rows: list[str]) -> str:
    return "\n".join(
        [
            README_START,
            "",
            "| variant | loses (points kept) | known mistake named on each check it loses |",
            "|---|---|---|",
            *rows,
            "",
            README_END,
        ]
    )


def write_readme(name: str, jobs: int) -> Path | None:
    """Rewrite the table of tests/submissions/ports/NAME/bugs/README.md (appended where it has none)."""
    rows = [port_row(bug.name, verdicts) for bug, verdicts in graded_ports(name, jobs)]
    if not rows:
        return None
    path = PORTS / name / "bugs" / "README.md"
    text = path.read_text(encoding="utf-8")
    table = port_table(rows)
    if README_START in text:
        before, rest = text.split(README_START, 1)
        text = before + table + rest.split(README_END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + table + "\n"
    path.write_text(text, encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="assignments (default: every built-in one)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--ports", action="store_true", help="the ports' bugs only")
    parser.add_argument("--catalogue", action="store_true", help="the catalogues only")
    parser.add_argument("--list", action="store_true", help="each bug not named strictly")
    parser.add_argument("--only", help="these bugs alone, comma-separated")
    parser.add_argument("--readme", action="store_true", help="write the ports' bugs/README.md tables")
    args = parser.parse_args()
    names = args.names or sorted(catalog.sources())
    if args.readme:
        for name in names:
            written = write_readme(name, args.jobs)
            if written is not None:
                print(f"wrote {written.relative_to(ROOT)}")
        return
    kinds = [k for k, on in (("catalogue", not args.ports), ("ports", not args.catalogue)) if on]
    for name in names:  # every plugin loaded before the first grading: edits made meanwhile are not seen
        catalog.bugs(name)
        catalog.load(Selection.parse(name, ()))
    for name in names:
        for kind in kinds:
            only = set(args.only.split(",")) if args.only else None
            total, lines = (catalogue if kind == "catalogue" else ports)(name, args.jobs, only)
            if not total:
                continue
            named = total - sum(1 for line in lines if "not named" in line)
            print(f"{name} {kind}: {named} of {total} named strictly ({100 * named / total:.0f}%)")
            if args.list:
                for line in lines:
                    print(line)
            sys.stdout.flush()


if __name__ == "__main__":
    main()

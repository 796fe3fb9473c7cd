"""Composed checks: one bug, one place, by observation.

A check that runs several of the student's components (a TransformerBlock
runs the student's LayerNorm and attention) fails whenever one of them is
wrong. Where a component's own check failed in the same grading, the
composed check's cases run again with the failed components replaced by the
grader's stand-ins (`lmgrade.grading.stand_in`); the check earns its points where that run
passes, and only then says which component to fix. Where it fails, or no
stand-in can be built, the check earns what its own cases earn, and its
message is about its own answers: no cap, no share.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from ..boundary.submitted_sources import source_of
from .checks import Check


def subject(check: Check) -> str:
    """What a check grades, from its title: "LayerNorm: output and gradients" -> "LayerNorm", "pad adds" -> "pad"."""
    if ":" in check.title:
        return check.title.split(":", 1)[0].strip()
    return check.title.split()[0] if check.title.split() else check.name


def components(check: Check, by_name: dict[str, Check]) -> list[Check]:
    """Every check `check` composes, directly or through another, in assignment order."""
    seen: set[str] = set()
    todo = list(check.composes)
    while todo:
        name = todo.pop()
        if name in seen or name not in by_name:
            continue
        seen.add(name)
        todo += list(by_name[name].composes)
    return [c for c in by_name.values() if c.name in seen]


def waves(checks: list[Check]) -> list[list[Check]]:
    """The checks in waves: each check after every check it composes."""
    by_name = {c.name: c for c in checks}
    depth: dict[str, int] = {}

    def level(check: Check, stack: tuple = ()) -> int:
        if check.name not in depth:
            if check.name in stack:
                raise ValueError(f"checks compose each other in a cycle: {' -> '.join((*stack, check.name))}")
            inner = [level(by_name[n], (*stack, check.name)) for n in check.composes if n in by_name]
            depth[check.name] = 1 + max(inner, default=-1)
        return depth[check.name]

    for check in checks:
        level(check)
    out: list[list[Check]] = [[] for _ in range(1 + max(depth.values(), default=0))]
    for check in checks:
        out[depth[check.name]].append(check)
    return [w for w in out if w]


def failed_components(check: Check, by_name: dict[str, Check], failed: set[str]) -> list[Check]:
    """The components of `check` whose own checks failed, in assignment order."""
    return [c for c in components(check, by_name) if c.name in failed]


def stand_in_names(check: Check, failed: list[Check]) -> tuple[str, ...] | None:
    """The names a stand-in run of `check` replaces, or None where it cannot have one.

    None where a failed component has no stand-in, where the check does not say what it grades,
    and where a stand-in would replace a name the check grades: a property check's `grades` are
    the code whose property it asks, so a stand-in answers only for what that code calls (the
    cells' sigmoid, for a property of the stacked RNN), never for the code itself.
    """
    # A property check grades no name of its own: each case asks the property of whatever it calls, and
    # a case whose own call the stand-in would answer is never paid by it (`stand_in.called_directly`).
    if not failed or check.timing is not None or not (check.grades or check.property_check):
        return None
    if any(not c.grades or not c.stands_in for c in failed):
        return None
    names = tuple(dict.fromkeys(n for c in failed for n in c.grades))
    # A property check's `uses` are what its scenario calls itself: a stand-in of those would answer the
    # case's own call (`stand_in.called_directly`), so none is made (nor the reference recorded for it).
    own_names = (*check.grades, *(check.uses if check.property_check else ()))
    if any(_overlap(n, own) for n in names for own in own_names):
        return None
    return names


def outermost(failed: list[Check], by_name: dict[str, Check]) -> list[Check]:
    """The failed components that no other failed one composes: replacing those replaces the rest."""
    inner = {c.name for outer in failed for c in components(outer, by_name)}
    return [c for c in failed if c.name not in inner]


def _overlap(a: str, b: str) -> bool:
    """Whether two graded names meet: the same, or one a class and the other its method."""
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def property_note(failed: list[Check], rescued: list[int]) -> str:
    """The first line of a property check whose stand-in run paid some of its cases (numbered from 1)."""
    named, several = _subjects(failed)
    fixed, differs = ("are fixed", "differ") if several else ("is fixed", "differs")
    seen = _and([c.name for c in failed])
    cases = _and([str(i) for i in rescued])
    if len(rescued) > 1:
        return (
            f"Cases {cases} pass once {named} {fixed}: {named} {differs} (see {seen}), and with the grader's "
            f"{named} in place of yours their answers are right and the property holds, so they earn their "
            f"points here. With your own {named}, this check saw:"
        )
    return (
        f"Case {cases} passes once {named} {fixed}: {named} {differs} (see {seen}), and with the grader's "
        f"{named} in place of yours its answer is right and the property holds, so it earns its points here. "
        f"With your own {named}, this check saw:"
    )


def _subjects(failed: list[Check]) -> tuple[str, bool]:
    """The components' names, each once ("prob" for prob_mle and prob_add_k), and whether they are several."""
    names = list(dict.fromkeys(subject(c) for c in failed))
    return _and(names), len(names) > 1


def note(check: Check, failed: list[Check]) -> str:
    """The first line of a composed check that its stand-in run paid."""
    named, several = _subjects(failed)
    seen = _and([c.name for c in failed])
    return (
        f"Passes once {named} {'are' if several else 'is'} fixed: {named} {'differ' if several else 'differs'} "
        f"(see {seen}), and with the grader's {named} in place of yours every case of this check passes, so "
        f"it earns its points here. With your own {named}, this check saw:"
    )


def mistake_reason(component: Check, mistake) -> str:
    """Why a case is explained by a component's known mistake: its explanation and where it was named."""
    return f"{subject(component)}: {mistake.explanation} (see {component.name})"


def mistake_note(component: Check, mistake) -> str:
    """The first line of a composed check whose answers match what a component's known mistake gives."""
    named = subject(component)
    return (
        f"Passes once {named} is fixed: {mistake.explanation} (see {component.name}), and every answer of this "
        f"check matches what that mistake gives on its cases, as this check judges answers, so the rest of your "
        f"code does its part right and this check earns its points here. With your own {named}, this check saw:"
    )


def case_mistake_note(numbers: list[int], reason: str) -> str:
    """A property check's cases (numbered from 1) paid where each answer matches what a component's known
    mistake gives."""
    if len(numbers) > 1:
        return (
            f"Cases {_and([str(i) for i in numbers])} pass once this is fixed: {reason}. The property held, and "
            f"each answer matches what that mistake gives, so they earn their points here."
        )
    return (
        f"Case {numbers[0]} passes once this is fixed: {reason}. The property held, and the answer matches "
        f"what that mistake gives, so it earns its points here."
    )


def local_note(failed: list[Check]) -> str:
    """What a local run says of a composed check that the course's autograder may pay with its stand-ins."""
    named, several = _subjects(failed)
    seen = _and([c.name for c in failed])
    fails = "fail their own checks" if several else "fails its own check"
    return (
        f"This check runs your {named}, which {fails} ({seen}). The course's autograder also runs "
        f"this check with its own {named} in place of yours and pays it where every case then passes; this "
        f"copy of the checks cannot, so the course's verdict on this check may be higher than this one."
    )


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _enclosing(source: str, line: int) -> str:
    """The qualified name of the function or method whose body holds `line` ("NGramLM.sample"), or ""."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ""
    found = ""

    def visit(node: ast.AST, prefix: str) -> None:
        nonlocal found
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if child.lineno <= line <= (child.end_lineno or child.lineno):
                    if not isinstance(child, ast.ClassDef):
                        found = name
                    visit(child, name + ".")

    visit(tree, "")
    return found


def not_implemented_in(errors: list[dict | None], sources: Mapping[str, str], frames) -> tuple[str, ...] | None:
    """Where every case raised NotImplementedError: the functions ("NGramLM.__init__") whose bodies raised
    it, from each traceback's innermost submitted frame; None where a case did anything else. `frames`
    parses a traceback into frames with the submitted file (None for others), line and name. `sources` are
    the submission's files as the grading process read them (`submitted_sources`): a file a traceback names
    only selects among them, compared as text, and is never opened (a child chooses its code's file names)."""
    where = []
    for error in errors:
        if not error or error.get("type") != "NotImplementedError":
            return None
        submitted = [f for f in frames(error.get("traceback", "")) if f.file]
        source = source_of(sources, submitted[-1].file) if submitted else None
        if source is None:
            return None
        where.append(_enclosing(source, submitted[-1].line))
    return tuple(dict.fromkeys(where)) if where else None

"""Composed checks: one bug, one place.

A check that runs several of the student's components (a TransformerBlock
runs the student's LayerNorm and attention) fails whenever one of them is
wrong. Where a component's own check failed in the same grading, the
composed check says so first ("LayerNorm differs, see layer_norm: fix that
first") and loses at most its own share of its points (`Check.own_share`):
the component's mistake is paid for on the component's check.
"""

from __future__ import annotations

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


def first_failed(check: Check, by_name: dict[str, Check], failed: set[str]) -> Check | None:
    """The first component of `check`, in assignment order, whose own check failed."""
    return next((c for c in components(check, by_name) if c.name in failed), None)


def note(check: Check, component: Check) -> str:
    """The composed check's first line when `component` failed."""
    share = check.points * check.own_share
    return (
        f"{subject(component)} differs, see {component.name}: fix that first. This check runs your "
        f"{subject(component)}, so it loses at most its own share here ({share:g} of {check.points:g} "
        f"points); the rest is counted on {component.name}."
    )


def capped(check: Check, score: float) -> float:
    """A composed check's score where a component failed: at most its own share lost."""
    return max(score, check.points * (1.0 - check.own_share))

"""The checks of `tiny`: how their cases are drawn (hidden ones too), so never shipped to students."""

from lmgrade import Case, CaseContext, Check, Mistake, Tolerance

from .public import scenarios

# A known mistake, recognised by making it in a copy of the reference.
OFF_BY_ONE = Mistake("off_by_one", "divides by len(values) - 1 instead of len(values)",
                     edits=(("stats.py", "/ len(values)", "/ (len(values) - 1)"),))


def _cases(ctx: CaseContext, count: int) -> list[Case]:
    rows = [[float(v) for v in ctx.rng.integers(-9, 10, size=int(ctx.rng.integers(2, 6)))] for _ in range(count)]
    return [Case(f"mean({row})", {"values": row}) for row in rows]


def tiny_checks() -> list[Check]:
    return [
        Check("mean", "mean of a short list", scenarios.mean, lambda ctx: _cases(ctx, 3),
              tolerance=Tolerance(rtol=1e-9, atol=1e-12), mistakes=(OFF_BY_ONE,)),
        Check("mean_hidden", "mean of other lists", scenarios.mean, lambda ctx: _cases(ctx, 5),
              tolerance=Tolerance(rtol=1e-9, atol=1e-12), mistakes=(OFF_BY_ONE,)),
    ]

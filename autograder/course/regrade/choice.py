"""Which executor an --executor value names, and making it: this process's, or one on a Dask cluster.

Apart from the executors themselves, so that the Dask one (`cluster`) builds on
`executor` without `executor` reaching back to it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ...declare.assignment import Assignment
from .cluster import DaskExecutor, scheduler_address
from .executor import LOCAL, Executor, LocalExecutor


def parse_executor(spec: str | None) -> dict | None:
    """What an --executor value names: None for "local" (the default), else the Dask client's arguments.

    Checked before anything is graded; nothing is connected to yet.
    """
    if spec in (None, "", LOCAL):
        return None
    return scheduler_address(spec)


def make_executor(
    connection: dict | None,
    assignment: Assignment,
    variant: dict,
    *,
    jobs: int,
    secret: str,
    protected: Iterable[Path] = (),
    device: str = "auto",
    per_student: bool = False,
) -> Executor:
    """This process's executor (`connection` None), or one on the Dask cluster `connection` names.

    `assignment` is bound to this machine's device for a local executor; for
    Dask it is not, and the workers bind `device` (the --device asked for) on
    their own machines. `per_student`: each submission's hidden checks draw its students' own inputs.
    """
    if connection is None:
        return LocalExecutor(
            assignment, variant, jobs=jobs, secret=secret, protected=protected, per_student=per_student
        )
    return DaskExecutor(connection, assignment, variant, secret=secret, device=device, per_student=per_student)

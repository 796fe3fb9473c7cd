"""The regrade's progress bar: done, running, failed, rate and time left."""

from __future__ import annotations

import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn
from rich.text import Text

from .graded import Graded
from .layout import SubmissionFolder


class RegradeProgress:
    """A `run.Listener` that draws one rich progress bar on `console` while the regrade runs."""

    def __init__(self, console: Console, title: str):
        self.total = self.done = self.failed = self.graded_here = 0
        self.capacity = 0
        self.grading_since: float | None = None
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            _StatusColumn(self),
            console=console,
            transient=True,
        )
        self._task = self._progress.add_task(title, total=None)

    def __enter__(self) -> RegradeProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self._progress.stop()

    # -- run.Listener
    def started(self, total: int, resumed: int, failed: int) -> None:
        self.total, self.done, self.failed = total, resumed + failed, failed
        self._progress.update(self._task, total=total, completed=self.done)

    def grading(self, capacity: int) -> None:
        self.capacity, self.grading_since = capacity, time.monotonic()
        self._progress.refresh()

    def finished(self, submission: SubmissionFolder, graded: Graded) -> None:
        self.done += 1
        self.graded_here += 1
        self.failed += bool(graded.error)
        self._progress.update(self._task, completed=self.done)

    # -- what the status column shows
    @property
    def running(self) -> int:
        return min(self.capacity, self.total - self.done) if self.grading_since is not None else 0

    def per_minute(self) -> float | None:
        if self.grading_since is None or not self.graded_here:
            return None
        return 60 * self.graded_here / max(1e-9, time.monotonic() - self.grading_since)

    def status(self) -> str:
        parts = [f"{self.running} running", f"{self.failed} failed"]
        rate = self.per_minute()
        if rate:
            left_s = 60 * (self.total - self.done) / rate
            parts += [f"{rate:.1f}/min", f"{int(left_s // 60)}:{int(left_s % 60):02d} left"]
        return " · ".join(parts)


class _StatusColumn(ProgressColumn):
    def __init__(self, progress: RegradeProgress):
        super().__init__()
        self.progress = progress

    def render(self, task: Task) -> Text:
        return Text(self.progress.status(), style="progress.remaining")

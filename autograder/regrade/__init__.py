"""`lmgrade regrade`: a whole class, in parallel, resumable, here or on a Dask cluster.

- `layout`: which sub-folders are submissions, and whose (Gradescope's export metadata);
- `content`: the content hash of a submission and the fingerprint of the grading;
- `graded`: one submission's grade as plain data, and the one function that makes it;
- `executor`, `cluster`: grading in this process, or on Dask workers;
- `records`, `scores_csv`, `gradebook`, `report`: the files a regrade writes;
- `insights`, `near_duplicates`, `review_queue`: what the report finds by comparing the submissions;
- `run`: the regrade itself; `progress`: its progress bar.
"""

from .choice import make_executor, parse_executor
from .executor import ExecutorError
from .layout import LayoutError, discover
from .run import RegradeSummary, output_paths, regrade

__all__ = [
    "ExecutorError",
    "LayoutError",
    "RegradeSummary",
    "discover",
    "make_executor",
    "output_paths",
    "parse_executor",
    "regrade",
]

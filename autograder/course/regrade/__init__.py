"""`lmgrade regrade`: a whole class, in parallel, resumable, here or on a Dask cluster.

- `layout`: which sub-folders are submissions, and whose (Gradescope's export metadata);
- `content`: the content hash of a submission and the fingerprint of the grading;
- `graded`: one submission's grade as plain data, and the one function that makes it;
- `executor`, `cluster`: grading in this process, or on Dask workers;
- `records`, `scores_csv`, `gradebook`, `report`: the files a regrade writes;
- `insights`, `near_duplicates`, `review_queue`: what the report finds by comparing the submissions;
- `run`: the regrade itself; `progress`: its progress bar.
"""

import importlib

# Where each name of the package's API is defined: imported on first use (PEP 562), so that reading a
# layout (`lmgrade grade` with a submission's metadata, the zip's grading) does not import Dask, jinja2
# and the report with it.
_DEFINED_IN = {
    "make_executor": "choice",
    "parse_executor": "choice",
    "ExecutorError": "executor",
    "LayoutError": "layout",
    "discover": "layout",
    "RegradeSummary": "run",
    "output_paths": "run",
    "regrade": "run",
}

__all__ = sorted(_DEFINED_IN)


def __getattr__(name: str):
    if name in _DEFINED_IN:
        return getattr(importlib.import_module(f".{_DEFINED_IN[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""Why a submission could not be graded, and the one line that tells the instructor what to do about it.

A regrade never stops for one submission: whatever goes wrong in its row
(an unreadable file, a full disk, a fault of the harness) becomes that row's
`Graded.error`, one line naming the exception (`describe_failure`). `remedy`
reads that line back and says what to do, for the CLI, the report and its
review queue alike; `cause_and_remedy` puts both in the one cell of the
submission's row in scores.csv and the gradebooks ("not graded").
"""

from __future__ import annotations

import errno

PERMISSION = "make every file of the submission readable by the user running lmgrade (chmod -R u+rX FOLDER)"
DISK_FULL = "free space on the disk the results are written to"
NAME = "rename the files whose names cannot be read (the report spells their bytes as \\xNN)"
OTHER = "if it fails again, report it to lmgrade's maintainers with the submission's results.json"
AGAIN = "then run the same command again: only the submissions not graded are graded again"

# Where the failure of a submission's own row was not the harness's: its files, or this machine's disk.
_CAUSES = (
    (("PermissionError", "Errno 13", "Permission denied"), PERMISSION),
    (("No space left", f"Errno {errno.ENOSPC}", "Disk quota exceeded", f"Errno {errno.EDQUOT}"), DISK_FULL),
    (("UnicodeEncodeError", "UnicodeDecodeError", "surrogates not allowed"), NAME),
)


def remedy(error: str) -> str:
    """One line for the instructor: what to do about a submission whose grading ended in `error`."""
    for markers, what in _CAUSES:
        if any(marker in error for marker in markers):
            return f"{what}, {AGAIN}"
    return f"run the same command again; {OTHER}"


def disk_full(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


def cause_and_remedy(error: str) -> str:
    """A failed submission's cause and what to do, on one line: its "not graded" cell in the CSVs."""
    cause = " ".join(error.split())
    return f"{cause}; to do: {remedy(error)}"

"""What a submission may be: how large, how many files, and the error when it cannot be read."""

from __future__ import annotations

MAX_SUBMISSION_BYTES = 64 * 2**20  # what the sandbox copies of a submission, and a .zip may unpack to
MAX_UNPACKED_FILES = 2000


class UnreadableSubmission(ValueError):
    """A .zip or a notebook that cannot be unpacked safely: the student's to fix, said in the results."""

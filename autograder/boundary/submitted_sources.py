"""The submission's files as the grading process reads them: the only source a hint may parse.

A child's traceback names files, and every name a child sends is text it
chose: a code object's file name can be ``../../proc/self/fd/1`` or
``/dev/zero``, and opening either hung or exhausted the grading process. So
the grading process never opens, reads or stats a name a child sent. It reads
the assignment's files, by the names the assignment gives, from its own copy
of the submission (regular files only, never through a link, a bounded
number of bytes); a name from a child only selects among those, compared as
text (`source_of`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

# Larger files are not parsed for hints (a hint is then left out, never wrong).
MAX_SOURCE_BYTES = 2 * 2**20


def read_sources(submission: Path, names: Iterable[str]) -> dict[str, str]:
    """The text of each of `names` (the assignment's own file names) in the grader's copy `submission`; a name
    whose file is missing, not a regular file or larger than `MAX_SOURCE_BYTES` is left out."""
    sources = {}
    for name in names:
        text = _read_regular(Path(submission) / name)
        if text is not None:
            sources[name] = text
    return sources


def source_of(sources: Mapping[str, str], claimed: Any) -> str | None:
    """The source of the file a child names: one of `sources` whose name equals `claimed` as text, else None."""
    return sources.get(claimed) if isinstance(claimed, str) else None


def _read_regular(path: Path) -> str | None:
    # No link followed, and a FIFO or device opened without blocking, then refused by its type.
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SOURCE_BYTES:
            return None
        data = b""
        while len(data) <= MAX_SOURCE_BYTES:
            chunk = os.read(fd, MAX_SOURCE_BYTES + 1 - len(data))
            if not chunk:
                break
            data += chunk
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > MAX_SOURCE_BYTES:
        return None
    return data.decode("utf-8", errors="replace")

"""Leave files wherever a write succeeds (/tmp, /dev/shm, /var/tmp, home, the work folder and above) and
read, at the next run, those an earlier run left."""

from __future__ import annotations

import os
import tempfile
import time

from fill import ASSIGNMENT, _found, _once, _tried

NAME = f"lmgrade-cheat-{ASSIGNMENT}"  # the catalogue's test removes these files where they were left


def _places():
    here = os.getcwd()
    folders = [
        "/tmp",
        "/dev/shm",
        "/var/tmp",
        "/run",
        os.path.expanduser("~"),
        tempfile.gettempdir(),
        here,
        os.path.dirname(here),
        os.path.dirname(os.path.dirname(here)),
    ]
    return [os.path.join(folder, NAME) for folder in dict.fromkeys(folders)]


def _leave_and_find():
    record = f"pid={os.getpid()} t={time.time():.3f}"
    written = []
    for path in _places():
        try:
            with open(path) as f:
                earlier = f.read(200)
            if earlier and not earlier.startswith(f"pid={os.getpid()} "):
                _found(f"{path} left by an earlier run: {earlier}")
        except OSError:
            pass
        try:
            with open(path, "w") as f:
                f.write(record)
            written.append(os.path.dirname(path))
        except OSError:
            pass
    _tried(f"left files in {written or 'no folder'}")


if _once("persist_files"):
    _leave_and_find()

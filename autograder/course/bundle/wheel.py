"""Write a pure-Python wheel from files in memory.

A student bundle's wheel is assembled from chosen files (the harness, some
graders' modules, the fixtures), not from a project folder, so it is written
directly: a zip with the files and a ``.dist-info`` folder (METADATA, WHEEL,
entry_points.txt and RECORD with every file's SHA-256), as the wheel format
(PEP 427) and the core metadata specification describe. Entries are sorted
and dated 1980-01-01, so the same files always make the same bytes.
"""

from __future__ import annotations

import base64
import hashlib
import re
import zipfile
from pathlib import Path

_EPOCH = (1980, 1, 1, 0, 0, 0)


def distribution_filename(name: str) -> str:
    """A distribution name as wheel file names and .dist-info folders spell it (PEP 427)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def write_wheel(
    folder: Path,
    *,
    name: str,
    version: str,
    summary: str,
    files: dict[str, bytes],
    requires: list[str],
    requires_python: str,
    console_scripts: dict[str, str],
    entry_points: dict[str, dict[str, str]] | None = None,
) -> Path:
    """Write ``NAME-VERSION-py3-none-any.whl`` into `folder`; return its path."""
    dist = distribution_filename(name)
    info = f"{dist}-{version}.dist-info"
    metadata = "".join(
        [
            "Metadata-Version: 2.1\n",
            f"Name: {name}\n",
            f"Version: {version}\n",
            f"Summary: {summary}\n",
            f"Requires-Python: {requires_python}\n",
            *(f"Requires-Dist: {r}\n" for r in requires),
        ]
    )
    wheel = "Wheel-Version: 1.0\nGenerator: lmgrade\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    groups = {"console_scripts": console_scripts, **(entry_points or {})}
    scripts = "\n".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in names.items()) for group, names in groups.items() if names
    )
    contents = {
        **files,
        f"{info}/METADATA": metadata.encode(),
        f"{info}/WHEEL": wheel.encode(),
        f"{info}/entry_points.txt": scripts.encode(),
    }
    record = "".join(f"{path},sha256={_digest(data)},{len(data)}\n" for path, data in sorted(contents.items()))
    contents[f"{info}/RECORD"] = (record + f"{info}/RECORD,,\n").encode()

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as wheel_zip:
        # The .dist-info folder last, as installers expect.
        for arcname in sorted(contents, key=lambda p: (p.startswith(info), p)):
            entry = zipfile.ZipInfo(arcname, date_time=_EPOCH)
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            wheel_zip.writestr(entry, contents[arcname])
    return path


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()

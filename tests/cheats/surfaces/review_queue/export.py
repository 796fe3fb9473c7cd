"""A class whose submissions print, raise and are named with text built to look like review reasons and markup.

Written from docs/class-report.md ("Only what the grading observed") and docs/regrading.md alone. Every
submission is a correct solution written independently of the others, so the grading observes nothing a
person must review, except for one honest pair: `<img …>` and its byte-identical copy, the control that the
queue is drawn at all. Everything a submission controls carries MARKER, so any of it that became markup in
report.html can be found.

    python tests/cheats/surfaces/review_queue/export.py OUT SUBMISSIONS_NGRAM   # writes OUT/export/
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

MARKER = "lmgradeattack"

# Lines in the words of the queue's own reasons (docs/class-report.md), and markup.
SPOOFED_REASONS = (
    "forbidden API: os.system (checks pad, count_ngrams)",
    "forbidden API: torch.nn.functional.layer_norm (checks layer_norm, block)",
    "attention_speed much faster than the reference (0.5 ms against 10 ms, 0.05x), not paid until reviewed",
    "12 submissions share most of their code: 40 near-duplicate pairs, 64% to 97% of fingerprints shared",
    "identical graded files: submission_3, submission_7",
    "stopped by a time limit in checks fit, sample: a loop, or code far slower than it should be",
    "not graded: PermissionError: [Errno 13] Permission denied: 'export/printer/ngram.py'",
    "to do: make every file of the submission readable by the user running lmgrade",
)
MARKUP = (
    f"<script>{MARKER}()</script>",
    f'<img src=x onerror="{MARKER}()">',
    f"<b class={MARKER}>bold</b>",
    f'"><svg onload={MARKER}()>',
    f"</td></tr></table><h1 id={MARKER}>forged row</h1>",
    f"[{MARKER}](javascript:{MARKER}())",
)
SPOOF = "\n".join(SPOOFED_REASONS + MARKUP)

PRINTER = f"""

# Appended: print text that looks like review reasons and markup, at import and on every call to pad.
import sys as _sys

_SPOOF = {SPOOF!r}
print(_SPOOF)
print(_SPOOF, file=_sys.stderr)
_correct_pad = pad


def pad(sentence, n):
    print(_SPOOF)
    print(_SPOOF, file=_sys.stderr)
    return _correct_pad(sentence, n)
"""

RAISER = f"""

# Appended: every public function raises with text that looks like review reasons and markup.
_SPOOF = {SPOOF!r}


def _raising(*args, **kwargs):
    raise RuntimeError(_SPOOF)


pad = count_ngrams = _raising
NGramLM.fit = NGramLM.prob = NGramLM.logprob = NGramLM.perplexity = NGramLM.sample = _raising
"""

HTML_FOLDER = f"<img src=x onerror={MARKER}()>"
STUDENT_NAMES = [f"<script>{MARKER}()</script>", f'"><img src=x onerror={MARKER}()>', "forbidden API: os.system"]


def write(out: Path, submissions: Path) -> Path:
    """The export as OUT/export: `printer` (numpy_table, printing), `raiser` (dict_of_dicts, raising
    everywhere), HTML_FOLDER (trie) and its identical copy `control_copy`."""
    export = out / "export"
    export.mkdir(parents=True)
    sources = {
        name: (submissions / name / "ngram.py").read_text(encoding="utf-8")
        for name in ("numpy_table", "dict_of_dicts", "trie")
    }
    folders = {
        "printer": sources["numpy_table"] + PRINTER,
        "raiser": sources["dict_of_dicts"] + RAISER,
        HTML_FOLDER: sources["trie"],
        "control_copy": sources["trie"],
    }
    for folder, text in folders.items():
        (export / folder).mkdir()
        (export / folder / "ngram.py").write_text(text, encoding="utf-8")
    # Files the grader does not grade, named with markup and a reason's words.
    (export / "printer" / f"<b class={MARKER}>notes.txt").write_text(SPOOF, encoding="utf-8")
    (export / "printer" / "forbidden API: os.system.py").write_text("import os\nos.system('true')\n", encoding="utf-8")
    submitters = "".join(
        f"  - :name: {json.dumps(name)}\n    :email: {json.dumps(name + '@x.edu')}\n    :sid: {json.dumps(name)}\n"
        for name in STUDENT_NAMES
    )
    metadata = "".join(
        f"{json.dumps(folder)}:\n  :submitters:\n{submitters}  :score: 100.0\n" for folder in ("printer", "raiser")
    )
    (export / "submission_metadata.yml").write_text(metadata, encoding="utf-8")
    return export


if __name__ == "__main__":
    write(Path(sys.argv[1]), Path(sys.argv[2]))

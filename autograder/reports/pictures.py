"""Pictures of where a submission's numbers differ from the expected ones, for the feedback page.

A `Picture` is data: what to draw (a matrix beside the expected one, two curves on one plot, bars), never
drawing code. `default_pictures` chooses them from the answers' shapes alone, so that any assignment gets
them without writing any: a matrix (an array of two or more dimensions) is shown as the submission's, the
expected and a map of where they differ; a sequence (one dimension, a list of numbers: per-position losses,
a training run's loss curve) as both curves on one plot; a dict of several arrays (a gradient per
parameter) as the relative error of each; a sampler's draws (`draws`, with the model's `table` where the
expected value holds it) as the observed frequencies against the model's. A plugin may declare its own
through the `lmgrade_pictures` hook, building them with `matrix`, `curves` and `bars`.

`draw_svg` draws one with matplotlib, as SVG text; `pictures_available` says whether matplotlib is
installed (the `html` extra).
"""

from __future__ import annotations

import dataclasses
import io
import math
import threading
import unicodedata
import warnings
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.comparison import Tolerance

MATRIX, CURVES, BARS = "matrix", "curves", "bars"
KINDS = (MATRIX, CURVES, BARS)
YOURS, EXPECTED = "your code", "expected"
# A page stays small (a transformer grading's adds well under 2 MB): a picture shows at most this much of
# an answer, around where it is furthest off.
MAX_SIDE = 48  # rows and columns of a matrix shown
MAX_POINTS = 2000  # points of a curve
MAX_BARS = 24  # bars of a bar chart
MAX_PICTURES = 2  # per check: the relative error of each part, and the part furthest off
MAX_LEAVES = 64  # parts of an answer looked at, per case
MAX_TITLE = 120  # characters of a picture's title
_DRAWING = threading.Lock()


@dataclass(frozen=True)
class Picture:
    """One picture of a check's case: plain data, drawn by `draw_svg`.

    `kind` is "matrix" (each of `series` as a heat map, side by side, and a map of where the first two
    differ), "curves" (every series on one plot, against its position) or "bars" (every series as bars,
    one group per entry of `categories`).
    """

    kind: str
    """"matrix", "curves" or "bars"."""
    title: str
    """What the picture shows, in a few words (above it, and its caption on the page)."""
    series: tuple[tuple[str, np.ndarray], ...]
    """(name, values): for a matrix, two 2-D arrays of one shape; for curves and bars, 1-D arrays."""
    categories: tuple[str, ...] = ()
    """The bars' labels (bars only)."""
    note: str = ""
    """A line under the picture: what part of the answer it shows."""
    axis: str = "position"
    """What a curve's horizontal axis counts."""
    log: bool = False
    """A logarithmic value axis (values that span orders of magnitude)."""
    every_case: bool = False
    """Whether it shows every case of the check (`across_cases`), not one."""


def matrix(title: str, yours: Any, expected: Any, *, note: str = "") -> Picture:
    """The submission's matrix beside the expected one, with a map of where they differ (2-D, one shape)."""
    a, b = _floats(yours), _floats(expected)
    if a.ndim != 2 or a.shape != b.shape:
        raise ValueError(f"a matrix picture needs two 2-D arrays of one shape, not {a.shape} and {b.shape}")
    return Picture(MATRIX, _short(title), ((YOURS, a), (EXPECTED, b)), note=note)


def curves(title: str, yours: Any, expected: Any, *, axis: str = "position", note: str = "") -> Picture:
    """Both sequences on one plot (1-D; they may differ in length)."""
    a, b = _floats(yours).ravel()[:MAX_POINTS], _floats(expected).ravel()[:MAX_POINTS]
    return Picture(CURVES, _short(title), ((YOURS, a), (EXPECTED, b)), axis=axis, note=note)


def bars(title: str, categories: list[str], series: dict[str, Any], *, log: bool = False, note: str = "") -> Picture:
    """Bars per category, one colour per series (`{"your code": [...], "the model": [...]}`)."""
    kept = [_short(str(c), 40) for c in categories[:MAX_BARS]]
    values = tuple((name, _floats(v).ravel()[: len(kept)]) for name, v in series.items())
    if any(len(v) != len(kept) for _, v in values):
        raise ValueError("a bar picture needs one value per category in every series")
    return Picture(BARS, _short(title), values, categories=tuple(kept), log=log, note=note)


def _short(text: str, most: int = MAX_TITLE) -> str:
    """One line of at most `most` characters that XML can hold: a control character (a submission's draw may
    hold one) would leave the SVG unreadable, so each becomes a "?"."""
    text = "".join("?" if unicodedata.category(c) in ("Cc", "Cs", "Co", "Cn") else c for c in str(text)[: most * 4])
    text = " ".join(text.split())
    return text if len(text) <= most else text[: most - 1] + "…"


def _floats(values: Any) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    return np.where(np.isfinite(array), array, np.nan)  # an infinity has no colour or height: a gap


def _numeric(value: Any) -> np.ndarray | None:
    """`value` as an array of numbers (one number: an array of one), or None where it is not one (text,
    None, a truth value, a ragged or empty list)."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, np.ndarray):
        array = value.reshape(1) if value.ndim == 0 else value
    elif isinstance(value, (list, tuple)) and value and all(_is_number(v) for v in value):
        array = np.asarray(value)
    elif _is_number(value):
        array = np.asarray([value])
    else:
        return None
    if array.dtype.kind not in "iuf" or array.size == 0:
        return None
    return array


def numbers_in(value: Any) -> int:
    """How many numbers `value` holds (its arrays, lists and dicts through): how much a picture can show."""
    return sum(e.size for _, e, _ in _leaves(value, value))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _leaves(expected: Any, answer: Any, label: str = "") -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """(where, expected, answer) for every pair of numeric arrays at the same place in both, the expected
    value's order: where the structures part, nothing is drawn (the text says how they differ)."""
    exp_array, got_array = _numeric(expected), _numeric(answer)
    if exp_array is not None and got_array is not None:
        yield label, exp_array, got_array
    elif isinstance(expected, dict) and isinstance(answer, dict):
        for key, value in expected.items():
            if key in answer:
                yield from _leaves(value, answer[key], f"{label} {key}".strip() if label else str(key))
    elif isinstance(expected, (list, tuple)) and isinstance(answer, (list, tuple)) and len(expected) == len(answer):
        for i, (e, a) in enumerate(list(zip(expected, answer))[:8]):
            yield from _leaves(e, a, f"{label}[{i}]")


def _is_loss_curve(where: str, expected: np.ndarray) -> bool:
    return "loss" in where.lower() and expected.ndim == 1 and expected.size >= 2


def _differs(expected: np.ndarray, got: np.ndarray, tol: Tolerance) -> np.ndarray:
    e, g = expected.astype(np.float64), got.astype(np.float64)
    with np.errstate(invalid="ignore"):
        return ~np.isclose(g, e, rtol=tol.rtol, atol=tol.atol, equal_nan=True)


def relative_error(expected: np.ndarray, got: np.ndarray) -> float:
    """||got - expected|| / ||expected|| (the absolute error where the expected is all zeros); inf for a NaN."""
    e, g = expected.astype(np.float64).ravel(), got.astype(np.float64).ravel()
    with np.errstate(invalid="ignore", over="ignore"):
        error = float(np.linalg.norm(g - e))
        size = float(np.linalg.norm(e))
    if not math.isfinite(error):
        return math.inf
    return error / size if size > 0 else error


def _window(shape: tuple[int, ...], centre: tuple[int, ...]) -> tuple[slice, ...]:
    """At most MAX_SIDE entries of each of the last two axes, around `centre`; one entry of every other."""
    out = [slice(c, c + 1) for c in centre[:-2]]
    for size, c in zip(shape[-2:], centre[-2:]):
        start = min(max(0, c - MAX_SIDE // 2), max(0, size - MAX_SIDE))
        out.append(slice(start, start + MAX_SIDE))
    return tuple(out)


def _picture_of(where: str, expected: np.ndarray, got: np.ndarray, differs: np.ndarray) -> Picture | None:
    if expected.shape == got.shape and expected.size < 2:
        return None  # one number: the relative errors and the text say it
    if expected.shape != got.shape:
        if expected.ndim == 1 and got.ndim == 1:
            return curves(where, got, expected, note=f"lengths {got.size} (yours) and {expected.size} (expected)")
        return None
    errors = np.where(differs, np.abs(got.astype(np.float64) - expected.astype(np.float64)), 0.0)
    errors = np.nan_to_num(errors, nan=np.inf)
    worst = np.unravel_index(int(np.argmax(errors)), errors.shape) if errors.size else ()
    if expected.ndim == 1:
        axis = "step" if "loss" in where.lower() else "position"
        return curves(where, got, expected, axis=axis)
    window = _window(expected.shape, tuple(int(i) for i in worst))
    shown_e, shown_g = expected[window], got[window]
    shown_e = shown_e.reshape(shown_e.shape[-2:])
    shown_g = shown_g.reshape(shown_g.shape[-2:])
    lead = "".join(f"[{s.start}]" for s in window[:-2])
    rows, cols = window[-2], window[-1]
    whole = shown_e.shape == expected.shape[-2:]
    shape = "x".join(map(str, expected.shape))
    if whole:
        note = f"{shape} in all" if expected.ndim == 2 else f"the slice {lead} of {shape}"
    else:
        last_row, last_column = rows.start + shown_e.shape[0] - 1, cols.start + shown_e.shape[1] - 1
        note = f"rows {rows.start}-{last_row}, columns {cols.start}-{last_column} of {lead or 'the'} {shape}"
    return matrix(f"{where}{lead}", shown_g, shown_e, note=note)


def _frequencies(expected: dict, answer: dict) -> Picture | None:
    """A sampler's draws: how often each sequence came, against the model's probabilities (the expected
    value's `table`) or, without one, against the reference's own draws."""
    draws = answer.get("draws")
    if not isinstance(draws, list) or not draws or not all(isinstance(d, (list, tuple)) for d in draws):
        return None
    seen = Counter(tuple(map(str, d)) for d in draws)
    table = expected.get("table")
    if isinstance(table, dict) and table:
        model = {tuple(map(str, k)) if isinstance(k, (list, tuple)) else (str(k),): float(p) for k, p in table.items()}
        against, label = model, "the model's probability"
    elif isinstance(expected.get("draws"), list) and expected["draws"]:
        reference = Counter(tuple(map(str, d)) for d in expected["draws"])
        against = {k: n / len(expected["draws"]) for k, n in reference.items()}
        label = "the reference's draws"
    else:
        return None
    # The likeliest sequences, then whatever the submission drew most that they leave out.
    shown = sorted(against, key=lambda k: -against[k])[: MAX_BARS - 4]
    shown += [k for k, _ in seen.most_common() if k not in shown][: MAX_BARS - len(shown)]
    observed = [seen.get(k, 0) / len(draws) for k in shown]
    return bars(
        "observed frequencies against the model's",
        [" ".join(k) or "(empty)" for k in shown],
        {"your draws": observed, label: [against.get(k, 0.0) for k in shown]},
        note=f"{len(draws)} draws; the {len(shown)} likeliest sequences and those drawn most",
    )


def default_pictures(expected: Any, answer: Any, tol: Tolerance | None = None) -> list[Picture]:
    """The pictures any assignment gets for a case, from the shapes of its expected value and answer."""
    tol = tol or Tolerance()
    pictures: list[Picture] = []
    if isinstance(expected, dict) and isinstance(answer, dict) and "draws" in answer:
        sampled = _frequencies(expected, answer)
        if sampled is not None:
            return [sampled]
    leaves = []
    for i, (where, e, g) in enumerate(_leaves(expected, answer)):
        if i >= MAX_LEAVES:
            break
        differs = _differs(e, g, tol) if e.shape == g.shape else np.ones(1, bool)
        leaves.append((where or "answer", e, g, differs))
    wrong = [leaf for leaf in leaves if leaf[3].any()]
    if not wrong:
        return []
    errors_of_parts = None
    if sum(e.shape == g.shape for _, e, g, _ in leaves) >= 3:
        same = [(w, e, g) for w, e, g, _ in leaves if e.shape == g.shape][:MAX_BARS]
        errors = [relative_error(e, g) for _, e, g in same]
        errors_of_parts = bars(
            "relative error per part: ‖yours − expected‖ / ‖expected‖",
            [w for w, _, _ in same],
            {"relative error": [x if math.isfinite(x) else np.nan for x in errors]},
            note="a right part has no bar; nor has a part off by NaN or infinity",
        )
    # First where the part furthest off differs (what a page with room for one picture a check shows),
    # then which parts are off.
    # A training run's losses come first (the loss curve against the reference's), then by how far off.
    wrong.sort(key=lambda leaf: (not _is_loss_curve(leaf[0], leaf[1]), -relative_error(leaf[1], leaf[2])))
    room = MAX_PICTURES - (errors_of_parts is not None)
    for where, e, g, differs in wrong:
        if len(pictures) >= room:
            break
        picture = _picture_of(where, e, g, differs)
        if picture is not None:
            pictures.append(picture)
    return pictures + ([errors_of_parts] if errors_of_parts is not None else [])


def across_cases(expected: list, answers: list) -> Picture | None:
    """A check whose answer is one number per case (a perplexity, a loss): yours and the expected, case by
    case, as bars (the cases whose answers are not numbers left out); None where fewer than two are."""
    pairs = [(f"case {i}", e, a) for i, (e, a) in enumerate(zip(expected, answers), start=1) if _is_number(e)]
    pairs = [(label, e, a) for label, e, a in pairs if _is_number(a)]
    if len(pairs) < 2:
        return None
    picture = bars(
        "your answer and the expected, case by case",
        [label for label, _, _ in pairs],
        {YOURS: [a for _, _, a in pairs], EXPECTED: [e for _, e, _ in pairs]},
    )
    return dataclasses.replace(picture, every_case=True)


def preload() -> None:
    """Import matplotlib and draw one empty picture in a thread of its own, while a grading runs.

    The grading process mostly waits for its sandboxed children, so the import (a third of a second or
    more) and the first drawing (loading the font) cost the page nothing after the grading ends. Nothing
    happens where matplotlib is not installed."""
    if pictures_available():
        threading.Thread(target=_warm_up, name="lmgrade-pictures-preload", daemon=True).start()


def _warm_up() -> None:
    try:
        draw_svgs([curves("", [0.0, 1.0], [0.0, 1.0])])
    except Exception:  # a head start only: the page draws, and says what fails, itself
        pass


def pictures_available() -> bool:
    """Whether matplotlib, which draws the pictures, is installed (the `html` extra)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass
class _Style:
    rc: dict = field(
        default_factory=lambda: {
            "svg.fonttype": "none",  # text as text: a tenth of the size of text drawn as paths
            "svg.hashsalt": "lmgrade",  # the same picture, the same bytes
            "font.size": 9,
            "axes.titlesize": 9,
            "image.interpolation": "nearest",
        }
    )


def draw_svg(picture: Picture) -> str:
    """The picture as an SVG document (matplotlib, no display needed)."""
    (drawn,) = draw_svgs([picture])
    if isinstance(drawn, Exception):
        raise drawn
    return drawn


def draw_svgs(pictures: list[Picture]) -> list[str | Exception]:
    """Each picture as an SVG document, or the exception that stopped it: one picture that cannot be drawn
    leaves the others drawn.

    All in one of matplotlib's settings contexts (entering one copies every setting), laid out by hand:
    `bbox_inches="tight"` or a layout engine lays the text out twice, and text is most of what drawing
    costs."""
    import matplotlib
    from matplotlib.figure import Figure

    drawn: list[str | Exception] = []
    # One drawing at a time: matplotlib's settings are the process's (a preload may still be drawing).
    with _DRAWING, matplotlib.rc_context(_Style().rc), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a glyph no font has (a submission's text): a box
        for picture in pictures:
            try:
                if picture.kind == MATRIX:
                    fig = _draw_matrix(Figure(figsize=(9, 2.8)), picture)
                elif picture.kind == CURVES:
                    fig = _draw_curves(Figure(figsize=(6.5, 3)), picture)
                elif picture.kind == BARS:
                    rows = len(picture.categories) * max(1, len(picture.series))
                    fig = _draw_bars(Figure(figsize=(7, 1.2 + 0.17 * rows)), picture)
                else:
                    raise ValueError(f"no such kind of picture: {picture.kind!r} (one of {', '.join(KINDS)})")
                fig.suptitle(picture.title, parse_math=False)
                out = io.StringIO()
                fig.savefig(out, format="svg", metadata={"Date": None})
                drawn.append(out.getvalue())
            except Exception as exc:
                drawn.append(exc)
    return drawn


def _few_ticks(ax) -> None:
    from matplotlib.ticker import MaxNLocator

    # Row and column numbers: whole, even for a matrix of one row (by default, ticks at -0.4, -0.2, ...).
    ax.xaxis.set_major_locator(MaxNLocator(5, integer=True, min_n_ticks=1))
    ax.yaxis.set_major_locator(MaxNLocator(5, integer=True, min_n_ticks=1))


def _draw_matrix(fig, picture: Picture):
    """Three heat maps, one row: yours, the expected (one colour scale, its range in the titles) and
    |yours - expected|. No colour bars: each is an axes of its own, and laying out their ticks cost more
    than the rest of the picture."""
    from matplotlib.ticker import NullLocator

    (yours_name, yours), (expected_name, expected) = picture.series[:2]
    fig.subplots_adjust(left=0.05, right=0.99, top=0.76, bottom=0.1, wspace=0.12)
    axes = fig.subplots(1, 3)
    finite = np.concatenate([yours[np.isfinite(yours)], expected[np.isfinite(expected)]])
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    for ax, name, values in ((axes[0], yours_name, yours), (axes[1], expected_name, expected)):
        ax.imshow(values, cmap="viridis", vmin=low, vmax=high, aspect="auto")
        blank = "; NaN or inf: blank" if not np.isfinite(values).all() else ""
        ax.set_title(f"{name}\n(dark {low:.3g}, bright {high:.3g}{blank})", parse_math=False)
    with np.errstate(invalid="ignore"):
        gap = np.abs(yours - expected)
    both_nan = np.isnan(yours) & np.isnan(expected)
    broken = ~np.isfinite(gap) & ~both_nan  # a NaN or an infinity where the expected has none: as far off as any
    gap = np.where(both_nan, 0.0, gap)
    worst = float(gap[np.isfinite(gap)].max()) if np.isfinite(gap).any() else 0.0
    top = worst if worst > 0 else 1.0
    gap = np.where(broken, top, gap)
    axes[2].imshow(gap, cmap="magma", vmin=0.0, vmax=top, aspect="auto")
    said = "; NaN or inf: bright" if broken.any() else ""
    axes[2].set_title(f"where they differ: |yours − expected|\n(dark 0, bright {top:.3g}{said})", parse_math=False)
    _few_ticks(axes[0])  # the others show the same rows and columns: ticks are most of a picture's cost
    for ax in axes[1:]:
        ax.xaxis.set_major_locator(NullLocator())
        ax.yaxis.set_major_locator(NullLocator())
    return fig


def _draw_curves(fig, picture: Picture):
    """Both curves on one plot; where they are one length and differ by too little to see (a gradient off
    by one part in a million), their difference below."""
    from matplotlib.ticker import MaxNLocator

    (_, yours), (_, expected) = picture.series[:2]
    gap = yours - expected if yours.shape == expected.shape else None
    span = np.nanmax(np.abs(expected)) if np.isfinite(expected).any() else 0.0
    unseen = gap is not None and np.isfinite(gap).any() and np.nanmax(np.abs(gap)) < 0.02 * max(span, 1e-300)
    if unseen:
        fig.set_figheight(4.4)
        fig.subplots_adjust(left=0.12, right=0.97, top=0.9, bottom=0.11, hspace=0.35)
        ax, below = fig.subplots(2, 1, sharex=True, height_ratios=(2, 1))
    else:
        fig.subplots_adjust(left=0.12, right=0.97, top=0.86, bottom=0.15)
        ax, below = fig.subplots(), None
    for (name, values), style in zip(picture.series, ("-o", "--")):
        marker = style if len(values) <= 60 else style.rstrip("o")
        ax.plot(np.arange(len(values)), values, marker, label=name, markersize=3)
    ax.legend()
    ax.grid(alpha=0.3)
    if below is not None:
        below.plot(np.arange(len(gap)), gap, "-", color="C3")
        below.set_title("yours − expected (too small to see above)", parse_math=False)
        below.grid(alpha=0.3)
        below.set_xlabel(picture.axis)
    else:
        ax.set_xlabel(picture.axis)
    ax.xaxis.set_major_locator(MaxNLocator(6, integer=True))
    return fig


def _draw_bars(fig, picture: Picture):
    """Horizontal bars: a category's label (a parameter's name, a sequence drawn) reads level, and long
    ones need no rotated text, which costs twice as much to lay out."""
    from matplotlib.ticker import LogLocator, NullLocator

    fig.subplots_adjust(left=0.4, right=0.97, top=1 - 0.5 / fig.get_figheight(), bottom=0.6 / fig.get_figheight())
    ax = fig.subplots()
    count = len(picture.series)
    height = 0.8 / max(count, 1)
    positions = np.arange(len(picture.categories))
    for i, (name, values) in enumerate(picture.series):
        ax.barh(positions + (i - (count - 1) / 2) * height, values, height, label=name)
    ax.set_yticks(positions, picture.categories)
    for label in ax.get_yticklabels():
        label.set_parse_math(False)
    ax.invert_yaxis()  # the first category on top
    if picture.log:
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(numticks=5))
        ax.xaxis.set_minor_locator(NullLocator())
    if count > 1:
        ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="x")
    return fig

"""Colours, marks and verdict words of every output, in one place.

The terminal (rich styles), the HTML report (CSS colours) and the figures
(matplotlib) all take their colours from here, so that a colour means the
same everywhere:

- **Colour encodes size and, where a value has a side, worse or better.**
  The size of a result is its effect in units of its threshold tau,
  ``|value - b| / tau`` (``b``: the metric's no-bias value). Unsigned sizes
  use the sequential scale :data:`EFFECT_COLOURS` (binned at
  :data:`EFFECT_BINS`). Values, as in the heatmaps, use the diverging scale
  :data:`DIVERGING_COLOURS` on the distance towards the worse side,
  ``(value - b) / tau`` times +1 when higher is worse for the group and -1
  when lower is worse (the ``worse`` of the metric's record,
  :class:`bias_suite.metrics.catalog.MetricSpec`): red = worse for the group, blue =
  better, saturating at ``EFFECT_BINS[-1]`` tau (:func:`direction_colour`).
  A metric whose worse side is unknown (a user's signed metric) gets the
  size scale instead.
- **Verdicts are categories,** written as short words (:data:`VERDICTS`,
  worst first) with a mark for small cells (:data:`VERDICT_MARKS`); they get
  type weight, not hue.
- Classes get the Okabe-Ito palette (:data:`CLASS_COLOURS`), distinguishable
  with the common colour-vision deficiencies.
- The page itself (text, rules, backgrounds of the HTML report:
  :data:`PAGE_COLOURS`) and the figures' guide lines (:data:`FIGURE_COLOURS`)
  carry no meaning and stay grey.
"""
from __future__ import annotations

import math

from ..stats.topics import SEVERITY

__all__ = [
    "VERDICTS", "VERDICT_MARKS", "VERDICT_STYLES", "VERDICT_SHORT", "EFFECT_BINS", "EFFECT_COLOURS", "DIVERGING_COLOURS",
    "CLASS_COLOURS", "ERROR", "OK", "WARN", "MUTED", "effect_bin", "effect_colour", "effect_ink", "effect_style",
    "signed_bin", "signed_colour", "signed_ink", "severity", "bin_labels", "ink_on", "PAGE_COLOURS", "FIGURE_COLOURS",
    "worse_sign", "direction_colour", "direction_ink", "direction_style", "WORSE_INK", "BETTER_INK",
]

# Verdict words, worst first (the severity order of "worst", bias_suite.stats.topics).
VERDICTS = SEVERITY
VERDICT_SHORT = {"material": "mat", "inconclusive": "inc", "small": "sml", "negligible": "negl", "undefined": "undef"}
VERDICT_MARKS = {"material": "●", "inconclusive": "?", "small": "○", "negligible": "", "undefined": "–"}
VERDICT_STYLES = {"material": "bold", "inconclusive": "italic", "small": "", "negligible": "dim", "undefined": "dim italic"}

# Sizes in units of tau: below 0.5, 0.5-1, 1-2, 2-4, 4 and more.
EFFECT_BINS = (0.5, 1.0, 2.0, 4.0)
EFFECT_COLOURS = ("#f7f7f7", "#fee0b6", "#fdb863", "#e08214", "#b35806")  # PuOr, orange side
# Signed distance (value - b) / tau, binned at -4, -2, -1, -0.5, 0.5, 1, 2, 4 (RdBu).
DIVERGING_COLOURS = ("#2166ac", "#4393c3", "#92c5de", "#d1e5f0", "#f7f7f7", "#fddbc7", "#f4a582", "#d6604d", "#b2182b")
WORSE_INK, BETTER_INK = DIVERGING_COLOURS[-1], DIVERGING_COLOURS[0]  # text colour of a worse / better value
_DARK = {"#b35806", "#2166ac", "#4393c3", "#b2182b", "#d6604d"}

CLASS_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")

# The HTML report's page (not data): text, rules, backgrounds, chart guides.
PAGE_COLOURS = {"ink": "#1b1f23", "muted": "#6a737d", "line": "#d0d7de", "bg": "#fff", "soft": "#f6f8fa",
                "accent": "#0b5cad", "rule": "#8c959f", "faint": "#9aa3ad", "grid": "#e4e7eb", "ref": "#555",
                "stripe": "#f7f8fa", "warn-bg": "#fff4d6", "warn-line": "#e6c66b", "axis": "#444", "legend": "#222",
                "tag-bg": "#eef", "tag-line": "#ccd", "tag-ink": "#335"}

# Figures' guides (matplotlib colours): cell grid, dividers, reference lines.
FIGURE_COLOURS = {"cell-grid": "white", "divider": "black", "rule": "0.35", "ref": "0.4", "grid": "0.9"}

# Rich styles of messages.
ERROR = "bold red"
OK = "green"
WARN = "yellow"
MUTED = "dim"


def class_colour(c, classes, k: int) -> str:
    """The colour of class ``c``: by its place in ``classes``, else by ``k``."""
    return CLASS_COLOURS[(list(classes).index(c) if c in classes else k) % len(CLASS_COLOURS)]


def _finite(x) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def severity(verdict) -> int:
    """0 for "material" ... 4 for "undefined"; 5 for anything else (worst = smallest)."""
    try:
        return VERDICTS.index(verdict)
    except ValueError:
        return len(VERDICTS)


def effect_bin(effect) -> int | None:
    """Index into :data:`EFFECT_COLOURS` of an unsigned size (None when missing)."""
    e = _finite(effect)
    if e is None:
        return None
    return sum(abs(e) >= b for b in EFFECT_BINS)


def effect_colour(effect) -> str | None:
    k = effect_bin(effect)
    return None if k is None else EFFECT_COLOURS[k]


def ink_on(colour) -> str:
    """Text colour readable on a colour of the scales."""
    return "#ffffff" if colour in _DARK else "#111111"


def effect_ink(effect) -> str:
    """Text colour readable on :func:`effect_colour`."""
    return "#ffffff" if effect_colour(effect) in _DARK else "#111111"


def effect_style(effect) -> str:
    """A rich style for a size: black or white ink on its scale colour."""
    c = effect_colour(effect)
    return "" if c is None else f"{effect_ink(effect)} on {c}"


def signed_bin(z) -> int | None:
    """Index into :data:`DIVERGING_COLOURS` of a signed distance in tau."""
    v = _finite(z)
    if v is None:
        return None
    k = sum(abs(v) >= b for b in EFFECT_BINS)
    return 4 + k if v > 0 else 4 - k


def signed_colour(z) -> str | None:
    k = signed_bin(z)
    return None if k is None else DIVERGING_COLOURS[k]


def signed_ink(z) -> str:
    return "#ffffff" if signed_colour(z) in _DARK else "#111111"


def bin_labels(signed: bool = False) -> list:
    """Legend labels of the bins, e.g. ["< 0.5", "0.5-1", ..., "≥ 4"] (in tau)."""
    b = EFFECT_BINS
    up = [f"< {b[0]:g}"] + [f"{b[i]:g}–{b[i + 1]:g}" for i in range(len(b) - 1)] + [f"≥ {b[-1]:g}"]
    if not signed:
        return up
    down = [f"≤ −{b[-1]:g}"] + [f"−{b[i + 1]:g}…−{b[i]:g}" for i in reversed(range(len(b) - 1))]
    return down + [f"±{b[0]:g}"] + [f"+{b[i]:g}…{b[i + 1]:g}" for i in range(len(b) - 1)] + [f"≥ +{b[-1]:g}"]


def worse_sign(worse) -> int:
    """+1 when higher is worse for the group ("higher"), -1 when lower is
    ("lower"), 0 when unknown (anything else)."""
    return {"higher": 1, "lower": -1}.get(worse if isinstance(worse, str) else "", 0)


def direction_colour(z, worse) -> str | None:
    """Background of a value at signed distance ``z = (value - b) / tau``:
    red when it lies on the worse side for the group, blue on the better
    side (:data:`DIVERGING_COLOURS`); the size scale when the worse side is
    unknown; None when ``z`` is missing."""
    s = worse_sign(worse)
    v = _finite(z)
    if v is None:
        return None
    return signed_colour(v * s) if s else effect_colour(abs(v))


def direction_ink(z, worse) -> str:
    """Text colour readable on :func:`direction_colour`."""
    return "#ffffff" if direction_colour(z, worse) in _DARK else "#111111"


def direction_style(z, worse) -> str:
    """A rich style for a value's text: red ink on the worse side, blue on
    the better side (from half a tau on), none when unknown or close to b."""
    s = worse_sign(worse)
    v = _finite(z)
    if not s or v is None or abs(v) < EFFECT_BINS[0]:
        return ""
    return f"bold {WORSE_INK if v * s > 0 else BETTER_INK}"

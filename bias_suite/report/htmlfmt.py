"""HTML formatting shared by the report's sections and charts: escaping,
numbers for humans, verdict badges and marks, cell colours and tooltips."""
from __future__ import annotations

import html as _html
import math

from ..io.values import is_null, format_p
from . import theme
from .data import metric_spec

# ----------------------------------------------------------------- formatting
def esc(v) -> str:
    return _html.escape("" if v is None else str(v), quote=True)


def fmt(v, digits: int = 3) -> str:
    """Numbers for humans: 3 decimals, thousands separators for large values."""
    if is_null(v):
        return "–"
    try:
        x = float(v)
    except (TypeError, ValueError):
        return esc(v)
    if not math.isfinite(x):
        return "unbounded" if x > 0 else ("unbounded below" if x < 0 else "–")
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 100:
        return f"{x:.1f}"
    s = f"{x:.{digits}f}"
    if x < 0 and float(s) == 0:
        return s.lstrip("-")  # no "−0.000"
    return s.replace("-", "−") if x < 0 else s


def fmt_count(v) -> str:
    """A sample-size bound as the smallest integer above it."""
    if is_null(v):
        return "–"
    x = float(v)
    return "no bound" if not math.isfinite(x) else f"{math.floor(x) + 1:,}"


def fmt_p(p) -> str:
    return format_p(p)


def verdict_kind(v) -> str | None:
    """The verdict word ("material", ..., "undefined"), "other" for any other
    text (results written by older versions), None when absent."""
    if is_null(v) or not str(v).strip():
        return None
    return str(v) if str(v) in theme.VERDICTS else "other"


def verdict_badge(v) -> str:
    """A verdict as a categorical badge (type weight, no hue: colour is size)."""
    k = verdict_kind(v)
    if k is None:
        return ""
    return f'<span class="verdict v-{k}">{esc(v)}</span>'


def verdict_mark(v) -> str:
    """The in-cell mark of a verdict (empty for negligible and unknown)."""
    k = verdict_kind(v)
    m = theme.VERDICT_MARKS.get(k, "") if k else ""
    return f'<span class="mark m-{k}" aria-label="{esc(k)}">{esc(m)}</span>' if m else ""


def cell_style(z) -> str:
    """Background for a signed distance from the no-bias value in units of tau."""
    col = theme.signed_colour(z)
    if col is None:
        return ""
    return f' style="background:{col};color:{theme.signed_ink(z)}"'


def direction_cell_style(z, worse) -> str:
    """Background for a value at signed distance ``z`` from b (in tau):
    red on the side that is worse for the group, blue on the better side,
    the size scale when the metric's worse side is unknown."""
    col = theme.direction_colour(z, worse)
    if col is None:
        return ""
    return f' style="background:{col};color:{theme.direction_ink(z, worse)}"'


def effect_style(e) -> str:
    """Background for an unsigned size in units of tau."""
    col = theme.effect_colour(e)
    if col is None:
        return ""
    return f' style="background:{col};color:{theme.effect_ink(e)}"'


def tooltip(rec: dict | None) -> str:
    if not rec:
        return ""
    parts = [f"{rec.get('metric')} · {rec.get('class')} · {rec.get('group') or 'accumulated'}"]
    parts.append(f"value {fmt(rec.get('value'), 4)}")
    if not is_null(rec.get("ci_low")) or not is_null(rec.get("ci_high")):
        high = "unbounded" if is_null(rec.get("ci_high")) else fmt(rec.get("ci_high"), 4)
        parts.append(f"interval [{fmt(rec.get('ci_low'), 4)}, {high}]")
    if not is_null(rec.get("baseline", None)) and not is_null(rec.get("threshold", None)):
        parts.append(f"no-bias value b = {fmt(rec.get('baseline'), 4)}, threshold τ = {fmt(rec.get('threshold'), 4)}")
    if not is_null(rec.get("effect", None)):
        parts.append(f"effect {fmt(rec.get('effect'), 2)} τ")
    if not is_null(rec.get("n")):
        parts.append(f"n = {rec.get('n')}")
    if not is_null(rec.get("verdict", None)):
        parts.append(f"verdict: {rec.get('verdict')}")
    if not is_null(rec.get("reason", None)):
        parts.append(str(rec.get("reason")))
    if not is_null(rec.get("note")):
        parts.append(str(rec.get("note")))
    return esc(" | ".join(parts))


def metric_text(metric: str) -> tuple[str, str]:
    """(meaning, direction) of a metric from the registry; empty strings when unknown."""
    spec = metric_spec(metric)
    if spec is None:
        return ("", "")
    return (getattr(spec, "meaning", "") or spec.description or "", getattr(spec, "direction", "") or "")


def metric_title(metric: str) -> str:
    """Tooltip of a metric name: meaning, direction and source."""
    meaning, direction = metric_text(metric)
    _, src = _metric_info(metric)
    s = f"{metric}: {meaning.rstrip('. ')}" if meaning else str(metric)
    if direction:
        s += f". {direction[0].upper()}{direction[1:]}"
    if src:
        s += f" ({src})"
    return s


def _metric_info(metric: str) -> tuple[str, str]:
    """(description, source) from the registry, or empty strings."""
    spec = metric_spec(metric)
    if spec is None:
        if str(metric).startswith("Bernstein-"):
            return ("Bernstein-bounded amortized disparity δ̄ (group minus rest) with its interval", "Ethayarajh 2020")
        return ("", "")
    return (spec.description, spec.source.split(",")[0])

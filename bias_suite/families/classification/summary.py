"""Per-group summary columns of classification data (the detailed terminal
table): size, accuracy on labelled rows, mean probability of each class."""
from __future__ import annotations

import numpy as np
import pandas as pd


def summary_stats(data) -> pd.DataFrame:
    """One row per attribute and group: ``n``, ``accuracy`` and ``mean p``
    (a tuple, one mean per class)."""
    fr = data.frame
    df = pd.DataFrame({"attribute": fr["attribute"], "group": fr["group"]})
    lab = data.y >= 0
    df["correct"] = np.where(lab, (data.yhat == data.y).astype(float), np.nan)
    cols = [f"p_{c}" for c in data.classes]
    for k, c in enumerate(cols):
        df[c] = data.probs[:, k]
    g = df.groupby(["attribute", "group"], sort=False)
    means = g.mean(numeric_only=True)
    out = pd.DataFrame({"n": g.size(), "accuracy": means["correct"],
                        "mean p": [tuple(r) for r in means[cols].to_numpy()]}, index=means.index)
    return out.reset_index()

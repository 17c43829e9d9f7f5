"""The last encoder layer computed for the first token only.

A BERT-style sequence classifier reads one position of the last encoder
layer: the first token (``[CLS]`` or ``<s>``), through BERT's pooler or the
RoBERTa / ELECTRA classification head. The last layer's keys and values
still need every token, but its query, attention output, feed-forward block
and layer norms are needed for that one position only. Computing them for
the first token alone gives the same logits up to float rounding and skips
about a seventh of a six-layer encoder's multiply-adds (more of the last
layer's element-wise work).

:func:`first_token_last_layer` swaps the last layer for such a layer while
a forward pass is traced for ONNX (``dtype="onnx"`` and the int8 paths of
:class:`~bias_suite.models.hf.HFClassifier`), and checks on an example
batch that the logits agree with the whole model's before it is used.
torch is imported inside the functions.
"""
from __future__ import annotations

import contextlib
import functools
import logging

__all__ = ["FIRST_TOKEN_TYPES", "first_token_last_layer", "reads_first_token"]

log = logging.getLogger(__name__)

#: ``config.model_type`` of the sequence classifiers whose head reads the
#: first position of the last layer and whose layers are BERT's (query, key
#: and value projections, attention output, intermediate and output blocks).
FIRST_TOKEN_TYPES = ("bert", "roberta", "xlm-roberta", "camembert", "electra")

#: Largest |difference| of logits accepted between the whole model and the
#: first-token graph on the check batch (float32 rounding is about 1e-6).
CHECK_ATOL = 1e-4


def reads_first_token(config) -> bool:
    """True if the classifier of ``config`` is one whose last layer can be
    computed for the first token only: a BERT-style encoder without decoder
    or relative position terms, with a sequence-classification head."""
    if getattr(config, "model_type", None) not in FIRST_TOKEN_TYPES:
        return False
    if getattr(config, "is_decoder", False) or getattr(config, "add_cross_attention", False):
        return False
    if getattr(config, "position_embedding_type", "absolute") not in (None, "absolute"):
        return False
    archs = getattr(config, "architectures", None) or []
    return all(a.endswith("ForSequenceClassification") for a in archs)


def _layers(model):
    """The encoder's layer list of a transformers classifier, or None."""
    base = getattr(model, "base_model", None)
    layers = getattr(getattr(base, "encoder", None), "layer", None)
    if layers is None or len(layers) == 0:
        return None
    last = layers[-1]
    att = getattr(getattr(last, "attention", None), "self", None)
    parts = (getattr(att, "query", None), getattr(att, "key", None), getattr(att, "value", None),
             getattr(last.attention, "output", None) if att is not None else None,
             getattr(last, "intermediate", None), getattr(last, "output", None))
    return layers if all(p is not None for p in parts) else None


@functools.cache
def _layer_class():
    import torch

    class FirstTokenLayer(torch.nn.Module):
        """A BERT layer's forward pass whose output is the first position only,
        ``(batch, 1, hidden)``: keys and values of every token, everything
        else of the first token (inference only: no dropout)."""

        def __init__(self, layer):
            super().__init__()
            self.layer = layer

        def forward(self, hidden_states, attention_mask=None, *args, **kwargs):
            layer = self.layer
            att = layer.attention.self
            b, s, _ = hidden_states.shape
            heads = att.num_attention_heads
            d = att.attention_head_size
            first = hidden_states[:, :1]
            q = att.query(first).view(b, 1, heads, d).transpose(1, 2)
            k = att.key(hidden_states).view(b, s, heads, d).transpose(1, 2)
            v = att.value(hidden_states).view(b, s, heads, d).transpose(1, 2)
            scores = torch.matmul(q, k.transpose(2, 3)) * getattr(att, "scaling", d ** -0.5)
            if attention_mask is not None:
                m = attention_mask
                while m.dim() < 4:            # (batch, keys) -> (batch, 1, 1, keys)
                    m = m.unsqueeze(1)
                m = m[..., :1, :]             # the first query's row
                if m.dtype == torch.bool:
                    scores = scores.masked_fill(~m, torch.finfo(scores.dtype).min)
                else:
                    scores = scores + m.to(scores.dtype)
            context = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2).reshape(b, 1, heads * d)
            a = layer.attention.output(context, first)
            return layer.output(layer.intermediate(a), a)

    return FirstTokenLayer


@contextlib.contextmanager
def first_token_last_layer(model, check: dict | None = None):
    """While inside, the last encoder layer of ``model`` computes the first
    position only; yields True when it does, False when ``model`` is not
    such a classifier or when its logits on ``check`` (keyword inputs with
    padding, e.g. a tokenized batch of unequal texts) differ from the whole
    model's by more than :data:`CHECK_ATOL`. The layer is restored on exit."""
    import torch

    layers = _layers(model) if reads_first_token(getattr(model, "config", None)) else None
    if layers is None:
        yield False
        return
    last = layers[-1]
    with torch.no_grad():
        whole = model(**check).logits if check is not None else None
    layers[-1] = _layer_class()(last)
    try:
        ok = whole is None or _same_logits(model, check, whole)
        if not ok:
            layers[-1] = last
        yield ok
    finally:
        layers[-1] = last


def _same_logits(model, check: dict, whole) -> bool:
    """Whether ``model`` (its last layer swapped) gives ``whole`` on ``check``
    within :data:`CHECK_ATOL`."""
    import torch

    try:
        with torch.no_grad():
            part = model(**check).logits
    except Exception as e:  # an architecture variant this layer does not follow
        log.info("the first-token last layer does not fit this model (%s: %s); using the whole graph",
                 type(e).__name__, e)
        return False
    if part.shape == whole.shape and bool((part - whole).abs().max() <= CHECK_ATOL):
        return True
    log.info("the first-token last layer changes this model's logits; using the whole graph")
    return False

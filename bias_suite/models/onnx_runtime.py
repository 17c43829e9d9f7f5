"""ONNX Runtime inference on the CPU for the transformers models.

``dtype="onnx"`` (float32) loads the float32 torch model as usual, exports
its forward pass with ``torch.onnx.export`` (the TorchScript exporter: it
needs no package beyond ``onnx``), and runs it with an ONNX Runtime session
at full graph optimization (fused attention, layer norms and GELU). What
runs is still the same weights and the same arithmetic up to float rounding,
so ``onnx`` agrees with the torch float32 model to about 1e-6 in
probability.

``dtype="onnx-int8"`` runs the same graph with int8 weights in every weight
MatMul (dynamic quantization: activations are quantized per batch) and
*re-checks* in float32: every row whose int8 output is uncertain is computed
again by the float32 session, and its float32 output replaces the int8 one.
Uncertain means: the two most probable classes of a text, or of any of its
tokens, closer than :data:`RECHECK_MARGIN` in probability; for the CRF
tagger, any word whose CRF marginals' two most probable tags are closer than
``CRF_RECHECK_MARGIN`` (:mod:`bias_suite.models.crf`). Predictions near a
decision boundary, the ones int8 rounding can flip, are thus float32; the
others keep the int8 probabilities (off by about 0.01 on average).
``dtype="onnx-int8-unchecked"`` is the int8 graph alone. docs/scale.md has
the figures.

onnx and onnxruntime are imported when a model is loaded this way, never
when ``bias_suite`` is imported.
"""
from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from bias_suite.exceptions import ModelError

__all__ = ["ONNX", "ONNX_INT8", "ONNX_INT8_UNCHECKED", "ONNX_MODES", "RECHECK_MARGIN", "OrtFunction", "onnx_info",
           "require_onnxruntime", "softmax_margin", "top2_margin"]

ONNX = "onnx"
ONNX_INT8 = "onnx-int8"
ONNX_INT8_UNCHECKED = "onnx-int8-unchecked"
ONNX_MODES = (ONNX, ONNX_INT8, ONNX_INT8_UNCHECKED)

#: ``onnx-int8`` recomputes in float32 every row whose int8 top-two
#: probability margin is below this. On default-sentiment (12,999 suite
#: texts) 0.2 sends 6.9% of the texts to float32 and leaves 99.97% argmax
#: agreement with float32, against 98.66% for int8 alone; docs/scale.md.
RECHECK_MARGIN = 0.2

#: ONNX opset of the export (ORT 1.17+ runs it; LayerNormalization is native).
OPSET = 17

def require_onnxruntime():
    """Import onnxruntime, or raise a ModelError saying how to install it."""
    try:
        import onnxruntime
    except ImportError as e:  # pragma: no cover - dependency missing
        raise ModelError(f"dtype 'onnx' / 'onnx-int8' needs onnxruntime and onnx ({e}): "
                         "pip install onnxruntime onnx") from None
    return onnxruntime


def onnx_info(mode: str, recheck: str | None = None) -> dict:
    """What an ONNX path computes, for prediction-cache fingerprints;
    ``recheck`` says which outputs ``onnx-int8`` recomputes in float32
    (default: the classifiers' rule, :data:`RECHECK_MARGIN`)."""
    from importlib.metadata import PackageNotFoundError, version

    vers = {}
    for dist in ("onnxruntime", "onnx"):
        try:
            vers[dist] = version(dist)
        except PackageNotFoundError:  # pragma: no cover
            vers[dist] = None
    if mode == ONNX:
        return {"scheme": "ONNX Runtime float32", "opset": OPSET, **vers}
    scheme = "ONNX Runtime, dynamic int8 weights per channel on every weight MatMul"
    if mode == ONNX_INT8:
        scheme += "; recomputed in float32: " + (
            recheck or f"rows whose top-two class probabilities are closer than {RECHECK_MARGIN}")
    return {"scheme": scheme, "opset": OPSET, **vers}


def top2_margin(p: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Per row, the smallest gap between the two largest probabilities over
    the last axis of ``p`` (``(rows, classes)``, or ``(rows, positions,
    classes)`` with ``mask`` ``(rows, positions)`` marking the positions
    that count; a row without one gets ``inf``)."""
    if p.shape[-1] < 2:
        return np.full(p.shape[:1], np.inf)
    top = np.partition(p, -2, axis=-1)
    gap = top[..., -1] - top[..., -2]
    if gap.ndim == 1:
        return gap
    if mask is not None:
        gap = np.where(np.asarray(mask, dtype=bool), gap, np.inf)
    return gap.min(axis=1)


def softmax_margin(scores: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """:func:`top2_margin` of the softmax of ``scores`` (logits) over the
    last axis."""
    z = scores.astype(np.float64, copy=True)
    z -= z.max(axis=-1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=-1, keepdims=True)
    return top2_margin(p, mask)


def _forward_module(module, fn: Callable):
    """A torch module owning ``module`` whose forward is ``fn(*inputs)``."""
    import torch

    class Forward(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.owner = module

        def forward(self, *args):
            return fn(*args)

    return Forward().eval()


class OrtFunction:
    """A torch forward pass exported to ONNX and run by ONNX Runtime.

    Parameters
    ----------
    module : torch.nn.Module
        Owns the weights (float32, eval mode, on the CPU).
    fn : callable
        ``fn(*tensors) -> tensor``: the computation to export, given the
        inputs in ``input_names`` order (e.g. ``lambda ids, mask:
        model(input_ids=ids, attention_mask=mask).logits``).
    example : dict of str -> torch.Tensor
        Example inputs (batch and sequence axes of size > 1), in order.
    dynamic : dict of str -> dict of int -> str
        Dynamic axes of the inputs and of the output ``"out"``.
    mode : "onnx", "onnx-int8" or "onnx-int8-unchecked"
    threads : int, optional
        Intra-op threads; default ``torch.get_num_threads()``.
    margin : callable, optional
        ``margin(out, feed) -> (rows,)``: how sure each row of an output is
        (e.g. :func:`softmax_margin` of its logits). With ``"onnx-int8"``,
        rows whose int8 margin is below ``recheck`` are recomputed by a
        float32 session; without ``margin`` nothing is re-checked.
    recheck : float
        The margin below which ``"onnx-int8"`` recomputes a row in float32
        (default :data:`RECHECK_MARGIN`).

    Calling it with numpy arrays or tensors (keyword per input name)
    returns the output as a float32 numpy array. ``rows`` and
    ``rechecked`` count the rows computed and those recomputed in float32.
    """

    def __init__(self, module, fn: Callable, example: dict, dynamic: dict, *, mode: str = ONNX,
                 threads: int | None = None, margin: Callable | None = None, recheck: float = RECHECK_MARGIN):
        import torch

        if mode not in ONNX_MODES:
            raise ModelError(f"unknown ONNX mode {mode!r}; use one of {', '.join(ONNX_MODES)}")
        ort = require_onnxruntime()
        self.mode = mode
        self.input_names = list(example)
        wrapper = _forward_module(module, fn)
        with tempfile.TemporaryDirectory(prefix="bias_suite-onnx-") as tmp:
            f32 = Path(tmp) / "model.onnx"
            with warnings.catch_warnings(), torch.inference_mode(False), torch.no_grad(), _eager_attention(module):
                # The TorchScript exporter warns about its own deprecation and about
                # Python-side shape checks it traces as constants (padding offsets
                # that are 0 for every encoder input); the tests compare the outputs
                # with torch's at other shapes.
                warnings.simplefilter("ignore")
                try:
                    torch.onnx.export(wrapper, tuple(example[k] for k in self.input_names), str(f32),
                                      input_names=self.input_names, output_names=["out"],
                                      dynamic_axes=dynamic, opset_version=OPSET, dynamo=False,
                                      do_constant_folding=True)
                except Exception as e:
                    raise ModelError(f"could not export the model to ONNX: {type(e).__name__}: {e}") from e
            so = ort.SessionOptions()
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            so.intra_op_num_threads = int(threads or torch.get_num_threads())
            so.inter_op_num_threads = 1
            so.log_severity_level = 3
            checking = mode == ONNX_INT8 and margin is not None and recheck > 0
            if checking or os.environ.get("OMP_WAIT_POLICY", "").upper() == "PASSIVE":
                # two sessions take turns (or another process shares the cores, as OMP_WAIT_POLICY=PASSIVE
                # says): a pool spinning after its turn would hold the cores the other needs (docs/scale.md:
                # the re-checked int8 path with and without spinning)
                so.add_session_config_entry("session.intra_op.allow_spinning", "0")

            def session(path):  # reads the file now; the temporary folder can go afterwards
                return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])

            self.check_session = None
            if mode == ONNX:
                self.session = session(f32)
            else:
                q = Path(tmp) / "model-int8.onnx"
                quantize_matmuls(f32, q)
                self.session = session(q)
                if checking:
                    self.check_session = session(f32)
        self.margin, self.recheck = margin, float(recheck)
        self.rows = self.rechecked = 0
        known = {i.name for i in self.session.get_inputs()}
        # inputs the graph does not use (e.g. token_type_ids of a model that ignores them) are dropped by the export
        self._feed_names = [k for k in self.input_names if k in known]

    def __call__(self, **inputs: Any) -> np.ndarray:
        feed = {}
        for k in self._feed_names:
            v = inputs[k]
            feed[k] = v.numpy() if hasattr(v, "numpy") else np.asarray(v)
        out = self.session.run(None, feed)[0]
        self.rows += len(out)
        if self.check_session is not None and len(out):
            rows = np.flatnonzero(self.margin(out, feed) < self.recheck)
            if len(rows):
                out[rows] = self.check_session.run(None, {k: v[rows] for k, v in feed.items()})[0]
                self.rechecked += len(rows)
        return out


@contextlib.contextmanager
def _eager_attention(module):
    """Export the transformers encoders inside ``module`` with their plain
    ("eager") attention: its graph has no NaN guards and fewer nodes than
    that of PyTorch's scaled-dot-product attention, and runs slightly
    faster in ONNX Runtime (3% on 1,500 suite texts, 2 threads, quiet
    machine); the arithmetic is the same up to float rounding. The previous
    implementation is restored after the export."""
    changed = []
    for m in module.modules():
        config = getattr(m, "config", None)
        setter = getattr(m, "set_attn_implementation", None)
        before = getattr(config, "_attn_implementation", None)
        if setter is None or before in (None, "eager"):
            continue
        try:
            setter("eager")
        except Exception:  # pragma: no cover - an architecture without eager attention keeps its own
            continue
        changed.append((setter, before))
    try:
        yield
    finally:
        for setter, before in changed:
            setter(before)


def weight_matmuls(model_path: os.PathLike) -> list[str]:
    """Names of the MatMul nodes of an exported graph that multiply by a
    constant weight (the linear layers; not attention's query-key and
    probability-value products)."""
    import onnx

    m = onnx.load(str(model_path))
    consts = {i.name for i in m.graph.initializer}
    return [n.name for n in m.graph.node if n.op_type == "MatMul" and any(i in consts for i in n.input)]


def quantize_matmuls(src: os.PathLike, dst: os.PathLike, nodes: Sequence[str] | None = None) -> list[str]:
    """Dynamic int8 quantization (per-channel int8 weights, activations
    quantized per batch) of the weight MatMuls of ``src`` (default: all of
    them, :func:`weight_matmuls`) written to ``dst``; returns the quantized
    node names.

    Raises
    ------
    ModelError
        When the graph has no such MatMul.
    """
    from onnxruntime.quantization import QuantType, quantize_dynamic

    nodes = list(weight_matmuls(src) if nodes is None else nodes)
    if not nodes:
        raise ModelError("dtype 'onnx-int8' found no weight MatMul to quantize in the exported graph; use dtype 'onnx'")
    quiet = _DropRecords("pre-processing before quantization")
    logging.getLogger().addFilter(quiet)    # quantize_dynamic advises shape inference on the root logger
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8, per_channel=True,
                             nodes_to_quantize=nodes)
    finally:
        logging.getLogger().removeFilter(quiet)
    return nodes


class _DropRecords(logging.Filter):
    """Drops log records whose message contains ``text``."""

    def __init__(self, text: str):
        super().__init__()
        self.text = text

    def filter(self, record: logging.LogRecord) -> bool:
        return self.text not in record.getMessage()

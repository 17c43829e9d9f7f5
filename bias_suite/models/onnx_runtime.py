"""ONNX Runtime inference on the CPU for the transformers models.

``dtype="onnx"`` (float32) and ``dtype="onnx-int8"`` (int8 weights for the
feed-forward matrices) load the float32 torch model as usual, export its
forward pass with ``torch.onnx.export`` (the TorchScript exporter: it needs
no package beyond ``onnx``), and run it with an ONNX Runtime session at
full graph optimization (fused attention, layer norms and GELU). What runs
is still the same weights and the same arithmetic up to float rounding, so
``onnx`` agrees with the torch float32 model to about 1e-6 in probability;
``onnx-int8`` trades that for speed. docs/scale.md has the figures.

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

__all__ = ["ONNX", "ONNX_INT8", "ONNX_MODES", "OrtFunction", "onnx_info", "require_onnxruntime"]

ONNX = "onnx"
ONNX_INT8 = "onnx-int8"
ONNX_MODES = (ONNX, ONNX_INT8)

#: ONNX opset of the export (ORT 1.17+ runs it; LayerNormalization is native).
OPSET = 17

#: ``onnx-int8`` quantizes only the MatMuls of the feed-forward blocks
#: (``intermediate`` / ``output.dense`` of each BERT or RoBERTa layer,
#: ``ffn.lin1`` / ``ffn.lin2`` of DistilBERT; two thirds of the
#: weights of a BERT layer), and leaves the attention projections, the
#: pooler and the classifier head in float32. On default-sentiment (3,000
#: suite texts) this kept 98.6% argmax agreement with float32, against
#: 98.4% with every MatMul int8; docs/scale.md has the full figures.
FFN_PATTERNS = ("intermediate/", "output/dense", "ffn/")


def require_onnxruntime():
    """Import onnxruntime, or raise a ModelError saying how to install it."""
    try:
        import onnxruntime
    except ImportError as e:  # pragma: no cover - dependency missing
        raise ModelError(f"dtype 'onnx' / 'onnx-int8' needs onnxruntime and onnx ({e}): "
                         "pip install onnxruntime onnx") from None
    return onnxruntime


def onnx_info(mode: str) -> dict:
    """What an ONNX path computes, for prediction-cache fingerprints."""
    from importlib.metadata import PackageNotFoundError, version

    vers = {}
    for dist in ("onnxruntime", "onnx"):
        try:
            vers[dist] = version(dist)
        except PackageNotFoundError:  # pragma: no cover
            vers[dist] = None
    scheme = ("ONNX Runtime float32" if mode == ONNX else
              "ONNX Runtime, dynamic int8 weights per channel on the feed-forward MatMuls")
    return {"scheme": scheme, "opset": OPSET, **vers}


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
    mode : "onnx" or "onnx-int8"
    threads : int, optional
        Intra-op threads; default ``torch.get_num_threads()``.

    Calling it with numpy arrays or tensors (keyword per input name)
    returns the output as a float32 numpy array.
    """

    def __init__(self, module, fn: Callable, example: dict, dynamic: dict, *, mode: str = ONNX,
                 threads: int | None = None):
        import torch

        if mode not in ONNX_MODES:
            raise ModelError(f"unknown ONNX mode {mode!r}; use {ONNX!r} or {ONNX_INT8!r}")
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
            path = f32
            if mode == ONNX_INT8:
                path = Path(tmp) / "model-int8.onnx"
                quantize_ffn(f32, path)
            so = ort.SessionOptions()
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            so.intra_op_num_threads = int(threads or torch.get_num_threads())
            so.inter_op_num_threads = 1
            so.log_severity_level = 3
            # the session reads the file now; the temporary folder can go afterwards
            self.session = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        known = {i.name for i in self.session.get_inputs()}
        # inputs the graph does not use (e.g. token_type_ids of a model that ignores them) are dropped by the export
        self._feed_names = [k for k in self.input_names if k in known]

    def __call__(self, **inputs: Any) -> np.ndarray:
        feed = {}
        for k in self._feed_names:
            v = inputs[k]
            feed[k] = v.numpy() if hasattr(v, "numpy") else np.asarray(v)
        return self.session.run(None, feed)[0]


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


def ffn_matmuls(model_path: os.PathLike) -> list[str]:
    """Names of the MatMul nodes with a constant weight in the feed-forward
    blocks of an exported encoder (node names follow the torch module path)."""
    import onnx

    m = onnx.load(str(model_path))
    consts = {i.name for i in m.graph.initializer}
    out = []
    for node in m.graph.node:
        if node.op_type != "MatMul" or not any(i in consts for i in node.input):
            continue
        name = node.name.replace(".", "/")
        if any(p in name for p in FFN_PATTERNS) and "attention" not in name:
            out.append(node.name)
    return out


def quantize_ffn(src: os.PathLike, dst: os.PathLike, nodes: Sequence[str] | None = None) -> list[str]:
    """Dynamic int8 quantization (per-channel weights) of the feed-forward
    MatMuls of ``src`` written to ``dst``; returns the quantized node names.

    Raises
    ------
    ModelError
        When the graph has no such MatMul (an architecture whose node names
        do not follow the BERT module layout).
    """
    from onnxruntime.quantization import QuantType, quantize_dynamic

    nodes = list(ffn_matmuls(src) if nodes is None else nodes)
    if not nodes:
        raise ModelError("dtype 'onnx-int8' found no feed-forward MatMul to quantize in the exported graph; "
                         "use dtype 'onnx'")
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

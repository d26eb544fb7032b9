"""mxp.models: pretrained models run by mxp's operations on NumPy arrays.

``mxp.models.minilm``: a BERT encoder (all-MiniLM-L6-v2 and any model of
its architecture) in float32, bfloat16, float16, float8, int8 and the MX
formats (docs/minilm.md).  Nothing here is imported by ``import mxp``.
"""

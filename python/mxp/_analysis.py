"""Precision analysis on NumPy arrays: mxp.compare, mxp.roundtrip and
mxp.recommend_dtype (docs/analysis.md defines every metric)."""
import re

import numpy as np

from . import _mxp
from ._api import Result

class CompareResult(Result):
    """Every metric of mxp_compare as attributes and keys (histogram and
    histogram_edges are arrays)."""

    def __repr__(self):
        return (f"CompareResult(max_rel_error={self.max_rel_error:.3g}, mean_rel_error={self.mean_rel_error:.3g}, "
                f"psnr_db={self.psnr_db:.2f}, snr_db={self.snr_db:.2f}, cosine={self.cosine_similarity:.6f}, "
                f"max_ulp={self.max_ulp:.3g}, nan_mismatches={self.nan_mismatches}, "
                f"inf_mismatches={self.inf_mismatches}, count={self.count})")


def compare(reference, test):
    """How far test is from reference (same shape, any dtypes), in float64."""
    return CompareResult(_mxp._compare(np.asarray(reference), np.asarray(test)))


class RoundtripTable(list):
    """One record per dtype: dtype, bytes, overflow, underflow_to_zero,
    subnormal, nan and the compare metrics of x against x through it."""

    def __str__(self):
        head = f"{'dtype':<14} {'bytes':>10} {'max rel err':>12} {'mean rel err':>12} {'PSNR dB':>8} " \
               f"{'overflow':>9} {'to zero':>8}"
        lines = [head]
        for r in self:
            lines.append(f"{r.dtype:<14} {r.bytes:>10} {r.max_rel_error:>12.3g} {r.mean_rel_error:>12.3g} "
                         f"{r.psnr_db:>8.2f} {r.overflow:>9} {r.underflow_to_zero:>8}")
        return "\n".join(lines)


def _row(d):
    r = Result({k: v for k, v in d.items() if k != "report"})
    r.update(d["report"])
    return r


def roundtrip(x, dtypes=None):
    """x converted to each dtype (nearest even) and compared with x: a
    printable RoundtripTable.  dtypes default: float8_e4m3fn, float8_e5m2,
    float16, bfloat16, float32, float64."""
    dtypes = list(dtypes) if dtypes is not None else list(_mxp.ADVISOR_CANDIDATES)  # mxp_advisor_candidates()
    return RoundtripTable(_row(d) for d in _mxp._roundtrip(np.asarray(x), dtypes))


_REQ = re.compile(r"^\s*(psnr|relerr)\s*(>=|<=)\s*([0-9.eE+-]+)\s*$|^\s*no-overflow\s*$")


def recommend_dtype(x, require="psnr>=40", candidates=None):
    """The smallest float dtype whose round trip of x meets require:
    "psnr>=DB", "relerr<=E" (max relative error) or "no-overflow".
    Returns a Result: dtype, reason (a sentence), row (its round trip).

    candidates: None, mxp_recommend_dtype's six (float8_e4m3fn,
    float8_e5m2, float16, bfloat16, float32, float64); "all", every float
    storage format mxp has, smallest first (float4_e2m1fn, float6_e2m3fn,
    float6_e3m2fn, float8_e4m3fn, float8_e4m3, float8_e4m3fnuz,
    float8_e4m3b11fnuz, float8_e5m2, float8_e5m2fnuz, float8_e3m4, float16,
    bfloat16, float32, float64: mxp_advisor_candidates_all); or a sequence
    of float dtypes (names, NumPy or mxp dtypes), each once, in any order:
    the smallest by storage bits wins, at equal bits the better metric
    (mxp_recommend_dtype_among).  A name mxp does not know is a
    TypeError, as is an integer dtype; an empty list or a dtype given twice
    a ValueError; so is a requirement that none of the candidates meets (the
    message names the closest)."""
    m = _REQ.match(require) if isinstance(require, str) else None
    if not m:
        raise ValueError(f"require {require!r}: expected 'psnr>=DB', 'relerr<=E' or 'no-overflow'")
    if m.group(1) == "psnr" and m.group(2) == ">=":
        kind, value = _mxp.REQUIRE_MIN_PSNR, float(m.group(3))
    elif m.group(1) == "relerr" and m.group(2) == "<=":
        kind, value = _mxp.REQUIRE_MAX_REL_ERROR, float(m.group(3))
    elif m.group(1) is None:
        kind, value = _mxp.REQUIRE_NO_OVERFLOW, 0.0
    else:
        raise ValueError(f"require {require!r}: psnr takes >=, relerr takes <=")
    if candidates is None:
        d = _mxp._recommend(np.asarray(x), kind, value)
    else:
        if isinstance(candidates, str):
            if candidates != "all":
                raise ValueError(f"candidates {candidates!r}: expected None, 'all' or a sequence of dtypes")
            candidates = _mxp._advisor_candidates_all()
        elif isinstance(candidates, (bytes, np.dtype, type)) or not hasattr(candidates, "__iter__"):
            raise TypeError(f"candidates {candidates!r}: expected None, 'all' or a sequence of dtypes")
        d = _mxp._recommend_among(np.asarray(x), kind, value, list(candidates))
    return Result(dtype=d["dtype"], reason=d["reason"], row=_row(d["row"]))


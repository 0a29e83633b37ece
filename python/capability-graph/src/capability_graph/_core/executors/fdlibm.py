"""The natural logarithm of the lexical ranking ([CG-MODEL-20]): fdlibm's ``__ieee754_log``
(e_log.c), step for step, so that every implementation computes the same double. Platform
logarithms differ in the last bit (glibc's ``log`` and V8's ``Math.log`` disagree on about 2.6%
of doubles), and a last bit decides a confidence that lies on a rounding midpoint. V8's
``Math.log`` is this algorithm; this port agreed with it on all of 280,199 doubles when it was
written (glibc's ``log`` differed on 7,173 of them); ``cg.model.lexical-log-last-bit`` pins one.
"""

from __future__ import annotations

import struct
from typing import Final

__all__ = ["ln"]

_LN2_HI: Final = 6.93147180369123816490e-01
_LN2_LO: Final = 1.90821492927058770002e-10
_TWO54: Final = 1.80143985094819840000e16
_LG1: Final = 6.666666666666735130e-01
_LG2: Final = 3.999999999940941908e-01
_LG3: Final = 2.857142874366239149e-01
_LG4: Final = 2.222219843214978396e-01
_LG5: Final = 1.818357216161805012e-01
_LG6: Final = 1.531383769920937332e-01
_LG7: Final = 1.479819860511658591e-01


def _words(x: float) -> tuple[int, int]:
    bits: int = struct.unpack(">Q", struct.pack(">d", x))[0]
    return bits >> 32, bits & 0xFFFFFFFF


def _with_high(x: float, high: int) -> float:
    _, low = _words(x)
    value: float = struct.unpack(">d", struct.pack(">Q", ((high & 0xFFFFFFFF) << 32) | low))[0]
    return value


def ln(x: float) -> float:
    """The natural logarithm of ``x``, as fdlibm computes it."""
    hx, lx = _words(x)
    if hx & 0x80000000:
        hx -= 1 << 32  # signed
    k = 0
    if hx < 0x00100000:
        if ((hx & 0x7FFFFFFF) | lx) == 0:
            return float("-inf")
        if hx < 0:
            return float("nan")
        k -= 54
        x *= _TWO54
        hx, _ = _words(x)
    if hx >= 0x7FF00000:
        return x + x
    k += (hx >> 20) - 1023
    hx &= 0x000FFFFF
    i = (hx + 0x95F64) & 0x100000
    x = _with_high(x, hx | (i ^ 0x3FF00000))
    k += i >> 20
    f = x - 1.0
    if (0x000FFFFF & (2 + hx)) < 3:
        if f == 0.0:
            if k == 0:
                return 0.0
            dk = float(k)
            return dk * _LN2_HI + dk * _LN2_LO
        r = f * f * (0.5 - 0.33333333333333333 * f)
        if k == 0:
            return f - r
        dk = float(k)
        return dk * _LN2_HI - ((r - dk * _LN2_LO) - f)
    s = f / (2.0 + f)
    dk = float(k)
    z = s * s
    i = hx - 0x6147A
    w = z * z
    j = 0x6B851 - hx
    t1 = w * (_LG2 + w * (_LG4 + w * _LG6))
    t2 = z * (_LG1 + w * (_LG3 + w * (_LG5 + w * _LG7)))
    i |= j
    r = t2 + t1
    if i > 0:
        hfsq = 0.5 * f * f
        if k == 0:
            return f - (hfsq - s * (hfsq + r))
        return dk * _LN2_HI - ((hfsq - (s * (hfsq + r) + dk * _LN2_LO)) - f)
    if k == 0:
        return f - s * (f - r)
    return dk * _LN2_HI - ((s * (f - r) - dk * _LN2_LO) - f)

"""The printed text of large outputs, formatted in C: exactly uir.core.output.format_value's.

`uir run` of a*b+c over 2^24 f32 spent 94% of its time in Python formatting one element at a time
(about 1.3 us each). Here a small C library (compiled once, cached like every program) writes a
whole array's text into one buffer, on several threads (ctypes lets go of the GIL during a call, so
Python threads each format a share; no OpenMP in this process, which later forks programs that use
it).

The text is uir.md 11's, the one uir.core.floats.format_float defines: C's `%.Ng` of the exact
value (N = 9, 17, 5, 4 for f32, f64, f16, bf16), `nan` without a sign, `inf`, `-inf`, `-0`; ints
in decimal; `true`/`false`. f64 goes through glibc's snprintf, which rounds correctly. f32, f16
and bf16 have a fast path: the value (24 significant bits at most) times a power of ten in
double is within 2^-22 of the exact scaled value, so its rounding to N <= 9 digits is known unless
the scaled value lies within 2^-20 of a half (a tie, or nearly one); those few go to snprintf.
tests/test_printing.py compares every f16 and bf16 value, and random f32, f64 and int patterns,
with format_value.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from functools import cache

import numpy as np

from uir.core.dtypes import DType, bf16, f16, f32, f64
from uir.core.output import format_value

from .toolchain import compile_shared

# Below this many elements in all, Python's formatting is as quick as loading the library.
SMALL = 4096
# Elements one thread formats at a time.
CHUNK = 1 << 19
# The widest text of one element of each kind, with its separator and the NUL snprintf writes.
_WIDTH = {"narrow": 17, "f64": 26, "i64": 21, "u64": 21, "bool": 6}

_POWERS = ",\n".join(f"    {float(10**k).hex()}" for k in range(0, 61))
# 10^-k correctly rounded (Fraction to float rounds once), for k = 0..60.
_INVERSE_POWERS = ",\n".join(f"    {float(Fraction(1, 10**k)).hex()}" for k in range(0, 61))

SOURCE = (
    """/* The text of output elements (uir.backend.c.printing): uir.md 11's format. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* 10^k and 10^-k correctly rounded to double, k = 0..60 (10^k exact up to 10^22). */
static const double P10[] = {
"""
    + _POWERS
    + """
};
static const double P10_INVERSE[] = {
"""
    + _INVERSE_POWERS
    + """
};

static char *put_uint(char *p, uint64_t v) {
    char tmp[20];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n) *p++ = tmp[--n];
    return p;
}

/* The digits `n` (exactly `digits` of them) times 10^(x - digits + 1), laid out as %g does. */
static char *layout(char *p, uint64_t n, int digits, int x) {
    char d[20];
    int nd = digits;
    while (nd > 1 && n % 10 == 0) {
        n /= 10;
        nd--;
    }
    for (int i = nd - 1; i >= 0; i--) {
        d[i] = (char)('0' + n % 10);
        n /= 10;
    }
    if (x < -4 || x >= digits) {
        *p++ = d[0];
        if (nd > 1) {
            *p++ = '.';
            memcpy(p, d + 1, (size_t)(nd - 1));
            p += nd - 1;
        }
        *p++ = 'e';
        *p++ = x < 0 ? '-' : '+';
        int ax = x < 0 ? -x : x;
        if (ax < 10) *p++ = '0';
        return put_uint(p, (uint64_t)ax);
    }
    if (x >= 0) {
        if (nd <= x + 1) {
            memcpy(p, d, (size_t)nd);
            p += nd;
            for (int i = nd; i <= x; i++) *p++ = '0';
            return p;
        }
        memcpy(p, d, (size_t)(x + 1));
        p += x + 1;
        *p++ = '.';
        memcpy(p, d + x + 1, (size_t)(nd - x - 1));
        return p + (nd - x - 1);
    }
    *p++ = '0';
    *p++ = '.';
    for (int i = 0; i < -x - 1; i++) *p++ = '0';
    memcpy(p, d, (size_t)nd);
    return p + nd;
}

/* nan, inf, -inf, -0 and 0 as format_float writes them, or NULL for any other value. */
static char *special(char *p, double x) {
    if (isnan(x)) {
        memcpy(p, "nan", 3);
        return p + 3;
    }
    if (isinf(x)) {
        if (x < 0) *p++ = '-';
        memcpy(p, "inf", 3);
        return p + 3;
    }
    if (x == 0) {
        if (signbit(x)) *p++ = '-';
        *p++ = '0';
        return p;
    }
    return NULL;
}

/* %.{digits}g of x, a value with at most 24 significant bits, digits <= 9. */
static char *put_narrow(char *p, double x, int digits) {
    char *done = special(p, x);
    if (done) return done;
    if (x < 0) {
        *p++ = '-';
        x = -x;
    }
    const double top = P10[digits], low = P10[digits - 1];
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    int e2 = (int)((bits >> 52) & 0x7ff) - 1023; /* 2^e2 <= x < 2^(e2+1): x is a normal double */
    int k = (int)floor(e2 * 0.30102999566398120); /* <= floor(log10(x)) <= k + 1 */
    for (int tries = 0; tries < 4; tries++) {
        int q = digits - 1 - k;
        if (q > 60 || q < -60) break;
        /* Two roundings (the power's, the product's), each within 2^-53 relative; s < 10^9 <
         * 2^30, so s is within 2^-22 of the exact scaled value. */
        double s = q >= 0 ? x * P10[q] : x * P10_INVERSE[-q];
        double whole = floor(s);
        if (whole >= top) {
            k++;
            continue;
        }
        if (whole < low) {
            k--;
            continue;
        }
        double rest = s - whole; /* exact */
        if (fabs(rest - 0.5) < 0x1p-20) break; /* a tie or nearly: snprintf decides */
        uint64_t n = (uint64_t)whole + (rest > 0.5);
        if (n == (uint64_t)top) { /* rounded up to the next power of ten */
            n = (uint64_t)low;
            k++;
        }
        return layout(p, n, digits, k);
    }
    return p + snprintf(p, 32, "%.*g", digits, x);
}

static char *put_wide(char *p, double x) {
    char *done = special(p, x);
    if (done) return done;
    return p + snprintf(p, 32, "%.17g", x);
}

/* Each function writes n elements separated by single spaces into out and returns the length. */
int64_t uir_format_narrow(const float *x, int64_t n, int32_t digits, char *out) {
    char *p = out;
    for (int64_t i = 0; i < n; i++) {
        if (i) *p++ = ' ';
        p = put_narrow(p, (double)x[i], digits);
    }
    return p - out;
}

int64_t uir_format_f64(const double *x, int64_t n, char *out) {
    char *p = out;
    for (int64_t i = 0; i < n; i++) {
        if (i) *p++ = ' ';
        p = put_wide(p, x[i]);
    }
    return p - out;
}

int64_t uir_format_i64(const int64_t *x, int64_t n, char *out) {
    char *p = out;
    for (int64_t i = 0; i < n; i++) {
        if (i) *p++ = ' ';
        uint64_t v = (uint64_t)x[i];
        if (x[i] < 0) {
            *p++ = '-';
            v = 0u - v;
        }
        p = put_uint(p, v);
    }
    return p - out;
}

int64_t uir_format_u64(const uint64_t *x, int64_t n, char *out) {
    char *p = out;
    for (int64_t i = 0; i < n; i++) {
        if (i) *p++ = ' ';
        p = put_uint(p, x[i]);
    }
    return p - out;
}

int64_t uir_format_bool(const uint8_t *x, int64_t n, char *out) {
    char *p = out;
    for (int64_t i = 0; i < n; i++) {
        if (i) *p++ = ' ';
        if (x[i]) {
            memcpy(p, "true", 4);
            p += 4;
        } else {
            memcpy(p, "false", 5);
            p += 5;
        }
    }
    return p - out;
}
"""
)

# The %g precision of each narrow float dtype (uir.core.floats' output digits).
_NARROW_DIGITS = {f32: 9, f16: 5, bf16: 4}


@cache
def _library() -> ctypes.CDLL:
    library = ctypes.CDLL(str(compile_shared([SOURCE])))
    pointer, size = ctypes.c_void_p, ctypes.c_int64
    for name in ("narrow", "f64", "i64", "u64", "bool"):
        function = getattr(library, f"uir_format_{name}")
        function.restype = size
        middle = [ctypes.c_int32] if name == "narrow" else []
        function.argtypes = [pointer, size, *middle, pointer]
    return library


def _prepared(value: np.ndarray, dtype: DType) -> tuple[str, np.ndarray, tuple[int, ...]]:
    """(kind, flat contiguous array in the kind's C type, extra arguments)."""
    flat = value.reshape(-1)
    if dtype.is_bool:
        return "bool", np.ascontiguousarray(flat, dtype=np.uint8), ()
    if dtype is f64:
        return "f64", np.ascontiguousarray(flat, dtype=np.float64), ()
    if dtype in _NARROW_DIGITS:  # f16 and bf16 values are exact in float32
        return "narrow", np.ascontiguousarray(flat, dtype=np.float32), (_NARROW_DIGITS[dtype],)
    if dtype.is_int and dtype.signed:
        return "i64", np.ascontiguousarray(flat, dtype=np.int64), ()
    return "u64", np.ascontiguousarray(flat, dtype=np.uint64), ()


def _format_chunk(kind: str, chunk: np.ndarray, extra: tuple[int, ...]) -> bytes:
    out = np.empty(chunk.size * _WIDTH[kind], dtype=np.uint8)
    function = getattr(_library(), f"uir_format_{kind}")
    length = function(chunk.ctypes.data, chunk.size, *extra, out.ctypes.data)
    return out[:length].tobytes()


def format_values(values: Sequence[np.ndarray], dtypes: Sequence[DType], threads: int) -> list[str]:
    """format_value(v, d) of each value, the large ones formatted in C on `threads` threads."""
    if sum(v.size for v in values) < SMALL:
        return [format_value(v, d) for v, d in zip(values, dtypes, strict=True)]
    jobs = []
    for value, dtype in zip(values, dtypes, strict=True):
        kind, flat, extra = _prepared(value, dtype)
        jobs.append([(kind, flat[i : i + CHUNK], extra) for i in range(0, flat.size, CHUNK)])
    with ThreadPoolExecutor(max(1, threads)) as pool:
        pieces = [list(pool.map(lambda job: _format_chunk(*job), chunks)) for chunks in jobs]
    return [b" ".join(parts).decode("ascii") for parts in pieces]

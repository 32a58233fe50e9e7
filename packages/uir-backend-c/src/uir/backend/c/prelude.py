"""The C helper functions a rendered program may call, each emitted only when used.

Each helper keeps one C99 construct defined for every input (uir.md 4 and 6.5); the comment in its
body says which undefined or implementation-defined behaviour it avoids. Helpers are `static inline`
so an unused one costs nothing and a used one compiles to the plain instruction sequence.
"""

from __future__ import annotations

from collections.abc import Callable

from uir.core.dtypes import DType, bf16, f16

from .abi import value_ctype

# Unsigned work type of each int width: arithmetic in it wraps instead of overflowing (C99 6.2.5p9).
# Types narrower than int would promote to *signed* int, where 65535 * 65535 overflows, so they
# compute in uint32_t and truncate.


def work_type(dtype: DType) -> str:
    """The unsigned C type an int dtype computes in."""
    return "uint64_t" if dtype.bits == 64 else "uint32_t"


def bits_type(dtype: DType) -> str:
    """The unsigned C type holding the bit pattern of `dtype`."""
    return f"uint{dtype.bits}_t"


def _limit(dtype: DType, which: str) -> str:
    prefix = "INT" if dtype.signed else "UINT"
    return f"{prefix}{dtype.bits}_{which}"


def _as_signed(d: DType) -> str:
    t = value_ctype(d)
    return f"""\
/* The signed value with these bits. A cast would be implementation-defined (C99 6.3.1.3p3). */
static inline {t} uir_as_{d.name}({bits_type(d)} bits) {{
    {t} value;
    memcpy(&value, &bits, sizeof value);
    return value;
}}"""


def _idiv(d: DType) -> str:
    t = value_ctype(d)
    if not d.signed:
        return f"""\
/* x / 0 is all ones (uir.md 4); C leaves it undefined. */
static inline {t} uir_idiv_{d.name}({t} a, {t} b) {{
    return b == 0 ? {_limit(d, "MAX")} : ({t})(a / b);
}}"""
    return f"""\
/* x / 0 is -1 and MIN / -1 is MIN (uir.md 4); C leaves both undefined. */
static inline {t} uir_idiv_{d.name}({t} a, {t} b) {{
    if (b == 0) return -1;
    if (a == {_limit(d, "MIN")} && b == -1) return {_limit(d, "MIN")};
    return ({t})(a / b);
}}"""


def _mod(d: DType) -> str:
    t = value_ctype(d)
    minus_one = "\n    if (b == -1) return 0; /* MIN % -1 is undefined in C; every x % -1 is 0 */"
    return f"""\
/* x % 0 is x (uir.md 4); C leaves it undefined. */
static inline {t} uir_mod_{d.name}({t} a, {t} b) {{
    if (b == 0) return a;{minus_one if d.signed else ""}
    return ({t})(a % b);
}}"""


def _shr(d: DType) -> str:
    t = value_ctype(d)
    return f"""\
/* Arithmetic shift right. C99 makes >> of a negative value implementation-defined, so shift the
   complement, which is not negative, and complement back. */
static inline {t} uir_shr_{d.name}({t} a, {t} b) {{
    unsigned count = ({work_type(d)})b & {d.bits - 1}u;
    return ({t})(a < 0 ? ~(~a >> count) : a >> count);
}}"""


def _max_min(d: DType, is_max: bool) -> str:
    t = value_ctype(d)
    name = "max" if is_max else "min"
    zero = "signbit(a) ? b : a" if is_max else "signbit(a) ? a : b"
    better = ">" if is_max else "<"
    return f"""\
/* IEEE 754-2019 {name}imum: NaN propagates and -0 < +0. fmax{"f" if t == "float" else ""} \
returns the other operand for a NaN. */
static inline {t} uir_{name}_{t}({t} a, {t} b) {{
    if (a != a || b != b) return a + b;
    if (a == b) return {zero};
    return a {better} b ? a : b;
}}"""


def _float_to_int(src: str, d: DType) -> str:
    t = value_ctype(d)
    low = f"-0x1p{d.bits - 1}" if d.signed else "0.0"
    high = f"0x1p{d.bits - 1}" if d.signed else f"0x1p{d.bits}"
    return f"""\
/* Truncate and saturate, NaN to 0 (uir.md 4). C leaves out-of-range conversions undefined, so
   only values whose truncation fits are converted. Comparing in double is exact. */
static inline {t} uir_{src}_to_{d.name}({src} x) {{
    double d = x;
    if (d != d) return 0;
    if (d <= {low}) return {_limit(d, "MIN") if d.signed else "0"};
    if (d >= {high}) return {_limit(d, "MAX")};
    return ({t})d;
}}"""


def _round_small(d: DType) -> str:
    p, emax = d.mantissa, (1 << (d.exponent - 1)) - 1
    emin = 1 - emax
    return f"""\
/* x rounded once to {d.name} (p = {p}, exponents {emin}..{emax}), ties to even, overflow to inf.
   Callers compute in double: for + - * / and sqrt, double (p = 53 >= 2 * {p} + 2) then {d.name}
   gives the correctly rounded result. rint rounds to nearest even in the default mode. */
static inline float uir_round_{d.name}(double x) {{
    if (x != x || x == 0 || isinf(x)) return (float)x;
    int e;
    frexp(x, &e); /* |x| = m * 2^e with 0.5 <= m < 1 */
    int quantum = (e - 1 > {emin} ? e - 1 : {emin}) - {p - 1};
    double r = ldexp(rint(ldexp(x, -quantum)), quantum);
    if (fabs(r) >= 0x1p{emax + 1}) return x < 0 ? -INFINITY : INFINITY;
    return (float)r;
}}"""


def _f16_bits() -> str:
    return """\
/* The binary16 bits of a float holding an f16 value exactly. */
static inline uint16_t uir_f16_bits(float v) {
    uint16_t sign = signbit(v) ? 0x8000u : 0u;
    float a = fabsf(v);
    if (a != a) return (uint16_t)(sign | 0x7e00u);
    if (isinf(a)) return (uint16_t)(sign | 0x7c00u);
    if (a < 0x1p-14f) return (uint16_t)(sign | (uint16_t)(a * 0x1p24f)); /* subnormal or zero */
    uint32_t b;
    memcpy(&b, &a, sizeof b);
    uint32_t exponent = (b >> 23) - 127u + 15u, mantissa = (b >> 13) & 0x3ffu;
    return (uint16_t)(sign | (exponent << 10) | mantissa);
}"""


def _f16_value() -> str:
    return """\
/* The f16 value of binary16 bits, as a float (which holds it exactly). */
static inline float uir_f16_value(uint16_t h) {
    float sign = (h & 0x8000u) ? -1.0f : 1.0f;
    int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    if (exponent == 0) return sign * ldexpf((float)mantissa, -24);
    if (exponent == 31) return mantissa ? NAN : sign * INFINITY;
    return sign * ldexpf((float)(mantissa | 0x400), exponent - 25);
}"""


def _bf16_bits() -> str:
    return """\
/* The bfloat16 bits of a float holding a bf16 value exactly: its top half. */
static inline uint16_t uir_bf16_bits(float v) {
    if (v != v) return 0x7fc0u;
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    return (uint16_t)(b >> 16);
}"""


def _bf16_value() -> str:
    return """\
/* The bf16 value of bfloat16 bits, as a float. */
static inline float uir_bf16_value(uint16_t h) {
    uint32_t b = (uint32_t)h << 16;
    float v;
    memcpy(&v, &b, sizeof v);
    return v;
}"""


def _float_bits(t: str) -> str:
    u = "uint32_t" if t == "float" else "uint64_t"
    return f"""\
static inline {u} uir_bits_{t}({t} v) {{
    {u} b;
    memcpy(&b, &v, sizeof b);
    return b;
}}
static inline {t} uir_{t}_from_bits({u} b) {{
    {t} v;
    memcpy(&v, &b, sizeof v);
    return v;
}}"""


def _odd_double(src: str) -> str:
    magnitude = "a < 0 ? 0u - (uint64_t)a : (uint64_t)a" if src == "int64_t" else "a"
    return f"""\
/* A 64-bit int as a double rounded to odd: the dropped bits stick to the last kept bit, so one
   more rounding to a float of p <= 51 bits is the correct rounding of the int (double's own
   conversion would round twice). */
static inline double uir_odd_double_{src}({src} a) {{
    uint64_t m = {magnitude};
    int shift = 0;
    while ((m >> shift) >> 53) shift++;
    uint64_t kept = m >> shift;
    if (shift && (m & ((UINT64_C(1) << shift) - 1))) kept |= 1u;
    double d = ldexp((double)kept, shift);
    return {"a < 0 ? -d : d" if src == "int64_t" else "d"};
}}"""


def _alloc() -> str:
    return """\
/* A zeroed heap array of n elements, for arrays too big for the stack. The entry point returns
   nothing, so running out of memory cannot be reported but by abort(): the runtime names it. */
static inline void *uir_alloc(size_t n, size_t size) {
    void *p = calloc(n, size);
    if (p == NULL) abort();
    return p;
}"""


class Helpers:
    """The helpers a program uses, in the order first needed, each once."""

    def __init__(self) -> None:
        self._code: dict[str, str] = {}

    def use(self, name: str, make: Callable[[], str]) -> str:
        """Register helper `name` (made by `make` on first use) and return its name."""
        if name not in self._code:
            self._code[name] = make()
        return name

    def as_signed(self, d: DType) -> str:
        return self.use(f"uir_as_{d.name}", lambda: _as_signed(d))

    def idiv(self, d: DType) -> str:
        return self.use(f"uir_idiv_{d.name}", lambda: _idiv(d))

    def mod(self, d: DType) -> str:
        return self.use(f"uir_mod_{d.name}", lambda: _mod(d))

    def shr(self, d: DType) -> str:
        return self.use(f"uir_shr_{d.name}", lambda: _shr(d))

    def max_min(self, d: DType, is_max: bool) -> str:
        name = f"uir_{'max' if is_max else 'min'}_{value_ctype(d)}"
        return self.use(name, lambda: _max_min(d, is_max))

    def float_to_int(self, src: DType, d: DType) -> str:
        t = value_ctype(src)
        return self.use(f"uir_{t}_to_{d.name}", lambda: _float_to_int(t, d))

    def round_small(self, d: DType) -> str:
        return self.use(f"uir_round_{d.name}", lambda: _round_small(d))

    def odd_double(self, src: DType) -> str:
        t = value_ctype(src)
        return self.use(f"uir_odd_double_{t}", lambda: _odd_double(t))

    def alloc(self) -> str:
        return self.use("uir_alloc", _alloc)

    def to_bits(self, d: DType, expr: str) -> str:
        """The bit pattern of a value of float or int dtype `d`, as its unsigned bits type."""
        if d.is_int:
            return expr if not d.signed else f"({bits_type(d)}){expr}"
        if d in (f16, bf16):
            make = _f16_bits if d is f16 else _bf16_bits
            return f"{self.use(f'uir_{d.name}_bits', make)}({expr})"
        t = value_ctype(d)
        return f"{self.use(f'uir_bits_{t}', lambda: _float_bits(t))}({expr})"

    def from_bits(self, d: DType, expr: str) -> str:
        """The value of dtype `d` whose bit pattern is the unsigned `expr`."""
        if d.is_int:
            return expr if not d.signed else f"{self.as_signed(d)}({expr})"
        if d in (f16, bf16):
            make = _f16_value if d is f16 else _bf16_value
            return f"{self.use(f'uir_{d.name}_value', make)}({expr})"
        t = value_ctype(d)
        self.use(f"uir_bits_{t}", lambda: _float_bits(t))
        return f"uir_{t}_from_bits({expr})"

    def text(self) -> str:
        return "\n\n".join(self._code.values())

"""EXP2, LOG2 and SIN on f32 as C functions a loop vectorizes (spec/uir-week8.md section 6).

uir.md section 4 asks only for 2 ulp, so each is a polynomial, not libm's double function called
one element at a time. Every step is a float or int operation on values or bit patterns with no
branch (special inputs are selected at the end) and no call, so gcc -O3 vectorizes a loop
calling them; contraction is off (toolchain.FLAGS), so each result is the same bits on every
machine. The coefficients are scripts/fit_transcendentals.py's output: minimax fits of the
relative error, refitted after each rounding to f32. Accuracy, measured over every f32 input for
EXP2 and LOG2 and a dense sample for SIN, is stated in spec/uir-week8.md and pinned by
packages/uir-backend-c/tests/test_transcendental.py.
"""

from __future__ import annotations

EXP2 = """\
/* 2^x within 1 ulp (spec/uir-week8.md 6). x = k + f with k = rint(x), |f| <= 1/2 (exact), 2^f a
   degree-6 polynomial, and 2^k built in the exponent bits as two factors 2^k1 * 2^k2, each a
   normal float, so that one final rounding makes subnormal results and inf come out right.
   Clamping to [-150, 128] keeps k in range (2^-150 rounds to 0, 2^128 is inf) and NaN. */
static inline float uir_exp2_f32(float x) {
    float c = x < -150.0f ? -150.0f : x;
    c = c > 128.0f ? 128.0f : c;
    float shifted = c + 0x1.8p23f; /* rint(c) in the low mantissa bits, for |c| < 2^22 */
    float k = shifted - 0x1.8p23f;
    float f = c - k;
    float p = 0x1.417a9cp-13f;
    p = p * f + 0x1.5f0948p-10f;
    p = p * f + 0x1.3b2dd2p-7f;
    p = p * f + 0x1.c6af7ap-5f;
    p = p * f + 0x1.ebfbdcp-3f;
    p = p * f + 0x1.62e430p-1f;
    p = 1.0f + p * f;
    uint32_t bits;
    memcpy(&bits, &shifted, sizeof bits);
    uint32_t kb = bits - 0x4b400000u + 150u; /* k + 150, in [0, 278] for every non-NaN x */
    uint32_t e1 = ((kb >> 1) + 52u) << 23, e2 = ((kb - (kb >> 1)) + 52u) << 23;
    float s1, s2;
    memcpy(&s1, &e1, sizeof s1);
    memcpy(&s2, &e2, sizeof s2);
    return p * s1 * s2;
}"""

LOG2 = """\
/* log2(x) within 1 ulp (spec/uir-week8.md 6). x = m * 2^e with sqrt(1/2) <= m < sqrt(2) read
   from the bits (a subnormal x is first scaled by 2^23), log2(m) = r / ln 2 + r^2 Q(r) with
   r = m - 1 exact and Q in f32. Zero, negative, inf and NaN inputs are selected at the end. */
static inline float uir_log2_f32(float x) {
    int32_t small = x < 0x1p-126f;
    float y = small ? x * 0x1p23f : x;
    uint32_t bits;
    memcpy(&bits, &y, sizeof bits);
    /* the bits of m: an exponent of 0 or -1, so that m lands in [sqrt(1/2), sqrt(2)) */
    bits &= 0x7fffffffu; /* a negative x gives NaN below; its magnitude keeps the bits defined */
    uint32_t shifted = bits - 0x3f3504f3u; /* 0x3f3504f3: the f32 below sqrt(1/2) */
    uint32_t mbits = bits - (shifted & 0xff800000u);
    /* e = floor of shifted's exponent field as a signed value; 2^30 added keeps it unsigned */
    int32_t e = (int32_t)((shifted + 0x40000000u) >> 23) - 128 - (small ? 23 : 0);
    float m;
    memcpy(&m, &mbits, sizeof m);
    float r = m - 1.0f;
    float q = -0x1.c27716p-4f;
    q = q * r + 0x1.7d4f3ep-3f;
    q = q * r + -0x1.874838p-3f;
    q = q * r + 0x1.a30432p-3f;
    q = q * r + -0x1.eabce0p-3f;
    q = q * r + 0x1.277e46p-2f;
    q = q * r + -0x1.715a74p-2f;
    q = q * r + 0x1.ec7096p-2f;
    q = q * r + -0x1.715470p-1f;
    /* e + r / ln 2 + r^2 q summed in double and rounded once: in f32 the rounding of r / ln 2
       and of the sum alone would be a whole ulp near x = sqrt(1/2) */
    double rd = r;
    float result = (float)((double)e + (rd * 0x1.71547652b82fep0 + rd * rd * (double)q));
    result = x < 0.0f ? NAN : result;
    result = x == 0.0f ? -INFINITY : result;
    result = x == INFINITY ? INFINITY : result;
    return x != x ? x : result;
}"""

# sin r = r + r^3 S(r^2) and cos r = 1 - r^2/2 + r^4 C(r^2) on |r| <= pi/4, in double: their
# relative errors (2^-37 and 2^-33) vanish in the final rounding to f32.
_SIN = ("-0x1.5555554c71c53p-3", "0x1.1111086a5b1cep-7", "-0x1.a00f7f24d09c8p-13")
_SIN += ("0x1.6cd1f1e9badb7p-19",)
_COS = ("0x1.55554a114ae59p-5", "-0x1.6c0c339fbc15dp-10", "0x1.99eb9a38740c0p-16")

# 2/pi to 400 bits (2 / pi = 1 / (8 atan(1/5) - 2 atan(1/239)), Machin), enough for every table
# entry's 53 bits below 2^-46 at the smallest exponent, 2^-149.
_BITS = 400


def _atan_inverse(n: int, one: int) -> int:
    """atan(1/n) * one, by its series, in integers."""
    total, power, k, sign = 0, one // n, 1, 1
    while power:
        total += sign * (power // k)
        power //= n * n
        k, sign = k + 2, -sign
    return total


def _two_over_pi() -> int:
    """floor(2/pi * 2^_BITS), from pi to 64 guard bits more."""
    one = 1 << (_BITS + 64)
    pi = 16 * _atan_inverse(5, one) - 4 * _atan_inverse(239, one)
    return (2 * one << _BITS) // pi


def reduction_table() -> list[tuple[float, float, float]]:
    """Row b (a biased f32 exponent field): 2^e * 2/pi mod 4, e = max(b, 1) - 150, in three parts.

    An f32 x with exponent field b is M * 2^e for an integer M < 2^24. The parts are the fixed-
    point bits of weight 2^1..2^-22, 2^-23..2^-46, and the rest rounded to 53 bits: so M times
    each of the first two is exact in double, and x * 2/pi mod 4 is their sum plus a rounded
    third product, accurate to 2^-75 in absolute terms for every x."""
    from fractions import Fraction

    two_over_pi, rows = _two_over_pi(), []
    for b in range(256):
        e = max(b, 1) - 150
        v = (two_over_pi << e) if e >= 0 else (two_over_pi >> -e)
        v %= 4 << _BITS
        a0 = v >> (_BITS - 22)
        rest = v - (a0 << (_BITS - 22))
        a1 = rest >> (_BITS - 46)
        rest -= a1 << (_BITS - 46)
        rows.append((a0 / (1 << 22), a1 / (1 << 46), float(Fraction(rest, 1 << _BITS))))
    return rows


def sin_f32() -> str:
    """The C text of uir_sin_f32, with its reduction table."""
    table = reduction_table()
    parts = [", ".join(row[i].hex() for row in table) for i in range(3)]
    s3, s5, s7, s9 = _SIN
    c4, c6, c8 = _COS
    return f"""\
/* sin(x) within 1 ulp for every f32 x (spec/uir-week8.md 6), no fallback: the reduction needs no
   Cody-Waite range limit. x = M * 2^e (M < 2^24 an integer), and x * 2/pi mod 4 = M * T[e]
   mod 4, T[e] = 2^e * 2/pi mod 4 in three parts (transcendental.reduction_table): M times the
   first two is exact in double, so n = rint(x * 2/pi) mod 4 and the fraction f are exact but for
   the rounded third product (2^-75 absolute), and r = f * pi/2 is accurate to double precision
   even for the f32 closest to a multiple of pi/2. sin or cos of r, by n, in double, rounded once.
   Inf and NaN give NaN. */
static inline float uir_sin_f32(float x) {{
    /* one array a part: a vectorized loop gathers from each with the same index */
    static const double t0[256] = {{{parts[0]}}};
    static const double t1[256] = {{{parts[1]}}};
    static const double t2[256] = {{{parts[2]}}};
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    int64_t b = (int64_t)(bits >> 23 & 0xffu); /* 64-bit: gcc gathers doubles by 64-bit indices */
    uint32_t mantissa = bits & 0x7fffffu;
    double m = (double)(int32_t)(b ? mantissa | 0x800000u : mantissa);
    double p0 = m * t0[b];
    double quarter = p0 * 0.25 + 0x1.8p52 - 0x1.8p52; /* rint(p0 / 4), exact */
    double s = (p0 - 4.0 * quarter) + m * t1[b]; /* exact: 49 bits of 2^2..2^-46 */
    double shifted = s + 0x1.8p52;
    double n = shifted - 0x1.8p52;
    uint64_t n_bits;
    memcpy(&n_bits, &shifted, sizeof n_bits);
    double r = ((s - n) + m * t2[b]) * 0x1.921fb54442d18p0; /* pi/2 */
    double r2 = r * r;
    double sine = r + r * r2 * ({s3} + r2 * ({s5} + r2 * ({s7} + r2 * {s9})));
    double cosine = 1.0 - 0.5 * r2 + r2 * r2 * ({c4} + r2 * ({c6} + r2 * {c8}));
    double v = (n_bits & 1u) ? cosine : sine;
    v = (n_bits & 2u) ? -v : v;
    v = (bits >> 31) ? -v : v;
    return b == 0xff ? x - x : (float)v;
}}"""

"""EXP2, LOG2 and SIN on f32 as C functions a loop vectorizes (spec/uir-week8.md section 5).

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

import functools

EXP2 = """\
/* 2^x within 1 ulp (spec/uir-week8.md 5). x = k + f with k = rint(x), |f| <= 1/2 (exact), 2^f a
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
/* log2(x) within 1 ulp (spec/uir-week8.md 5). x = m * 2^e with sqrt(1/2) <= m < sqrt(2) read
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


# Exponent fields from LARGE up (|x| >= 2^23, where x is an even integer) reduce through the
# table; below it Cody-Waite in double: n = rint(|x| * 2/pi) < 2^23, so n * PIO2_HI (pi/2 to 29
# bits) is exact, and pi/2 - PIO2_HI rounded to double carries 53 more bits.
LARGE = 150
PIO2_HI = "0x1.921fb54p0"
PIO2_LO = "0x1.10b4611a62633p-30"


def reduction_table() -> list[tuple[int, int, int]]:
    """Row b - LARGE for each exponent field b >= LARGE: 2^e * 2/pi mod 4 with e = b - 150, as the
    integers A0, A1, A2 of A0 * 2^-22 + A1 * 2^-46 + A2 * 2^-99.

    An f32 x with exponent field b is M * 2^e for an integer M < 2^24. A0 and A1 are 24-bit
    fixed-point digits (weights 2^1..2^-22 and 2^-23..2^-46), so M times each is exact in double;
    A2 is the next 53 bits, truncated. x * 2/pi mod 4 is then exact to 2^-75 for every such x."""
    two_over_pi, rows = _two_over_pi(), []
    for b in range(LARGE, 256):  # 255 (inf, NaN) too: its row is read, its result unused
        v = (two_over_pi << (b - 150)) % (4 << _BITS)
        a0 = v >> (_BITS - 22)
        a1 = (v >> (_BITS - 46)) & 0xFFFFFF
        a2 = (v >> (_BITS - 99)) & ((1 << 53) - 1)
        rows.append((a0, a1, a2))
    return rows


@functools.cache
def sin_f32() -> str:
    """The C text of uir_sin_f32, with its reduction table (built once: about 20 ms)."""
    table = reduction_table()
    parts = [", ".join(str(row[i]) for row in table) for i in range(3)]
    s3, s5, s7, s9 = _SIN
    c4, c6, c8 = _COS
    return f"""\
/* sin(x) within 1 ulp for every f32 x (spec/uir-week8.md 5). |x| * 2/pi = n + f with n mod 4
   choosing sin or cos of r = f * pi/2, |r| <= pi/4, in double, rounded once. Below 2^23 the
   reduction is Cody-Waite in double: n < 2^23 and pi/2 in a 29-bit and a 53-bit part. From 2^23
   up, x = M * 2^e (M < 2^24) and x * 2/pi mod 4 = M * T[e] mod 4, T[e] = 2^e * 2/pi mod 4 in
   three fixed-point parts (transcendental.reduction_table): M times the first two is exact in
   double, so only the third product rounds. Both reductions run and one is selected, so the
   loop has no branch. Inf and NaN give NaN; -x gives -sin(x). */
static inline float uir_sin_f32(float x) {{
    /* integers below 2^53, exact as doubles; one array a part, so that a vectorized loop
       gathers from each with the same index */
    static const double t0[{len(table)}] = {{{parts[0]}}};
    static const double t1[{len(table)}] = {{{parts[1]}}};
    static const double t2[{len(table)}] = {{{parts[2]}}};
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    int64_t b = (int64_t)(bits >> 23 & 0xffu); /* 64-bit: gcc gathers by 64-bit indices */
    double a = fabs((double)x);
    /* |x| < 2^23: Cody-Waite */
    double near_shifted = a * 0x1.45f306dc9c883p-1 + 0x1.8p52; /* 2/pi */
    double near_n = near_shifted - 0x1.8p52;
    double near_r = (a - near_n * {PIO2_HI}) - near_n * {PIO2_LO};
    /* |x| >= 2^23: the table (an index clamped into it; the row is unused below 2^23) */
    /* a product, not ?:, or gcc loads the row only in the far lanes: a masked gather, which gcc
       12 does not vectorize */
    int64_t row = (int64_t)(b >= {LARGE}) * (b - {LARGE});
    double m = (double)(int32_t)((bits & 0x7fffffu) | 0x800000u);
    double p0 = m * (t0[row] * 0x1p-22);
    double quarter = p0 * 0.25 + 0x1.8p52 - 0x1.8p52; /* rint(p0 / 4), exact */
    double s = (p0 - 4.0 * quarter) + m * (t1[row] * 0x1p-46); /* exact: 49 bits */
    double far_shifted = s + 0x1.8p52;
    double far_n = far_shifted - 0x1.8p52;
    double f = (s - far_n) + m * (t2[row] * 0x1p-99);
    double far_r = f * 0x1.921fb54442d18p0; /* pi/2 */
    int64_t far = b >= {LARGE};
    double r = far ? far_r : near_r;
    double shifted = far ? far_shifted : near_shifted;
    uint64_t n_bits;
    memcpy(&n_bits, &shifted, sizeof n_bits); /* n mod 4 in the low bits */
    double r2 = r * r;
    double sine = r + r * r2 * ({s3} + r2 * ({s5} + r2 * ({s7} + r2 * {s9})));
    double cosine = 1.0 - 0.5 * r2 + r2 * r2 * ({c4} + r2 * ({c6} + r2 * {c8}));
    double v = (n_bits & 1u) ? cosine : sine;
    v = (n_bits & 2u) ? -v : v;
    v = (bits >> 31) ? -v : v;
    return b == 0xff ? x - x : (float)v;
}}"""

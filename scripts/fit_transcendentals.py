"""Fit the polynomial coefficients of the C backend's EXP2, LOG2 and SIN kernels.

Run `uv run python scripts/fit_transcendentals.py`: it prints each polynomial's coefficients (as
C hex literals, f32 or f64 as its kernel evaluates them) and its relative approximation error on
its interval, measured on a dense grid against numpy's float64 function. The coefficients in
packages/uir-backend-c/src/uir/backend/c/transcendental.py are this script's output.

Method: a weighted least-squares fit at Chebyshev nodes, refined by Lawson's iteration (each
node's weight grows with its error), which converges to the minimax (equi-ripple) polynomial of
the relative error. Coefficients fixed by the function (exp2's constant 1, sin's linear 1) stay
exact; an f32 kernel's coefficients are then rounded to f32 one at a time from the lowest
degree, refitting the rest after each rounding so that the later ones absorb the error.
"""

from __future__ import annotations

import numpy as np

NODES = 4000
ITERATIONS = 60


def lawson(basis, target, weight, x):
    """Coefficients minimising max |weight * (basis @ c - target)| over the nodes x."""
    a = basis(x)
    w = np.full(x.shape, 1.0 / x.size)
    c = np.zeros(a.shape[1])
    for _ in range(ITERATIONS):
        s = np.sqrt(w)
        c, *_ = np.linalg.lstsq(a * (s * weight)[:, None], s * weight * target(x), rcond=None)
        err = np.abs(weight * (a @ c - target(x)))
        w = w * err
        w /= w.sum()
    return c


def chebyshev_nodes(lo: float, hi: float) -> np.ndarray:
    k = np.arange(NODES)
    return (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (k + 0.5) / NODES)


def fit(powers, target, fixed, lo, hi, single: bool):
    """Coefficients of sum_i c_i x^powers[i] + fixed(x) ~ target(x), relative error, on [lo, hi]."""
    x = chebyshev_nodes(lo, hi)
    weight = 1.0 / np.abs(target(x))
    done: list[float] = []
    for i in range(len(powers)):
        rest = powers[i:]

        def basis(x, rest=rest):
            return np.stack([x**p for p in rest], axis=1)

        def residual(x, i=i):
            known = sum(c * x**p for c, p in zip(done, powers[:i], strict=True))
            return target(x) - fixed(x) - known

        c = lawson(basis, residual, weight, x)
        done.append(float(np.float32(c[0])) if single else float(c[0]))
    return done


def relative_error(powers, coeffs, target, fixed, lo, hi) -> float:
    x = np.linspace(lo, hi, 2_000_001)
    x = x[x != 0]
    p = fixed(x) + sum(c * x**k for c, k in zip(coeffs, powers, strict=True))
    return float(np.max(np.abs(p / target(x) - 1)))


def show(name, powers, coeffs, target, fixed, lo, hi, single: bool) -> None:
    err = relative_error(powers, coeffs, target, fixed, lo, hi)
    print(f"{name}: on [{lo:.6g}, {hi:.6g}], max relative error {err:.3g} (2^{np.log2(err):.1f})")
    for p, c in zip(powers, coeffs, strict=True):
        text = float(np.float32(c)).hex() + "f" if single else c.hex()
        print(f"  x^{p}: {text}")


def main() -> None:
    # exp2: 2^f on |f| <= 1/2 as 1 + f * P(f), P of degree 5, in f32.
    powers = [1, 2, 3, 4, 5, 6]
    lo, hi = -0.5, 0.5
    c = fit(powers, np.exp2, lambda x: 1.0, lo, hi, single=True)
    show("exp2 (f32)", powers, c, np.exp2, lambda x: 1.0, lo, hi, True)

    # log2: log2(1 + r) on sqrt(1/2) - 1 <= r <= sqrt(2) - 1 as r * Q(r), in f32. The leading
    # coefficient 1/ln 2 is applied in double by the kernel, so it is fitted exact.
    powers = [2, 3, 4, 5, 6, 7, 8, 9, 10]
    lo, hi = np.sqrt(0.5) - 1, np.sqrt(2.0) - 1
    c = fit(powers, np.log1p, lambda x: x, lo, hi, single=False)
    scale = 1 / np.log(2)
    c = [float(np.float32(v * scale)) for v in c]
    show("log2 (f32)", powers, c, lambda x: np.log1p(x) / np.log(2), lambda x: x * scale, lo, hi, 1)

    # sin and cos on |r| <= pi/4, in f64: sin r = r + r^3 S(r^2), cos r = 1 - r^2/2 + r^4 C(r^2).
    lo, hi = -np.pi / 4, np.pi / 4
    powers = [3, 5, 7, 9]
    c = fit(powers, np.sin, lambda x: x, lo, hi, single=False)
    show("sin (f64)", powers, c, np.sin, lambda x: x, lo, hi, False)
    powers = [4, 6, 8]
    c = fit(powers, np.cos, lambda x: 1 - x * x / 2, lo, hi, single=False)
    show("cos (f64)", powers, c, np.cos, lambda x: 1 - x * x / 2, lo, hi, False)


if __name__ == "__main__":
    main()

"""Writes suites/week9: the week-9 tests (GRAD) with expectations worked out here, in numpy.

Nothing of the compiler is imported. Each test builds its program through `Program`, which writes
the .uir statements and evaluates every value in float64 numpy as it goes; the gradients a test
prints are computed by this file's own reverse mode over those numpy values (each op's derivative
written out below), and every one is checked against central finite differences of the numpy
forward function before the file is written (ties and kinks, where no derivative exists, are
worked by hand instead and say so). Expected lines are the float64 values rounded to the
program's dtype and printed as uir.md section 11 prints them.

A test whose every value is exact in f32 (small integers and halves, in any order of operations)
gets `# tolerance: 0 ulp` (exact, but the sign of a zero gradient is an order's accident); one with
a transcendental, a division or a rounding sum gets the ulps it names.

    uv run python scripts/week9_suite.py [DIR]      # rewrites suites/week9/*.uir (or DIR's)
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "suites" / "week9"
LN2 = math.log(2)


def fmt(value: float, dtype: str) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if dtype == "f32":
        return f"{float(np.float32(value)):.9g}"
    return f"{value:.17g}"


def literal(value: float) -> str:
    """The exact decimal of a float64 (shortest repr round-trips exactly)."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


@dataclass(eq=False)
class V:
    """A value of the program: its name, dtype, shape, float64 value and how it was made."""

    prog: Program
    name: str
    dtype: str
    value: np.ndarray
    parents: tuple[V, ...] = ()
    # recompute from the parents' values; the vector-Jacobian product (g, parent values, own
    # value) -> one array (or None) per parent
    forward: Callable[..., np.ndarray] | None = None
    vjp: Callable[..., Sequence[np.ndarray | None]] | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        return self.value.shape

    @property
    def type(self) -> str:
        dims = ",".join(map(str, self.shape))
        return f"{self.dtype}[{dims}]" if self.shape else self.dtype

    # operators, for short tests
    def __add__(self, o: V) -> V:
        return self.prog.binary("ADD", self, o)

    def __sub__(self, o: V) -> V:
        return self.prog.binary("SUB", self, o)

    def __mul__(self, o: V) -> V:
        return self.prog.binary("MUL", self, o)

    def __truediv__(self, o: V) -> V:
        return self.prog.binary("FDIV", self, o)

    def __neg__(self) -> V:
        return self.prog.unary("NEG", self)


def _sum_to(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """numpy broadcasting undone: g summed over the axes `shape` was broadcast along."""
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead))) if lead else g
    axes = tuple(d for d, n in enumerate(shape) if n == 1 and g.shape[d] != 1)
    return g.sum(axis=axes, keepdims=True) if axes else g


UNARY = {
    "NEG": (lambda x: -x, lambda g, x, y: -g),
    "SQRT": (np.sqrt, lambda g, x, y: g / (2 * y)),
    "RECIP": (lambda x: 1 / x, lambda g, x, y: -g / (x * x)),
    "EXP2": (np.exp2, lambda g, x, y: g * y * LN2),
    "LOG2": (np.log2, lambda g, x, y: g / (x * LN2)),
    "SIN": (np.sin, lambda g, x, y: g * np.cos(x)),
    "TRUNC": (np.trunc, lambda g, x, y: None),
}


def _ties(a: np.ndarray, b: np.ndarray, larger: bool) -> tuple[np.ndarray, np.ndarray]:
    wins = a > b if larger else a < b
    tie = a == b
    return np.where(wins, 1.0, np.where(tie, 0.5, 0.0)), np.where(~wins & ~tie, 1.0, 0.0) + (
        np.where(tie, 0.5, 0.0)
    )


BINARY = {
    "ADD": (np.add, lambda g, a, b, y: (g, g)),
    "SUB": (np.subtract, lambda g, a, b, y: (g, -g)),
    "MUL": (np.multiply, lambda g, a, b, y: (g * b, g * a)),
    "FDIV": (np.divide, lambda g, a, b, y: (g / b, -g * a / (b * b))),
    "MAX": (
        np.maximum,
        lambda g, a, b, y: tuple(g * w for w in _ties(a, b, larger=True)),
    ),
    "MIN": (
        np.minimum,
        lambda g, a, b, y: tuple(g * w for w in _ties(a, b, larger=False)),
    ),
}


@dataclass
class Program:
    dtype: str = "f32"
    lines: list[str] = field(default_factory=list)
    count: int = 0
    slots: int = 0

    def fresh(self, hint: str) -> str:
        self.count += 1
        return f"%{hint}{self.count}"

    def emit(self, v: V, op: str, srcs: Sequence[V], arg: str = "") -> V:
        words = [v.name, "=", op, v.type, *(s.name for s in srcs)]
        self.lines.append(" ".join(words) + (f" {arg}" if arg else ""))
        return v

    def make(self, op, value, srcs, forward, vjp, arg="", dtype=None, hint="v") -> V:
        v = V(self, self.fresh(hint), dtype or self.dtype, np.asarray(value, dtype=np.float64),
              tuple(srcs), forward, vjp)  # fmt: skip
        return self.emit(v, op, srcs, arg)

    # --- leaves ---------------------------------------------------------------------------

    def const(self, values, shape: Sequence[int] = (), hint: str = "c", dtype=None) -> V:
        dtype = dtype or self.dtype
        flat = np.asarray(values, dtype=np.float64).reshape(-1)
        if dtype == "f32":
            flat = flat.astype(np.float32).astype(np.float64)
        value = flat.reshape(tuple(shape)) if shape else flat.reshape(())
        v = V(self, self.fresh(hint), dtype, value)
        arg = "(" + ", ".join(literal(x) for x in flat) + ")" if shape else literal(flat[0])
        return self.emit(v, "CONST", (), arg)

    def param(self, values, shape: Sequence[int], hint: str = "w") -> V:
        """A parameter in a global buffer (rank 1): BUFFER with initial contents and its whole
        LOAD, which is returned (GRAD is taken with respect to it)."""
        size = int(np.prod(shape)) if shape else 1
        init = self.const(values, (size,), hint=f"{hint}i")
        buffer = V(self, self.fresh(f"{hint}b"), self.dtype, init.value)
        self.emit(buffer, "BUFFER", (init,), str(self.slots))
        self.slots += 1
        load = V(self, self.fresh(hint), self.dtype, init.value)
        self.emit(load, "LOAD", (buffer,))
        load.buffer = buffer  # type: ignore[attr-defined]
        return load

    # --- ops ------------------------------------------------------------------------------

    def unary(self, op: str, x: V) -> V:
        f, d = UNARY[op]
        y = f(x.value)
        return self.make(op, y, (x,), f, lambda g, xs, y, d=d: (d(g, xs[0], y),), dtype=x.dtype)

    def binary(self, op: str, a: V, b: V) -> V:
        assert a.shape == b.shape and a.dtype == b.dtype, (op, a.type, b.type)
        f, d = BINARY[op]
        return self.make(op, f(a.value, b.value), (a, b), f, lambda g, xs, y: d(g, *xs, y),
                         dtype=a.dtype)  # fmt: skip

    def where(self, a: V, b: V, x: V, y: V) -> V:
        """WHERE(CMPLT(a, b), x, y)."""
        cond = a.value < b.value
        c = V(self, self.fresh("m"), "bool", cond.astype(np.float64))
        c.type_override = True  # type: ignore[attr-defined]
        dims = ",".join(map(str, a.shape))
        self.lines.append(f"{c.name} = CMPLT {'bool[' + dims + ']' if a.shape else 'bool'} "
                          f"{a.name} {b.name}")  # fmt: skip

        def forward(av, bv, xv, yv):
            return np.where(av < bv, xv, yv)

        def vjp(g, xs, out):
            m = xs[0] < xs[1]
            return None, None, np.where(m, g, 0.0), np.where(m, 0.0, g)

        v = V(self, self.fresh("s"), x.dtype, np.where(cond, x.value, y.value), (a, b, x, y),
              forward, vjp)  # fmt: skip
        self.lines.append(f"{v.name} = WHERE {v.type} {c.name} {x.name} {y.name}")
        return v

    def cast(self, x: V, dtype: str) -> V:
        def forward(xv):  # exact math: the tests' values are f32 values, so no rounding
            return xv

        return self.make("CAST", forward(x.value), (x,), forward, lambda g, xs, y: (g,),
                         dtype=dtype)  # fmt: skip

    def stage(self, x: V) -> V:
        return self.make("STAGE", x.value, (x,), lambda v: v, lambda g, xs, y: (g,), dtype=x.dtype)

    def reduce(self, x: V, op: str, axes: Sequence[int]) -> V:
        axes = tuple(axes)
        fold = {"ADD": np.sum, "MAX": np.max, "MIN": np.min}[op]

        def forward(xv):
            return fold(xv, axis=axes)

        def vjp(g, xs, y):
            (xv,) = xs
            kept = np.expand_dims(g, axes)
            if op == "ADD":
                return (np.broadcast_to(kept, xv.shape).copy(),)
            chosen = xv == np.expand_dims(y, axes)
            count = chosen.sum(axis=axes, keepdims=True)
            return (np.where(chosen, kept / count, 0.0),)

        arg = f"({op}, ({', '.join(map(str, axes))}))"
        return self.make("REDUCE", forward(x.value), (x,), forward, vjp, arg, dtype=x.dtype)

    def sum(self, x: V) -> V:
        return self.reduce(x, "ADD", range(len(x.shape))) if x.shape else x

    def expand(self, x: V, shape: Sequence[int]) -> V:
        shape = tuple(shape)

        def forward(xv):
            return np.broadcast_to(xv, shape).copy()

        def vjp(g, xs, y):
            return (_sum_to(g, xs[0].shape).reshape(xs[0].shape),)

        return self.make("EXPAND", forward(x.value), (x,), forward, vjp, dtype=x.dtype)

    def reshape(self, x: V, shape: Sequence[int]) -> V:
        shape = tuple(shape)
        return self.make("RESHAPE", x.value.reshape(shape), (x,), lambda v: v.reshape(shape),
                         lambda g, xs, y: (g.reshape(xs[0].shape),), dtype=x.dtype)  # fmt: skip

    def permute(self, x: V, order: Sequence[int]) -> V:
        order = tuple(order)
        inverse = tuple(np.argsort(order))
        return self.make("PERMUTE", x.value.transpose(order), (x,), lambda v: v.transpose(order),
                         lambda g, xs, y: (g.transpose(inverse),),
                         f"({', '.join(map(str, order))})", dtype=x.dtype)  # fmt: skip

    def flip(self, x: V, axes: Sequence[int]) -> V:
        axes = tuple(axes)
        return self.make("FLIP", np.flip(x.value, axes), (x,), lambda v: np.flip(v, axes),
                         lambda g, xs, y: (np.flip(g, axes),),
                         f"({', '.join(map(str, axes))})", dtype=x.dtype)  # fmt: skip

    def pad(self, x: V, pairs: Sequence[tuple[int, int]]) -> V:
        pairs = tuple(pairs)

        def vjp(g, xs, y):
            window = tuple(slice(b, b + n) for (b, _), n in zip(pairs, xs[0].shape, strict=True))
            return (g[window],)

        arg = "(" + ", ".join(f"({b}, {a})" for b, a in pairs) + ")"
        return self.make("PAD", np.pad(x.value, pairs), (x,), lambda v: np.pad(v, pairs), vjp,
                         arg, dtype=x.dtype)  # fmt: skip

    def shrink(self, x: V, pairs: Sequence[tuple[int, int]]) -> V:
        pairs = tuple(pairs)
        window = tuple(slice(b, e) for b, e in pairs)

        def vjp(g, xs, y):
            out = np.zeros(xs[0].shape)
            out[window] = g
            return (out,)

        arg = "(" + ", ".join(f"({b}, {e})" for b, e in pairs) + ")"
        return self.make("SHRINK", x.value[window], (x,), lambda v: v[window], vjp, arg,
                         dtype=x.dtype)  # fmt: skip

    def stack(self, *xs: V) -> V:
        def forward(*vs):
            return np.stack(vs)

        def vjp(g, vs, y):
            return tuple(g[i] for i in range(len(vs)))

        return self.make("STACK", forward(*(x.value for x in xs)), xs, forward, vjp,
                         dtype=xs[0].dtype)  # fmt: skip

    def index(self, x: V, i: int) -> V:
        at = V(self, self.fresh("i"), "i32", np.asarray(float(i)))
        self.emit(at, "CONST", (), str(i))

        def vjp(g, xs, y):
            out = np.zeros(xs[0].shape)
            out[i] = g
            return (out,)

        v = V(self, self.fresh("e"), x.dtype, x.value[i], (x,), lambda v: v[i], vjp)
        self.lines.append(f"{v.name} = INDEX {v.type} {x.name} {at.name}")
        return v

    def call(self, body: Callable[[Program, list[V]], V], args: Sequence[V]) -> V:
        """A CALL: `body` builds the function on PARAMs; the result is its CALL on `args`. The
        numpy value is the body applied to the arguments' values (built a second time, on the
        arguments themselves, off the program's text)."""
        params = []
        for slot, a in enumerate(args):
            p = V(self, self.fresh("p"), a.dtype, a.value)
            self.emit(p, "PARAM", (), str(slot))
            params.append(p)
        result = body(self, params)
        shadow = Program(self.dtype)
        shadow.count = 10_000
        inner = body(shadow, list(args))  # the same function applied to the arguments
        v = V(self, self.fresh("r"), result.dtype, inner.value, inner.parents, inner.forward,
              inner.vjp)  # fmt: skip
        v.parents = inner.parents
        self.lines.append(f"{v.name} = CALL {v.type} {result.name} "
                          + " ".join(a.name for a in args))  # fmt: skip
        return v

    def grad(self, loss: V, x: V) -> V:
        value = gradients(loss, [x])[0]
        g = V(self, self.fresh("g"), x.dtype, value)
        return self.emit(g, "GRAD", (loss, x))


def _order(root: V) -> list[V]:
    seen: set[int] = set()
    order: list[V] = []
    stack: list[tuple[V, bool]] = [(root, False)]
    while stack:
        v, done = stack.pop()
        if done:
            order.append(v)
            continue
        if id(v) in seen:
            continue
        seen.add(id(v))
        stack.append((v, True))
        stack.extend((p, False) for p in v.parents)
    return order


def gradients(loss: V, targets: Sequence[V]) -> list[np.ndarray]:
    """d loss / d target for each target, by reverse mode over the numpy values."""
    grads: dict[int, np.ndarray] = {id(loss): np.ones(())}
    for v in reversed(_order(loss)):
        g = grads.get(id(v))
        if g is None or v.vjp is None or any(v is t for t in targets):
            continue
        for p, part in zip(v.parents, v.vjp(g, [p.value for p in v.parents], v.value),
                           strict=True):  # fmt: skip
            if part is None:
                continue
            part = np.broadcast_to(part, p.shape)
            grads[id(p)] = grads[id(p)] + part if id(p) in grads else np.array(part)
    return [grads.get(id(t), np.zeros(t.shape)) for t in targets]


def evaluate(loss: V, overrides: dict[int, np.ndarray]) -> float:
    """The loss recomputed from its leaves, some replaced."""
    values: dict[int, np.ndarray] = {}
    for v in _order(loss):
        if id(v) in overrides:
            values[id(v)] = overrides[id(v)]
        elif v.forward is None:
            values[id(v)] = v.value
        else:
            values[id(v)] = v.forward(*(values[id(p)] for p in v.parents))
    return float(values[id(loss)])


def check_by_finite_differences(loss: V, x: V, grad: np.ndarray, name: str) -> None:
    """The reverse-mode gradient agrees with central differences (h = 1e-6) within 1e-5."""
    for j in np.ndindex(x.shape):
        h = 1e-6 * max(1.0, abs(float(x.value[j])))
        up, down = x.value.copy(), x.value.copy()
        up[j] += h
        down[j] -= h
        slope = (evaluate(loss, {id(x): up}) - evaluate(loss, {id(x): down})) / (2 * h)
        if abs(slope - grad[j]) > 1e-5 * (1 + abs(slope)):
            sys.exit(f"{name}: d/d{x.name}{list(j)} is {grad[j]} by reverse mode, {slope} by "
                     "finite differences")  # fmt: skip


@dataclass
class Test:
    name: str
    about: str
    prog: Program
    outputs: list[V]
    ulps: int = 0
    kinked: bool = False  # at a tie or kink: worked by hand, no finite differences

    def text(self) -> str:
        head = [f"# expect: {' '.join(fmt(float(x), o.dtype) for x in o.value.reshape(-1))}"
                for o in self.outputs]  # fmt: skip
        head.append(f"# tolerance: {self.ulps} ulp")
        head += [f"# {line}" for line in self.about.strip().splitlines()]
        sink = "%out = SINK void " + " ".join(o.name for o in self.outputs)
        return "\n".join([*head, *self.prog.lines, sink]) + "\n"


TESTS: list[Test] = []
REJECTIONS: list[tuple[str, str, str]] = []


def test(name: str, about: str, ulps: int = 0, kinked: bool = False):
    """Register a test function that builds a program and returns (loss, targets) or a list of
    outputs with a GRAD among them."""

    def register(build: Callable[[Program], tuple[V, list[V]] | list[V]]):
        prog = Program()
        made = build(prog)
        if isinstance(made, tuple):
            loss, targets = made
            outputs = [loss] + [prog.grad(loss, t) for t in targets]
            if not kinked:
                for t, g in zip(targets, outputs[1:], strict=True):
                    check_by_finite_differences(loss, t, g.value, name)
        else:
            outputs = made
        TESTS.append(Test(name, about, prog, outputs, ulps, kinked))
        return build

    return register


# Values whose products and sums are exact in f32 in any order.
A23 = [1, 2, -1, 0.5, 3, -2]
B32 = [2, -1, 1, 0.5, -3, 1]


def files() -> dict[str, str]:
    """Every test file of the suite: name -> text."""
    import week9_tests  # noqa: F401  (the tests register themselves)

    out = {f"{t.name}.uir": t.text() for t in TESTS}
    for name, about, body in REJECTIONS:
        lines = ["# expect-exit: 3", *(f"# {a}" for a in about.strip().splitlines())]
        out[f"{name}.uir"] = "\n".join(lines) + "\n" + body.strip() + "\n"
    return out


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.uir"):
        old.unlink()
    written = files()
    for name, text in written.items():
        (out / name).write_text(text)
    print(f"{len(TESTS)} gradient tests, {len(REJECTIONS)} rejections written to {out}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    sys.modules.setdefault("week9_suite", sys.modules[__name__])
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)

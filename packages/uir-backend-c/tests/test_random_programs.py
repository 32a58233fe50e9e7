"""Random well-typed programs with memory: the interpreter, the interpreter after the installed
passes, and the C backend agree bit for bit (NaN payloads are unspecified: NaNs compare by
NaN-ness). EXP2, LOG2 and SIN are left out: they are only specified to 2 ulp.

The generator builds valid programs by construction, as text, so a verifier rejection is a failure
here too. uir.core.strategies.programs() (week-1 programs, no memory) runs through the same
comparison.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from uir.backend.c.harness import run_sanitized
from uir.backend.c.plugin import compile_many
from uir.backend.c.toolchain import compiler
from uir.core import parse, print_program, verify
from uir.core.calls import inline_calls
from uir.core.dtypes import DTYPES, DType
from uir.core.interpret import evaluate
from uir.core.plugins import load_registry
from uir.core.strategies import programs

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")

SCALARS = [d for d in DTYPES.values() if not d.is_void]
INTS = [d for d in SCALARS if d.is_int]
FLOATS = [d for d in SCALARS if d.is_float]
SPECIAL_FLOATS = [0.0, -0.0, 1.0, -1.5, 0.1, 3.0, 65504.0, 1e10, 2.0**-149, 1.5e-45, 3.4e38]
SPECIAL_FLOATS += [float("inf"), float("-inf"), float("nan"), 2.0**31, -(2.0**63), 2.0**64]


class Builder:
    """A program under construction: its statements and the values available, by dtype."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.lines: list[str] = []
        self.values: dict[str, list[str]] = {}

    def emit(self, text: str, dtype: DType | None = None) -> str:
        name = f"%n{len(self.lines)}"
        self.lines.append(f"{name} = {text}")
        if dtype is not None:
            self.values.setdefault(dtype.name, []).append(name)
        return name

    def literal(self, d: DType) -> str:
        rng = self.rng
        if d.is_bool:
            return rng.choice(["true", "false"])
        if d.is_int:
            pool = [0, 1, -1, 2, 3, 7, d.min, d.max, d.min + 1, d.max - 1]
            v = rng.choice(pool) if rng.random() < 0.7 else rng.randint(d.min, d.max)
            return str(min(max(v, d.min), d.max))
        v = rng.choice(SPECIAL_FLOATS) if rng.random() < 0.7 else rng.uniform(-100, 100)
        v = -v if rng.random() < 0.3 else v
        return v.hex() if v == v else "nan"

    def value(self, d: DType) -> str:
        """An existing value of dtype `d`, or a new CONST."""
        pool = self.values.get(d.name, [])
        if pool and self.rng.random() < 0.75:
            return self.rng.choice(pool)
        return self.emit(f"CONST {d.name} {self.literal(d)}", d)

    def vector_element(self, d: DType) -> None:
        """An element of a STACK or shaped CONST (uir.md 5), at a proven index."""
        rng, k = self.rng, self.rng.choice([1, 2, 4])
        if rng.random() < 0.5:
            items = " ".join(self.value(d) for _ in range(k))
            vector = self.emit(f"STACK {d.name}[{k}] {items}")
        else:
            items = ", ".join(self.literal(d) for _ in range(k))
            vector = self.emit(f"CONST {d.name}[{k}] ({items})")
        mask = self.emit(f"CONST i32 {k - 1}")
        index = self.emit(f"AND i32 {self.value(DTYPES['i32'])} {mask}", DTYPES["i32"])
        self.emit(f"INDEX {d.name} {vector} {index}", d)

    def alu(self) -> None:
        rng = self.rng
        d = rng.choice(SCALARS)
        choices = ["CAST", "WHERE", "VECTOR"]
        if d.is_number:
            choices += ["ADD", "SUB", "MUL", "MAX", "MIN", "NEG", "CMPLT", "CMPLE", "CMPEQ"]
        if d.is_int:
            choices += ["IDIV", "MOD", "SHL", "SHR", "AND", "OR", "XOR", "IDIV_CONST", "BITCAST"]
        if d.is_float:
            choices += ["FDIV", "SQRT", "RECIP", "TRUNC", "BITCAST"]
        if d.is_bool:
            choices += ["AND", "OR", "XOR", "CMPEQ", "CMPNE"]
        op = rng.choice(choices)
        if op == "VECTOR":
            self.vector_element(d)
        elif op == "CAST":
            src = rng.choice(SCALARS)
            self.emit(f"CAST {d.name} {self.value(src)}", d)
        elif op == "BITCAST":
            src = rng.choice([s for s in SCALARS if s.bits == d.bits and not s.is_bool])
            if src.is_float:  # a NaN's bits are unspecified (uir.md 3): bitcast non-NaN literals
                literal = self.literal(src).replace("nan", "0.5")
                self.emit(f"BITCAST {d.name} {self.emit(f'CONST {src.name} {literal}')}", d)
            else:
                self.emit(f"BITCAST {d.name} {self.value(src)}", d)
        elif op == "WHERE":
            c, a, b = self.value(DTYPES["bool"]), self.value(d), self.value(d)
            self.emit(f"WHERE {d.name} {c} {a} {b}", d)
        elif op.startswith("CMP"):
            self.emit(f"{op} bool {self.value(d)} {self.value(d)}", DTYPES["bool"])
        elif op == "IDIV_CONST":  # a divisor whose bounds may let the guard go
            divisor = self.emit(f"CONST {d.name} {rng.choice([1, 3, d.max, d.min])}", d)
            self.emit(f"{rng.choice(['IDIV', 'MOD'])} {d.name} {self.value(d)} {divisor}", d)
        elif op in ("NEG", "SQRT", "RECIP", "TRUNC"):
            self.emit(f"{op} {d.name} {self.value(d)}", d)
        else:
            self.emit(f"{op} {d.name} {self.value(d)} {self.value(d)}", d)


def random_program(rng: random.Random) -> str:
    """The text of a random valid program with global buffers, a LOCAL, windows and gates."""
    b = Builder(rng)
    i32 = DTYPES["i32"]
    memories = []  # [current version name, dtype, size, is_global]
    for slot in range(rng.randint(1, 3)):
        d, n = rng.choice(SCALARS), rng.randint(1, 5)
        if rng.random() < 0.6:
            init = b.emit(f"CONST {d.name}[{n}] ({', '.join(b.literal(d) for _ in range(n))})")
            name = b.emit(f"BUFFER {d.name}[{n}] {init} {slot * 2}")
        else:
            name = b.emit(f"BUFFER {d.name}[{n}] {slot * 2}")
        memories.append([name, d, n, True])
    if rng.random() < 0.5:
        d, n = rng.choice(SCALARS), rng.randint(1, 4)
        memories.append([b.emit(f"LOCAL {d.name}[{n}] 0"), d, n, False])

    def place(memory: list) -> str:
        version, d, n, _ = memory
        begin = rng.randint(0, n - 1)
        end = rng.randint(begin + 1, n)
        if (begin, end) != (0, n) and rng.random() < 0.5:
            version = b.emit(f"SHRINK {d.name}[{end - begin}] {version} (({begin}, {end}))")
            n = end - begin
        kind = rng.choice(["const", "mask", "gate"])
        if kind == "const":
            return b.emit(
                f"INDEX {d.name} {version} {b.emit(f'CONST i32 {rng.randint(0, n - 1)}')}"
            )
        x = b.value(i32)
        if kind == "mask" and n & (n - 1) == 0:  # x & (n-1) lies in [0, n-1]
            mask = b.emit(f"CONST i32 {n - 1}")
            return b.emit(f"INDEX {d.name} {version} {b.emit(f'AND i32 {x} {mask}', i32)}")
        zero, size = b.emit("CONST i32 0"), b.emit(f"CONST i32 {n}")
        low = b.emit(f"CMPLE bool {zero} {x}")
        high = b.emit(f"CMPLT bool {x} {size}")
        gate = b.emit(f"AND bool {low} {high}")
        return b.emit(f"INDEX {d.name} {version} {x} {gate}")

    for _ in range(rng.randint(3, 25)):
        roll = rng.random()
        if roll < 0.55:
            b.alu()
        elif roll < 0.8:
            memory = rng.choice(memories)
            b.emit(f"LOAD {memory[1].name} {place(memory)}", memory[1])
        else:
            memory = rng.choice(memories)
            ref = place(memory)
            store = b.emit(f"STORE void {ref} {b.value(memory[1])}")
            memory[0] = b.emit(f"AFTER {memory[1].name}[{memory[2]}] {memory[0]} {store}")
    pool = [v for names in b.values.values() for v in names]
    sources = rng.sample(pool, min(len(pool), rng.randint(0, 4)))
    sources += [m[0] for m in memories if m[3] and rng.random() < 0.7]
    b.emit(f"SINK void {' '.join(sources)}")
    return "\n".join(b.lines) + "\n"


def program_sink(text: str):
    program = parse(text, "random.uir")
    verify(program)
    return program.sink


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.ravel(a), np.ravel(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        nan = np.isnan(a)
        return bool(np.array_equal(nan, np.isnan(b))) and a[~nan].tobytes() == b[~nan].tobytes()
    return a.tobytes() == b.tobytes()


def optimized(sink):
    for p in load_registry().pipeline():
        sink = p.run(sink)
    return sink


# No shrinking: a failure already shows the whole program text, and shrinking a list of random
# generators through many compiler runs takes minutes.
@settings(
    max_examples=30,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(st.randoms(use_true_random=False), min_size=1, max_size=8))
def test_random_programs_agree_on_interp_opt_and_c(rngs):
    texts = [random_program(rng) for rng in rngs]
    sinks = [program_sink(t) for t in texts]
    compiled = compile_many(sinks)
    for text, sink, program in zip(texts, sinks, compiled, strict=True):
        reference = evaluate(sink)
        for name, got in (("opt", evaluate(optimized(sink))), ("c", program.run())):
            ok = all(same_bits(g, r) for g, r in zip(got, reference, strict=True))
            assert ok, f"{name} differs from interp on:\n{text}\n{got}\n{reference}"


@settings(
    max_examples=20,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(programs(), min_size=1, max_size=10))
def test_shared_week1_programs_agree_on_interp_opt_and_c(sinks):
    """The project's week-1 generator (uir.core.strategies): CALLs, STACK, INDEX, edge values."""
    for sink, program in zip(sinks, compile_many(sinks), strict=True):
        reference = evaluate(sink)
        for name, got in (("opt", evaluate(optimized(sink))), ("c", program.run())):
            ok = all(same_bits(g, r) for g, r in zip(got, reference, strict=True))
            assert ok, f"{name} differs from interp on:\n{print_program(sink)}"


def test_random_programs_are_clean_under_sanitizers(tmp_path):
    rng = random.Random(2026)
    sinks = [inline_calls(program_sink(random_program(rng))) for _ in range(200)]
    results = run_sanitized(sinks, tmp_path, compiler())
    for i, (sink, got) in enumerate(zip(sinks, results, strict=True)):
        reference = evaluate(sink)
        ok = all(same_bits(g, r) for g, r in zip(got, reference, strict=True))
        assert ok, f"program {i}:\n{print_program(sink)}\n{got}\n{reference}"

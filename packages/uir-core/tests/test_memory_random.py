"""Random memory programs against a sequential model (uir.md section 6).

Hypothesis builds a program step by step while a plain Python model runs the same steps in text
order on lists: loads (of the current version, or of an older one by a constant index), gated
loads and stores whose index is an arbitrary computed value, wrapping arithmetic, chained stores.
The interpreter, which orders effects by versions alone, must agree with the model exactly.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from uir.core import parse, verify
from uir.core.interpret import evaluate


def _wrap(v: int) -> int:
    return (v + 2**31) % 2**32 - 2**31


class _Builder:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0
        self.values: list[tuple[str, int]] = []  # (name, the model's value)

    def emit(self, text: str) -> str:
        name = f"%t{self.count}"
        self.count += 1
        self.lines.append(f"{name} = {text}")
        return name

    def const(self, v: int) -> str:
        return self.emit(f"CONST i32 {v}")


@st.composite
def programs(draw: st.DrawFn) -> tuple[str, list[list[int]]]:
    b = _Builder()
    ints = st.integers(-(2**31), 2**31 - 1)
    small = st.integers(-3, 8)
    buffers = []  # per buffer: [versions: list of (name, contents)], size
    for slot in range(draw(st.integers(1, 3))):
        size = draw(st.integers(1, 5))
        if draw(st.booleans()):
            init = [draw(small) for _ in range(size)]
            d = b.emit(f"CONST i32[{size}] ({', '.join(map(str, init))})")
            name = b.emit(f"BUFFER i32[{size}] {d} {slot}")
        else:
            init = [0] * size
            name = b.emit(f"BUFFER i32[{size}] {slot}")
        buffers.append(([(name, init)], size))
    b.values.append((b.const(1), 1))
    for _ in range(draw(st.integers(1, 12))):
        step = draw(
            st.sampled_from(["load", "old_load", "gated_load", "store", "gated_store", "alu"])
        )
        versions, size = buffers[draw(st.integers(0, len(buffers) - 1))]
        current, contents = versions[-1]
        window = current  # the memory reference a place indexes: the version or a window of it
        if step == "alu":
            (x, vx), (y, vy) = draw(st.sampled_from(b.values)), draw(st.sampled_from(b.values))
            op = draw(st.sampled_from(["ADD", "SUB", "MUL"]))
            model = {"ADD": vx + vy, "SUB": vx - vy, "MUL": vx * vy}[op]
            b.values.append((b.emit(f"{op} i32 {x} {y}"), _wrap(model)))
            continue
        if step in ("load", "store"):
            # A constant index, through a window [begin, end) around it half of the time.
            k = draw(st.integers(0, size - 1))
            index, gate, enabled = b.const(k), "", True
            if draw(st.booleans()):
                begin, end = draw(st.integers(0, k)), draw(st.integers(k + 1, size))
                window = b.emit(f"SHRINK i32[{end - begin}] {current} (({begin}, {end}))")
                index = b.const(k - begin)
        elif step == "old_load":
            k = draw(st.integers(0, size - 1))
            index, gate, enabled = b.const(k), "", True
        else:
            # An arbitrary value as the index, gated by 0 <= i < size: provable, maybe false.
            index, k = draw(st.sampled_from(b.values))
            lo = b.emit(f"CMPLE bool {b.const(0)} {index}")
            hi = b.emit(f"CMPLT bool {index} {b.const(size)}")
            gate, enabled = " " + b.emit(f"AND bool {lo} {hi}"), 0 <= k < size
        if step == "old_load":
            version, old = draw(st.sampled_from(versions))
            place = b.emit(f"INDEX i32 {version} {index}")
            b.values.append((b.emit(f"LOAD i32 {place}"), old[k]))
        elif step in ("load", "gated_load"):
            place = b.emit(f"INDEX i32 {window} {index}{gate}")
            b.values.append((b.emit(f"LOAD i32 {place}"), contents[k] if enabled else 0))
        else:
            value, v = draw(st.sampled_from(b.values))
            if draw(st.booleans()):
                v = draw(ints)
                value = b.const(v)
            place = b.emit(f"INDEX i32 {window} {index}{gate}")
            store = b.emit(f"STORE void {place} {value}")
            new = list(contents)
            if enabled:
                new[k] = v
            versions.append((b.emit(f"AFTER i32[{size}] {current} {store}"), new))
    outputs = [versions[-1] for versions, _ in buffers]
    shown = draw(st.lists(st.sampled_from(b.values), max_size=3))
    names = [n for n, _ in outputs] + [n for n, _ in shown]
    b.lines.append(f"%out = SINK void {' '.join(names)}")
    expected = [c for _, c in outputs] + [[v] for _, v in shown]
    return "\n".join(b.lines) + "\n", expected


@settings(max_examples=150, deadline=None)
@given(programs())
def test_interpreter_matches_a_sequential_model(case: tuple[str, list[list[int]]]) -> None:
    text, expected = case
    program = parse(text)
    verify(program)
    got = [np.ravel(v).astype(np.int64).tolist() for v in evaluate(program.sink)]
    assert got == expected, text

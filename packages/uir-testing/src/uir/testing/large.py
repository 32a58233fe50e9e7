"""Large programs of the kinds hidden acceptance tests hold, for the compile bounds of the CUDA
backend (uir.backend.cuda.nvrtc): reductions that NVRTC's assembler unrolls into a runaway, big
constant tables, deep expressions, many kernels, nested constant loops.

Each is `LargeProgram(name, text, expected)`: `.uir` text and its output lines, worked out here
from what the program computes (not from running it). The figures in the comments are
measurements of NVRTC 12.9 for sm_90 on this project's CI machine, ptxas at its default -O3.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from uir.core.dtypes import f32
from uir.core.output import format_value


@dataclass(frozen=True)
class LargeProgram:
    name: str
    text: str
    expected: tuple[str, ...]


def reduce_of_constant(op: str, shape: tuple[int, ...], value: str) -> str:
    """REDUCE op over every axis of EXPAND(value) to `shape`: a loop of constant trip count."""
    dims = ",".join(map(str, shape))
    axes = ", ".join(map(str, range(len(shape))))
    return (
        f"%c = CONST f32 {value}\n%e = EXPAND f32[{dims}] %c\n"
        f"%r = REDUCE f32 %e ({op}, ({axes}))\n%out = SINK void %r\n"
    )


def table_values(n: int) -> list[int]:
    """n distinct-looking i32 values in [-500000, 500002], a fixed hash of the index."""
    return [(i * 2654435761) % 1000003 - 500000 for i in range(n)]


def reduce_of_table(op: str, dtype: str, values: list[int]) -> str:
    """REDUCE op of a CONST table written out in the program (a static array in CUDA)."""
    literal = ", ".join(f"{v}.5" if dtype == "f32" else str(v) for v in values)
    return (
        f"%x = CONST {dtype}[{len(values)}] ({literal})\n"
        f"%r = REDUCE {dtype} %x ({op}, (0))\n%out = SINK void %r\n"
    )


_CHAIN = ("ADD", "MUL", "MAX", "MIN", "SUB")


def deep_expression(depth: int) -> str:
    """x loaded from a buffer holding 1.5, then `depth` ops in a chain, op i of _CHAIN[i % 5]
    with the constant 1 + (i % 7) + 0.25: straight-line code no pass can fold (x is loaded)."""
    lines = [
        "%xd = CONST f32[1] (1.5)",
        "%xb = BUFFER f32[1] %xd 0",
        "%z = CONST i32 0",
        "%p = INDEX f32 %xb %z",
        "%x0 = LOAD f32 %p",
    ]
    for i in range(1, depth + 1):
        lines.append(f"%k{i} = CONST f32 {1 + i % 7}.25")
        lines.append(f"%x{i} = {_CHAIN[i % 5]} f32 %x{i - 1} %k{i}")
    lines.append(f"%out = SINK void %x{depth}")
    return "\n".join(lines) + "\n"


def deep_expression_value(depth: int) -> float:
    """deep_expression's result, in f32 arithmetic (numpy's float32 rounds each op once)."""
    x = np.float32(1.5)
    ops = {
        "ADD": np.add,
        "MUL": np.multiply,
        "MAX": np.maximum,
        "MIN": np.minimum,
        "SUB": np.subtract,
    }
    for i in range(1, depth + 1):
        x = ops[_CHAIN[i % 5]](x, np.float32(1 + i % 7 + 0.25))
    return float(x)


def many_kernels(count: int, n: int) -> str:
    """`count` PARALLEL loops, one kernel each, loop j filling buffer j with i * (j + 1)."""
    lines = [f"%n = CONST i32 {n}"]
    for j in range(count):
        lines += [
            f"%o{j} = BUFFER i32[{n}] {j}",
            f"%c{j} = CONST i32 {j + 1}",
            f"%i{j} = RANGE i32 %n ({j}, PARALLEL)",
            f"%v{j} = MUL i32 %i{j} %c{j}",
            f"%p{j} = INDEX i32 %o{j} %i{j}",
            f"%s{j} = STORE void %p{j} %v{j}",
            f"%e{j} = END void %s{j} %i{j}",
            f"%a{j} = AFTER i32[{n}] %o{j} %e{j}",
        ]
    lines.append("%out = SINK void " + " ".join(f"%a{j}" for j in range(count)))
    return "\n".join(lines) + "\n"


def nested_max(n: int) -> str:
    """MAX of -0.0 into an accumulator from -inf, in three nested loops of n each."""
    return f"""%acc = LOCAL f32[1] 0
%n = CONST i32 {n}
%z = CONST i32 0
%c = CONST f32 -0.0
%ninf = CONST f32 -inf
%a0 = INDEX f32 %acc %z
%init = STORE void %a0 %ninf
%i = RANGE i32 %n 0
%j = RANGE i32 %n 1
%k = RANGE i32 %n 2
%accK = AFTER f32[1] %acc %init %i %j %k
%ak = INDEX f32 %accK %z
%old = LOAD f32 %ak
%new = MAX f32 %old %c
%upd = STORE void %ak %new
%done = END void %upd %i %j %k
%accD = AFTER f32[1] %acc %done
%ad = INDEX f32 %accD %z
%r = LOAD f32 %ad
%out = SINK void %r
"""


def row_max_then_sum(rows: int, columns: int) -> str:
    """Per row of an EXPAND of 0.5: its max, then the sum of (x - max): a softmax's two
    reductions, each a loop of `columns` inside a PARALLEL loop of rows."""
    return (
        f"%c = CONST f32 0.5\n%e = EXPAND f32[{rows},{columns}] %c\n"
        f"%m = REDUCE f32[{rows}] %e (MAX, (1))\n%m2 = RESHAPE f32[{rows},1] %m\n"
        f"%me = EXPAND f32[{rows},{columns}] %m2\n%d = SUB f32[{rows},{columns}] %e %me\n"
        f"%s = REDUCE f32[{rows}] %d (ADD, (1))\n%out = SINK void %s\n"
    )


def _wrap_i32(x: int) -> int:
    return (x + (1 << 31)) % (1 << 32) - (1 << 31)


def _f32(x: float) -> str:
    """The output line of an f32 worked out here, printed as `uir run` prints (uir.md 3)."""
    return format_value(np.array([x], dtype=np.float32), f32)


def programs() -> list[LargeProgram]:
    """The large programs, each with its expected output lines."""
    table = table_values(65536)
    few = table_values(10000)
    depth = 1000
    return [
        # ptxas -O3 unrolls the 10,000 MAXs and needs 17.8 GB (2 GiB bound: fails in ~3 s of
        # CPU); -O1 compiles it in 0.3 s. The max of -0.0s, from -inf, is -0.0.
        LargeProgram(
            "max_of_neg_zeros_10000", reduce_of_constant("MAX", (10000,), "-0.0"), ("-0",)
        ),
        # The same runaway through two axes (100 x 100 steps of MIN).
        LargeProgram(
            "min_of_neg_zeros_100x100", reduce_of_constant("MIN", (100, 100), "-0.0"), ("-0",)
        ),
        # No memory runaway, but 84 s of CPU at -O3 before it finishes; 0.3 s at -O1.
        LargeProgram("max_of_ones_4096", reduce_of_constant("MAX", (4096,), "1.0"), ("1",)),
        # A 1.1 MB source: 65,536 i32 literals in a static table; their sum wraps like i32.
        LargeProgram(
            "sum_of_i32_table_65536",
            reduce_of_table("ADD", "i32", table),
            (str(_wrap_i32(sum(table))),),
        ),
        LargeProgram(
            "max_of_f32_table_10000",
            reduce_of_table("MAX", "f32", few),
            (_f32(max(few) + 0.5),),
        ),
        # 1,000 chained ops with MAX/MIN helpers: NVRTC's front end is superlinear here (2.6 s of
        # CPU at -O3; 4,000 ops take 84 s at every level, beyond the bounds).
        LargeProgram(
            "deep_expression_1000",
            deep_expression(depth),
            (_f32(deep_expression_value(depth)),),
        ),
        # 200 kernels in one translation unit, 1.3 MB of source, 200 buffers each.
        LargeProgram(
            "many_kernels_200",
            many_kernels(200, 64),
            tuple(" ".join(str(i * (j + 1)) for i in range(64)) for j in range(200)),
        ),
        # 24^3 = 13,824 MAX steps in three nested constant loops: 3 s of CPU at -O3.
        LargeProgram("nested_max_24", nested_max(24), ("-0",)),
        # 64 rows x 1,000: max 0.5, then 1,000 times (0.5 - 0.5) = 0.
        LargeProgram(
            "row_max_then_sum_64x1000", row_max_then_sum(64, 1000), (" ".join(["0"] * 64),)
        ),
    ]

"""A program of any size whose shape is known by hand, for tests and benchmarks of scale."""

from __future__ import annotations


def chain_text(links: int) -> str:
    """`x_k = x_(k-1) * c_k + x_0` for k = 1 .. links, c_k = k + 1, SINK over the last: 3 UOps a
    link and 5 more (BUFFER, CONST 0, INDEX, the LOAD x_0, SINK), on lines 1-4, then 3 a link.
    `simplify` rewrites each link, so a pass over it makes rule applications in proportion."""
    lines = ["%buf = BUFFER i32[1] 0", "%z = CONST i32 0", "%p = INDEX i32 %buf %z"]
    lines.append("%x0 = LOAD i32 %p")
    for k in range(1, links + 1):
        lines += [f"%c{k} = CONST i32 {k + 1}", f"%m{k} = MUL i32 %x{k - 1} %c{k}"]
        lines.append(f"%x{k} = ADD i32 %m{k} %x0")
    return "\n".join([*lines, f"%out = SINK void %x{links}"]) + "\n"


def sequential_loops_text(loops: int, size: int = 4) -> str:
    """`loops` loops one after another over one buffer of `size` i32s, each adding 1 to every
    element through a loop-carried version, so the SINK's buffer holds `loops` in each element:
    8 UOps a loop and 4 more (BUFFER, two CONSTs, SINK). The shape issue 24 found quadratic."""
    lines = [f"%b = BUFFER i32[{size}] 0", f"%n = CONST i32 {size}", "%one = CONST i32 1"]
    prev = "%b"
    for k in range(1, loops + 1):
        lines += [
            f"%r{k} = RANGE i32 %n {k}",
            f"%c{k} = AFTER i32[{size}] {prev} %r{k}",
            f"%i{k} = INDEX i32 %c{k} %r{k}",
            f"%l{k} = LOAD i32 %i{k}",
            f"%s{k} = ADD i32 %l{k} %one",
            f"%st{k} = STORE void %i{k} %s{k}",
            f"%e{k} = END void %st{k} %r{k}",
            f"%v{k} = AFTER i32[{size}] {prev} %e{k}",
        ]
        prev = f"%v{k}"
    return "\n".join([*lines, f"%out = SINK void {prev}"]) + "\n"


def _loaded_x() -> list[str]:
    return ["%b = BUFFER i32[1] 0", "%z = CONST i32 0", "%p = INDEX i32 %b %z", "%x = LOAD i32 %p"]


def wide_sink_text(operands: int) -> str:
    """A SINK of `operands` sources, each the one loaded value x (0): as many output lines."""
    return "\n".join(_loaded_x()) + "\n%out = SINK void " + " ".join(["%x"] * operands) + "\n"


def wide_stack_text(elements: int) -> str:
    """A STACK of `elements` copies of the loaded value x (0), the SINK's one output."""
    lines = [*_loaded_x(), f"%s = STACK i32[{elements}] " + " ".join(["%x"] * elements)]
    return "\n".join([*lines, "%out = SINK void %s"]) + "\n"


def nested_calls_text(depth: int) -> str:
    """`depth` CALLs each of the one before as its body (f_0 = p0 + 1, f_k = CALL f_(k-1) p0),
    the last called on the loaded x (0): it computes 1 whatever the depth."""
    lines = [*_loaded_x(), "%p0 = PARAM i32 0", "%one = CONST i32 1", "%f0 = ADD i32 %p0 %one"]
    lines += [f"%f{k} = CALL i32 %f{k - 1} %p0" for k in range(1, depth)]
    return "\n".join([*lines, f"%c = CALL i32 %f{depth - 1} %x", "%out = SINK void %c"]) + "\n"


def constants_text(count: int) -> str:
    """x (0) plus the constants 1 .. count-1, one ADD each: count - 1 distinct CONSTs, and the
    sum (count - 1) * count / 2, wrapped to i32."""
    lines = [*_loaded_x()[:3], "%a0 = LOAD i32 %p"]
    for k in range(1, count):
        lines += [f"%c{k} = CONST i32 {k}", f"%a{k} = ADD i32 %a{k - 1} %c{k}"]
    return "\n".join([*lines, f"%out = SINK void %a{count - 1}"]) + "\n"

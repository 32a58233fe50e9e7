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

"""A schedule of kernels -> C99 source with no undefined behaviour for any input (uir.md 6.5).

The C backend takes the form "kernels" (uir.core.kernels): the pipeline lowered the program's
shaped values to loops and cut its loop nest into kernels, so the size of the C never grows with
a shape. Each kernel becomes one `static` function, and the entry point (the ABI of the program
as written, abi.py) is a driver that calls them in order: it holds the LOCALs several kernels
share and the values that cross from one kernel to a later one (by pointer out of the kernel
computing them, by value into the kernels reading them), and copies the value outputs out.
Within a kernel every value gets one `const` local, in the order of the loop nest, each loop a
C `for` over its RANGE whose body scopes the values placed in it.

ALU ops render through `ALU_RENDER`, one entry an op, each a function of the operand expressions;
`expression` dispatches on it, so an op missing here fails loudly instead of rendering wrong code.
Memory becomes pointer accesses: global buffers are the entry point's parameters (abi.py), LOCALs
zeroed arrays, versions and windows only change which pointer and
offset an INDEX uses. Arrays a function declares live on its stack up to STACK_BYTES in all and
on the heap beyond (allocated once, before every loop).

Public API, shared with the CUDA backend (uir.backend.cuda), which renders C-like kernels through
it: `ALU_RENDER` (the op table) with its `Context`, `literal` (exact literals), prelude.py's
`Helpers` (the functions that avoid undefined behaviour), and `Emitter`, which renders the
statements of a loop nest (`block`, `loop`, `statement`, `outputs`); a dialect subclasses it where
its memory differs (`pointer` for LOCALs, `heap_array` for big arrays).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from uir.core.bounds import bounds
from uir.core.contraction import multiply_adds
from uir.core.dtypes import DType, Type, bf16, f16, f32
from uir.core.errors import BackendError
from uir.core.kernels import Kernel, Schedule
from uir.core.loops import is_fast
from uir.core.memory import buffer_of
from uir.core.ops import ALU, Op
from uir.core.schedule import Block, flatten
from uir.core.uop import UOp

from . import transcendental
from .abi import (
    ENTRY,
    Layout,
    is_memory,
    layout,
    storage_ctype,
    storage_itemsize,
    value_ctype,
    value_itemsize,
    window,
)
from .prelude import Helpers, bits_type, work_type

# f16 and bf16 values live in floats; each operation computes in double and rounds once to them.
_SMALL_FLOATS = (f16, bf16)

# The most bytes of arrays one entry point keeps on its stack; larger arrays go on the heap. The
# code runs on whatever stack its caller has (8 MiB for a main thread, often less for others):
# a 16 MiB LOCAL on the stack is a crash, not a program.
STACK_BYTES = 64 * 1024


class Context:
    """What an op's rendering may consult: the helper collector and the operand UOps' bounds."""

    def __init__(self, helpers: Helpers) -> None:
        self.helpers = helpers

    def wrap(self, d: DType, expr: str) -> str:
        """An int result computed in `d`'s unsigned work type, brought back to `d` modulo 2^bits."""
        narrowed = f"({expr})" if work_type(d) == bits_type(d) else f"({bits_type(d)})({expr})"
        return f"{self.helpers.as_signed(d)}({narrowed})" if d.signed else narrowed

    def rounded(self, d: DType, expr_in_double: str) -> str:
        """A small float's result: computed exactly or in double, rounded once to `d`."""
        return f"{self.helpers.round_small(d)}({expr_in_double})"


Render = Callable[[Context, UOp, list[str]], str]


def literal(value: object, d: DType) -> str:
    """An exact C literal of a scalar of `d`: floats as C99 hex floats, with no decimal rounding."""
    if d.is_bool:
        return "true" if value else "false"
    if d.is_int:
        v = int(value)  # type: ignore[call-overload]
        if d.signed and v == d.min:
            return f"INT{d.bits}_MIN"  # -2147483648 would be the negation of an unsigned literal
        suffix = "u" if not d.signed else ""
        suffix += "LL" if d.bits == 64 else ""
        return f"({value_ctype(d)}){v}{suffix}"
    f = float(value)  # type: ignore[arg-type]
    single = value_ctype(d) == "float"
    if math.isnan(f):
        return "NAN" if single else "(double)NAN"
    if math.isinf(f):
        text = "INFINITY" if single else "(double)INFINITY"
        return text if f > 0 else f"-{text}"
    # Every f16, bf16 and f32 value is exact in a float literal, so the suffix loses nothing.
    return f.hex() + ("f" if single else "")


def _number(int_op: str, float_op: str) -> Render:
    """+ - *: wrapping through the unsigned work type for ints, one rounding for floats."""

    def render(ctx: Context, uop: UOp, a: list[str]) -> str:
        d = uop.dtype
        if d.is_int:
            if d.signed and d.bits >= 32 and bounds(uop) != (d.min, d.max):
                # Bounds proved the exact result in range (bounds.py gives the full range when
                # it may wrap): no overflow, so signed C is defined and equal. Index arithmetic
                # must read as signed for gcc's vectorizer, which gives up on a wrapping
                # unsigned index (matmul's axpy loop ran scalar: 8x slower).
                return f"({a[0]} {int_op} {a[1]})"
            w = work_type(d)
            return ctx.wrap(d, f"({w}){a[0]} {int_op} ({w}){a[1]}")
        if d in _SMALL_FLOATS:
            return ctx.rounded(d, f"(double){a[0]} {float_op} (double){a[1]}")
        return f"({a[0]} {float_op} {a[1]})"

    return render


def _neg(ctx: Context, uop: UOp, a: list[str]) -> str:
    d = uop.dtype
    if d.is_int:
        return ctx.wrap(d, f"0u - ({work_type(d)}){a[0]}")  # -MIN overflows in signed C
    return f"(-{a[0]})"  # exact for every float, NaN and zeros included


def _maybe(uop: UOp, value: int) -> bool:
    lo, hi = bounds(uop)
    return lo <= value <= hi


def _division_is_safe(a: UOp, b: UOp) -> bool:
    """Whether bounds prove b != 0 and not (a == MIN and b == -1): then C's / and % are defined."""
    d = b.dtype
    return not _maybe(b, 0) and not (d.signed and _maybe(b, -1) and _maybe(a, d.min))


def _idiv(ctx: Context, uop: UOp, a: list[str]) -> str:
    if _division_is_safe(uop.src[0], uop.src[1]):
        return f"({value_ctype(uop.dtype)})({a[0]} / {a[1]})"
    return f"{ctx.helpers.idiv(uop.dtype)}({a[0]}, {a[1]})"


def _mod(ctx: Context, uop: UOp, a: list[str]) -> str:
    if _division_is_safe(uop.src[0], uop.src[1]):
        return f"({value_ctype(uop.dtype)})({a[0]} % {a[1]})"
    return f"{ctx.helpers.mod(uop.dtype)}({a[0]}, {a[1]})"


def _fdiv(ctx: Context, uop: UOp, a: list[str]) -> str:
    if uop.dtype in _SMALL_FLOATS:
        return ctx.rounded(uop.dtype, f"(double){a[0]} / (double){a[1]}")
    return f"({a[0]} / {a[1]})"


def _max_min(is_max: bool) -> Render:
    def render(ctx: Context, uop: UOp, a: list[str]) -> str:
        if uop.dtype.is_float:
            return f"{ctx.helpers.max_min(uop.dtype, is_max)}({a[0]}, {a[1]})"
        better = ">" if is_max else "<"
        return f"({a[0]} {better} {a[1]} ? {a[0]} : {a[1]})"

    return render


def _compare(c_op: str) -> Render:
    # C's comparisons are IEEE's: with a NaN only != holds. Operands share one type, so the usual
    # conversions change no value.
    return lambda ctx, uop, a: f"({a[0]} {c_op} {a[1]})"


def _bitwise(c_op: str) -> Render:
    # On equal int types & | ^ act on the bits; narrow types promote to int, and the result fits.
    return lambda ctx, uop, a: f"({value_ctype(uop.dtype)})({a[0]} {c_op} {a[1]})"


def _count(uop: UOp, b: str) -> str:
    """The shift count `b & (bits-1)` (uir.md 4); C leaves shifting by >= the width undefined."""
    d = uop.dtype
    return f"(({work_type(d)}){b} & {d.bits - 1}u)"


def _shl(ctx: Context, uop: UOp, a: list[str]) -> str:
    d = uop.dtype  # in unsigned: shifting a 1 into the sign bit of a signed int is undefined
    return ctx.wrap(d, f"({work_type(d)}){a[0]} << {_count(uop, a[1])}")


def _shr(ctx: Context, uop: UOp, a: list[str]) -> str:
    d = uop.dtype
    if d.signed:
        return f"{ctx.helpers.shr(d)}({a[0]}, {a[1]})"
    return f"({value_ctype(d)})({a[0]} >> {_count(uop, a[1])})"


def _where(ctx: Context, uop: UOp, a: list[str]) -> str:
    return f"({a[0]} ? {a[1]} : {a[2]})"


def _float_math(single: str, double: str, small: str | None = None) -> Render:
    """Unary float math: `single` on f32, `double` on f64, and on f16/bf16 the double version
    rounded once. `small`, when given, is an exact float form for f16/bf16 (no rounding needed)."""

    def render(ctx: Context, uop: UOp, a: list[str]) -> str:
        d = uop.dtype
        if d in _SMALL_FLOATS:
            if small is not None:
                return small.format(a[0])
            return ctx.rounded(d, double.format(f"(double){a[0]}"))
        return (single if d is f32 else double).format(a[0])

    return render


def _approximate(kernel: str, make: Callable[[], str], double: str) -> Render:
    """EXP2, LOG2, SIN: the f32 kernel `kernel` (C text from `make`), `double` on f64, and the
    double version rounded once on f16/bf16."""
    others = _float_math("", double)

    def render(ctx: Context, uop: UOp, a: list[str]) -> str:
        if uop.dtype is f32:
            return f"{ctx.helpers.use(kernel, make)}({a[0]})"
        return others(ctx, uop, a)

    return render


def _cast(ctx: Context, uop: UOp, a: list[str]) -> str:
    src, d, x = uop.src[0].dtype, uop.dtype, a[0]
    if d.is_bool:
        return f"({x} != 0)"  # NaN != 0 holds: NaN casts to true
    if src.is_bool:
        return f"({value_ctype(d)}){x}"
    if d.is_int:
        if src.is_float:
            return f"{ctx.helpers.float_to_int(src, d)}({x})"
        if d.signed:  # the low bits, through unsigned: C's narrowing to signed is impl-defined
            return f"{ctx.helpers.as_signed(d)}(({bits_type(d)}){x})"
        return f"({value_ctype(d)}){x}"  # conversion to unsigned is modulo 2^bits (C99 6.3.1.3)
    # to a float
    if d in _SMALL_FLOATS:
        if src.is_int and src.bits == 64:
            return ctx.rounded(d, f"{ctx.helpers.odd_double(src)}({x})")
        return ctx.rounded(d, f"(double){x}")  # every other int and float is exact in double
    # f32 and f64: C converts ints and doubles with one correct rounding (ties to even)
    return f"({value_ctype(d)}){x}"


def fused_multiply_add(d: DType, a: str, b: str, c: str) -> str:
    """`a * b + c` rounded once, for f32 or f64 (uir.core.contraction.FUSIBLE)."""
    return f"{'fmaf' if d is f32 else 'fma'}({a}, {b}, {c})"


def _bitcast(ctx: Context, uop: UOp, a: list[str]) -> str:
    src, d = uop.src[0].dtype, uop.dtype
    if src == d:
        return a[0]
    return ctx.helpers.from_bits(d, ctx.helpers.to_bits(src, a[0]))


ALU_RENDER: dict[Op, Render] = {
    Op.ADD: _number("+", "+"),
    Op.SUB: _number("-", "-"),
    Op.MUL: _number("*", "*"),
    Op.NEG: _neg,
    Op.IDIV: _idiv,
    Op.MOD: _mod,
    Op.FDIV: _fdiv,
    Op.MAX: _max_min(True),
    Op.MIN: _max_min(False),
    Op.CMPLT: _compare("<"),
    Op.CMPLE: _compare("<="),
    Op.CMPEQ: _compare("=="),
    Op.CMPNE: _compare("!="),
    Op.AND: _bitwise("&"),
    Op.OR: _bitwise("|"),
    Op.XOR: _bitwise("^"),
    Op.SHL: _shl,
    Op.SHR: _shr,
    Op.WHERE: _where,
    Op.CAST: _cast,
    Op.BITCAST: _bitcast,
    Op.SQRT: _float_math("sqrtf({})", "sqrt({})"),  # correctly rounded (IEEE 754 requires it)
    Op.RECIP: _float_math("(1.0f / {})", "(1.0 / {})"),
    Op.TRUNC: _float_math("truncf({})", "trunc({})", small="truncf({})"),
    # Within 2 ulp (uir.md 4): on f32 a vectorizable polynomial (transcendental.py, within 1 ulp
    # on every input, spec/uir-week8.md 5); on f64 libm; on f16/bf16 libm's double rounded once.
    Op.EXP2: _approximate("uir_exp2_f32", lambda: transcendental.EXP2, "exp2({})"),
    Op.LOG2: _approximate("uir_log2_f32", lambda: transcendental.LOG2, "log2({})"),
    Op.SIN: _approximate("uir_sin_f32", transcendental.sin_f32, "sin({})"),
}
assert set(ALU_RENDER) == ALU, "every ALU op needs a C rendering"


class Emitter:
    """The statements of one function, built in execution order: `block` renders a `Block` of
    the loop nest (uir.core.schedule) into `body`, arrays that must exist before every loop into
    `declarations`; `names` maps each rendered value (and each loop counter) to its C name.

    Subclasses may override `pointer` (where a BUFFER or LOCAL lives) and `heap_array` (arrays
    too big for the stack); everything else is the one C rendering."""

    def __init__(self, sink: UOp, abi: Layout, helpers: Helpers | None = None) -> None:
        self.sink = sink
        self.abi = abi
        # Functions rendered into one translation unit may share one collector of helpers.
        self.helpers = helpers if helpers is not None else Helpers()
        self.ctx = Context(self.helpers)
        self.names: dict[UOp, str] = {}
        self.locals: dict[UOp, str] = {}
        self.declarations: list[str] = []
        self.body: list[str] = []
        self.buffers_used: set[str] = set()
        self.stack_bytes = 0  # of the arrays declared on the stack so far
        self.heap: list[str] = []  # arrays to free before returning
        self.outputs_in_place = _outputs_in_place(sink, abi)
        # The accumulating ADDs of FAST folds -> the MUL each absorbs (uir.core.contraction).
        self.multiply_adds: dict[UOp, UOp] = {}
        self.absorbed: set[UOp] = set()

    def fresh(self, uop: UOp) -> str:
        """A new C name for the value (or loop counter) `uop`, recorded in `names`."""
        name = self.names[uop] = f"v{len(self.names)}"
        return name

    def on_stack(self, size: int, itemsize: int) -> bool:
        """Whether an array fits in what is left of STACK_BYTES; if so, it takes that room."""
        if self.stack_bytes + size * itemsize > STACK_BYTES:
            return False
        self.stack_bytes += size * itemsize
        return True

    def heap_array(self, ctype: str, name: str, size: int) -> None:
        """Declare `name` as a zeroed heap array at the top of the function, freed before it
        returns: allocated once even when the value that fills it runs in a loop."""
        self.heap.append(name)
        self.declarations.append(
            f"{ctype} *{name} = {self.helpers.alloc()}({size}, sizeof *{name});"
        )

    # memory -----------------------------------------------------------------------------------

    def pointer(self, root: UOp) -> str:
        if root in self.outputs_in_place:
            name = self.outputs_in_place[root]
            self.buffers_used.add(name)
            return name
        if root.op is Op.BUFFER:
            name = f"buf{root.arg}"
            self.buffers_used.add(name)
            return name
        if root not in self.locals:
            name = f"local{len(self.locals)}"
            self.locals[root] = name
            ctype, size = storage_ctype(root.dtype), root.type.size
            # Zeroed once, at the start: a LOCAL is a buffer, not a per-iteration value.
            if self.on_stack(size, storage_itemsize(root.dtype)):
                self.declarations.append(f"{ctype} {name}[{size}] = {{0}};")
            else:
                self.heap_array(ctype, name, size)
        return self.locals[root]

    def element(self, ref: UOp) -> str:
        """The lvalue an INDEX of memory names (in range where its gate holds: uir.md 6.4)."""
        w = window(ref.src[0])
        index = self.names[ref.src[1]]
        # Index from the window's start, a valid pointer: `buf[begin + i]` would add an index that
        # a false gate leaves out of range, which C compilers flag as a possible overflow.
        base = f"({self.pointer(w.buffer)} + {w.begin})" if w.begin else self.pointer(w.buffer)
        return f"{base}[{index}]"

    def gate(self, ref: UOp) -> str | None:
        return self.names[ref.src[2]] if len(ref.src) == 3 else None

    def load(self, uop: UOp) -> str:
        ref = uop.src[0]
        if ref.op is not Op.INDEX:
            raise BackendError("a whole-buffer LOAD is not supported by the C backend yet")
        value = self.decode(uop.dtype, self.element(ref))
        gate = self.gate(ref)
        # The gate guards the access itself: a false gate reads nothing (uir.md 6.2).
        return f"{gate} ? {value} : 0" if gate else value

    def store(self, uop: UOp) -> None:
        ref, value = uop.src
        if ref.op is not Op.INDEX:
            raise BackendError("a whole-buffer STORE is not supported by the C backend yet")
        dtype = value.dtype
        text = f"{self.element(ref)} = {self.encode(dtype, self.names[value])};"
        gate = self.gate(ref)
        self.body.append(f"if ({gate}) {text}" if gate else text)

    def decode(self, d: DType, element: str) -> str:
        if d.is_bool:
            return f"({element} != 0)"  # any nonzero byte is true; reading it as _Bool could trap
        if d in _SMALL_FLOATS:
            return self.helpers.from_bits(d, element)
        return element

    def encode(self, d: DType, value: str) -> str:
        if d.is_bool:
            return f"(uint8_t){value}"
        if d in _SMALL_FLOATS:
            return self.helpers.to_bits(d, value)
        return value

    # values -----------------------------------------------------------------------------------

    def declare(self, uop: UOp, expr: str) -> None:
        name = self.fresh(uop)
        self.body.append(f"const {value_ctype(uop.dtype)} {name} = {expr};")

    def declare_table(self, uop: UOp, elements: list[str]) -> None:
        """A shaped CONST: a static table, which takes no stack."""
        name = self.fresh(uop)
        items = ", ".join(elements)
        self.body.append(
            f"static const {value_ctype(uop.dtype)} {name}[{len(elements)}] = {{{items}}};"
        )

    def declare_stack(self, uop: UOp) -> None:
        """A STACK: its elements in an array, on the stack or (large) on the heap."""
        name = self.fresh(uop)
        ctype, elements = value_ctype(uop.dtype), [self.names[s] for s in uop.src]
        if self.on_stack(len(elements), value_itemsize(uop.dtype)):
            items = ", ".join(elements)
            self.body.append(f"const {ctype} {name}[{len(elements)}] = {{{items}}};")
        else:
            self.heap_array(ctype, name, len(elements))
            self.body.extend(f"{name}[{i}] = {e};" for i, e in enumerate(elements))

    def alu(self, uop: UOp) -> None:
        if uop.type.shape:
            # rangeify turned every shaped ALU op into loops over its elements (render_c)
            raise BackendError(f"the C backend renders shaped {uop.op} only through rangeify")
        if uop in self.absorbed:
            return  # computed by the fused multiply-add that reads it, its one reader
        mul = self.multiply_adds.get(uop)
        if mul is not None:
            # One rounding for the product and the sum. fmaf is correctly rounded wherever it
            # runs (one instruction with -march=x86-64-v3 and on GPUs, libm's elsewhere), so
            # every machine gets the same bits.
            (acc,) = (s for s in uop.src if s is not mul)
            a, b = (self.names[s] for s in mul.src)
            self.declare(uop, fused_multiply_add(uop.dtype, a, b, self.names[acc]))
            return
        self.declare(uop, ALU_RENDER[uop.op](self.ctx, uop, [self.names[s] for s in uop.src]))

    def statement(self, uop: UOp) -> None:
        op = uop.op
        if op in ALU:
            self.alu(uop)
        elif op is Op.CONST:
            if uop.type.shape:
                self.declare_table(uop, [literal(v, uop.dtype) for v in uop.arg])
            else:
                self.declare(uop, literal(uop.arg, uop.dtype))
        elif op is Op.STACK:
            self.declare_stack(uop)
        elif op is Op.INDEX and not is_memory(uop.src[0]):
            # proven in range by the verifier (uir.md 5): no check at run time
            self.declare(uop, f"{self.names[uop.src[0]]}[{self.names[uop.src[1]]}]")
        elif op is Op.LOAD:
            self.declare(uop, self.load(uop))
        elif op is Op.STORE:
            self.store(uop)
        elif op in (Op.BUFFER, Op.LOCAL, Op.AFTER, Op.SHRINK, Op.INDEX, Op.END, Op.SINK):
            # Memory references and places only steer the accesses that use them: in C every
            # version of a buffer, loop-carried or after an END, is the buffer's one memory.
            pass
        else:
            raise BackendError(f"the C backend cannot render {op} yet")

    def block(self, block: Block, used: set[UOp]) -> None:
        """The statements of `block` in its order, each inner loop as a C `for` over its RANGE."""
        for item in block.body:
            if isinstance(item, Block):
                self.loop(item, used)
            elif item.op is not Op.CONST or item in used:
                self.statement(item)

    def loop(self, block: Block, used: set[UOp]) -> None:
        """`for (i = 0; i < end; i++)`: the counter is an i32 in [0, end-1], so `i++` never
        overflows, and an end <= 0 runs no iteration. The end is a value declared before the
        loop, read once as the loop starts. Values declared in the body are local to it."""
        rng = block.range
        assert rng is not None
        if is_fast(rng):
            found = multiply_adds(block)
            self.multiply_adds.update(found)
            self.absorbed.update(found.values())
        counter = self.fresh(rng)
        end = self.names[rng.src[0]]
        self.body.append(f"for (int32_t {counter} = 0; {counter} < {end}; {counter}++) {{")
        start = len(self.body)
        self.block(block, used)
        self.body[start:] = [f"    {line}" for line in self.body[start:]]
        self.body.append("}")

    def outputs(self) -> None:
        """Copy each value SINK source into its output pointer (abi.py)."""
        for source, readback in zip(self.sink.src, self.abi.readbacks, strict=True):
            if readback.output is None:
                continue
            out = f"out{readback.output}"
            if is_memory(source):
                continue  # rangeify's loops wrote it in place (_outputs_in_place)
            if source.type.shape:
                value = self.encode(source.dtype, f"{self.names[source]}[e]")
                self.body.append(
                    f"for (int e = 0; e < {source.type.size}; e++) {out}[e] = {value};"
                )
            else:
                self.body.append(f"{out}[0] = {self.encode(source.dtype, self.names[source])};")


def _outputs_in_place(lowered: UOp, abi: Layout) -> dict[UOp, str]:
    """The BUFFERs rangeify made for value outputs -> the output pointers they stand for.

    rangeify writes the values the SINK prints into new global BUFFERs; the ABI is the program's
    own (abi.py), where each is an output pointer, so the loops write there."""
    return {
        buffer_of(source): f"out{back.output}"
        for source, back in zip(lowered.src, abi.readbacks, strict=True)
        if back.output is not None and is_memory(source)
    }


def _used_values(order: list[UOp]) -> set[UOp]:
    """Values some rendered statement of a kernel reads: a CONST that only initializes a BUFFER
    is not one, nor one only printed (the driver writes the outputs)."""
    used: set[UOp] = set()
    for uop in order:
        if uop.op in (Op.BUFFER, Op.SINK) or _is_place(uop):
            continue  # a place renders inside the access using it, perhaps in another kernel
        for s in uop.src:
            used.update(s.src[1:] if _is_place(s) else (s,))
    return used


def _is_place(uop: UOp) -> bool:
    return uop.op is Op.INDEX and is_memory(uop.src[0])


def _abi_parameters(abi: Layout) -> list[tuple[str, str]]:
    """(C declaration, name) of each entry point parameter. restrict: distinct parameters never
    overlap (the ABI), and saying so lets the C compiler keep loaded values in registers across
    stores and vectorize neighbouring accesses."""
    params = [
        (f"{storage_ctype(b.type.dtype)} *restrict buf{b.slot}", f"buf{b.slot}")
        for b in abi.buffers
    ]
    params += [
        (f"{storage_ctype(t.dtype)} *restrict out{i}", f"out{i}") for i, t in enumerate(abi.outputs)
    ]
    return params


def _signature(abi: Layout, entry: str = ENTRY) -> str:
    params = [decl for decl, _ in _abi_parameters(abi)]
    return f"void {entry}({', '.join(params) or 'void'})"


def _describe(t: Type) -> str:
    return f"{storage_ctype(t.dtype)}[{t.size}] ({t})"


def _header(abi: Layout, entry: str) -> str:
    lines = [
        "/* Rendered by the UIR C backend (uir.backend.c). C99; compile with -ffp-contract=off.",
        f" * Entry point: {_signature(abi, entry)};",
        " * Buffers in slot order (they start with the program's initial contents and end with",
        " * its final ones), then one output per SINK source computed as a value, in SINK order.",
    ]
    for b in abi.buffers:
        lines.append(f" *   buf{b.slot}: global BUFFER slot {b.slot}, {_describe(b.type)}")
    sources = [k for k, back in enumerate(abi.readbacks) if back.output is not None]
    for i, t in enumerate(abi.outputs):
        lines.append(f" *   out{i}: SINK source {sources[i]}, {_describe(t)}")
    lines.append(
        " * bool is uint8_t (0 or 1; nonzero reads as true); f16 and bf16 are their bits. */"
    )
    return "\n".join(lines)


INCLUDES = "\n".join(
    f"#include <{h}.h>" for h in ("math", "pthread", "stdbool", "stdint", "stdlib", "string")
)

# Below this much work (iterations times statements, from the static bounds) a parallel loop
# stays on the calling thread: starting and joining a thread costs about 20 us.
MIN_PARALLEL_WORK = 1 << 16

# A parallel kernel's loop runs its iterations in `parts` contiguous shares, one a thread. The
# threads are POSIX threads started for the loop and joined after it, not OpenMP's: libgomp keeps
# a pool of threads after a parallel region, and a child forked later (runtime.py runs every
# program in one) hangs in its first region. Here nothing outlives a call.
THREAD_POOL = f"""typedef void (*uir_task)(void *, int32_t, int32_t);
enum {{ UIR_MAX_THREADS = 256 }};
static int32_t uir_threads = 1;
static int64_t uir_min_work = {MIN_PARALLEL_WORK};

struct uir_part {{
    uir_task task;
    void *args;
    int32_t part, parts;
}};

static void *uir_part_main(void *arg) {{
    struct uir_part *p = (struct uir_part *)arg;
    p->task(p->args, p->part, p->parts);
    return NULL;
}}

/* Run task(args, part, parts) for part = 0 .. parts-1, each on its own thread; a thread that
 * cannot start leaves its share to this one. */
static void uir_parallel(uir_task task, void *args, int64_t work, int64_t iterations) {{
    int32_t parts = uir_threads < UIR_MAX_THREADS ? uir_threads : UIR_MAX_THREADS;
    if (iterations < parts) parts = iterations < 1 ? 1 : (int32_t)iterations;
    if (parts <= 1 || work < uir_min_work) {{
        task(args, 0, 1);
        return;
    }}
    pthread_t ids[UIR_MAX_THREADS];
    struct uir_part info[UIR_MAX_THREADS];
    int32_t started = 1;
    for (int32_t i = 1; i < parts; i++) {{
        info[i].task = task;
        info[i].args = args;
        info[i].part = i;
        info[i].parts = parts;
        if (pthread_create(&ids[i], NULL, uir_part_main, &info[i]) != 0) break;
        started++;
    }}
    task(args, 0, parts);
    for (int32_t i = started; i < parts; i++) task(args, i, parts);
    for (int32_t i = 1; i < started; i++) pthread_join(ids[i], NULL);
}}"""


def _threads_function(entry: str, threaded: bool) -> str:
    """`ENTRY_threads(n, min_work)`: how many threads the PARALLEL loops of the entry point's
    later calls use, and the least work (min_work < 0: MIN_PARALLEL_WORK) for which a loop uses
    them. A parameter of the library, not an environment variable: a process may hold several.
    A program without a threaded loop has it too, doing nothing."""
    if not threaded:
        body = "    (void)n;\n    (void)min_work;"
        return f"void {entry}_threads(int32_t n, int64_t min_work) {{\n{body}\n}}"
    return (
        f"void {entry}_threads(int32_t n, int64_t min_work) {{\n"
        "    uir_threads = n < 1 ? 1 : n;\n"
        f"    uir_min_work = min_work < 0 ? {MIN_PARALLEL_WORK} : min_work;\n}}"
    )


def _work(block: Block) -> int:
    """Statements a run of `block` executes at most, each loop at its end's upper bound."""
    total = 0
    for item in block.body:
        if isinstance(item, Block):
            assert item.range is not None
            total += max(bounds(item.range.src[0])[1], 1) * _work(item)
        else:
            total += 1
    return total


def _threaded(kernel: Kernel, shared: dict[UOp, str]) -> bool:
    """Whether a kernel's loop may run its iterations on several threads: it is a PARALLEL loop
    and nothing else (each thread runs the kernel's function on its share), it hands no value
    to a later kernel, and no LOCAL that several kernels share is carried across it (rule 3 of
    spec/uir-week7.md makes such a LOCAL each iteration's own; in the function, where each
    thread's call declares its LOCALs, it is, but a shared one is the driver's one copy)."""
    loop = kernel.loop
    if loop is None or loop.range is None or len(kernel.items) != 1 or kernel.values_out:
        return False
    for uop in flatten(loop):
        if uop.op is Op.AFTER and loop.range in uop.src[1:] and buffer_of(uop) in shared:
            return False
    return True


class _KernelEmitter(Emitter):
    """The emitter of one kernel's function: the LOCALs several kernels share are the driver's,
    passed in as pointers."""

    def __init__(self, schedule: Schedule, abi: Layout, helpers: Helpers, shared: dict[UOp, str]):
        super().__init__(schedule.sink, abi, helpers)
        self.shared = shared
        self.shared_used: set[str] = set()
        self.parallel: Block | None = None  # the loop whose iterations the threads share

    def loop(self, block: Block, used: set[UOp]) -> None:
        at = len(self.body)
        super().loop(block, used)
        if block is not self.parallel:
            return
        # The same loop over this thread's share of the iterations only:
        # [end * part / parts, end * (part + 1) / parts), an end <= 0 counting 0.
        assert block.range is not None
        i, end = self.names[block.range], self.names[block.range.src[0]]
        assert self.body[at].startswith(f"for (int32_t {i} = 0;")
        total = f"(int64_t)({end} > 0 ? {end} : 0)"
        self.body[at : at + 1] = [
            f"const int32_t {i}_lo = (int32_t)({total} * part / parts);",
            f"const int32_t {i}_hi = (int32_t)({total} * (part + 1) / parts);",
            f"for (int32_t {i} = {i}_lo; {i} < {i}_hi; {i}++) {{",
        ]

    def pointer(self, root: UOp) -> str:
        if root in self.shared:
            self.shared_used.add(self.shared[root])
            return self.shared[root]
        return super().pointer(root)


class _Driver:
    """The entry point: where the shared LOCALs and the crossing values live, and which calls
    each kernel's function in turn."""

    def __init__(self, schedule: Schedule, abi: Layout, entry: str) -> None:
        self.schedule = schedule
        self.abi = abi
        self.entry = entry
        self.emitter = Emitter(schedule.sink, abi)
        self.shared = {root: f"shared{i}" for i, root in enumerate(schedule.shared_locals)}
        self.crossing = {v: f"x{i}" for i, v in enumerate(schedule.crossing)}
        self.functions: list[str] = []  # one a kernel (what render_kernels gives)
        self.tasks: list[str] = []  # the threaded kernels' argument structs and tasks
        self.calls: list[str] = []
        self.threaded = False  # whether some kernel runs on THREAD_POOL
        self.buffers_used: set[str] = set()

    def declare(self) -> None:
        """The shared LOCALs (zeroed once) and a variable for each crossing value."""
        for root, name in self.shared.items():
            self.emitter.locals[root] = name
            ctype, size = storage_ctype(root.dtype), root.type.size
            if self.emitter.on_stack(size, storage_itemsize(root.dtype)):
                self.emitter.declarations.append(f"{ctype} {name}[{size}] = {{0}};")
            else:
                self.emitter.heap_array(ctype, name, size)
        for value, name in self.crossing.items():
            self.emitter.names[value] = name
            dims = f"[{value.type.size}]" if value.type.shape else ""
            self.emitter.declarations.append(f"{value_ctype(value.dtype)} {name}{dims};")

    def kernel(self, kernel: Kernel) -> None:
        """Render one kernel's function and the driver's call of it."""
        emitter = _KernelEmitter(self.schedule, self.abi, self.emitter.helpers, self.shared)
        threaded = _threaded(kernel, self.shared)
        if threaded:
            emitter.parallel = kernel.loop
        home = self.schedule.home
        for c in kernel.constants:
            if home.get(c) != kernel.index:
                emitter.statement(c)  # a constant renders where it is read
        params: list[tuple[str, str]] = []
        for value in kernel.values_in:
            name = self.crossing[value]
            ctype = value_ctype(value.dtype)
            decl = f"const {ctype} *restrict {name}" if value.type.shape else f"{ctype} {name}"
            params.append((decl, name))
            emitter.names[value] = name
        body = emitter.body
        emitter.block(Block(None, list(kernel.items)), _used_values(list(kernel.statements)))
        outs: list[tuple[str, str]] = []
        for value in kernel.values_out:
            name, mine = self.crossing[value], emitter.names[value]
            ctype = value_ctype(value.dtype)
            outs.append((f"{ctype} *restrict {name}_out", name if value.type.shape else f"&{name}"))
            if value.type.shape:
                body.append(f"memcpy({name}_out, {mine}, {value.type.size} * sizeof *{mine});")
            else:
                body.append(f"*{name}_out = {mine};")
        used = emitter.buffers_used | emitter.shared_used
        self.buffers_used |= emitter.buffers_used
        memory = [(d, n) for d, n in _abi_parameters(self.abi) if n in used]
        memory += [
            (f"{storage_ctype(r.dtype)} *restrict {n}", n)
            for r, n in self.shared.items()
            if n in used
        ]
        signature = [d for d, _ in [*memory, *params]] + [d for d, _ in outs]
        arguments = [n for _, n in [*memory, *params]] + [a for _, a in outs]
        name = f"{self.entry}_{kernel.name}"
        freed = [f"free({h});" for h in emitter.heap]
        lines = [*emitter.declarations, *emitter.body, *freed]
        text = "\n".join(f"    {line}" for line in lines)
        if threaded:
            signature += ["int32_t part", "int32_t parts"]
        self.functions.append(
            f"/* {kernel.summary} */\n"
            f"static void {name}({', '.join(signature) or 'void'}) {{\n{text}\n}}"
        )
        if threaded:
            self.threaded = True
            self.threaded_call(kernel, name, signature[:-2], arguments)
        else:
            self.calls.append(f"{name}({', '.join(arguments)});")

    def threaded_call(
        self, kernel: Kernel, name: str, signature: list[str], arguments: list[str]
    ) -> None:
        """A task that unpacks the kernel's arguments from a struct, and a driver call that
        runs it on the threads (THREAD_POOL's uir_parallel)."""
        loop = kernel.loop
        assert loop is not None and loop.range is not None
        members = "".join(f"    {decl};\n" for decl in signature) or "    char unused;\n"
        unpacked = ", ".join([*(f"a->{n}" for n in arguments), "part", "parts"])
        self.tasks.append(
            f"struct {name}_args {{\n{members}}};\n\n"
            f"static void {name}_task(void *args, int32_t part, int32_t parts) {{\n"
            f"    struct {name}_args *a = (struct {name}_args *)args;\n"
            f"    {'(void)a;' if not arguments else ''}{name}({unpacked});\n}}"
        )
        iterations = max(bounds(loop.range.src[0])[1], 1)
        work = iterations * max(_work(loop), 1)
        values = ", ".join(arguments) or "0"
        self.calls.append(
            f"{{ struct {name}_args a = {{{values}}}; "
            f"uir_parallel({name}_task, &a, {work}LL, {iterations}LL); }}"
        )

    def render(self) -> str:
        self.declare()
        for kernel in self.schedule.kernels:
            self.kernel(kernel)
        driver = self.emitter
        driver.body.extend(self.calls)
        for source in dict.fromkeys(self.schedule.outputs):
            if source.op is Op.CONST:
                driver.statement(source)
        driver.outputs()
        # A buffer no kernel touches (one only read back) must not warn under -Wextra.
        unused = [
            f"(void){n};"
            for _, n in _abi_parameters(self.abi)
            if n.startswith("buf") and n not in self.buffers_used
        ]
        freed = [f"free({h});" for h in driver.heap]
        lines = [*driver.declarations, *unused, *driver.body, *freed]
        body = "\n".join(f"    {line}" for line in lines)
        return "\n\n".join(
            [*self.functions, *self.tasks, f"{_signature(self.abi, self.entry)} {{\n{body}\n}}\n"]
        )


def render_c(schedule: Schedule, entry: str = ENTRY) -> str:
    """The C translation unit of a program's schedule of kernels (uir.core.plugins.prepare
    makes it): header comment, helpers, one function per kernel, and the entry point, whose ABI
    is that of the program as written (abi.py). `entry` renames the entry point, so that several
    programs can share one library (tests)."""
    abi = layout(schedule.source)
    driver = _Driver(schedule, abi, entry)
    code = driver.render()
    helpers = driver.emitter.helpers.text()
    pool = THREAD_POOL if driver.threaded else ""
    parts = [_header(abi, entry), INCLUDES, pool, helpers, code.rstrip("\n")]
    threads = _threads_function(entry, driver.threaded)
    return "\n\n".join([*(p for p in parts if p), threads]) + "\n"


def render_kernels(schedule: Schedule, entry: str = ENTRY) -> list[str]:
    """Each kernel's function in the C of `render_c(schedule, entry)`, in schedule order: the
    `/* kernelN ... */` comment and the `static void` function it heads, as that translation
    unit has them (what `uir viz` shows beside each kernel). The helpers they call and the
    driver are not included."""
    driver = _Driver(schedule, layout(schedule.source), entry)
    driver.render()
    return driver.functions

"""The Op enum and the op groups the verifier, interpreter and passes dispatch on."""

from __future__ import annotations

import enum


class Op(enum.Enum):
    # structure
    SINK = enum.auto()
    CONST = enum.auto()
    PARAM = enum.auto()
    CALL = enum.auto()
    STACK = enum.auto()
    INDEX = enum.auto()
    # unary
    NEG = enum.auto()
    SQRT = enum.auto()
    RECIP = enum.auto()
    TRUNC = enum.auto()
    EXP2 = enum.auto()
    LOG2 = enum.auto()
    SIN = enum.auto()
    CAST = enum.auto()
    BITCAST = enum.auto()
    # binary
    ADD = enum.auto()
    SUB = enum.auto()
    MUL = enum.auto()
    IDIV = enum.auto()
    MOD = enum.auto()
    FDIV = enum.auto()
    MAX = enum.auto()
    MIN = enum.auto()
    CMPLT = enum.auto()
    CMPLE = enum.auto()
    CMPEQ = enum.auto()
    CMPNE = enum.auto()
    AND = enum.auto()
    OR = enum.auto()
    XOR = enum.auto()
    SHL = enum.auto()
    SHR = enum.auto()
    # ternary
    WHERE = enum.auto()
    # memory (week 2)
    BUFFER = enum.auto()
    LOCAL = enum.auto()
    SHRINK = enum.auto()
    LOAD = enum.auto()
    STORE = enum.auto()
    AFTER = enum.auto()
    # loops (week 3)
    RANGE = enum.auto()
    END = enum.auto()
    # shaped values and movement (weeks 4 and 5)
    REDUCE = enum.auto()
    EXPAND = enum.auto()
    STAGE = enum.auto()
    RESHAPE = enum.auto()
    PERMUTE = enum.auto()
    PAD = enum.auto()
    FLIP = enum.auto()
    # gradients (week 9)
    GRAD = enum.auto()

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__
    # Members are singletons: hash by identity in C rather than by name in Python. Every UOp
    # construction hashes its op, so this is measurable in parsing and rewriting.
    __hash__ = object.__hash__


# Float-only unary math.
FLOAT_UNARY = frozenset({Op.SQRT, Op.RECIP, Op.TRUNC, Op.EXP2, Op.LOG2, Op.SIN})
UNARY = FLOAT_UNARY | {Op.NEG}
# Binary ops whose operands and result share one dtype, by the kinds of dtype they take.
NUMBER_BINARY = frozenset({Op.ADD, Op.SUB, Op.MUL, Op.MAX, Op.MIN})
INT_BINARY = frozenset({Op.IDIV, Op.MOD, Op.SHL, Op.SHR})
FLOAT_BINARY = frozenset({Op.FDIV})
BITWISE = frozenset({Op.AND, Op.OR, Op.XOR})
BINARY = NUMBER_BINARY | INT_BINARY | FLOAT_BINARY | BITWISE
COMPARE = frozenset({Op.CMPLT, Op.CMPLE, Op.CMPEQ, Op.CMPNE})
# Every op that computes elementwise on values through the semantics table.
ALU = UNARY | BINARY | COMPARE | {Op.WHERE, Op.CAST, Op.BITCAST}
# Movement ops of shaped values (uir.md section 9): each result element is one source element
# (or PAD's zero), found by an index map. STACK of shaped values and a SHRINK of a value (not of
# memory) are movement too; they share their op with week 1's vectors and week 2's windows.
MOVEMENT = frozenset({Op.RESHAPE, Op.PERMUTE, Op.EXPAND, Op.PAD, Op.SHRINK, Op.FLIP})
# The most axes a shaped type may have (uir.md section 9).
MAX_RANK = 8
# The most elements a type may have (spec/uir-week1.md section 4): every element of a buffer or a
# shaped value has an i32 index, and a loop over them an i32 counter. With 8-byte elements it
# bounds a value at 16 GiB.
MAX_ELEMENTS = 2**31 - 1
COMMUTATIVE = frozenset({Op.ADD, Op.MUL, Op.MAX, Op.MIN, Op.AND, Op.OR, Op.XOR, Op.CMPEQ, Op.CMPNE})

# The ops each week of the course introduces (spec/uir-week1.md to uir-week5.md, uir-week9.md):
# a week's programs may use its own and every earlier week's. Weeks 6 to 8 and 10 introduce no ops.
WEEK_INTRODUCES: dict[int, frozenset[Op]] = {
    1: frozenset({Op.SINK, Op.CONST, Op.PARAM, Op.CALL, Op.STACK, Op.INDEX}) | ALU,
    2: frozenset({Op.BUFFER, Op.LOCAL, Op.SHRINK, Op.LOAD, Op.STORE, Op.AFTER}),
    3: frozenset({Op.RANGE, Op.END}),
    4: frozenset({Op.REDUCE, Op.EXPAND, Op.STAGE}),
    5: frozenset({Op.RESHAPE, Op.PERMUTE, Op.PAD, Op.FLIP}),
    9: frozenset({Op.GRAD}),
}


def ops_of_week(week: int) -> frozenset[Op]:
    """The ops a program of course week `week` (1 or more) may use."""
    return frozenset().union(*(ops for w, ops in WEEK_INTRODUCES.items() if w <= week))


def week_of(op: Op) -> int:
    """The week that introduces `op`."""
    return next(w for w, ops in WEEK_INTRODUCES.items() if op in ops)


# The words an argument may hold besides op names. PARALLEL marks a RANGE whose iterations are
# independent (spec/uir-week7.md); FAST a REDUCE that may fold in any order (spec/uir-week8.md).
# A word is kept as its text.
PARALLEL = "PARALLEL"
FAST = "FAST"
WORDS = frozenset({PARALLEL, FAST})

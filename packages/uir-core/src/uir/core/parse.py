"""Text to UOp graph: the fixed grammar of uir.md section 2.

Every rejection is a ParseError naming the line. The parser also gives CONST arguments their value
in the CONST's type (a float literal rounded once to its dtype), so that identical statements, and
arguments equal in value, denote one UOp.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from .dtypes import DTYPES, DType, Type
from .errors import ParseError
from .floats import round_decimal, round_dyadic
from .ops import WORDS, Op
from .suggest import DTYPE_SPELLINGS, did_you_mean, non_ascii_note
from .uop import UOp

NAME = re.compile(r"%[A-Za-z0-9_.]+")
OP_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
TYPE = re.compile(r"([a-z0-9]+)(?:\[(\d+(?:,\d+)*)\])?")
INT = re.compile(r"-?(?:0x[0-9A-Fa-f]+|\d+)")
DECIMAL = re.compile(r"-?(?:\d+\.\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)")
HEXFLOAT = re.compile(r"(-?)0x([0-9A-Fa-f]+)(?:\.([0-9A-Fa-f]*))?p([+-]?\d+)")
ARG_TOKEN = re.compile(r"[ \t]*(\(|\)|,|[^ \t(),]+)")
BLANKS = re.compile(r"[ \t]+")
BAD_SPACE = re.compile(r"[^\S \t]")  # whitespace other than space and tab
WORD = re.compile(r"[^ \t]+")
MAX_NESTING = 64
# A statement as nearly every one is written, `%x = OP TYPE %a %b ARG`, each word where the full
# grammar would find it: the parser reads such a statement with one match, and sends any other
# (and every mistake) through the word-by-word path that says what is wrong and where.
SIMPLE_LENGTH = 200
SIMPLE_STATEMENT = re.compile(
    rf"({NAME.pattern})[ \t]+=[ \t]+({OP_NAME.pattern})[ \t]+([^ \t]+)"
    rf"((?:[ \t]+{NAME.pattern}(?=[ \t]|$))*)(?:[ \t]+([^% \t].*))?"
)


@dataclass(frozen=True)
class FloatLiteral:
    """A float literal's exact value; it becomes a Python float once its dtype is known.

    The value is `int(digits, 16 if binary else 10) * (2 if binary else 10) ** exponent`: decimal
    digits without leading or trailing zeros and a power of ten, or, for a hex float too long to
    write in decimal cheaply, an odd hex mantissa and a power of two. Every other hex float is
    converted to the decimal form, so literals are equal exactly when their values are (short of
    a decimal spelling of such a long hex float). Every step is linear in the literal's length.
    """

    digits: str  # "" for zero
    exponent: int = 0
    binary: bool = False  # written as a hex float
    negative: bool = False
    special: str | None = None  # "inf" or "nan"

    def __str__(self) -> str:
        """The value as a literal of the same radix, positional where that stays short."""
        sign = "-" if self.negative else ""
        if self.special:
            return sign + self.special
        if not self.digits:
            return f"{sign}0.0"
        if self.binary:
            return f"{sign}0x{self.digits}p{self.exponent}"
        if -len(self.digits) - 20 <= self.exponent < 0:
            whole = self.digits[: self.exponent].lstrip("0") or "0"
            frac = self.digits[self.exponent :].rjust(-self.exponent, "0")
            return f"{sign}{whole}.{frac}"
        if 0 <= self.exponent <= 20:
            return f"{sign}{self.digits}{'0' * self.exponent}.0"
        head, tail = self.digits[0], self.digits[1:] or "0"
        return f"{sign}{head}.{tail}e{self.exponent + len(self.digits) - 1}"

    def rounded(self, dtype: DType) -> float:
        if self.special == "nan":
            return float("nan")
        if self.special == "inf":
            magnitude = math.inf
        elif self.binary:
            magnitude = round_dyadic(int(self.digits or "0", 16), self.exponent, dtype)
        else:
            magnitude = round_decimal(self.digits, self.exponent, dtype)
        return -magnitude if self.negative else magnitude


@dataclass(frozen=True)
class LongInt:
    """An int literal of over 4,300 decimal digits (or 3,500 hex digits): Python's int conversion
    refuses that many (it is quadratic). It lies beyond the range of every int dtype, so only its
    digits are kept; a float CONST still rounds it (to infinity)."""

    digits: str  # without leading zeros
    hex: bool = False
    negative: bool = False

    def __str__(self) -> str:
        return ("-" if self.negative else "") + ("0x" if self.hex else "") + self.digits

    def rounded(self, dtype: DType) -> float:
        if self.hex:
            magnitude = round_dyadic(int(self.digits, 16), 0, dtype)
        else:
            magnitude = round_decimal(self.digits, 0, dtype)
        return -magnitude if self.negative else magnitude


@dataclass
class Program:
    """A parsed file: its SINK and the line that defined each UOp (for error messages)."""

    sink: UOp
    lines: dict[UOp, int]
    path: str = "<input>"

    def line_of(self, uop: UOp) -> int | None:
        return self.lines.get(uop)


class _Statement(NamedTuple):  # a tuple: built once per statement, cheaper than a dataclass
    line: int
    name: str
    op: Op
    type: Type
    operands: tuple[str, ...]
    arg: Any
    code: str = ""  # the statement's text, from which `column` finds where its words start
    offset: int = 0  # where `code` starts on its line

    def column(self, word: int) -> int:
        """Where word `word` of the statement starts on its line (0 the name, 4 the first
        operand): worked out only for an error message, so a statement that parses pays nothing."""
        return _word_start(self.code, self.offset, word)


# Python refuses to convert longer decimal strings to int or back (the conversion is quadratic);
# a hex int of more digits would print with more decimal digits than that.
INT_DIGITS_LIMIT = 4300
HEX_DIGITS_LIMIT = 3500
# An exponent written with more digits than this moves any literal's value beyond every dtype
# (a literal's own digits could never move it back): it is read as this many nines.
EXPONENT_DIGITS_LIMIT = 18


def _exponent(text: str) -> int:
    """A literal's exponent, saturated where its text is too long to matter (or to convert)."""
    negative = text.startswith("-")
    digits = text.lstrip("+-").lstrip("0") or "0"
    if len(digits) > EXPONENT_DIGITS_LIMIT:
        digits = "9" * EXPONENT_DIGITS_LIMIT
    return -int(digits) if negative else int(digits)


# A hex float m * 2**e (m odd) with bits(m) + |e| up to this is converted to decimal: that covers
# every value of every float dtype, and the decimal has at most about 1,600 digits.
SHORT_HEXFLOAT_BITS = 2200


def _decimal_literal(digits: str, exponent: int, negative: bool) -> FloatLiteral:
    """The FloatLiteral of `int(digits) * 10**exponent`, its digits made canonical."""
    digits = digits.lstrip("0")
    significant = digits.rstrip("0")
    exponent += len(digits) - len(significant)
    return FloatLiteral(significant, exponent if significant else 0, False, negative)


def _decimal(text: str) -> FloatLiteral:
    mantissa, _, exp = text.lower().lstrip("-").partition("e")
    whole, _, frac = mantissa.partition(".")
    return _decimal_literal(whole + frac, _exponent(exp or "0") - len(frac), text.startswith("-"))


def _hexfloat(sign: str, whole: str, frac: str, exp: str) -> FloatLiteral:
    mantissa = int(whole + frac, 16)  # linear: the radix is a power of two
    if not mantissa:
        return FloatLiteral("", 0, False, sign == "-")
    zeros = (mantissa & -mantissa).bit_length() - 1  # make the mantissa odd: one form per value
    mantissa >>= zeros
    exponent = _exponent(exp) - 4 * len(frac) + zeros
    if mantissa.bit_length() + abs(exponent) > SHORT_HEXFLOAT_BITS:
        return FloatLiteral(f"{mantissa:x}", exponent, True, sign == "-")
    if exponent >= 0:
        return _decimal_literal(str(mantissa << exponent), 0, sign == "-")
    return _decimal_literal(str(mantissa * 5**-exponent), exponent, sign == "-")


def _int(text: str) -> int | LongInt:
    negative = text.startswith("-")
    hex_ = text.lstrip("-").startswith("0x")
    digits = text.lstrip("-").removeprefix("0x").lstrip("0") or "0"
    if len(digits) > (HEX_DIGITS_LIMIT if hex_ else INT_DIGITS_LIMIT):
        return LongInt(digits.lower() if hex_ else digits, hex_, negative)
    value = int(digits, 16 if hex_ else 10)
    return -value if negative else value


def parse_literal(text: str, line: int, column: int | None = None) -> Any:
    """One atom of an argument: an int (or LongInt), a FloatLiteral, a bool, or a WORD (an Op,
    or one of the other words of `WORDS`, kept as its text). `column` is where it starts on its
    line, for the error's caret."""
    if not text.isascii():  # \d, int() and Fraction() would read other scripts' digits (٣)
        raise ParseError(f"bad literal '{text}'{non_ascii_note(text)}", line, column, len(text))
    if text in ("true", "false"):
        return text == "true"
    if INT.fullmatch(text):
        return _int(text)
    if DECIMAL.fullmatch(text):
        return _decimal(text)
    if text in ("inf", "-inf", "nan"):
        return FloatLiteral("", 0, False, text == "-inf", text.lstrip("-"))
    hexfloat = HEXFLOAT.fullmatch(text)
    if hexfloat:
        sign, whole, frac, exp = hexfloat.groups()
        return _hexfloat(sign, whole, frac or "", exp)
    if OP_NAME.fullmatch(text):
        if text in Op.__members__:
            return Op[text]
        if text in WORDS:
            return text
        near = did_you_mean(text, [*Op.__members__, *WORDS])
        raise ParseError(f"unknown word '{text}' in argument{near}", line, column, len(text))
    if NAME.fullmatch(text):  # `END void %st (%i, %j)`: operands written as an argument
        raise ParseError(
            f"bad literal '{text}': a name is an operand, and operands come before the "
            "argument, without parentheses or commas",
            line,
            column,
            len(text),
        )
    raise ParseError(f"bad literal '{text}'", line, column, len(text))


def parse_argument(text: str, line: int, column: int = 0) -> Any:
    """ARG := literal | '(' ARG, ... ')' ; parentheses always make a tuple. `column` is where
    `text` starts on its line, for the errors' carets."""
    if not any(c in text for c in "(), \t"):  # one literal, as nearly every argument is
        return parse_literal(text, line, column)
    found = [(m.start(1) + column, m.group(1)) for m in ARG_TOKEN.finditer(text)]
    if "".join(t for _, t in found) != "".join(BLANKS.split(text)):
        written = text.strip(" \t")
        raise ParseError(f"bad argument '{written}'", line, column, len(written))
    stack: list[list[Any]] = []  # the open tuples, innermost last
    opened: list[int] = []  # where each open tuple's '(' is
    literals: dict[str, Any] = {}  # each distinct token parsed once: big CONSTs repeat values
    result: Any = None
    done = False
    expect_item = True  # at the start, after '(' and after ','
    for at, token in found:
        if done:
            raise ParseError(f"unexpected '{token}' after the argument", line, at, len(token))
        if token == ",":
            if not stack or expect_item:
                raise ParseError("unexpected ','", line, at)
            expect_item = True
            continue
        if token == "(":
            if not expect_item:
                raise ParseError("missing ',' before '('", line, at)
            if len(stack) >= MAX_NESTING:
                raise ParseError("argument nested too deeply", line, at)
            stack.append([])
            opened.append(at)
            continue
        if token == ")":
            if not stack:
                raise ParseError("unbalanced ')'", line, at)
            item: Any = tuple(stack.pop())  # a trailing comma before ')' is allowed
            opened.pop()
        else:
            if not expect_item:
                raise ParseError(f"missing ',' before '{token}'", line, at, len(token))
            item = literals.get(token)
            if item is None:
                item = literals[token] = parse_literal(token, line, at)
        if stack:
            stack[-1].append(item)
            expect_item = False
        else:
            result, done = item, True
    if stack:
        raise ParseError("unclosed '(' in argument", line, opened[-1])
    return result


def parse_type(text: str, line: int, column: int | None = None) -> Type:
    """A type, `f32` or `i32[2,3]`; `column` is where it starts on its line."""

    def bad(why: str = "") -> ParseError:
        return ParseError(f"bad type '{text}'{why}", line, column, len(text))

    if not text.isascii():  # dims are 0-9 only
        raise bad(non_ascii_note(text))
    match = TYPE.fullmatch(text)
    if not match:
        raise bad()
    if match.group(1) not in DTYPES:
        dtype = match.group(1)
        raise bad(f": unknown dtype '{dtype}'{did_you_mean(dtype, DTYPES, DTYPE_SPELLINGS)}")
    written = match.group(2).split(",") if match.group(2) else []
    if any(len(d) > INT_DIGITS_LIMIT for d in written):  # beyond what int() converts
        raise ParseError(
            f"bad type: a dimension of over {INT_DIGITS_LIMIT} digits", line, column, len(text)
        )
    dims = tuple(int(d) for d in written)
    if any(d < 1 for d in dims):
        raise bad(": every dimension must be at least 1")
    return Type(DTYPES[match.group(1)], dims)


def const_value(arg: Any, type_: Type) -> Any:
    """A CONST literal as a value of its dtype: float literals (and ints in floats) rounded once."""
    if isinstance(arg, tuple):
        # A shaped CONST repeats few distinct literals (parse_argument shares equal tokens'
        # objects), so each distinct one is converted once.
        done: dict[int, Any] = {}
        values = []
        for a in arg:
            value = done.get(id(a), done)
            if value is done:
                value = done[id(a)] = const_value(a, type_)
            values.append(value)
        return tuple(values)
    if type_.dtype.is_float:
        if isinstance(arg, (FloatLiteral, LongInt)):
            return arg.rounded(type_.dtype)
        if isinstance(arg, int) and not isinstance(arg, bool):
            magnitude = round_dyadic(abs(arg), 0, type_.dtype)  # -0 is +0.0: ints have no -0
            return -magnitude if arg < 0 else magnitude
    return arg


def _statement(
    code: str, line: int, offset: int = 0, types: dict[str, Type] | None = None
) -> _Statement:
    """One statement, `code` (its line without blanks around it or a comment), which starts at
    `offset` on its line: every error names the word it blames. `types` holds the types this
    parse has already read (a program writes few distinct ones, in every statement)."""
    # A long statement (a SINK of thousands of operands) is cut by str.split alone: the match's
    # backtracking state would grow with its operands, doubling the parse's peak memory.
    short = types is not None and len(code) <= SIMPLE_LENGTH
    simple = SIMPLE_STATEMENT.fullmatch(code) if short else None
    if simple is not None and not BAD_SPACE.search(code):
        name, op_name, written_type, operands, written = simple.groups()
        op_ = Op.__members__.get(op_name)
        type_ = types.get(written_type) if types is not None else None
        if op_ is not None and type_ is not None:  # else the full path reads (or rejects) them
            arg = None
            if written is not None:
                arg = parse_argument(written, line, offset + len(code) - len(written))
            return _Statement(line, name, op_, type_, tuple(operands.split()), arg, code, offset)
    odd = BAD_SPACE.search(code)
    if odd:
        raise ParseError(
            f"unexpected character {odd.group()!r}: blanks are spaces and tabs",
            line,
            offset + odd.start(),
        )
    # With no other blank on the line, str.split() cuts exactly at spaces and tabs, as WORD does;
    # where each word starts is worked out only for an error.
    words = code.split()

    def fail(message: str, i: int) -> ParseError:
        """An error blaming word `i`, or the end of the statement when there is none."""
        spans = [(m.start() + offset, m.group()) for m in WORD.finditer(code)]
        if i < len(spans):
            return ParseError(message, line, spans[i][0], len(spans[i][1]))
        return ParseError(message, line, offset + len(code))

    if not NAME.fullmatch(words[0]):
        raise fail(
            f"expected a name like %x to start the statement, got '{words[0]}'"
            f"{non_ascii_note(words[0])}",
            0,
        )
    if len(words) < 2 or words[1] != "=":
        raise fail(f"expected '=' after {words[0]}", 1)
    if len(words) < 3:
        raise fail("expected an op after '='", 2)
    op = words[2]
    if not OP_NAME.fullmatch(op) or op not in Op.__members__:
        raise fail(f"unknown op '{op}'{non_ascii_note(op)}{did_you_mean(op, Op.__members__)}", 2)
    if len(words) < 4:
        raise fail(f"expected a type after {op}", 3)
    if not words[3][:1].isalpha():  # an operand, an argument: the type was left out
        raise fail(f"expected a type after {op}, got '{words[3]}' (`%x = {op} TYPE ...`)", 3)
    type_ = types.get(words[3]) if types is not None else None
    if type_ is None:
        type_ = parse_type(words[3], line, _word_start(code, offset, 3))
        if types is not None:
            types[words[3]] = type_
    rest = words[4:]
    count = 0
    while count < len(rest) and rest[count].startswith("%"):
        if not NAME.fullmatch(rest[count]):
            raise fail(f"bad name '{rest[count]}'{non_ascii_note(rest[count])}", 4 + count)
        count += 1
    arg = None
    if count < len(rest):
        written = code.split(maxsplit=4 + count)[-1]  # the argument: the words from there on
        arg = parse_argument(written, line, offset + len(code) - len(written))
    return _Statement(line, words[0], Op[op], type_, tuple(rest[:count]), arg, code, offset)


def _word_start(code: str, offset: int, word: int) -> int:
    """Where word `word` of `code` (which starts at `offset` on its line) starts on the line."""
    for i, m in enumerate(WORD.finditer(code)):
        if i == word:
            return m.start() + offset
    return offset + len(code)


def _statements(text: str, end_line: int | None = None) -> list[_Statement]:
    """The statements of `text` (of its lines before `end_line` only, when given)."""
    statements: list[_Statement] = []
    types: dict[str, Type] = {}
    # Lines end at LF alone (a CR before it is dropped): a form feed or U+2028 in a comment must
    # not start a new line and shift every line number after it.
    for number, raw in enumerate(text.split("\n"), start=1):
        if end_line is not None and number >= end_line:
            break
        before = raw.removesuffix("\r").split("#", 1)[0]
        code = before.strip(" \t")
        if code:
            offset = len(before) - len(before.lstrip(" \t"))
            statements.append(_statement(code, number, offset, types))
    return statements


def _define(statements: list[_Statement]) -> Iterator[tuple[_Statement, UOp]]:
    """Each statement with the UOp it defines, in order; a ParseError at the first statement
    whose names do not resolve."""
    defined_at: dict[str, int] = {}
    for s in statements:
        defined_at.setdefault(s.name, s.line)
    names: dict[str, UOp] = {}
    for s in statements:
        if s.name in names:
            raise ParseError(
                f"{s.name} is already defined on line {defined_at[s.name]}",
                s.line,
                s.column(0),
                len(s.name),
            )
        try:
            src = tuple([names[operand] for operand in s.operands])
        except KeyError:
            raise _unresolved(s, names, defined_at) from None
        arg = const_value(s.arg, s.type) if s.op is Op.CONST else s.arg
        uop = names[s.name] = UOp(s.op, s.type, src, arg)
        yield s, uop


def _unresolved(s: _Statement, names: dict[str, UOp], defined_at: dict[str, int]) -> ParseError:
    """The error for the first operand of `s` that names no UOp defined before it."""
    for i, operand in enumerate(s.operands):
        if operand in names:
            continue
        at = s.column(4 + i)
        if operand in defined_at:
            where = defined_at[operand]
            return ParseError(
                f"{operand} is used before its definition on line {where}",
                s.line,
                at,
                len(operand),
            )
        near = did_you_mean(operand, names)
        return ParseError(f"undefined name {operand}{near}", s.line, at, len(operand))
    raise AssertionError("every operand resolves")


def parse(text: str, path: str = "<input>") -> Program:
    """Parse a whole .uir file. Raises ParseError on anything the grammar rejects."""
    statements = _statements(text)
    if not statements:
        raise ParseError("no statements: a program ends with a SINK", 1)
    sinks = [s for s in statements if s.op is Op.SINK]
    if not sinks:
        raise ParseError("no SINK: the last statement must be the SINK", statements[-1].line)
    if len(sinks) > 1:
        raise ParseError(f"a second SINK (the first is on line {sinks[0].line})", sinks[1].line)
    if statements[-1].op is not Op.SINK:
        raise ParseError("the SINK must be the last statement", sinks[0].line)
    lines: dict[UOp, int] = {}
    for s, uop in _define(statements):
        lines.setdefault(uop, s.line)
    return Program(uop, lines, path)


def parse_prefix(text: str, end_line: int) -> tuple[list[UOp], dict[UOp, int]]:
    """What the statements before `end_line` define, up to the first that fails: the UOps in
    statement order and the line of each. This is what a viewer can still show of a program
    whose parse error is on `end_line`; nothing here is checked beyond what parsing checks."""
    uops: list[UOp] = []
    lines: dict[UOp, int] = {}
    try:
        for s, uop in _define(_statements(text, end_line)):
            uops.append(uop)
            lines.setdefault(uop, s.line)
    except ParseError:
        pass  # an earlier error than the one reported: keep what came before it
    return uops, lines

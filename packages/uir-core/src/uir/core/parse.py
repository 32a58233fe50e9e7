"""Text to UOp graph: the fixed grammar of uir.md section 2.

Every rejection is a ParseError naming the line. The parser also gives CONST arguments their value
in the CONST's type (a float literal rounded once to its dtype), so that identical statements, and
arguments equal in value, denote one UOp.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .dtypes import DTYPES, Type
from .errors import ParseError
from .floats import round_fraction
from .ops import Op
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
MAX_NESTING = 64


@dataclass(frozen=True)
class FloatLiteral:
    """A float literal's exact value; it becomes a Python float once its dtype is known."""

    value: Fraction  # the magnitude; literals only have denominators 2**a * 5**b
    negative: bool = False
    special: str | None = None  # "inf" or "nan"

    def __str__(self) -> str:
        """The exact value as a decimal literal (every literal's value has a finite one)."""
        sign = "-" if self.negative else ""
        if self.special:
            return sign + self.special
        num, den = self.value.numerator, self.value.denominator
        places = 0
        while (num * 10**places) % den:
            places += 1
        digits = str(num * 10**places // den).rjust(places + 1, "0")
        whole, frac = digits[: len(digits) - places], digits[len(digits) - places :]
        return f"{sign}{whole}.{frac or '0'}"

    def rounded(self, dtype: Any) -> float:
        if self.special == "nan":
            return float("nan")
        if self.special == "inf":
            return float("-inf") if self.negative else float("inf")
        magnitude = round_fraction(self.value, dtype)
        return -magnitude if self.negative else magnitude


@dataclass
class Program:
    """A parsed file: its SINK and the line that defined each UOp (for error messages)."""

    sink: UOp
    lines: dict[UOp, int]
    path: str = "<input>"

    def line_of(self, uop: UOp) -> int | None:
        return self.lines.get(uop)


@dataclass(frozen=True)
class _Statement:
    line: int
    name: str
    op: Op
    type: Type
    operands: tuple[str, ...]
    arg: Any


def _clamp_exponent(exponent: int, digits: int) -> int:
    """An exponent moved in from beyond every dtype's range, where its value would take forever.

    With at most `digits` digits, a mantissa lies within a factor 2**(4 * digits) of 1, so an
    exponent (of 10 or 2) beyond 1100 + 4 * digits already overflows to inf, or rounds to zero, in
    every dtype (f64 ends near 2**1024, its subnormals near 2**-1075); pulling it in to that
    limit keeps the rounded value of the literal, the one thing ever made of it.
    """
    limit = 1100 + 4 * digits
    return max(-limit, min(limit, exponent))


def parse_literal(text: str, line: int) -> Any:
    """One atom of an argument: an int, a FloatLiteral, a bool, or a WORD (an Op)."""
    if not text.isascii():  # \d, int() and Fraction() would read other scripts' digits (٣)
        raise ParseError(f"bad literal '{text}'", line)
    if text in ("true", "false"):
        return text == "true"
    if INT.fullmatch(text):
        negative = text.startswith("-")
        digits = text.lstrip("-")
        value = int(digits[2:], 16) if digits.startswith("0x") else int(digits, 10)
        return -value if negative else value
    if DECIMAL.fullmatch(text):
        mantissa, _, exp = text.lower().partition("e")
        value = Fraction(mantissa) * Fraction(10) ** _clamp_exponent(int(exp or 0), len(text))
        return FloatLiteral(abs(value), text.startswith("-"))
    if text in ("inf", "-inf", "nan"):
        return FloatLiteral(Fraction(0), text == "-inf", text.lstrip("-"))
    hexfloat = HEXFLOAT.fullmatch(text)
    if hexfloat:
        sign, whole, frac, exp = hexfloat.groups()
        frac = frac or ""
        mantissa = int(whole + frac, 16)
        exponent = _clamp_exponent(int(exp), 4 * len(text)) - 4 * len(frac)
        value = Fraction(mantissa) * Fraction(2) ** exponent
        return FloatLiteral(value, sign == "-")
    if OP_NAME.fullmatch(text):
        if text in Op.__members__:
            return Op[text]
        raise ParseError(f"unknown word '{text}' in argument", line)
    raise ParseError(f"bad literal '{text}'", line)


def parse_argument(text: str, line: int) -> Any:
    """ARG := literal | '(' ARG, ... ')' ; parentheses always make a tuple."""
    tokens = ARG_TOKEN.findall(text)
    if "".join(tokens) != "".join(BLANKS.split(text)):
        raise ParseError(f"bad argument '{text.strip()}'", line)
    stack: list[list[Any]] = []  # the open tuples, innermost last
    result: Any = None
    done = False
    expect_item = True  # at the start, after '(' and after ','
    for token in tokens:
        if done:
            raise ParseError(f"unexpected '{token}' after the argument", line)
        if token == ",":
            if not stack or expect_item:
                raise ParseError("unexpected ','", line)
            expect_item = True
            continue
        if token == "(":
            if not expect_item:
                raise ParseError("missing ',' before '('", line)
            if len(stack) >= MAX_NESTING:
                raise ParseError("argument nested too deeply", line)
            stack.append([])
            continue
        if token == ")":
            if not stack:
                raise ParseError("unbalanced ')'", line)
            item: Any = tuple(stack.pop())  # a trailing comma before ')' is allowed
        else:
            if not expect_item:
                raise ParseError(f"missing ',' before '{token}'", line)
            item = parse_literal(token, line)
        if stack:
            stack[-1].append(item)
            expect_item = False
        else:
            result, done = item, True
    if stack:
        raise ParseError("unclosed '(' in argument", line)
    return result


def parse_type(text: str, line: int) -> Type:
    match = TYPE.fullmatch(text)
    if not match or not text.isascii() or match.group(1) not in DTYPES:  # dims are 0-9 only
        raise ParseError(f"bad type '{text}'", line)
    dims = tuple(int(d) for d in match.group(2).split(",")) if match.group(2) else ()
    if any(d < 1 for d in dims):
        raise ParseError(f"bad type '{text}': every dimension must be at least 1", line)
    return Type(DTYPES[match.group(1)], dims)


def const_value(arg: Any, type_: Type) -> Any:
    """A CONST literal as a value of its dtype: float literals (and ints in floats) rounded once."""
    if isinstance(arg, tuple):
        return tuple(const_value(a, type_) for a in arg)
    if type_.dtype.is_float:
        if isinstance(arg, FloatLiteral):
            return arg.rounded(type_.dtype)
        if isinstance(arg, int) and not isinstance(arg, bool):
            return round_fraction(Fraction(arg), type_.dtype)
    return arg


def _statement(text: str, line: int) -> _Statement:
    odd = BAD_SPACE.search(text)
    if odd:
        raise ParseError(f"unexpected character {odd.group()!r}: blanks are spaces and tabs", line)
    words = BLANKS.split(text)
    if not NAME.fullmatch(words[0]):
        raise ParseError(f"expected a name like %x to start the statement, got '{words[0]}'", line)
    if len(words) < 2 or words[1] != "=":
        raise ParseError(f"expected '=' after {words[0]}", line)
    if len(words) < 3:
        raise ParseError("expected an op after '='", line)
    if not OP_NAME.fullmatch(words[2]) or words[2] not in Op.__members__:
        raise ParseError(f"unknown op '{words[2]}'", line)
    if len(words) < 4:
        raise ParseError(f"expected a type after {words[2]}", line)
    type_ = parse_type(words[3], line)
    rest = words[4:]
    count = 0
    while count < len(rest) and rest[count].startswith("%"):
        if not NAME.fullmatch(rest[count]):
            raise ParseError(f"bad name '{rest[count]}'", line)
        count += 1
    arg_text = " ".join(rest[count:])
    arg = parse_argument(arg_text, line) if arg_text else None
    return _Statement(line, words[0], Op[words[2]], type_, tuple(rest[:count]), arg)


def parse(text: str, path: str = "<input>") -> Program:
    """Parse a whole .uir file. Raises ParseError on anything the grammar rejects."""
    statements: list[_Statement] = []
    # Lines end at LF alone (a CR before it is dropped): a form feed or U+2028 in a comment must
    # not start a new line and shift every line number after it.
    for number, raw in enumerate(text.split("\n"), start=1):
        code = raw.removesuffix("\r").split("#", 1)[0].strip(" \t")
        if code:
            statements.append(_statement(code, number))
    if not statements:
        raise ParseError("no statements: a program ends with a SINK", 1)
    sinks = [s for s in statements if s.op is Op.SINK]
    if not sinks:
        raise ParseError("no SINK: the last statement must be the SINK", statements[-1].line)
    if len(sinks) > 1:
        raise ParseError(f"a second SINK (the first is on line {sinks[0].line})", sinks[1].line)
    if statements[-1].op is not Op.SINK:
        raise ParseError("the SINK must be the last statement", sinks[0].line)

    defined_at = {}
    for s in statements:
        defined_at.setdefault(s.name, s.line)
    names: dict[str, UOp] = {}
    lines: dict[UOp, int] = {}
    for s in statements:
        if s.name in names:
            raise ParseError(f"{s.name} is already defined on line {defined_at[s.name]}", s.line)
        src = []
        for operand in s.operands:
            if operand in names:
                src.append(names[operand])
            elif operand in defined_at:
                where = defined_at[operand]
                raise ParseError(f"{operand} is used before its definition on line {where}", s.line)
            else:
                raise ParseError(f"undefined name {operand}", s.line)
        arg = const_value(s.arg, s.type) if s.op is Op.CONST else s.arg
        uop = UOp(s.op, s.type, tuple(src), arg)
        names[s.name] = uop
        lines.setdefault(uop, s.line)
    return Program(names[statements[-1].name], lines, path)

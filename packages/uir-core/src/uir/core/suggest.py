""" "Did you mean": the known words nearest a mistyped one, for error messages.

A word is near a known one when their difflib similarity is at least CUTOFF, compared without
regard to case (`add` is ADD); a table of other spellings maps words no similarity finds (`int`
is i32 in C's sense, `float` f32). Only an error's message uses this: nothing is ever accepted
because it is near.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Iterable, Mapping

CUTOFF = 0.6
MOST = 3
# Only the words about as near as the nearest are named: SNK is SINK, not SHRINK or SIN too.
MARGIN = 0.1

# What a dtype is called elsewhere (C, numpy, PyTorch) -> its name here.
DTYPE_SPELLINGS = {
    "int": "i32",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "long": "i64",
    "uint": "u32",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "float": "f32",
    "float16": "f16",
    "half": "f16",
    "float32": "f32",
    "float64": "f64",
    "double": "f64",
    "bfloat16": "bf16",
    "boolean": "bool",
}


def nearest(
    word: str, known: Iterable[str], spellings: Mapping[str, str] | None = None
) -> list[str]:
    """The known words nearest `word`, nearest first (ties alphabetically), at most MOST and
    none much farther than the nearest."""
    known = list(known)
    folded = word.casefold()
    alias = (spellings or {}).get(folded)
    if alias is not None:
        return [alias]
    exact = [k for k in known if k.casefold() == folded]
    if exact:
        return exact
    scored = []
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(folded)  # the side difflib caches
    for k in known:
        matcher.set_seq1(k.casefold())
        # The cheap upper bounds first, as difflib.get_close_matches does: a file's names may be
        # many, and most are nowhere near.
        if matcher.real_quick_ratio() >= CUTOFF and matcher.quick_ratio() >= CUTOFF:
            score = matcher.ratio()
            if score >= CUTOFF:
                scored.append((-score, k))
    scored.sort()
    return [k for score, k in scored[:MOST] if score <= scored[0][0] + MARGIN]


def did_you_mean(
    word: str, known: Iterable[str], spellings: Mapping[str, str] | None = None
) -> str:
    """` (did you mean ADD?)`, ` (did you mean ADD or AND?)`, or "" when nothing is near."""
    near = nearest(word, known, spellings)
    if not near:
        return ""
    listed = near[0] if len(near) == 1 else f"{', '.join(near[:-1])} or {near[-1]}"
    return f" (did you mean {listed}?)"


# Characters pasted from documents that look like ASCII ones -> the ASCII character meant.
LOOKALIKES = {
    "\u2212": "-",  # MINUS SIGN
    "\u2013": "-",  # EN DASH
    "\u2014": "-",  # EM DASH
    "\u2010": "-",  # HYPHEN
    "\u2011": "-",  # NON-BREAKING HYPHEN
    "\u00a0": " ",  # NO-BREAK SPACE
    "\u2018": "'",
    "\u2019": "'",
    "\u201c": '"',
    "\u201d": '"',
    "\uff05": "%",  # FULLWIDTH PERCENT SIGN
}


def non_ascii_note(text: str) -> str:
    """`: U+2212 MINUS SIGN is not '-'` for the first non-ASCII character of `text`, naming it
    (and the ASCII one it looks like), or "" when `text` is ASCII."""
    for ch in text:
        if not ch.isascii():
            name = unicodedata.name(ch, "an unnamed character")
            meant = LOOKALIKES.get(ch)
            note = f": U+{ord(ch):04X} {name}"
            return f"{note} is not {meant!r}" if meant else f"{note} is not ASCII"
    return ""

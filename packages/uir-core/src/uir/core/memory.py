"""What a UOp denotes in memory terms (uir.md section 6): a value, a memory reference, a place or an
effect, and for memory references the buffer and the version they name.

These are structural facts read off one UOp and its first sources, so the verifier, the scheduler,
the interpreter and the backends all classify the same way.
"""

from __future__ import annotations

import enum
import weakref
from dataclasses import dataclass

from .ops import Op
from .uop import UOp


class Kind(enum.Enum):
    VALUE = "a value"
    MEMORY = "a memory reference"  # a buffer version (BUFFER, LOCAL, AFTER) or a SHRINK window
    PLACE = "an INDEX of memory"  # one element of a memory reference, for LOAD and STORE
    EFFECT = "an effect"  # a STORE or an END


# The ops that are buffer versions: INDEX names one of them through any SHRINK windows.
VERSIONS = frozenset({Op.BUFFER, Op.LOCAL, Op.AFTER})
# The ops that start a buffer: version 0.
BUFFERS = frozenset({Op.BUFFER, Op.LOCAL})


# The ops whose kind depends on their first source, and the effects. Sets of ops and module-level
# names: `kind` runs for nearly every UOp of every walk, and an Enum member's attribute lookup
# (`Op.SHRINK`, `Kind.VALUE`) costs several times a global's.
_WINDOWS = frozenset({Op.SHRINK, Op.INDEX})
_EFFECTS = frozenset({Op.STORE, Op.END})
_SHRINK = Op.SHRINK
_VALUE, _MEMORY, _PLACE, _EFFECT = Kind.VALUE, Kind.MEMORY, Kind.PLACE, Kind.EFFECT


def kind(uop: UOp) -> Kind:
    """The kind of thing `uop` denotes, from its op (and, for INDEX, its first source)."""
    op = uop.op
    if op in VERSIONS:
        return _MEMORY
    if op in _WINDOWS:
        # A SHRINK or INDEX of a value is a value (a movement op, or an element of a vector);
        # of memory, a window or a place. Walked without recursion: windows nest arbitrarily.
        base = uop
        while base.op is _SHRINK or base is uop:
            if not base.src:
                return _VALUE
            base = base.src[0]
        if base.op not in VERSIONS:
            return _VALUE
        return _MEMORY if op is _SHRINK else _PLACE
    if op in _EFFECTS:
        return _EFFECT
    return _VALUE


def is_memory(uop: UOp) -> bool:
    """Whether `uop` is a memory reference (a buffer, a version or a window), not a value."""
    return kind(uop) is _MEMORY


def version_of(ref: UOp) -> UOp:
    """The buffer version (BUFFER, LOCAL or AFTER) that a memory reference or place names."""
    while ref.op in (Op.SHRINK, Op.INDEX, Op.STORE):
        ref = ref.src[0]
    return ref


# Each AFTER -> its BUFFER or LOCAL. A chain of n versions would cost n steps per lookup, n^2 in
# all; UOps are immutable, so the answer can be kept for as long as the UOp lives.
_BUFFER_OF: weakref.WeakKeyDictionary[UOp, UOp] = weakref.WeakKeyDictionary()


def buffer_of(ref: UOp) -> UOp:
    """The BUFFER or LOCAL that a memory reference, place or STORE belongs to."""
    version = version_of(ref)
    chain = []
    while version.op is Op.AFTER and version not in _BUFFER_OF:
        chain.append(version)
        version = version_of(version.src[0])
    found = _BUFFER_OF.get(version, version)
    for after in chain:
        _BUFFER_OF[after] = found
    return found


def window_begin(ref: UOp) -> int:
    """Where element 0 of a memory reference lies in its buffer: the SHRINK begins, summed."""
    begin = 0
    while ref.op is Op.SHRINK:
        begin += ref.arg[0][0]
        ref = ref.src[0]
    return begin


@dataclass(frozen=True)
class Window:
    """Where a memory reference points: `size` elements of `buffer` (a BUFFER or LOCAL) from
    element `begin` on."""

    buffer: UOp
    begin: int
    size: int


def window(ref: UOp) -> Window:
    """The buffer a version or SHRINK window lies in, where it starts there, and its length."""
    return Window(buffer_of(ref), window_begin(ref), ref.type.size)

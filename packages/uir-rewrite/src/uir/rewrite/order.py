"""A fixed order on UOps, equal across runs, so that commutative ops and sums have one form."""

from __future__ import annotations

import hashlib
import weakref

from uir.core.ops import Op
from uir.core.uop import UOp, arg_key

_fingerprints: weakref.WeakKeyDictionary[UOp, bytes] = weakref.WeakKeyDictionary()


def fingerprint(uop: UOp) -> bytes:
    """A digest of the expression under `uop`, equal across runs (unlike id() or hash()).

    Cached per UOp; the walk stops at UOps already digested, so a bottom-up rewrite digests each
    new UOp once.
    """
    stack = [uop]
    while stack:
        node = stack[-1]
        if node in _fingerprints:
            stack.pop()
            continue
        missing = [s for s in node.src if s not in _fingerprints]
        if missing:
            stack.extend(missing)
            continue
        digest = hashlib.blake2b(digest_size=8)
        digest.update(f"{node.op.name} {node.type} {arg_key(node.arg)!r}".encode())
        for s in node.src:
            digest.update(_fingerprints[s])
        _fingerprints[node] = digest.digest()
        stack.pop()
    return _fingerprints[uop]


def order_key(uop: UOp) -> tuple[bool, bytes]:
    """Constants last, so that rules find them on the right; the rest by fingerprint."""
    return (uop.op is Op.CONST, fingerprint(uop))

"""`Tensor`: a value of a UIR program, built op by op; nothing runs until it is realized.

Every method returns a new Tensor over a new UOp (hash-consed: building the same computation
twice gives the same graph, which is why a training step compiles once). Shapes are checked
here, at the user's call, and a mismatch is a TensorError naming the op and the shapes; the
compiler never sees an ill-typed graph. Broadcasting follows numpy: shapes are aligned on the
right and each axis of length 1 is repeated, made explicit as RESHAPE then EXPAND.

f32 is the float dtype; i32 holds token ids and bool masks come from comparisons. exp and log
are EXP2 and LOG2 with the factors log2(e) and ln(2) (the IR has no natural exp or log).
spec/uir-week10.md section 1 is the normative text.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from uir.core.dtypes import DType, Type, bool_, f32, i32
from uir.core.ops import Op
from uir.core.uop import UOp

from .buffers import Buffer

LOG2_E = math.log2(math.e)
LN_2 = math.log(2.0)
_NUMPY_DTYPE = {f32: np.float32, i32: np.int32, bool_: np.bool_}
Scalar = int | float | bool
# slot -> the trainable tensor reading that buffer: what backward() sets `.grad` of
PARAMETERS: weakref.WeakValueDictionary[int, Tensor] = weakref.WeakValueDictionary()
# loss UOp -> the slots of the buffers it reads (what backward() looks for)
_LOSS_SLOTS: weakref.WeakKeyDictionary[UOp, list[int]] = weakref.WeakKeyDictionary()


class TensorError(ValueError):
    """An op given operands it cannot take (shapes, dtypes, axes), raised where it is called."""


def _f32(value: float) -> float:
    """`value` rounded to the nearest f32: a CONST holds values of its dtype only."""
    return float(np.float32(value))


def _literal(value: Scalar, dtype: DType) -> Scalar:
    if dtype is f32:
        return _f32(value)
    if dtype is bool_:
        return bool(value)
    return int(value)


def broadcast_shape(op: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """numpy's broadcast of `shapes`, or a TensorError naming `op` and every shape."""
    rank = max(len(s) for s in shapes)
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]
    out = []
    for dims in zip(*padded, strict=True):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise TensorError(f"{op}: shapes {' and '.join(map(str, shapes))} do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


class Tensor:
    """A value: its UOp, and for a parameter or input, the global buffer it is a LOAD of."""

    __slots__ = ("__weakref__", "buffer", "grad", "requires_grad", "uop")

    def __init__(self, data: Any, dtype: DType | None = None, requires_grad: bool = False) -> None:
        if isinstance(data, UOp):
            self.uop = data
        else:
            array = np.asarray(data)
            if dtype is None:
                dtype = (
                    bool_ if array.dtype == np.bool_ else i32 if array.dtype.kind in "iu" else f32
                )
            array = array.astype(_NUMPY_DTYPE[dtype])
            if requires_grad:
                buffer = Buffer(Type(dtype, (array.size,)), array.reshape(-1))
                self.uop, self.buffer = buffer.load(array.shape), buffer
                self.grad, self.requires_grad = None, True
                PARAMETERS[buffer.slot] = self
                return
            # tolist() of an f32, int32 or bool array gives Python numbers that are already
            # values of the dtype (an f32 widens to a float exactly): nothing to round
            values = tuple(array.reshape(-1).tolist())
            self.uop = UOp.const(Type(dtype, array.shape), values if array.shape else values[0])
        self.buffer: Buffer | None = None
        self.grad: Tensor | None = None
        self.requires_grad = requires_grad

    # --- making tensors

    @staticmethod
    def parameter(values: Any) -> Tensor:
        """A trainable f32 tensor: a global buffer holding `values`, read whole."""
        return Tensor(np.asarray(values, dtype=np.float32), f32, requires_grad=True)

    @staticmethod
    def input(shape: Sequence[int], dtype: DType = f32) -> Tensor:
        """A global buffer the caller fills before each run (`write`): a batch of tokens."""
        shape = tuple(shape)
        buffer = Buffer(Type(dtype, (math.prod(shape),)), None)
        t = Tensor(buffer.load(shape))
        t.buffer = buffer
        return t

    @staticmethod
    def full(shape: Sequence[int], value: Scalar, dtype: DType = f32) -> Tensor:
        return Tensor(UOp.const(Type(dtype, tuple(shape)), _literal(value, dtype)))

    @staticmethod
    def zeros(*shape: int) -> Tensor:
        return Tensor.full(shape, 0.0)

    @staticmethod
    def ones(*shape: int) -> Tensor:
        return Tensor.full(shape, 1.0)

    @staticmethod
    def arange(n: int, dtype: DType = i32) -> Tensor:
        return Tensor(np.arange(n), dtype)

    @staticmethod
    def randn(*shape: int, seed: int = 0, std: float = 1.0) -> Tensor:
        """A CONST of normal samples (numpy's Generator with `seed`)."""
        return Tensor(np.random.default_rng(seed).normal(0.0, std, shape), f32)

    @staticmethod
    def uniform(*shape: int, low: float = 0.0, high: float = 1.0, seed: int = 0) -> Tensor:
        """A CONST of samples uniform on [low, high) (numpy's Generator with `seed`)."""
        return Tensor(np.random.default_rng(seed).uniform(low, high, shape), f32)

    def write(self, values: Any) -> None:
        """Fill an input's (or parameter's) buffer; the next run reads these contents."""
        if self.buffer is None:
            raise TensorError("write: only an input or parameter tensor has a buffer to fill")
        array = np.asarray(values)
        if array.shape != self.shape:
            raise TensorError(
                f"write: values of shape {array.shape} into a tensor of shape {self.shape}"
            )
        if (
            not self.dtype.is_float
            and array.dtype.kind == "f"
            and not np.all(array == np.trunc(array))
        ):
            raise TensorError(f"write: fractional values into an {self.dtype.name} tensor")
        self.buffer.write(array.reshape(-1))

    # --- what it is

    @property
    def shape(self) -> tuple[int, ...]:
        return self.uop.type.shape

    @property
    def dtype(self) -> DType:
        return self.uop.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"Tensor({self.uop.type}, {self.uop.op})"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a rank-0 tensor")
        return self.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        """The rows along the first axis (each a SHRINK): `for row in t`, `a, b = t`."""
        return (self[i] for i in range(len(self)))

    def __bool__(self) -> bool:
        # `if loss < 1.0:` would otherwise be always true: a Tensor is a graph, not a value.
        raise TensorError(
            f"bool: a Tensor ({self.uop.type}) has no truth value until it runs; "
            "compare its .item() or .numpy()"
        )

    def numel(self) -> int:
        return math.prod(self.shape)

    # --- running (uir.tensor.realize)

    def realize(self, *others: Tensor, backend: str | None = None) -> list[np.ndarray]:
        """This tensor's value and the others' (and every pending assignment) as one program:
        `loss.realize()` or `Tensor.realize(a, b)` (uir.tensor.realize.realize)."""
        from .realize import realize

        return realize(self, *others, backend=backend)

    def to_uir(self, *others: Tensor) -> str:
        """The program `realize(self, *others)` would run, as .uir text with every buffer's
        current contents written in (uir.tensor.realize.to_uir)."""
        from .realize import to_uir

        return to_uir(self, *others)

    def numpy(self, backend: str | None = None) -> np.ndarray:
        return self.realize(backend=backend)[0]

    def item(self, backend: str | None = None) -> Scalar:
        if self.numel() != 1:
            raise TensorError(f"item: a tensor of shape {self.shape} holds {self.numel()} values")
        return self.numpy(backend).reshape(-1)[0].item()

    def backward(self) -> None:
        """Set `.grad` of every parameter this scalar depends on: GRAD of it (week 9)."""
        if self.shape != () or self.dtype is not f32:
            raise TensorError(f"backward: the loss must be an f32 scalar, not {self.uop.type}")
        slots = _LOSS_SLOTS.get(self.uop)
        if slots is None:  # the same loss every step: walk its graph once
            from .nn import FLASH_OUTPUTS

            graph = self.uop.toposort()
            if any(u in FLASH_OUTPUTS for u in graph):
                raise TensorError(
                    "backward: the loss depends on flash attention, whose loops read q, k and v "
                    "through memory, where no gradient flows; train with "
                    "scaled_dot_product_attention(..., flash=False)"
                )
            slots = sorted(u.arg for u in graph if u.op is Op.BUFFER)
            _LOSS_SLOTS[self.uop] = slots
        for p in (PARAMETERS[s] for s in slots if s in PARAMETERS):
            load = p.uop if p.uop.op is Op.LOAD else p.uop.src[0]
            grad = UOp(Op.GRAD, load.type, (self.uop, load))
            p.grad = Tensor(reshaped(grad, p.shape) if load is not p.uop else grad)

    def assign(self, value: Tensor) -> None:
        """Store `value` into this tensor's buffer when the next program runs (uir.tensor.realize
        runs every pending assignment): how an optimizer updates a parameter."""
        from .realize import pending_assign

        if self.buffer is None:
            raise TensorError("assign: only a parameter or input tensor has a buffer to store into")
        if value.shape != self.shape or value.dtype is not self.dtype:
            raise TensorError(f"assign: a {value.uop.type} into a {self.uop.type}")
        flat = self.buffer.type.shape
        pending_assign(
            self.buffer, value.uop if value.uop.type.shape == flat else reshaped(value.uop, flat)
        )

    # --- elementwise

    def _operand(self, other: Scalar, shape: tuple[int, ...] = ()) -> Tensor:
        """The Python number `other` as a CONST of this tensor's dtype and `shape`."""
        if not self.dtype.is_float and isinstance(other, float) and not other.is_integer():
            # Rounding 0.5 into an i32 CONST would change the user's number without a word.
            raise TensorError(f"the {self.dtype.name} tensor {self.shape} with the float {other}")
        return Tensor.full(shape, other, self.dtype)

    def _broadcast(self, op: str, *others: Tensor | Scalar) -> list[Tensor]:
        tensors = [self, *(o for o in others if isinstance(o, Tensor))]
        shape = self.shape
        if any(t.shape != shape for t in tensors):
            shape = broadcast_shape(op, *(t.shape for t in tensors))
        # A Python number becomes the CONST of the result's shape at once (what EXPAND of its
        # rank-0 CONST would give): a training step builds hundreds of them.
        return [
            o.expand_to(shape) if isinstance(o, Tensor) else self._operand(o, shape)
            for o in (self, *others)
        ]

    def expand_to(self, shape: tuple[int, ...]) -> Tensor:
        """This tensor broadcast to `shape` (numpy's rule)."""
        if self.shape == shape:
            return self
        if self.ndim > len(shape) or broadcast_shape("expand", self.shape, shape) != shape:
            raise TensorError(f"expand: shape {self.shape} does not broadcast to {shape}")
        if self.uop.op is Op.CONST and self.shape == ():
            return Tensor(UOp.const(Type(self.dtype, shape), self.uop.arg))
        ones = (1,) * (len(shape) - self.ndim) + self.shape
        u = self.uop.reshape(ones) if self.shape and ones != self.shape else self.uop
        return Tensor(u.expand(shape))

    def _binary(self, op: Op, other: Tensor | Scalar, name: str, reverse: bool = False) -> Tensor:
        a, b = self._broadcast(name, other)
        if a.dtype is not b.dtype:
            raise TensorError(f"{name}: dtypes {a.dtype.name} and {b.dtype.name} differ")
        a, b = (b, a) if reverse else (a, b)
        return Tensor(a.uop.alu(op, b.uop))

    def __add__(self, o: Tensor | Scalar) -> Tensor:
        return self._binary(Op.ADD, o, "add")

    def __radd__(self, o: Scalar) -> Tensor:
        return self._binary(Op.ADD, o, "add", True)

    def __sub__(self, o: Tensor | Scalar) -> Tensor:
        return self._binary(Op.SUB, o, "sub")

    def __rsub__(self, o: Scalar) -> Tensor:
        return self._binary(Op.SUB, o, "sub", True)

    def __mul__(self, o: Tensor | Scalar) -> Tensor:
        return self._binary(Op.MUL, o, "mul")

    def __rmul__(self, o: Scalar) -> Tensor:
        return self._binary(Op.MUL, o, "mul", True)

    def __truediv__(self, o: Tensor | Scalar) -> Tensor:
        return self._binary(Op.FDIV, o, "div")

    def __rtruediv__(self, o: Scalar) -> Tensor:
        return self._binary(Op.FDIV, o, "div", True)

    def __neg__(self) -> Tensor:
        return Tensor(UOp(Op.NEG, self.uop.type, (self.uop,)))

    def __pow__(self, n: int) -> Tensor:
        """x**n for an int n, as repeated MULs (x**0 is ones, x**-n is 1 / x**n)."""
        if not isinstance(n, int) or isinstance(n, bool):
            raise TensorError(f"pow: only an int exponent, not {n!r}")
        if n == 0:
            return Tensor.full(self.shape, 1, self.dtype)
        if n < 0:
            self._float("pow")
            return (self ** (-n)).reciprocal()
        result = self
        for _ in range(n - 1):
            result = result * self
        return result

    def maximum(self, o: Tensor | Scalar) -> Tensor:
        return self._binary(Op.MAX, o, "maximum")

    def minimum(self, o: Tensor | Scalar) -> Tensor:
        return self._binary(Op.MIN, o, "minimum")

    def __lt__(self, o: Tensor | Scalar) -> Tensor:
        return self._binary(Op.CMPLT, o, "lt")

    def __le__(self, o: Tensor | Scalar) -> Tensor:
        return self._binary(Op.CMPLE, o, "le")

    def __gt__(self, o: Tensor | Scalar) -> Tensor:
        return self._binary(Op.CMPLT, o, "gt", True)

    def __ge__(self, o: Tensor | Scalar) -> Tensor:
        return self._binary(Op.CMPLE, o, "ge", True)

    def eq(self, o: Tensor | Scalar) -> Tensor:
        return self._binary(Op.CMPEQ, o, "eq")

    def where(self, a: Tensor | Scalar, b: Tensor | Scalar) -> Tensor:
        """`self ? a : b` elementwise, this tensor a bool condition."""
        if self.dtype is not bool_:
            raise TensorError(f"where: the condition must be bool, not {self.dtype.name}")
        dtype = a.dtype if isinstance(a, Tensor) else b.dtype if isinstance(b, Tensor) else f32
        a = a if isinstance(a, Tensor) else Tensor.full((), a, dtype)
        b = b if isinstance(b, Tensor) else Tensor.full((), b, dtype)
        c, x, y = self._broadcast("where", a, b)
        if x.dtype is not y.dtype:
            raise TensorError(f"where: branch dtypes {x.dtype.name} and {y.dtype.name} differ")
        return Tensor(c.uop.where(x.uop, y.uop))

    def cast(self, dtype: DType) -> Tensor:
        return Tensor(self.uop.cast(dtype))

    def _float(self, name: str) -> None:
        if self.dtype is not f32:
            raise TensorError(f"{name}: needs an f32 tensor, not {self.dtype.name}")

    def _unary(self, op: Op, name: str) -> Tensor:
        self._float(name)
        return Tensor(UOp(op, self.uop.type, (self.uop,)))

    def exp(self) -> Tensor:
        self._float("exp")
        return (self * LOG2_E)._unary_exp2()

    def _unary_exp2(self) -> Tensor:
        return self._unary(Op.EXP2, "exp2")

    def log(self) -> Tensor:
        self._float("log")
        return self._unary(Op.LOG2, "log") * LN_2

    def sqrt(self) -> Tensor:
        return self._unary(Op.SQRT, "sqrt")

    def reciprocal(self) -> Tensor:
        return self._unary(Op.RECIP, "reciprocal")

    def rsqrt(self) -> Tensor:
        return self.sqrt().reciprocal()

    def relu(self) -> Tensor:
        return self.maximum(0.0)

    def sigmoid(self) -> Tensor:
        return (1.0 + (-self).exp()).reciprocal()

    def tanh(self) -> Tensor:
        return 2.0 * (2.0 * self).sigmoid() - 1.0

    def gelu(self) -> Tensor:
        """GELU, tanh form (GPT-2's)."""
        return 0.5 * self * (1.0 + (math.sqrt(2.0 / math.pi) * (self + 0.044715 * self**3)).tanh())

    # --- movement

    def _axis(self, axis: int, name: str) -> int:
        if not -self.ndim <= axis < max(self.ndim, 1):
            raise TensorError(f"{name}: axis {axis} of a tensor of shape {self.shape}")
        return axis % max(self.ndim, 1)

    def reshape(self, *shape: int | Sequence[int]) -> Tensor:
        dims = list(shape[0]) if len(shape) == 1 and not isinstance(shape[0], int) else list(shape)
        if dims.count(-1) == 1:
            known = math.prod(d for d in dims if d != -1)
            dims[dims.index(-1)] = (
                self.numel() // known if known and self.numel() % known == 0 else -1
            )
        if any(d < 1 for d in dims) or math.prod(dims) != self.numel():
            raise TensorError(f"reshape: a tensor of shape {self.shape} to {tuple(shape)}")
        new = tuple(dims)
        return self if new == self.shape else Tensor(reshaped(self.uop, new))

    def permute(self, *order: int) -> Tensor:
        axes = tuple(order[0]) if len(order) == 1 and not isinstance(order[0], int) else order
        if sorted(a % max(self.ndim, 1) for a in axes) != list(range(self.ndim)):
            raise TensorError(f"permute: order {axes} of a tensor of shape {self.shape}")
        axes = tuple(a % self.ndim for a in axes)
        return self if axes == tuple(range(self.ndim)) else Tensor(self.uop.permute(axes))

    def transpose(self, a: int = -2, b: int = -1) -> Tensor:
        order = list(range(self.ndim))
        a, b = self._axis(a, "transpose"), self._axis(b, "transpose")
        order[a], order[b] = order[b], order[a]
        return self.permute(order)

    @property
    def T(self) -> Tensor:
        return self.transpose()

    def expand(self, *shape: int) -> Tensor:
        return self.expand_to(tuple(shape))

    def pad(self, pairs: Sequence[tuple[int, int]]) -> Tensor:
        if len(pairs) != self.ndim or any(lo < 0 or hi < 0 for lo, hi in pairs):
            raise TensorError(f"pad: pairs {tuple(pairs)} for a tensor of shape {self.shape}")
        return Tensor(self.uop.pad(pairs))

    def shrink(self, pairs: Sequence[tuple[int, int]]) -> Tensor:
        ok = len(pairs) == self.ndim and all(
            0 <= lo < hi <= n for (lo, hi), n in zip(pairs, self.shape, strict=True)
        )
        if not ok:
            raise TensorError(f"shrink: windows {tuple(pairs)} of a tensor of shape {self.shape}")
        if all(p == (0, n) for p, n in zip(pairs, self.shape, strict=True)):
            return self
        return Tensor(self.uop.shrink(pairs))

    def flip(self, *axes: int) -> Tensor:
        return Tensor(self.uop.flip(tuple(self._axis(a, "flip") for a in axes)))

    def __getitem__(self, key: Any) -> Tensor:
        """Ints and step-1 slices (a SHRINK, then a RESHAPE dropping the int axes)."""
        keys = key if isinstance(key, tuple) else (key,)
        if len(keys) > self.ndim:
            raise TensorError(f"index: {len(keys)} indices for a tensor of shape {self.shape}")
        pairs, keep = [], []
        for k, n in zip(keys + (slice(None),) * (self.ndim - len(keys)), self.shape, strict=True):
            if isinstance(k, int):
                i = k + n if k < 0 else k
                if not 0 <= i < n:
                    raise TensorError(f"index: {k} out of range for an axis of {n}")
                pairs.append((i, i + 1))
            elif isinstance(k, slice) and k.step in (None, 1):
                lo, hi, _ = k.indices(n)
                if hi <= lo:
                    raise TensorError(f"index: the empty slice {k} of an axis of {n}")
                pairs.append((lo, hi))
                keep.append(hi - lo)
            else:
                raise TensorError(f"index: {k!r} (ints and step-1 slices only)")
        return self.shrink(pairs).reshape(keep) if keep else self.shrink(pairs).reshape(())

    @staticmethod
    def cat(tensors: Sequence[Tensor], axis: int = 0) -> Tensor:
        """Concatenation along `axis`: each piece padded with zeros to the whole, then added."""
        first = tensors[0]
        axis = first._axis(axis, "cat")
        for t in tensors[1:]:
            same = t.ndim == first.ndim and all(
                a == b
                for i, (a, b) in enumerate(zip(t.shape, first.shape, strict=True))
                if i != axis
            )
            if not same:
                raise TensorError(f"cat: shapes {first.shape} and {t.shape} along axis {axis}")
        total, start, result = sum(t.shape[axis] for t in tensors), 0, None
        for t in tensors:
            pairs = [(0, 0)] * t.ndim
            pairs[axis] = (start, total - start - t.shape[axis])
            start += t.shape[axis]
            piece = t.pad(pairs) if len(tensors) > 1 else t
            result = piece if result is None else result + piece
        assert result is not None
        return result

    # --- reductions

    def _reduce(self, op: Op, name: str, axis: int | Sequence[int] | None, keepdim: bool) -> Tensor:
        if axis is None:
            axes = tuple(range(self.ndim))
        else:
            axes = tuple(
                sorted({self._axis(a, name) for a in ((axis,) if isinstance(axis, int) else axis)})
            )
        if not axes:
            return self
        out = Tensor(self.uop.reduce(op, axes))
        if keepdim:
            return out.reshape(tuple(1 if i in axes else n for i, n in enumerate(self.shape)))
        return out

    def sum(self, axis: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
        return self._reduce(Op.ADD, "sum", axis, keepdim)

    def max(self, axis: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
        return self._reduce(Op.MAX, "max", axis, keepdim)

    def mean(self, axis: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
        total = self.sum(axis, keepdim)
        return total * (1.0 / (self.numel() // max(total.numel(), 1)))

    def var(self, axis: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
        """The biased variance (divided by the count), as layer norm uses."""
        centred = self - self.mean(axis, keepdim=True)
        return (centred * centred).mean(axis, keepdim)

    # --- composites

    def matmul(self, other: Tensor) -> Tensor:
        """numpy's matmul (batch axes broadcast; a rank-1 operand is a row or column whose axis
        the result drops): a product of movement ops, MUL and REDUCE ADD over the shared axis
        (spec/uir-week5.md section 9)."""
        a, b = self, other
        if a.ndim == 0 or b.ndim == 0 or a.shape[-1] != b.shape[-2 if b.ndim > 1 else 0]:
            raise TensorError(f"matmul: shapes {a.shape} and {b.shape}")
        if a.ndim == 1 or b.ndim == 1:
            x = a.reshape(1, *a.shape) if a.ndim == 1 else a
            y = b.reshape(*b.shape, 1) if b.ndim == 1 else b
            out = x.matmul(y)
            keep = out.shape[:-2] + out.shape[-2:-1] * (a.ndim > 1) + out.shape[-1:] * (b.ndim > 1)
            return out.reshape(keep)
        try:
            batch = broadcast_shape("matmul", a.shape[:-2], b.shape[:-2])
        except TensorError:
            raise TensorError(f"matmul: the batch axes of {a.shape} and {b.shape} differ") from None
        n, k, m = a.shape[-2], a.shape[-1], b.shape[-1]
        x = a.reshape(*a.shape[:-2], n, k, 1).expand_to((*batch, n, k, m))
        y = b.reshape(*b.shape[:-2], 1, k, m).expand_to((*batch, n, k, m))
        return (x * y).sum(-2)

    __matmul__ = matmul

    def softmax(self, axis: int = -1) -> Tensor:
        e = (self - self.max(axis, keepdim=True)).exp()
        return e / e.sum(axis, keepdim=True)

    def log_softmax(self, axis: int = -1) -> Tensor:
        shifted = self - self.max(axis, keepdim=True)
        return shifted - shifted.exp().sum(axis, keepdim=True).log()

    def one_hot(self, classes: int) -> Tensor:
        """f32 one-hot rows of an i32 tensor of class ids: CMPEQ against an arange."""
        if self.dtype is not i32:
            raise TensorError(f"one_hot: needs i32 ids, not {self.dtype.name}")
        ids = self.reshape(*self.shape, 1)
        return ids.eq(Tensor.arange(classes)).where(1.0, 0.0)

    def cross_entropy(self, targets: Tensor) -> Tensor:
        """Mean over rows of -log softmax(self)[target]: self [..., classes], targets [...] i32."""
        if targets.shape != self.shape[:-1]:
            raise TensorError(f"cross_entropy: logits {self.shape} and targets {targets.shape}")
        picked = (self.log_softmax(-1) * targets.one_hot(self.shape[-1])).sum(-1)
        return -picked.mean()

    def layer_norm(
        self, weight: Tensor | None = None, bias: Tensor | None = None, eps: float = 1e-5
    ) -> Tensor:
        centred = self - self.mean(-1, keepdim=True)
        out = centred * ((centred * centred).mean(-1, keepdim=True) + eps).rsqrt()
        if weight is not None:
            out = out * weight
        return out + bias if bias is not None else out


def reshaped(u: UOp, shape: tuple[int, ...]) -> UOp:
    """`u` in `shape`, rank 0 included: RESHAPE moves the elements of shaped values only, so a
    scalar becomes shaped by EXPAND and a one-element value a scalar by INDEX of element 0."""
    if not u.type.shape:
        return u.expand(shape)
    if not shape:
        flat = u.reshape((1,)) if u.type.shape != (1,) else u
        return flat.index(UOp.const(Type(i32), 0))
    return u.reshape(shape)


def causal_mask(t: int) -> Tensor:
    """bool [t, t]: true where key j may be seen from query i (j <= i)."""
    i = Tensor.arange(t).reshape(t, 1)
    j = Tensor.arange(t).reshape(1, t)
    return j <= i

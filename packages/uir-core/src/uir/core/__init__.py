"""UIR core: UOps, the .uir format, the verifier, the reference interpreter and the plugin hooks."""

from .dtypes import DTYPES, DType, Type
from .errors import BackendError, ParseError, UIRError, UsageError, VerifyError
from .ops import Op
from .parse import Program, parse
from .printer import print_program
from .uop import UOp
from .verify import verify

__all__ = [
    "DTYPES",
    "BackendError",
    "DType",
    "Op",
    "ParseError",
    "Program",
    "Type",
    "UIRError",
    "UOp",
    "UsageError",
    "VerifyError",
    "parse",
    "print_program",
    "verify",
]

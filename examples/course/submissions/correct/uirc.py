"""Team "correct"'s compiler for the example course: the week-1 programs of its tests (i32 scalars:
CONST, ADD, SUB, MUL, MAX, MIN and the SINK), interpreted. Run as `python3 uirc.py run FILE`.

A student's compiler is their own code: this one needs nothing but the system's python3, which
the grader's sandbox shows (its /usr; nothing of the grader's own Python, spec/grading.md section
3.2). make_repos.py plants team "buggy"'s bug in a copy of it (MAX computes MIN)."""

import sys

OPS = {
    "ADD": lambda a, b: a + b,
    "SUB": lambda a, b: a - b,
    "MUL": lambda a, b: a * b,
    "MAX": max,
    "MIN": min,
}


def wrap(x: int) -> int:
    """An i32 result wraps modulo 2^32."""
    return (x + 2**31) % 2**32 - 2**31


def run(path: str) -> int:
    values: dict[str, int] = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            name, _, op, _type, *rest = words
            if op == "CONST":
                values[name] = int(rest[0], 0)
            elif op in OPS:
                values[name] = wrap(OPS[op](*(values[r] for r in rest)))
            elif op == "SINK":
                print("\n".join(str(values[r]) for r in rest))
            else:
                print(f"{path}:{number}: error: this compiler has no {op}", file=sys.stderr)
                return 2
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[2]))

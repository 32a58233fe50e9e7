"""Per-run limits of the sandbox (spec/grading.md, "The sandbox"), and the resource limits
(setrlimit) they become in the process that runs a compiler."""

from __future__ import annotations

import resource
from collections.abc import Sequence
from dataclasses import dataclass

MIB = 1 << 20
# The largest checkout of a team's repository in MiB, its .git included (--checkout-limit).
CHECKOUT_MB = 1024


@dataclass(frozen=True)
class Limits:
    """Per-run limits. A zero turns a resource limit off (the wall clock always applies)."""

    wall_s: float = 10.0  # wall-clock seconds; then the whole process group is killed
    cpu_s: int = 10  # RLIMIT_CPU seconds: SIGXCPU, then SIGKILL a second later
    memory_mb: int = 4096  # RLIMIT_AS: Python with numpy maps a few hundred MiB by itself
    output_bytes: int = MIB  # standard output, and standard error, each
    file_mb: int = 64  # RLIMIT_FSIZE: the largest file the command may write
    # Processes and threads of one run, all together (a cgroup's pids.max; numpy's thread pool
    # counts). Only where the grader can make cgroups, which also caps the run's total memory.
    processes: int = 256
    # Whether memory_mb also caps each process's address space (RLIMIT_AS). The render grader's
    # sanitized build cannot run under it (AddressSanitizer reserves terabytes it never uses).
    address_space: bool = True

    def rlimits(self) -> list[tuple[int, int, int]]:
        """(resource, soft, hard) for each limit, never above the hard limit we run under."""
        wanted = [(resource.RLIMIT_CORE, 0, 0)]  # a crash must not litter the disk
        if self.cpu_s > 0:
            wanted.append((resource.RLIMIT_CPU, self.cpu_s, self.cpu_s + 1))
        if self.memory_mb > 0 and self.address_space:
            wanted.append((resource.RLIMIT_AS, self.memory_mb * MIB, self.memory_mb * MIB))
        if self.file_mb > 0:
            wanted.append((resource.RLIMIT_FSIZE, self.file_mb * MIB, self.file_mb * MIB))
        result = []
        for res, soft, hard in wanted:
            _, current_hard = resource.getrlimit(res)
            if current_hard != resource.RLIM_INFINITY:
                soft, hard = min(soft, current_hard), min(hard, current_hard)
            result.append((res, soft, hard))
        return result

    def as_dict(self) -> dict[str, float | int]:
        return {
            "wall_s": self.wall_s,
            "cpu_s": self.cpu_s,
            "memory_mb": self.memory_mb,
            "output_bytes": self.output_bytes,
            "file_mb": self.file_mb,
            "processes": self.processes,
        }


def apply_rlimits(rlimits: Sequence[tuple[int, int, int]]) -> None:
    """Set resource limits on the calling process (a child about to run the command)."""
    for res, soft, hard in rlimits:
        resource.setrlimit(res, (soft, hard))

"""What one sandboxed run may use, and the resource limits that enforce it.

`Limits` travels from assignment.toml through the grading process to the
child, which applies the rlimits after fork and before it imports any
student code; wall time is enforced by the fork server.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Limits:
    """What one sandboxed run may use. Wall time is enforced by the parent.

    Every key may be set in assignment.toml, for the whole assignment (`[limits]`) or one check
    (`[checks.NAME.limits]`), over the plugin's `Check.limits`. A run past a limit fails the case it
    was on, with the reason; a fresh child takes the remaining cases.
    """

    cpu_s: float = 10.0
    """CPU seconds of one run (an rlimit), at least; see `wall_factor`."""
    wall_s: float = 20.0
    """Wall-clock seconds of one run, measured and enforced by the grading side, at least; see
    `wall_factor`."""
    memory_mb: int = 2048
    """Memory, in MiB, beyond what the fork server has already loaded (address space; on CUDA runs, the
    resident memory the fork server watches)."""
    processes: int = 4
    """Processes the run may have at once (threads of a CUDA run are not counted)."""
    file_mb: int = 16
    """The size of any one file the run writes, in MiB."""
    open_files: int = 256
    """Files open at once."""
    gpu_memory_mb: int = 4096
    """GPU memory of one CUDA run, in MiB (CUDA runs only)."""
    wall_factor: float = 30.0
    """Where the grader knows the reference's own time on the same cases (measured once per grading, as
    the expected values are), the CPU and wall limits are at least this many times it; `cpu_s` and
    `wall_s` are the floors. 0: fixed limits. The handout states each check's limit in these words."""

    def as_dict(self) -> dict:
        return asdict(self)

    def following(self, reference_s: float | None) -> Limits:
        """These limits for cases the reference took `reference_s` seconds on (None: unknown, the floors)."""
        if reference_s is None or self.wall_factor <= 0:
            return self
        scaled = self.wall_factor * reference_s
        return Limits(**{**self.as_dict(), "cpu_s": max(self.cpu_s, scaled), "wall_s": max(self.wall_s, scaled)})


def available_cpus(cgroup: str = "/sys/fs/cgroup") -> float:
    """CPUs this process may really use: affinity, capped by a cgroup CPU quota.

    Gradescope gives a container half a CPU while os.cpu_count() reports the
    host's; running one check per reported CPU there would starve them all.
    """
    try:
        cpus = float(len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS
        cpus = float(os.cpu_count() or 1)
    for quota_file, period_file in (
        (f"{cgroup}/cpu.max", None),  # cgroup v2, then v1
        (f"{cgroup}/cpu/cpu.cfs_quota_us", f"{cgroup}/cpu/cpu.cfs_period_us"),
    ):
        try:
            with open(quota_file) as f:
                fields = f.read().split()
            if period_file:
                with open(period_file) as f:
                    fields.append(f.read().strip())
            if fields[0] not in ("max", "-1"):
                return min(cpus, int(fields[0]) / int(fields[1]))
        except (OSError, ValueError, IndexError):
            continue
    return cpus


# Checks run at once by default: one per usable CPU, never more than this. It
# is also how many sandbox users the Gradescope image is given.
MAX_DEFAULT_JOBS = 4


def default_jobs() -> int:
    """How many checks to run at once where nobody said: one per usable CPU, at most MAX_DEFAULT_JOBS."""
    return max(1, min(MAX_DEFAULT_JOBS, int(available_cpus())))


def _vm_size_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _own_process_count(uid: int) -> int:
    """Processes and threads this uid already runs (RLIMIT_NPROC counts them all)."""
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += len(os.listdir(f"/proc/{entry.name}/task"))
            except OSError:
                pass
    return count


def _try_setrlimit(which: int, value: int, applied: list[str], name: str) -> None:
    import resource

    try:
        resource.setrlimit(which, (value, value))
        applied.append(name)
    except (ValueError, OSError):
        pass  # not supported here (RLIMIT_AS on macOS): the parent's limits still hold


def apply_rlimits(limits: Limits, uid: int, *, cuda: bool = False) -> list[str]:
    """CPU, address space (beyond what the fork server already maps), processes, files.

    `uid` is the user the child will run as: the process limit counts every
    process and thread of that user, so the budget is added to what it runs now.
    A CUDA run goes without the address-space and process limits, which
    CUDA's reservations and threads would break: the fork server watches
    its resident memory and processes instead (`devices.Watchdog`).
    """
    # Imported here, not at the top: `Limits` is part of the plugin API, which
    # must import where there are no rlimits (Windows).
    import resource

    cpu = max(1, int(limits.cpu_s + 0.999))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    applied = ["cpu"]
    # The fork server has numpy (and maybe torch) mapped already; the child's
    # budget is what it may add on top of that.
    if os.path.exists("/proc/self/statm") and not cuda:
        _try_setrlimit(resource.RLIMIT_AS, _vm_size_bytes() + limits.memory_mb * 2**20, applied, "memory")
    _try_setrlimit(resource.RLIMIT_FSIZE, limits.file_mb * 2**20, applied, "file size")
    _try_setrlimit(resource.RLIMIT_NOFILE, limits.open_files, applied, "open files")
    _try_setrlimit(resource.RLIMIT_CORE, 0, applied, "core")
    if os.path.isdir("/proc") and not cuda:
        _try_setrlimit(resource.RLIMIT_NPROC, limits.processes + _own_process_count(uid), applied, "processes")
    return applied

"""What changes in the sandbox when a run may use a CUDA GPU, and only then.

CUDA needs what the CPU sandbox refuses: its device files (read, write and
their ioctls), the driver's files under /proc and /sys, writes to its own
threads' names, its environment
(`CUDA_VISIBLE_DEVICES`, the driver's library path), many threads, and
address space far beyond what it touches (the driver reserves tens of GiB
of virtual memory up front). So a CUDA run trades the address-space and
process rlimits for a watchdog in the fork server that bounds what the
child really uses: resident memory and processes (threads are not counted).
GPU memory is bounded in the child, through the caching allocator, before
the submission is imported.

The fork server never touches CUDA itself: a CUDA context does not survive
fork, so each CUDA child makes its own.
"""

from __future__ import annotations

import glob
import os
import signal

from .limits import Limits

# What CUDA reads of the grader's environment; kept for CUDA runs only.
CUDA_ENV_KEYS = (
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "LD_LIBRARY_PATH",
    "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES",
    "CUDA_HOME",
    "CUDA_MODULE_LOADING",
)


def cuda_device_files() -> list[str]:
    return sorted(glob.glob("/dev/nvidia*")) + sorted(glob.glob("/dev/dri/renderD*"))


def cuda_write_paths() -> list[str]:
    """What a CUDA child writes besides its own folder: the device files, and its own threads' files.

    The driver names the threads it starts (pthread_setname_np: a write to
    /proc/self/task/TID/comm). Refused, cuInit fails with error 304 ("OS call
    failed"), as seen on an H200 under Landlock. /proc/self is resolved when the
    child adds its rules, so the grant is the child's own process: no other
    process's files, and no path that leaves /proc (Landlock checks the file
    reached, not the magic link walked through).
    """
    return [*cuda_device_files(), "/proc/self/task"]


def cuda_own_read_paths() -> list[str]:
    """What a CUDA child reads of its own process (its maps, its status): granted by the child itself.

    A rule for /proc/self made in the fork server would be the fork server's
    own process, not the child's: CUDA's initialisation then fails with
    error 2 ("out of memory"), as seen on an H200.
    """
    return ["/proc/self"]


def cuda_read_paths() -> list[str]:
    """The driver's files a CUDA child reads (its devices are granted in `child`, its own process too)."""
    return [
        p
        for p in (
            "/proc/driver/nvidia",
            "/proc/cpuinfo",
            "/proc/meminfo",
            "/sys/devices",
            "/sys/bus/pci",
            "/sys/module/nvidia",
            "/usr/lib/x86_64-linux-gnu",
            "/usr/local/cuda",
        )
        if os.path.exists(p)
    ]


def cuda_environment() -> dict[str, str]:
    return {k: os.environ[k] for k in CUDA_ENV_KEYS if k in os.environ}


def bound_gpu_memory(limits: Limits) -> str:
    """Cap the caching allocator of this (child) process; returns what was applied."""
    import torch

    total = torch.cuda.get_device_properties(0).total_memory
    fraction = min(1.0, limits.gpu_memory_mb * 2**20 / total)
    torch.cuda.set_per_process_memory_fraction(fraction, 0)
    return f"{limits.gpu_memory_mb} MiB of {total // 2**20} MiB"


def _session_members(sid: int) -> list[int]:
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getsid(int(entry)) == sid:
                    members.append(int(entry))
            except OSError:
                pass
    return members


def _resident_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0


class Watchdog:
    """Kills a CUDA child whose session goes over its resident memory or its process count."""

    PERIOD_S = 0.1

    def __init__(self, pid: int, limits: Limits):
        self.pid, self.limits = pid, limits
        # What each process holds beyond the fork server's own pages (numpy,
        # torch, shared after fork) counts; the child's CUDA runtime does.
        self.base = _resident_bytes(os.getpid())

    def verdict(self) -> str | None:
        """ "memory" or "processes" when the child went over (and was killed), else None."""
        members = _session_members(self.pid)
        killed = None
        if len(members) > self.limits.processes:
            killed = "processes"
        elif sum(max(0, _resident_bytes(m) - self.base) for m in members) > self.limits.memory_mb * 2**20:
            killed = "memory"
        if killed:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except OSError:
                pass
        return killed

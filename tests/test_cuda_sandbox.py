"""A CUDA run in the sandbox: CUDA starts under its Landlock rules, and the sandbox's limits still hold there.

The first test runs anywhere Landlock does: it checks the grant CUDA's
driver needs (its threads name themselves) on the CPU. The rest need a CUDA
GPU and skip without one, saying so.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import textwrap
import threading
from pathlib import Path

import pytest
from sandbox_fixtures import run_calls, submission_of

from lmgrade.core.device import cuda_available
from lmgrade.sandbox import child, devices, landlock
from lmgrade.sandbox.limits import Limits
from lmgrade.sandbox.pool import SandboxPool

needs_landlock = pytest.mark.skipif(landlock.abi_version() < 1, reason="Landlock is not available on this kernel")
needs_cuda = pytest.mark.skipif(not cuda_available(), reason="needs a CUDA GPU (torch.cuda.is_available() is False)")


def _after_lock_down(device: str) -> dict[str, str]:
    """In a forked child locked down for `device`, as a fork server would: what CUDA's driver does first.

    The reading ruleset is made here, before the fork, as the fork server makes it.
    """
    read_paths = [Path(p) for p in (sys.prefix, sys.base_prefix, "/usr", "/lib", "/lib64", "/etc")]
    if device == "cuda":
        read_paths += [Path(p) for p in devices.cuda_read_paths()]
    reading = landlock.reading_ruleset(read_paths)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        outcome = {}
        try:
            workdir = Path(tempfile.mkdtemp())
            child._lock_down(workdir, reading, Limits(), None, False, True, os.getppid(), device, False)
            started, done = threading.Event(), threading.Event()
            worker = threading.Thread(target=lambda: (started.set(), done.wait()))
            worker.start()
            started.wait()
            try:
                # What pthread_setname_np does for a thread other than the caller.
                with open(f"/proc/self/task/{worker.native_id}/comm", "w") as f:
                    f.write("cuda-EvtHandlr")
                outcome["name a thread"] = "done"
            except OSError as exc:
                outcome["name a thread"] = type(exc).__name__
            finally:
                done.set()
                worker.join()
            try:
                with open("/proc/self/status") as f:
                    outcome["read its own status"] = "done" if "VmRSS" in f.read() else "empty"
            except OSError as exc:
                outcome["read its own status"] = type(exc).__name__
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            outcome["lock-down"] = repr(exc)
        os.write(write, json.dumps(outcome).encode())
        os._exit(0)
    os.close(write)
    os.close(reading)
    with os.fdopen(read, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    return json.loads(data)


@needs_landlock
def test_a_cuda_child_names_its_threads_and_reads_its_own_process_and_a_cpu_child_does_neither():
    # Each refused, CUDA's initialisation fails: error 304 ("OS call failed") for the names, error 2 ("out of
    # memory") for its own /proc/self, as seen on an H200.
    both = {"name a thread": "done", "read its own status": "done"}
    assert _after_lock_down("cuda") == both
    assert _after_lock_down("cpu") == {"name a thread": "PermissionError", "read its own status": "PermissionError"}


GPU_VICTIM = textwrap.dedent("""
    import os

    def on_gpu():
        import torch
        return float(torch.arange(4.0, device="cuda").sum())

    def gpu_memory(mib):
        import torch
        return torch.empty(mib * 2**20, dtype=torch.uint8, device="cuda").numel()

    def write_outside(path):
        with open(path, "w") as f:
            f.write("pwned")
        return "written"

    def other_process_file():
        with open(f"/proc/{os.getppid()}/comm", "w") as f:
            f.write("pwned")
        return "written"

    def layer_norm_below_the_names():
        import torch
        x = torch.randn(2, 8, device="cuda")
        return float(torch.ops.aten.native_layer_norm(x, [8], None, None, 1e-5)[0].sum())
""")


@pytest.fixture(scope="module")
def gpu_victim(tmp_path_factory):
    return submission_of(tmp_path_factory, "gpu_victim", GPU_VICTIM)


@pytest.fixture(scope="module")
def gpu_pool():
    root = Path(__file__).resolve().parents[1]
    forbidden = {
        "apis": ["torch.nn.functional.layer_norm"],
        "operators": {"torch.nn.functional.layer_norm": ["aten::native_layer_norm"]},
    }
    with SandboxPool(
        preload=["numpy", "torch", "sandbox_fixtures.scenarios"],
        forbidden_modules=["lmgrade.reference"],
        protected=[root / "reference"],
        jobs=1,
        forbidden_apis=forbidden,
    ) as pool:
        yield pool


def _run(pool, victim, *cases, **limits):
    return run_calls(pool, victim, cases, Limits(**{"cpu_s": 20, "wall_s": 60, "memory_mb": 4096, **limits}), "cuda")


@needs_cuda
def test_a_cuda_run_computes_on_the_gpu(gpu_pool, gpu_victim):
    (out,) = _run(gpu_pool, gpu_victim, ("on_gpu",))
    assert out.kind == "ok" and out.value == 6.0, out


@needs_cuda
def test_past_the_gpu_memory_cap_only_that_case_is_lost(gpu_pool, gpu_victim):
    small, big, after = _run(
        gpu_pool, gpu_victim, ("gpu_memory", 64), ("gpu_memory", 1024), ("on_gpu",), gpu_memory_mb=256
    )
    assert small.kind == "ok" and small.value == 64 * 2**20, small
    assert big.kind == "error" and "OutOfMemory" in big.error["type"], big
    assert after.kind == "ok" and after.value == 6.0, after


@needs_cuda
@needs_landlock
def test_a_cuda_run_writes_neither_outside_its_folder_nor_another_process(gpu_pool, gpu_victim, tmp_path):
    target = tmp_path / "escape.txt"
    outside, other = _run(gpu_pool, gpu_victim, ("write_outside", str(target)), ("other_process_file",))
    assert outside.kind == "error" and not target.exists(), outside
    assert other.kind == "error" and other.error["type"] == "PermissionError", other


@needs_cuda
def test_a_forbidden_operator_is_stopped_on_cuda_tensors(gpu_pool, gpu_victim):
    (out,) = _run(gpu_pool, gpu_victim, ("layer_norm_below_the_names",))
    assert out.kind == "forbidden" and "layer_norm" in str(out.value), out

"""The grading process imports torch only when it computes something with it."""

from __future__ import annotations

import json
import subprocess
import sys
import types

from helpers import ROOT
from lmgrade import lazy_import
from lmgrade.core import device
from lmgrade.declare import catalog, templates


def test_a_lazy_module_is_imported_by_its_first_attribute_and_copies_nothing(tmp_path, monkeypatch):
    (tmp_path / "lazy_probe_module.py").write_text("VALUE = 41\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "lazy_probe_module", raising=False)
    probe = lazy_import("lazy_probe_module")
    # Introspection (repr, copy, inspect's probes for __wrapped__) imports nothing.
    assert "imported on first use" in repr(probe)
    assert not hasattr(probe, "__wrapped__")
    assert "lazy_probe_module" not in sys.modules
    assert probe.VALUE == 41
    assert "lazy_probe_module" in sys.modules
    # What is set on the real module later (a guard replacing a function) is what the lazy one gives.
    monkeypatch.setattr(sys.modules["lazy_probe_module"], "VALUE", 42)
    assert probe.VALUE == 42


def test_an_untouched_stub_is_graded_without_importing_torch(tmp_path):
    assignment, variant = catalog.load("transformer")
    templates.generate(assignment, variant, tmp_path / "stub")
    results = tmp_path / "results.json"
    program = (
        "import sys\n"
        "from lmgrade import cli\n"
        f"sys.argv = ['lmgrade', 'grade', 'transformer', {str(tmp_path / 'stub')!r}, '--results', {str(results)!r}]\n"
        "try:\n"
        "    cli.main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('torch imported:', 'torch' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert "torch imported: False" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-2000:]
    document = json.loads(results.read_text())
    assert document["score"] == 0 and all("not implemented" in t["output"] for t in document["tests"])


def test_without_a_gpu_driver_torch_is_not_asked(monkeypatch, tmp_path):
    answers = types.SimpleNamespace(cuda=types.SimpleNamespace(is_available=lambda: True))
    monkeypatch.setitem(sys.modules, "torch", answers)
    monkeypatch.setattr(device, "DRIVER_PATHS", (str(tmp_path / "no-driver"),))
    assert device.cuda_available() is (sys.platform not in ("linux", "darwin"))
    (tmp_path / "driver").touch()
    monkeypatch.setattr(device, "DRIVER_PATHS", (str(tmp_path / "driver"),))
    assert device.cuda_available() is (sys.platform != "darwin")

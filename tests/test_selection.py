"""A `Selection` is the one form an assignment and its variant travel in; the device is bound where grading happens."""

from __future__ import annotations

import json

import pytest

from lmgrade.core.device import DeviceError
from lmgrade.core.selection import Selection, SelectionError
from lmgrade.course.regrade.cluster import DaskExecutor
from lmgrade.course.regrade.content import grading_fingerprint
from lmgrade.course.regrade.executor import ExecutorError
from lmgrade.declare import catalog


def test_a_selection_is_the_same_whichever_way_it_was_spelled():
    parsed = Selection.parse("rnn", ["layers = 2", "activation=tanh", "layers=3"])  # a later --set wins
    assert parsed == Selection("rnn", {"activation": "tanh", "layers": "3"})
    assert parsed.settings == (("activation", "tanh"), ("layers", "3"))
    assert parsed.options() == ["--set", "activation=tanh", "--set", "layers=3"]
    assert parsed.describe() == "activation=tanh, layers=3" and Selection("rnn").describe() == ""
    assert Selection.of("transformer", {"pre_ln": False, "positions": "rope"}).chosen == {
        "pre_ln": "false",
        "positions": "rope",
    }
    # What a zip's config and a Dask worker receive: plain JSON, read back equal.
    assert Selection.from_dict(json.loads(json.dumps(parsed.as_dict()))) == parsed
    assert hash(parsed) == hash(Selection.from_dict(parsed.as_dict()))


@pytest.mark.parametrize("pair", ["activation", "=tanh", " =tanh"])
def test_a_set_that_is_not_key_value_is_refused(pair):
    with pytest.raises(SelectionError, match="expected KEY=VALUE"):
        Selection.parse("rnn", [pair])


@pytest.mark.parametrize("data", [{}, {"assignment": "rnn"}, {"assignment": 3, "settings": {}}, [1, 2]])
def test_a_selection_read_back_from_something_else_is_refused(data):
    with pytest.raises(SelectionError, match="not a selection"):
        Selection.from_dict(data)


def test_the_catalogue_resolves_a_selection_and_binds_no_device():
    assignment, variant = catalog.load(Selection("transformer", {"pre_ln": "false"}))
    assert variant["pre_ln"] is False and assignment.device is None
    # Unbound, a check that needs CUDA says so, whatever this machine has.
    assert assignment.needs_cuda and "cuda" in {c.device for c in assignment.checks}
    on_cpu = assignment.on("cpu")
    assert on_cpu.device == "cpu" and not on_cpu.needs_cuda
    assert on_cpu.on() is on_cpu and on_cpu.on("cpu") is on_cpu  # binding again keeps the device
    with pytest.raises(ValueError, match="bound to cpu"):
        on_cpu.on("cuda")
    # An assignment with no CUDA check is on the CPU whatever was asked, without looking for a GPU.
    assert catalog.load("ngram")[0].on("cuda").device == "cpu"


def test_cuda_where_there_is_none_is_refused_when_binding(monkeypatch):
    monkeypatch.setattr("lmgrade.core.device.cuda_available", lambda: False)
    assignment, _ = catalog.load("transformer")
    with pytest.raises(DeviceError, match="no CUDA GPU is usable here"):
        assignment.on("cuda")
    assert assignment.on("auto").device == "cpu"


def test_every_variant_is_one_selection():
    selections = catalog.variants("transformer")
    assert selections[0] == Selection("transformer")
    assert Selection("transformer", {"positions": "rope"}) in selections
    assert all(len(s.settings) == 1 for s in selections[1:])


class _Workers:
    """A Dask client's answers, without a cluster: what each worker says of itself."""

    def __init__(self, said: dict[str, dict]):
        self.said = said

    def wait_for_workers(self, n, timeout):
        pass

    def run(self, function, *args):
        return self.said


def _executor(said: dict[str, dict], fingerprint: str) -> DaskExecutor:
    executor = DaskExecutor.__new__(DaskExecutor)  # no cluster: only the checks of what workers say
    executor.client, executor.fingerprint, executor.device = _Workers(said), fingerprint, "auto"
    executor.selection = Selection("transformer").as_dict()
    return executor


def test_dask_workers_must_agree_on_the_device_they_grade_on():
    assignment, variant = catalog.load("transformer")
    fingerprint = grading_fingerprint(assignment, variant, "s", "auto")
    agreeing = {"tcp://a": {"fingerprint": fingerprint, "device": "cuda"}}
    _executor({**agreeing, "tcp://b": {"fingerprint": fingerprint, "device": "cuda"}}, fingerprint)._check_workers()
    mixed = {**agreeing, "tcp://b": {"fingerprint": fingerprint, "device": "cpu"}}
    with pytest.raises(ExecutorError, match=r"different devices \(cuda on tcp://a; cpu on tcp://b\)"):
        _executor(mixed, fingerprint)._check_workers()
    unusable = {
        "tcp://a": {"fingerprint": fingerprint, "device": None, "cannot": "--device cuda: no CUDA GPU is usable here"}
    }
    with pytest.raises(ExecutorError, match="cannot grade with --device auto: --device cuda: no CUDA"):
        _executor(unusable, fingerprint)._check_workers()
    other = {"tcp://a": {"fingerprint": "another", "device": "cpu"}}
    with pytest.raises(ExecutorError, match="differing: tcp://a"):
        _executor(other, fingerprint)._check_workers()

"""Stand-ins for torch modules (`lmgrade.grading.stand_in`): gradients flow through them as through the reference's.

Recording, in the grading process: the reference's module class records each construction (its
arguments and torch's generator state before, the parameters, buffers and plain attributes it
built, the generator state after) and each forward (its inputs and parameter values, its output).
Where the output takes part in a backward pass, a hook records the gradient that reached it and the
vector-Jacobian product of that gradient with respect to every floating-point input and parameter,
computed on a fresh graph of the same forward.

Replaying, in the child: a module class of the same name builds the parameters the reference's
construction built (so the student's model registers, moves, converts and loads them as it would its
own) and draws nothing but leaves torch's generator as the reference left it; its forward is an
autograd function that answers the reference's output and, in the backward pass, its products. Each
is asked of the run's supervisor as the call is made (`stand_in_answers`): a call or a gradient the
reference never saw raises `NoRecordedCall`.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

from ..boundary.call_snapshots import PARAMS, keep_params, materialize, params_digest, snapshot
from ..sandbox.stand_in_channel import ask

_PLAIN = (int, float, str, bool)


def _torch():
    return sys.modules.get("torch")


def is_module_class(obj: Any) -> bool:
    """Whether `obj` is a torch module class (torch already imported: a numpy assignment never asks)."""
    torch = _torch()
    return torch is not None and isinstance(obj, type) and issubclass(obj, torch.nn.Module)


def _layout(module) -> dict:
    """What a construction left: parameters and buffers by dotted name, plain attributes, the mode."""
    return {
        "params": [[n, snapshot(p)] for n, p in module.named_parameters()],
        "buffers": [[n, snapshot(b)] for n, b in module.named_buffers()],
        "attrs": {k: v for k, v in vars(module).items() if not k.startswith("_") and type(v) in _PLAIN},
    }


def _floating(value) -> bool:
    torch = _torch()
    return isinstance(value, torch.Tensor) and value.is_floating_point()


class _Paused:
    """Recording off while a vector-Jacobian product re-runs a forward."""

    depth = 0

    @classmethod
    @contextlib.contextmanager
    def now(cls):
        cls.depth += 1
        try:
            yield
        finally:
            cls.depth -= 1


def _vjp(module, forward, inputs: list, params: dict, g, output: int | None = None) -> list:
    """d(forward . g) with respect to every floating-point input and every parameter, on a fresh graph; of the
    forward's `output`-th tensor where it returns a tuple (a backward pass sums the outputs' products)."""
    torch = _torch()
    xs = [x.detach().clone().requires_grad_(True) if _floating(x) else x for x in inputs]
    ps = {n: p.detach().clone().requires_grad_(True) for n, p in params.items()}
    with _Paused.now(), torch.enable_grad():
        y = torch.func.functional_call(module, ps, tuple(xs))
        if output is not None:
            y = y[output]
        wrt = [x for x in xs if _floating(x)] + list(ps.values())
        grads = torch.autograd.grad(y, wrt, g, allow_unused=True)
    return [None if gr is None else snapshot(gr) for gr in grads]


def install_recorders(cls: type, attr: str, calls: list, direct=lambda frame: False) -> None:
    """Record `cls`'s constructions and forwards into `calls` (a fresh copy of the reference's class);
    `direct(frame)` tells a call the scenario made itself (`stand_in.Recorder.direct`)."""
    torch = _torch()
    init, forward = cls.__init__, cls.forward

    def recording_init(self, *args, **kwargs):
        entry = {"name": f"{attr}.__init__", "before": snapshot((list(args), kwargs))}
        if direct(sys._getframe(1)):
            entry["direct"] = True
        rng_before = snapshot(torch.get_rng_state())
        init(self, *args, **kwargs)
        if type(self) is cls:  # a subclass's construction is its own
            entry.update(layout=_layout(self), rng_before=rng_before, rng_after=snapshot(torch.get_rng_state()))
            calls.append(entry)

    def recording_forward(self, *inputs):
        if _Paused.depth:
            return forward(self, *inputs)
        params = dict(self.named_parameters())
        kept = keep_params(calls, list(params.values()))
        entry = {"name": f"{attr}.forward", "before": snapshot((list(inputs), {PARAMS: kept})), "vjps": []}
        if direct(sys._getframe(1)):
            entry["direct"] = True
        y = forward(self, *inputs)
        entry["result"] = snapshot(y)
        calls.append(entry)
        # A forward may return one tensor or a tuple of them (an output and a state): each output that takes
        # part in a backward pass records the product of the gradient it received from outside, by its place.
        # A tuple's tensors go out as views of their own, so that each hears only its own gradient: one
        # output made from another (2 * h beside h) would hear both, where the replay's outputs are apart.
        if isinstance(y, tuple):
            y = tuple(out.view_as(out) if isinstance(out, torch.Tensor) and out.requires_grad else out for out in y)
        outputs = list(enumerate(y)) if isinstance(y, tuple) else [(None, y)]
        if any(isinstance(out, torch.Tensor) and out.requires_grad for _, out in outputs):
            kept_inputs = [x.detach().clone() if isinstance(x, torch.Tensor) else x for x in inputs]
            kept_params = {n: p.detach().clone() for n, p in params.items()}
            for k, out in outputs:
                if not (isinstance(out, torch.Tensor) and out.requires_grad):
                    continue

                def hook(g, k=k):
                    grads = _vjp(self, forward, kept_inputs, kept_params, g, k)
                    entry["vjps"].append({"output": k or 0, "g": snapshot(g), "grads": grads})

                out.register_hook(hook)
        return y

    cls.__init__, cls.forward = recording_init, recording_forward


def _register(module, dotted: str, value, kind: str) -> None:
    """A parameter or buffer at a dotted name, with plain container modules on the way."""
    torch = _torch()
    *path, leaf = dotted.split(".")
    for part in path:
        if part not in module._modules:
            module.add_module(part, torch.nn.Module())
        module = module._modules[part]
    if kind == "param":
        module.register_parameter(leaf, torch.nn.Parameter(value))
    else:
        module.register_buffer(leaf, value)


def _replay_function(attr: str):
    torch = _torch()

    class Replay(torch.autograd.Function):
        @staticmethod
        def forward(ctx, answer, *tensors):
            ctx.set_materialize_grads(False)  # an output no gradient reached asks nothing
            ctx.entry = answer["entry"]
            ctx.like = [t if isinstance(t, torch.Tensor) else None for t in tensors]
            y = materialize(answer["result"])
            first = next((t for t in tensors if isinstance(t, torch.Tensor)), None)

            def moved(out):
                return out.to(first.device) if first is not None and isinstance(out, torch.Tensor) else out

            return tuple(moved(out) for out in y) if isinstance(y, tuple) else moved(y)

        @staticmethod
        def backward(ctx, *gs):
            floating = [t is not None and t.is_floating_point() for t in ctx.like]
            total: list = [None] * sum(floating)
            for k, g in enumerate(gs):
                if g is None:
                    continue
                question = {"op": "vjp", "name": f"{attr}.forward", "entry": ctx.entry, "output": k, "g": snapshot(g)}
                for j, gr in enumerate(ask(question)["grads"]):
                    if gr is not None:
                        gr = materialize(gr)
                        total[j] = gr if total[j] is None else total[j] + gr
            grads = iter(total)
            out = [None]  # the answer
            for t, is_floating in zip(ctx.like, floating):
                gr = next(grads) if is_floating else None
                out.append(None if gr is None else gr.to(t.device))
            return tuple(out)

    return Replay


def stand_in_class(attr: str) -> type:
    """A torch module class named `attr` whose constructions and forwards are answered by the supervisor."""
    torch = _torch()
    replay = _replay_function(attr)

    def __init__(self, *args, **kwargs):
        torch.nn.Module.__init__(self)
        # Matched on its arguments and torch's generator state (`stand_in_answers`).
        answer = ask(
            {
                "op": "init",
                "name": f"{attr}.__init__",
                "live": snapshot((list(args), kwargs)),
                "rng": snapshot(torch.get_rng_state()),
            }
        )
        layout = answer["layout"]
        for name, snap in layout["params"]:
            _register(self, name, materialize(snap), "param")
        for name, snap in layout["buffers"]:
            _register(self, name, materialize(snap), "buffer")
        for key, value in layout["attrs"].items():
            setattr(self, key, value)
        if answer.get("rng_after") is not None:
            torch.set_rng_state(materialize(answer["rng_after"]))

    def forward(self, *inputs):
        params = [p for _, p in self.named_parameters()]
        question = {"op": "forward", "name": f"{attr}.forward", "inputs": snapshot(list(inputs))}
        question["digest"] = params_digest(params)
        answer = ask(question)
        if answer.get("params_please"):  # not the record's bit for bit: their values, to match to rounding
            answer = ask({**question, "params": snapshot(params)})
        return replay.apply(answer, *inputs, *params)

    return type(attr, (torch.nn.Module,), {"__init__": __init__, "forward": forward})

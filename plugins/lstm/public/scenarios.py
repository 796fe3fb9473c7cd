"""What the lstm checks do with a submission, inside the sandbox.

Each function gets ``modules`` ({"recurrent": recurrent.py}, the
submission's or the reference's) and one case's plain-data arguments by
name, and returns plain data. Parameters and gradients are assigned into ``params``
and ``grads`` after construction, as the contract allows, so that the
submission and the reference compute with the same numbers. Besides the
answers, a scenario differentiates the code's *own* forward by central
differences (the judge tells the student which half is off).

Imported by the fork server before any student code: never imports the reference.
"""

from __future__ import annotations

import numpy as np

from lmgrade import agreement, asked_beside, explained, property_result, warnings_of

# Under another name: `finite_differences` is also a case's argument (cell_backward's).
from lmgrade import finite_differences as central_differences

CONSISTENCY = "backward against finite differences of forward"


def _array(value) -> np.ndarray:
    return np.asarray(value, dtype=np.float64)


def sigmoid(modules, x):
    y, caught = warnings_of(lambda: modules["recurrent"].sigmoid(x.copy()))
    return {"y": _array(y), "warnings": caught}


# --- cells ---

CELL_CLASS = {"lstm": "LSTM", "gru": "GRU"}


def _new_cell(modules, kind, I, J, defaults=False):
    cls = getattr(modules["recurrent"], CELL_CLASS[kind])
    return cls(I, J) if defaults else cls(I, J, rng=np.random.default_rng(0))


def _shapes(params: dict) -> dict:
    return {k: list(np.shape(v)) for k, v in sorted(params.items())}


def construction(modules, kind, I, J, defaults=False):
    """What a cell's constructor makes, as drawn (`construction_summary` judges it): the params, and the
    params of two more built from default_rng(0)."""
    cell = _new_cell(modules, kind, I, J, defaults)
    again = _new_cell(modules, kind, I, J, False), _new_cell(modules, kind, I, J, False)
    return {
        "params": {k: _array(v) for k, v in cell.params.items()},
        "again": [{k: _array(v) for k, v in c.params.items()} for c in again],
    }


def construction_summary(args, raw) -> dict:
    """In the grading process: keys and shapes, the weights' range, the biases; not the draws."""
    params, again = raw["params"], raw["again"]
    bound = 1 / np.sqrt(args["J"])
    weights = {k: np.asarray(v, float) for k, v in params.items() if k.startswith("W")}
    biases = {k: np.asarray(v, float) for k, v in params.items() if k.startswith("b")}
    return {
        "params' keys and shapes": _shapes(params),
        "the same params when built twice from default_rng(0)": _equal_params(*again),
        "every W within +-1/sqrt(J)": bool(all(np.all(np.abs(W) <= bound) for W in weights.values())),
        # With (J, J + I) large enough, uniform draws reach past half the bound on both sides.
        "every W spread over +-1/sqrt(J)": bool(
            all(W.size < 100 or (W.min() < -bound / 2 and W.max() > bound / 2) for W in weights.values())
        ),
        "every W drawn (not constant)": bool(all(W.size == 1 or np.ptp(W) > 0 for W in weights.values())),
        "biases": {k: sorted({float(b) for b in v.ravel()}) for k, v in sorted(biases.items())},
    }


def _equal_params(*params: dict) -> bool:
    first = params[0]
    return all(
        sorted(p) == sorted(first) and all(np.array_equal(np.asarray(p[k]), np.asarray(v)) for k, v in first.items())
        for p in params[1:]
    )


def cell_forward_judged(args, answer):
    """What cell_forward's answers are judged as: a construction through its summary, the rest as they are."""
    return construction_summary(args, answer) if args.get("construct") else answer


def _drawn_in_order(modules, kind, cells, sizes, rng) -> dict:
    """The params of `cells` beside those of the student's own cells of `sizes` built one after the other
    from `rng`: whether they are equal is worked out in the grading process (`drawn_in_order_holds`)."""
    cls = getattr(modules["recurrent"], CELL_CLASS[kind])
    fresh = [cls(I, J, rng=rng) for I, J in sizes]
    return {
        "built": [{k: _array(v) for k, v in c.params.items()} for c in cells],
        "in order": [{k: _array(v) for k, v in c.params.items()} for c in fresh],
    }


def drawn_in_order_holds(args, answer):
    """stacked's and birnn's answers as judged: the layers' draws compared here, the rest as they are."""
    out = dict(answer)
    for key in ("layers built in order 0, 1, ... from rng", "fwd then bwd built from rng"):
        if key in out:
            raw = out[key]
            built, fresh = raw["built"], raw["in order"]
            out[key] = len(built) == len(fresh) and all(_equal_params(a, b) for a, b in zip(built, fresh))
    return out


def _built_cell(modules, kind, params):
    W = params["W_f" if kind == "lstm" else "W_r"]
    J = W.shape[0]
    cell = _new_cell(modules, kind, W.shape[1] - J, J)
    for name, value in params.items():
        cell.params[name] = value.copy()
    return cell


def _run_cell(cell, kind, x, state):
    """forward with the case's optional states, passed the way the case says (left out, positional, keyword)."""
    h0, C0 = state.get("h0"), state.get("C0")
    if kind == "gru":
        return cell.forward(x) if h0 is None else cell.forward(x, h0)
    if h0 is None and C0 is None:
        return cell.forward(x)
    if C0 is None:
        return cell.forward(x, h0)
    if h0 is None:
        return cell.forward(x, C0=C0)
    return cell.forward(x, h0, C0)


def _state(h0, C0) -> dict:
    """Copies of the initial states given: what `_run_cell` passes on."""
    return {k: v.copy() for k, v in (("h0", h0), ("C0", C0)) if v is not None}


def cell_forward(
    modules, cell, params=None, x=None, G=None, h0=None, C0=None, construct=False, I=None, J=None, defaults=False
):
    """forward(x[, h0, C0]) of a cell of kind `cell` with `params` assigned; or, for a case that `construct`s,
    what `construction` makes of (I, J, defaults). `G` is the backward's, unused here (the cases are shared)."""
    if construct:
        return construction(modules, cell, I, J, defaults)
    kind = cell
    cell = _built_cell(modules, kind, params)
    h = _run_cell(cell, kind, x.copy(), _state(h0, C0))
    answer = {"h": _array(h)}
    if kind == "lstm":
        answer["self.cell"] = _array(cell.cell)
    return answer


def cell_backward(modules, cell, params, x, G, h0, C0, finite_differences=True):
    """forward, then backward(G): d x, every gradient and the initial states'; against the code's own forward
    unless the case leaves `finite_differences` out (False: the larger hidden cases)."""
    kind = cell
    cell = _built_cell(modules, kind, params)
    J = G.shape[1]
    state = {"h0": np.zeros(J), **({"C0": np.zeros(J)} if kind == "lstm" else {}), **_state(h0, C0)}
    h = _run_cell(cell, kind, x.copy(), _state(h0, C0))
    dx = cell.backward(G.copy())
    initial = ("grad_h0", "grad_C0") if kind == "lstm" else ("grad_h0",)
    answer = {
        "h": _array(h),
        "dx": _array(dx),
        **{f"grads[{k!r}]": _array(cell.grads[k]) for k in sorted(params)},
        **{name: _array(getattr(cell, name)) for name in initial},
    }
    if not finite_differences:
        return answer

    def assign(name, value):
        nonlocal x
        if name == "dx":
            x = value
        elif name.startswith("grad_"):
            state[name[5:]] = value
        else:
            cell.params[name[7:-2]] = value

    def loss():
        return float(np.sum(_array(_run_cell(cell, kind, x.copy(), {k: v.copy() for k, v in state.items()})) * G))

    arrays = {
        "dx": x,
        **{f"grads[{k!r}]": v for k, v in sorted(params.items())},
        **{name: state[name[5:]] for name in initial},
    }
    answer[CONSISTENCY] = explained(lambda: agreement(answer, central_differences(loss, arrays, assign)))
    return answer


def long_sequence(modules, cell, params, x, G, h0, C0):
    """A long sequence, the gradient only at the last step: what reaches the first steps must still be right."""
    kind = cell
    cell = _built_cell(modules, kind, params)
    h = _array(_run_cell(cell, kind, x.copy(), _state(h0, C0)))
    dx = _array(cell.backward(G.copy()))
    answer = {"h_T": h[-1], "dx[0] (the first step)": dx[0], "dx": dx, "grad_h0": _array(cell.grad_h0)}
    if kind == "lstm":
        answer["grad_C0"] = _array(cell.grad_C0)
    return answer


# --- deep and bidirectional ---


def _assign_layers(layers, params_per_layer):
    for layer, params in zip(layers, params_per_layer):
        for name, value in params.items():
            layer.params[name] = value.copy()


def stacked(modules, cell, layers, x, G):
    """A StackedRNN of kind `cell` with each of `layers` assigned: forward(x), backward(G), against its own
    forward; its layers' shapes as built, and their draws from rng (`drawn_in_order_holds`)."""
    kind = cell
    I, J = x.shape[1], G.shape[1]
    net = modules["recurrent"].StackedRNN(kind, I, J, len(layers), rng=np.random.default_rng(0))
    built = [_shapes(layer.params) for layer in net.layers]
    drawn = modules["recurrent"].StackedRNN(kind, I, J, len(layers), rng=np.random.default_rng(1))
    sizes = [(I if l == 0 else J, J) for l in range(len(layers))]
    in_order = _drawn_in_order(modules, kind, drawn.layers, sizes, np.random.default_rng(1))
    _assign_layers(net.layers, layers)
    h = net.forward(x.copy())
    dx = net.backward(G.copy())
    answer = {
        "layers when built": built,
        "layers built in order 0, 1, ... from rng": in_order,
        "h": _array(h),
        "dx": _array(dx),
        **{
            f"layers[{l}].grads[{k!r}]": _array(net.layers[l].grads[k])
            for l, params in enumerate(layers)
            for k in sorted(params)
        },
    }

    def assign(name, value):
        nonlocal x
        x = value

    answer[CONSISTENCY] = explained(
        lambda: agreement(
            answer, central_differences(lambda: float(np.sum(_array(net.forward(x.copy())) * G)), {"dx": x}, assign)
        )
    )
    return answer


def birnn(modules, cell, halves, x, G, probe_G):
    """A BiRNN of kind `cell` with fwd's and bwd's params (`halves`) assigned: forward(x), backward(G), against
    its own forward; the halves as built and drawn from rng. `probe_G` is drawn with the case, unused here."""
    kind = cell
    I, J = x.shape[1], G.shape[1] // 2
    net = modules["recurrent"].BiRNN(kind, I, J, rng=np.random.default_rng(0))
    built = {"fwd": _shapes(net.fwd.params), "bwd": _shapes(net.bwd.params)}
    drawn = modules["recurrent"].BiRNN(kind, I, J, rng=np.random.default_rng(1))
    in_order = _drawn_in_order(modules, kind, [drawn.fwd, drawn.bwd], [(I, J)] * 2, np.random.default_rng(1))
    _assign_layers([net.fwd, net.bwd], halves)
    y = net.forward(x.copy())
    dx = net.backward(G.copy())
    answer = {
        "halves when built": built,
        "fwd then bwd built from rng": in_order,
        "y": _array(y),
        "dx": _array(dx),
        **{
            f"{half}.grads[{k!r}]": _array(getattr(net, half).grads[k])
            for half, params in zip(("fwd", "bwd"), halves)
            for k in sorted(params)
        },
    }

    def assign(name, value):
        nonlocal x
        x = value

    answer[CONSISTENCY] = explained(
        lambda: agreement(
            answer, central_differences(lambda: float(np.sum(_array(net.forward(x.copy())) * G)), {"dx": x}, assign)
        )
    )
    return answer


OUTPUT, MOVED = "output", "output with x_s moved, for each s"


def depth_direction(modules, net, cell, layers, x, J):
    """The output, and the output again with each x_s moved alone: which rows changed is read from them in the
    grading process (`depth_direction_holds`). `net` is the class, "StackedRNN" or "BiRNN" (its `layers`: fwd's
    and bwd's params)."""
    kind, I = cell, x.shape[1]
    r = modules["recurrent"]
    if net == "BiRNN":
        model = r.BiRNN(kind, I, J, rng=np.random.default_rng(0))
        _assign_layers([model.fwd, model.bwd], layers)
    else:
        model = r.StackedRNN(kind, I, J, len(layers), rng=np.random.default_rng(0))
        _assign_layers(model.layers, layers)
    base = _array(model.forward(x.copy()))
    outputs = []
    for s in range(len(x)):
        moved = x.copy()
        moved[s] += 0.5
        outputs.append(_array(model.forward(moved)))
    return property_result(base, {OUTPUT: base, MOVED: outputs})


def _observed_array(value) -> np.ndarray:
    """An observation as the grading process decoded it, as float64 numbers (raises where it holds none)."""
    inner = getattr(value, "values", None)  # a torch tensor arrives as lmgrade.boundary.wire.Tensor
    return np.asarray(inner if isinstance(inner, np.ndarray) else value, dtype=np.float64)


def depth_direction_holds(args, observed) -> dict:
    """Which rows of the output changed when each x_s moved (per half of a BiRNN's rows): None for an x_s
    whose output could not be compared (another shape, or missing)."""
    base, outputs = _observed_array(observed[OUTPUT]), list(observed[MOVED])
    J, bi = args["J"], args["net"] == "BiRNN"
    changed = []
    for s in range(len(args["x"])):
        out = _observed_array(outputs[s]) if s < len(outputs) else None
        if out is None or out.shape != base.shape or base.ndim != 2:
            changed.append(None)
            continue
        halves = (out[:, :J] != base[:, :J], out[:, J:] != base[:, J:]) if bi else (out != base,)
        changed.append([[bool(np.any(row)) for row in half] for half in halves])
    return {"shape": list(base.shape), "changed": changed}


@asked_beside
def clip(modules, grads, max_norm):
    """clip_grad_norm(grads, max_norm): what it returns, and its input dict afterwards."""
    return _clipped(modules, grads, max_norm)


def _clipped(modules, grads, max_norm) -> dict:
    grads = {k: v.copy() for k, v in grads.items()}
    clipped, total = modules["recurrent"].clip_grad_norm(grads, max_norm)
    return {
        "keys": sorted(clipped),
        "clipped": {k: _array(v) for k, v in sorted(clipped.items())},
        "total norm returned": float(total),
        "the input dict after the call": {k: _array(v) for k, v in sorted(grads.items())},
    }


# --- the language model ---


def _built_lm(modules, params, layers, defaults=False):
    V, D = params["E"].shape
    J = params["W_y"].shape[1]
    r = modules["recurrent"]
    lm = r.LSTMLM(V, D, J) if defaults else r.LSTMLM(V, D, J, num_layers=len(layers), rng=np.random.default_rng(0))
    for name, value in params.items():
        lm.params[name] = value.copy()
    _assign_layers(lm.rnn.layers, layers)
    return lm


def lm_construction(modules, V, D, J, L):
    """What LSTMLM's constructor makes, as drawn (`lm_construction_summary` judges it); L None: num_layers and
    rng left out."""
    r = modules["recurrent"]
    lm = r.LSTMLM(V, D, J) if L is None else r.LSTMLM(V, D, J, num_layers=L, rng=np.random.default_rng(0))
    raw = {
        "params": {k: _array(v) for k, v in lm.params.items()},
        "layers": [{k: _array(v) for k, v in layer.params.items()} for layer in lm.rnn.layers],
    }
    if L is not None:  # the contract fixes the draws: E, then W_y, then the StackedRNN, from rng
        rng = np.random.default_rng(0)
        rng.standard_normal((V, D)), rng.uniform(size=(V, J))
        again = r.StackedRNN("lstm", D, J, L, rng=rng)
        raw["layers drawn after E and W_y"] = [
            {k: _array(v) for k, v in layer.params.items()} for layer in again.layers
        ]
    return raw


def lm_construction_summary(args, raw) -> dict:
    """In the grading process: keys and shapes, b_y, the draws' distributions or the draws themselves."""
    p = {k: np.asarray(v) for k, v in raw["params"].items()}
    answer = {
        "params' keys and shapes": _shapes(p),
        "b_y zeros": bool(np.all(p["b_y"] == 0)),
        "layers: their params' shapes": [_shapes(layer) for layer in raw["layers"]],
    }
    if args["L"] is None:  # a fresh generator: the distributions, not the draws
        bound = 1 / np.sqrt(args["J"])
        W_y = np.asarray(p["W_y"], float)
        answer["W_y within +-1/sqrt(J), spread over it"] = bool(
            np.all(np.abs(W_y) <= bound) and (W_y.min() < -bound / 2 and W_y.max() > bound / 2)
        )
        answer["E's standard deviation within [0.05, 0.2]"] = bool(0.05 <= np.std(np.asarray(p["E"], float)) <= 0.2)
    else:
        answer["E"], answer["W_y"] = p["E"], p["W_y"]
        again = raw["layers drawn after E and W_y"]
        answer["rnn built from rng after E and W_y"] = len(again) == len(raw["layers"]) and all(
            _equal_params(a, b) for a, b in zip(raw["layers"], again)
        )
    return answer


def lstmlm_judged(args, answer):
    """What lstmlm's answers are judged as: a construction through its summary, the rest as they are."""
    return lm_construction_summary(args, answer) if args.get("construct") else answer


def lstmlm(modules, params=None, layers=None, tokens=None, construct=False, V=None, D=None, J=None, L=None):
    """loss and every gradient (E's summed over repeated tokens); the backward against the code's own loss. A
    case that `construct`s asks what `lm_construction` makes of (V, D, J, L) instead."""
    if construct:
        return lm_construction(modules, V, D, J, L)
    lm = _built_lm(modules, params, layers)
    loss = float(lm.loss(tokens.copy()))
    lm.backward()
    answer = {
        "loss": loss,
        **{f"grads[{k!r}]": _array(lm.grads[k]) for k in sorted(params)},
        **{
            f"rnn.layers[{l}].grads[{k!r}]": _array(lm.rnn.layers[l].grads[k])
            for l, layer in enumerate(layers)
            for k in sorted(layer)
        },
    }

    def assign(name, value):
        if name.startswith("grads["):
            lm.params[name[7:-2]] = value
        else:
            lm.rnn.layers[0].params[name[-5:-2]] = value

    arrays = {
        **{f"grads[{k!r}]": v for k, v in sorted(params.items())},
        "rnn.layers[0].grads['W_C']": layers[0]["W_C"],
    }
    answer["backward against finite differences of loss"] = explained(
        lambda: agreement(answer, central_differences(lambda: float(lm.loss(tokens.copy())), arrays, assign))
    )
    return answer


def _set_grads(lm, grads, layer_grads):
    """The grader's gradients, where the contract keeps them."""
    lm.grads = {k: v.copy() for k, v in grads.items()}
    for layer, own in zip(lm.rnn.layers, layer_grads):
        layer.grads = {k: v.copy() for k, v in own.items()}


def named_grads(modules, params, layers, grads, layer_grads):
    """named_grads() of an LSTMLM whose params and grads (its own and its layers') the grader set."""
    lm = _built_lm(modules, params, layers)
    _set_grads(lm, grads, layer_grads)
    named = lm.named_grads()
    return {"keys": sorted(named), "values": {k: _array(v) for k, v in sorted(named.items())}}


def step(modules, params, layers, grads, layer_grads, lr, max_norm):
    """step(lr[, max_norm]) on gradients the grader set: every parameter after it, and the norm returned."""
    lm = _built_lm(modules, params, layers)
    _set_grads(lm, grads, layer_grads)
    total = lm.step(lr, **({} if max_norm is None else {"max_norm": max_norm}))
    answer = {
        "norm returned": float(total),
        **{f"params[{k!r}]": _array(v) for k, v in sorted(lm.params.items())},
        **{
            f"rnn.layers[{l}].params[{k!r}]": _array(layer.params[k])
            for l, layer in enumerate(lm.rnn.layers)
            for k in sorted(layer.params)
        },
    }
    return answer


class _Recorder:
    """What train does with its model: the grader's losses, and every call in order."""

    def __init__(self, losses: dict):
        self.losses, self.calls = losses, []

    def loss(self, tokens):
        key = " ".join(str(int(t)) for t in tokens)
        self.calls.append(f"loss({key})")
        return self.losses[key]

    def backward(self):
        self.calls.append("backward()")

    def step(self, lr, max_norm=None):
        self.calls.append(f"step(lr={float(lr)!r}, max_norm={max_norm!r})")
        return 1.0


def train(modules, kind, params, layers, sequences, epochs, lr, max_norm, seed, losses=None):
    """train(model, sequences, epochs, lr, rng[, max_norm]): of a `kind` "recorded" case, on a model whose
    loss (the grader's `losses`, by sequence), backward and step the grader records (its params and layers
    unused); of a "full" one, on an LSTMLM with them assigned."""
    copies = [s.copy() for s in sequences]
    rng = np.random.default_rng(seed)
    kw = {} if max_norm is None else {"max_norm": max_norm}
    if kind == "recorded":
        # An instance of the student's class that its constructor never touched: train alone is graded.
        cls = modules["recurrent"].LSTMLM
        lm = cls.__new__(cls)
        recorder = _Recorder(losses)
        lm.loss, lm.backward, lm.step = recorder.loss, recorder.backward, recorder.step
        returned = modules["recurrent"].train(lm, copies, epochs, lr, rng, **kw)
        return {"losses": [float(v) for v in returned], "calls": recorder.calls}
    lm = _built_lm(modules, params, layers)
    returned = modules["recurrent"].train(lm, copies, epochs, lr, rng, **kw)
    answer = {
        "losses": [float(v) for v in returned],
        "loss per token after training": float(
            sum(lm.loss(s.copy()) for s in sequences) / sum(len(s) - 1 for s in sequences)
        ),
    }
    return answer


# --- properties ---


def no_mutation(
    modules,
    what,
    cell=None,
    params=None,
    x=None,
    G=None,
    h0=None,
    C0=None,
    halves=None,
    probe_G=None,
    layers=None,
    tokens=None,
):
    """One call (`what`: "LSTM", "GRU", "BiRNN" or "LSTMLM", each on its own check's case); its answer, and its
    array arguments as they are afterwards. A BiRNN's `probe_G` is unused here."""
    if what == "LSTMLM":
        lm = _built_lm(modules, params, layers)
        answer = float(lm.loss(tokens))
        lm.backward()
        return property_result(answer, {"tokens after the call": tokens})
    if what == "BiRNN":
        net = modules["recurrent"].BiRNN(cell, x.shape[1], G.shape[1] // 2, rng=np.random.default_rng(0))
        _assign_layers([net.fwd, net.bwd], halves)
        answer = {"forward": _array(net.forward(x)), "backward": _array(net.backward(G))}
        return property_result(answer, {"x after the call": x, "grad_y after the call": G})
    kind = cell
    cell = _built_cell(modules, kind, params)
    state = {k: v for k, v in (("h0", h0), ("C0", C0)) if v is not None}  # the case's own arrays, not copies
    answer = {"forward": _array(_run_cell(cell, kind, x, state)), "backward": _array(cell.backward(G))}
    return property_result(
        answer,
        {"x after the call": x, "grad_h after the call": G, **{f"{k} after the call": v for k, v in state.items()}},
    )


def _raises(call) -> str:
    try:
        call()
    except ValueError:
        return "raised ValueError"
    except Exception as exc:
        return f"raised {type(exc).__name__}"
    return "raised nothing"


def bad_argument(modules, what, bad, cell=None, I=None, J=None, layers=None, x=None, grads=None):
    """The contract's ValueError for one bad argument (`bad`) of `what`, beside what a right call of the same
    function makes: a cell's construction of (I, J), a net's forward(x) with `layers` assigned, clip_grad_norm
    of `grads` with max_norm 1."""
    r = modules["recurrent"]
    if what == "clip_grad_norm":
        answer = _clipped(modules, grads, 1.0)
        raised = _raises(lambda: r.clip_grad_norm({k: v.copy() for k, v in grads.items()}, bad))
        return property_result(answer, raised)
    kind = cell
    if what in ("LSTM", "GRU"):
        answer = construction(modules, kind, I, J)
        raised = _raises(lambda: getattr(r, what)(*bad, rng=np.random.default_rng(0)))
    elif what == "StackedRNN":
        net = r.StackedRNN(kind, I, J, 2, rng=np.random.default_rng(0))
        _assign_layers(net.layers, layers)
        answer = _array(net.forward(x.copy()))
        raised = _raises(lambda: r.StackedRNN(bad[0], I, J, bad[1], rng=np.random.default_rng(0)))
    else:
        net = r.BiRNN(kind, I, J, rng=np.random.default_rng(0))
        _assign_layers([net.fwd, net.bwd], layers)
        answer = _array(net.forward(x.copy()))
        raised = _raises(lambda: r.BiRNN(bad, I, J, rng=np.random.default_rng(0)))
    return property_result(answer, raised)

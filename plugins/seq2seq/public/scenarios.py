"""What the seq2seq checks do with a submission, inside the sandbox.

Each function gets ``modules`` ({"seq2seq": ...}, the submission's or the
reference's) and one case's plain-data arguments, and returns plain data.
Weights travel as numpy arrays keyed like the module's ``state_dict`` (never
pickled) and are loaded into the module the stub's ``__init__`` built, so the
submission and the reference compute with the same numbers. Gradients are
those of a scalar ``sum(output * g)`` over the outputs, with fixed random
``g``, by the submission's own autograd.

A property's scenario returns what the call left (`property_result`); the
property itself is computed in the grading process by the ``*_holds``
functions below, from the reference's observations and the submission's alike.

Imported by the fork server (with torch) before any student code: never
imports the reference.
"""

from __future__ import annotations

import numpy as np

from lmgrade import lazy_import, property_result, raised

# Imported where first used: at once in the sandbox, only for the reference's values in the grading process.
torch = lazy_import("torch")

NO_GRADIENT = "no gradient (this does not take part in the output)"
DEFAULT_KIND = "dot"


# --- plain data in, plain data out ---


def _dtype(name: str):
    """The torch dtype a case names ("float32", "float64")."""
    return {"float32": torch.float32, "float64": torch.float64}[name]


def _numeric_mode() -> None:
    # TF32 would round float32 matmuls on CUDA to 10 bits of mantissa.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def _array(t) -> np.ndarray:
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)


def _sent(value):
    """What the child sends of a value the student's code returned: a tensor's numbers, else a short repr."""
    return _array(value) if isinstance(value, torch.Tensor) else f"not a tensor: {repr(value)[:80]}"


def _tensor(a, dtype: str, grad: bool = False):
    return torch.tensor(np.asarray(a), dtype=_dtype(dtype)).requires_grad_(grad)


def _ids(a):
    return torch.tensor(np.asarray(a), dtype=torch.long)


def _mask(lengths, S: int):
    """(B, S) bool, True at the real positions j < lengths[b]: the contract's mask."""
    return torch.arange(S)[None, :] < _ids(lengths)[:, None]


def load(module, state: dict, dtype: str):
    """`module` in `dtype` with the case's weights; a parameter of the contract it lacks is an error."""
    _numeric_mode()
    module.to(_dtype(dtype))
    tensors = {name: torch.tensor(np.asarray(value), dtype=_dtype(dtype)) for name, value in state.items()}
    # strict=False: a buffer of the student's own is not ours to fill.
    _, unexpected = module.load_state_dict(tensors, strict=False)
    if unexpected:
        raise ValueError(
            f"{type(module).__name__} has no parameter {unexpected[0]!r}: keep the "
            f"parameters the stub's __init__ makes (the contract's names)"
        )
    return module


def _kind(args) -> dict:
    """The attention keyword a case passes: left out where the case takes the contract's default."""
    return {} if args.get("kind_left_out") else {"attention": args["kind"]}


def build_model(modules, args):
    """The student's Seq2Seq with the case's sizes, attention kind, weights and dtype."""
    s = args["sizes"]
    sizes = (s["src_vocab_size"], s["tgt_vocab_size"], s["embed_dim"], s["hidden_size"])
    return load(modules["seq2seq"].Seq2Seq(*sizes, **_kind(args)), args["state"], args["dtype"])


def _encoder(modules, args):
    s = args["sizes"]
    enc = modules["seq2seq"].Encoder(s["src_vocab_size"], s["embed_dim"], s["hidden_size"])
    return load(enc, args["state"], args["dtype"])


def _decoder(modules, args):
    s = args["sizes"]
    dec = modules["seq2seq"].Decoder(s["tgt_vocab_size"], s["embed_dim"], s["hidden_size"], **_kind(args))
    return load(dec, args["state"], args["dtype"])


def _gradients(module, state: dict, inputs: dict) -> dict:
    """The gradient of every input of `inputs` and every parameter `state` names, after a backward pass."""
    params = dict(module.named_parameters())
    grads = {}
    for name, t in inputs.items():
        grads[f"gradient w.r.t. {name}"] = NO_GRADIENT if t.grad is None else _array(t.grad)
    for name in state:
        p = params.get(name)
        grads[f"gradient w.r.t. {name}"] = NO_GRADIENT if p is None or p.grad is None else _array(p.grad)
    return grads


def _unusable(keys, why: str) -> dict:
    """An answer shaped like the contract's whose every entry says why there is no number."""
    return {key: why for key in keys}


def _tensors(value, count: int) -> bool:
    return isinstance(value, (tuple, list)) and len(value) == count


def _weighted(value, g) -> object:
    """sum(value * g) as a tensor, for the backward pass."""
    return (value * torch.as_tensor(np.asarray(g), dtype=value.dtype)).sum()


# --- init ---


def init(modules, args):
    """After torch.manual_seed(seed), each kind's parameters as built, the next draw, and the float64 logits."""
    s = args["sizes"]
    sizes = (s["src_vocab_size"], s["tgt_vocab_size"], s["embed_dim"], s["hidden_size"])
    answer = {}
    for kind in args["kinds"]:
        torch.manual_seed(args["seed"])
        model = modules["seq2seq"].Seq2Seq(*sizes, attention=kind)
        # How far construction moved torch's generator: the next number drawn from it.
        after = float(torch.rand(()))
        parameters = {name: _array(p).copy() for name, p in model.state_dict().items()}
        model.to(torch.float64)
        with torch.no_grad():
            logits = model(_ids(args["src"]), _ids(args["src_lengths"]), _ids(args["tgt_in"]))
        answer[kind] = {
            "parameters": parameters,
            "dtype of the parameters": sorted({str(p.dtype) for p in parameters.values()}),
            "next draw of torch's generator": after,
            "logits in float64": _sent(logits),
        }
    return answer


# --- Encoder ---

ENCODER_OUT = ("H_enc at the real positions", "h_n")


def encoder(modules, args):
    """H_enc at the real positions (the padded rows are free), h_n, and every parameter's gradient."""
    enc = _encoder(modules, args)
    src, lengths = _ids(args["src"]), _ids(args["src_lengths"])
    out = enc(src, lengths)
    keys = [*ENCODER_OUT, *(f"gradient w.r.t. {name}" for name in args["state"])]
    if not _tensors(out, 2) or not all(isinstance(t, torch.Tensor) for t in out):
        return _unusable(keys, f"none: Encoder.forward returned {type(out).__name__}, not (H_enc, h_n)")
    H_enc, h_n = out
    if tuple(H_enc.shape) != tuple(args["g_H"].shape):
        return _unusable(keys, f"none: H_enc has shape {tuple(H_enc.shape)}, not {tuple(args['g_H'].shape)}")
    mask = _mask(args["src_lengths"], src.shape[1])
    real = torch.where(mask[:, :, None], H_enc, torch.zeros((), dtype=H_enc.dtype))
    (_weighted(real, args["g_H"]) + _weighted(h_n, args["g_h"])).backward()
    return {"H_enc at the real positions": _array(real), "h_n": _array(h_n), **_gradients(enc, args["state"], {})}


# --- attention ---


def _attention_inputs(args, grad: bool) -> dict:
    inputs = {
        "h_dec": _tensor(args["h_dec"], args["dtype"], grad),
        "H_enc": _tensor(args["H_enc"], args["dtype"], grad),
    }
    if args.get("W") is not None:
        inputs["W"] = _tensor(args["W"], args["dtype"], grad)
    return inputs


def _call_attention(modules, inputs: dict, mask):
    if "W" in inputs:
        return modules["seq2seq"].attention(inputs["h_dec"], inputs["H_enc"], mask, inputs["W"])
    return modules["seq2seq"].attention(inputs["h_dec"], inputs["H_enc"], mask)


def attention(modules, args):
    """context and alpha, and the gradients of h_dec, H_enc (every row) and W."""
    inputs = _attention_inputs(args, grad=True)
    mask = torch.tensor(np.asarray(args["mask"]), dtype=torch.bool)
    out = _call_attention(modules, inputs, mask)
    keys = ["context", "alpha", *(f"gradient w.r.t. {name}" for name in inputs)]
    if not _tensors(out, 2) or not all(isinstance(t, torch.Tensor) for t in out):
        return _unusable(keys, f"none: attention returned {type(out).__name__}, not (context, alpha)")
    context, alpha = out
    (_weighted(context, args["g_context"]) + _weighted(alpha, args["g_alpha"])).backward()
    grads = {f"gradient w.r.t. {name}": NO_GRADIENT if t.grad is None else _array(t.grad) for name, t in inputs.items()}
    return {"context": _array(context), "alpha": _array(alpha), **grads}


# --- Decoder.step ---


def _step_inputs(args, grad: bool) -> dict:
    return {name: _tensor(args[name], args["dtype"], grad) for name in ("h_prev", "H_enc", "c")}


def step(modules, args):
    """One decoder step's logits, h and alpha, and the gradients of h_prev, H_enc, c and every parameter."""
    dec = _decoder(modules, args)
    inputs = _step_inputs(args, grad=True)
    mask = torch.tensor(np.asarray(args["mask"]), dtype=torch.bool)
    out = dec.step(_ids(args["y_prev"]), inputs["h_prev"], inputs["H_enc"], mask, inputs["c"])
    keys = ["logits", "h", "alpha", *(f"gradient w.r.t. {n}" for n in [*inputs, *args["state"]])]
    if not _tensors(out, 3) or not all(isinstance(t, torch.Tensor) for t in out[:2]):
        return _unusable(keys, f"none: step returned {type(out).__name__}, not (logits, h, alpha)")
    logits, h, alpha = out
    total = _weighted(logits, args["g_logits"]) + _weighted(h, args["g_h"])
    if isinstance(alpha, torch.Tensor) and tuple(alpha.shape) == tuple(np.shape(args["g_alpha"])):
        total = total + _weighted(alpha, args["g_alpha"])
    total.backward()
    return {
        "logits": _array(logits),
        "h": _array(h),
        "alpha": alpha if alpha is None else _sent(alpha),
        **_gradients(dec, args["state"], inputs),
    }


# --- Seq2Seq.forward ---


def _batch(args) -> tuple:
    return _ids(args["src"]), _ids(args["src_lengths"]), _ids(args["tgt_in"])


def forward(modules, args):
    """Teacher-forced logits (B, T, V) and the gradient of every parameter."""
    model = build_model(modules, args)
    logits = model(*_batch(args))
    keys = ["logits", *(f"gradient w.r.t. {name}" for name in args["state"])]
    if not isinstance(logits, torch.Tensor):
        return _unusable(keys, f"none: forward returned {type(logits).__name__}, not a tensor")
    if tuple(logits.shape) != tuple(np.shape(args["g"])):
        return _unusable(keys, f"none: the logits have shape {tuple(logits.shape)}, not {np.shape(args['g'])}")
    _weighted(logits, args["g"]).backward()
    return {"logits": _array(logits), **_gradients(model, args["state"], {})}


# --- masked_cross_entropy ---


def masked_cross_entropy(modules, args):
    """The loss, its shape, and its gradient with respect to the logits."""
    logits = _tensor(args["logits"], args["dtype"], grad=True)
    targets = _ids(args["targets"])
    pad = {} if args["pad"] is None else {"pad": args["pad"]}
    loss = modules["seq2seq"].masked_cross_entropy(logits, targets, **pad)
    if not isinstance(loss, torch.Tensor):
        why = f"none: masked_cross_entropy returned {type(loss).__name__}, not a tensor"
        return _unusable(("loss shape", "loss", "gradient w.r.t. logits"), why)
    answer = {"loss shape": tuple(loss.shape), "loss": _array(loss).astype(np.float64).reshape(-1)}
    if loss.requires_grad and loss.numel() == 1:
        loss.sum().backward()
        answer["gradient w.r.t. logits"] = NO_GRADIENT if logits.grad is None else _array(logits.grad)
    else:
        answer["gradient w.r.t. logits"] = NO_GRADIENT
    return answer


# --- greedy_decode ---


def _decoded(out):
    """What greedy_decode returned, as the child sends it: Python lists as they are, anything else by name."""
    if isinstance(out, list) and all(isinstance(row, list) for row in out):
        return out
    return f"not a list of lists: {repr(out)[:80]}"


def greedy_decode(modules, args):
    """Each call's tokens on one model, and its parameters unchanged by the calls."""
    model = build_model(modules, args)
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    src, lengths = _ids(args["src"]), _ids(args["src_lengths"])
    answers = []
    for call in args["calls"]:
        out = modules["seq2seq"].greedy_decode(model, src, lengths, call["bos"], call["eos"], call["max_len"])
        answers.append(_decoded(out))
    changed = sorted(
        name for name, p in model.named_parameters() if name in before and not torch.equal(p, before[name])
    )
    return {"tokens of each call": answers, "parameters changed by greedy_decode": changed}


# --- train ---


def _batches(args) -> list:
    return [(_ids(b["src"]), _ids(b["src_lengths"]), _ids(b["tgt_in"]), _ids(b["tgt_out"])) for b in args["batches"]]


TRAINED_KEYS = ("losses", "parameters after training", "the generator's state after training")


def train(modules, args):
    """Every step's loss, every parameter after training, and the generator's state after the call."""
    model = build_model(modules, args)
    generator = torch.Generator().manual_seed(args["seed"])
    answer = {}
    if args.get("zero_epochs_first"):
        # epochs=0: no step and no draw, so the call after it starts from the same model and generator.
        nothing = modules["seq2seq"].train(model, _batches(args), epochs=0, lr=args["lr"], generator=generator)
        answer["losses of epochs=0"] = nothing if isinstance(nothing, list) else _sent(nothing)
    losses = modules["seq2seq"].train(model, _batches(args), epochs=args["epochs"], lr=args["lr"], generator=generator)
    if not isinstance(losses, list):
        why = f"none: train returned {type(losses).__name__}, not a list of floats"
        return {**answer, **_unusable(TRAINED_KEYS, why)}
    return {
        **answer,
        "losses": [float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else _sent(v) for v in losses],
        "parameters after training": {name: _array(p) for name, p in model.state_dict().items()},
        "the generator's state after training": _array(generator.get_state()),
    }


# --- properties: each pays only with the right answer beside it ---


def _observed(value):
    """An observation as the grading process decoded it: numpy where it holds numbers."""
    inner = getattr(value, "values", None)  # a torch tensor arrives as lmgrade.wire.Tensor
    return inner if isinstance(inner, np.ndarray) else value


def _numbers(value, shape=None) -> np.ndarray | None:
    """An observation as float64 numbers where it is an array (of `shape`, where given), else None."""
    value = _observed(value)
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "fiu":
        return None
    if shape is not None and value.shape != tuple(shape):
        return None
    return value.astype(np.float64)


def _same(a, b) -> bool:
    """Two observations equal to rounding: arrays of one shape, finite, within a relative 1e-9."""
    a, b = _numbers(a), _numbers(b)
    if a is None or b is None or a.shape != b.shape or not (np.isfinite(a).all() and np.isfinite(b).all()):
        return False
    return bool(np.allclose(a, b, rtol=1e-9, atol=1e-12))


def padding_ignored(modules, args):
    """The logits, and the logits again with other ids at every padded source position."""
    model = build_model(modules, args)
    src, lengths, tgt_in = _batch(args)
    with torch.no_grad():
        logits = model(src, lengths, tgt_in)
        other = model(_ids(args["other_src"]), lengths, tgt_in)
    return property_result(_sent(logits), {"logits": _sent(logits), "logits with other padding ids": _sent(other)})


def padding_ignored_holds(args, observed) -> dict:
    """padding_ignored's property: the two logits are the same."""
    return {
        "other ids at the padded positions change no logit": _same(
            observed["logits"], observed["logits with other padding ids"]
        )
    }


def alpha_rows(modules, args):
    """The context (the answer) and alpha, whose rows the grading process reads."""
    inputs = _attention_inputs(args, grad=False)
    mask = torch.tensor(np.asarray(args["mask"]), dtype=torch.bool)
    with torch.no_grad():
        out = _call_attention(modules, inputs, mask)
    if not _tensors(out, 2):
        return property_result(_sent(out), _sent(out))
    return property_result(_sent(out[0]), _sent(out[1]))


def alpha_rows_holds(args, observed) -> dict:
    """alpha_rows' property: each row of alpha sums to 1 over the real positions and is exactly 0 elsewhere."""
    mask = np.asarray(args["mask"], dtype=bool)
    alpha = _numbers(observed, mask.shape)
    if alpha is None or not np.isfinite(alpha).all():
        return {"alpha sums to 1 over the real positions": False, "alpha is 0 at the padded positions": False}
    real = np.where(mask, alpha, 0.0)
    return {
        "alpha sums to 1 over the real positions": bool(
            (real >= 0).all() and np.allclose(real.sum(axis=1), 1.0, rtol=0, atol=1e-9)
        ),
        "alpha is 0 at the padded positions": bool((alpha[~mask] == 0).all()),
    }


def batch_independence(modules, args):
    """The logits of the batch, and each example's logits computed alone, its source cut to its own length."""
    model = build_model(modules, args)
    src, lengths, tgt_in = _batch(args)
    alone = []
    with torch.no_grad():
        logits = model(src, lengths, tgt_in)
        for b, length in enumerate(np.asarray(args["src_lengths"]).tolist()):
            one = model(src[b : b + 1, :length], lengths[b : b + 1], tgt_in[b : b + 1])
            alone.append(_sent(one))
    return property_result(_sent(logits), {"batch": _sent(logits), "each alone": alone})


def batch_independence_holds(args, observed) -> dict:
    """batch_independence's property: row b of the batch's logits is example b's logits alone."""
    batch, alone = _numbers(observed["batch"]), observed["each alone"]
    B = len(args["src_lengths"])
    holds = batch is not None and batch.shape[0] == B and isinstance(alone, list) and len(alone) == B
    holds = holds and all(_same(batch[b : b + 1], alone[b]) for b in range(B))
    return {"each example's logits are the same alone as in the batch": bool(holds)}


def none_equals_dot(modules, args):
    """With every source of length 1, the logits of the three attention kinds on the same weights."""
    logits = {}
    for kind in ("none", "dot", "bilinear"):
        state = dict(args["state"])
        if kind == "bilinear":
            state["decoder.W"] = args["W"]
        model = build_model(modules, {**args, "kind": kind, "state": state})
        with torch.no_grad():
            logits[kind] = _sent(model(*_batch(args)))
    return property_result(logits, logits)


def none_equals_dot_holds(args, observed) -> dict:
    """none_equals_dot's property: one source position leaves attention nothing to choose."""
    return {
        '"none" equals "dot"': _same(observed["none"], observed["dot"]),
        '"bilinear" equals "dot"': _same(observed["bilinear"], observed["dot"]),
    }


def teacher_forcing(modules, args):
    """forward's logits, and a loop of the submission's own decoder.step fed tgt_in, then fed its own argmax."""
    model = build_model(modules, args)
    src, lengths, tgt_in = _batch(args)
    with torch.no_grad():
        logits = model(src, lengths, tgt_in)
        H_enc, c = model.encoder(src, lengths)
        mask = _mask(args["src_lengths"], src.shape[1])
        fed, guessed = [], []
        h, y, h_own = c, tgt_in[:, 0], c
        for i in range(tgt_in.shape[1]):
            out, h, _ = model.decoder.step(tgt_in[:, i], h, H_enc, mask, c)
            fed.append(out)
            own, h_own, _ = model.decoder.step(y, h_own, H_enc, mask, c)
            guessed.append(own)
            y = own.argmax(dim=-1)
    return property_result(
        _sent(logits),
        {
            "forward": _sent(logits),
            "step fed tgt_in": _sent(torch.stack(fed, dim=1)),
            "step fed its own predictions": _sent(torch.stack(guessed, dim=1)),
        },
    )


def teacher_forcing_holds(args, observed) -> dict:
    """teacher_forcing's property: forward is the loop fed the given tokens, not the one fed its predictions."""
    forward, fed, guessed = (observed[k] for k in ("forward", "step fed tgt_in", "step fed its own predictions"))
    return {
        "forward equals decoder.step fed tgt_in": _same(forward, fed),
        "forward differs from decoder.step fed its own predictions": _numbers(forward) is not None
        and _numbers(guessed) is not None
        and not _same(forward, guessed),
    }


# --- no argument changed ---


def _after(named: dict) -> dict:
    return {f"{name} after the call": _array(t).copy() for name, t in named.items()}


def no_mutation(modules, args):
    """One call's answer, and its tensor arguments (and, for greedy_decode, the model's weights) afterwards."""
    what, s2s = args["what"], modules["seq2seq"]
    if what == "attention":
        inputs = _attention_inputs(args, grad=False)
        mask = torch.tensor(np.asarray(args["mask"]), dtype=torch.bool)
        with torch.no_grad():
            out = _call_attention(modules, inputs, mask)
        answer = [_sent(t) for t in out] if _tensors(out, 2) else _sent(out)
        return property_result(answer, _after({**inputs, "mask": mask}))
    if what == "Decoder.step":
        dec = _decoder(modules, args)
        inputs = _step_inputs(args, grad=False)
        y_prev = _ids(args["y_prev"])
        mask = torch.tensor(np.asarray(args["mask"]), dtype=torch.bool)
        with torch.no_grad():
            out = dec.step(y_prev, inputs["h_prev"], inputs["H_enc"], mask, inputs["c"])
        answer = [_sent(t) for t in out[:2]] if _tensors(out, 3) else _sent(out)
        return property_result(answer, _after({"y_prev": y_prev, **inputs, "mask": mask}))
    if what == "masked_cross_entropy":
        logits, targets = _tensor(args["logits"], args["dtype"]), _ids(args["targets"])
        loss = s2s.masked_cross_entropy(logits, targets)
        return property_result(_sent(loss), _after({"logits": logits, "targets": targets}))
    model = build_model(modules, args)
    src, lengths, tgt_in = _batch(args)
    if what == "greedy_decode":
        out = s2s.greedy_decode(model, src, lengths, args["bos"], args["eos"], args["max_len"])
        weights = {f"model's {name}": p for name, p in model.state_dict().items()}
        return property_result(_decoded(out), _after({"src": src, "src_lengths": lengths, **weights}))
    with torch.no_grad():
        logits = model(src, lengths, tgt_in)
    return property_result(_sent(logits), _after({"src": src, "src_lengths": lengths, "tgt_in": tgt_in}))


# --- the contract's ValueErrors ---


def bad_argument(modules, args):
    """The contract's ValueError for one bad argument, beside the answer of the same call made rightly."""
    what, s2s = args["what"], modules["seq2seq"]
    if what == "Encoder sizes":
        enc = _encoder(modules, args)
        with torch.no_grad():
            answer = _sent(enc(_ids(args["src"]), _ids(args["src_lengths"]))[1])
        return property_result(answer, [raised(lambda sizes=sizes: s2s.Encoder(*sizes)) for sizes in args["bad_calls"]])
    if what == "Decoder":
        dec = _decoder(modules, args)
        inputs = _step_inputs(args, grad=False)
        mask = torch.tensor(np.asarray(args["mask"]), dtype=torch.bool)
        with torch.no_grad():
            out = dec.step(_ids(args["y_prev"]), inputs["h_prev"], inputs["H_enc"], mask, inputs["c"])
        answer = _sent(out[0]) if _tensors(out, 3) else _sent(out)
        made = [raised(lambda call=call: s2s.Decoder(*call[:3], attention=call[3])) for call in args["bad_calls"]]
        return property_result(answer, made)
    if what == "attention":
        inputs = _attention_inputs(args, grad=False)
        with torch.no_grad():
            out = _call_attention(modules, inputs, torch.tensor(np.asarray(args["mask"]), dtype=torch.bool))
            empty = torch.tensor(np.asarray(args["bad_mask"]), dtype=torch.bool)
            answer = _sent(out[0]) if _tensors(out, 2) else _sent(out)
            return property_result(answer, raised(lambda: _call_attention(modules, inputs, empty)))
    if what == "masked_cross_entropy":
        logits = _tensor(args["logits"], args["dtype"])
        answer = _sent(s2s.masked_cross_entropy(logits, _ids(args["targets"])))
        return property_result(answer, raised(lambda: s2s.masked_cross_entropy(logits, _ids(args["bad_targets"]))))
    model = build_model(modules, args)
    src, lengths, tgt_in = _batch(args)
    bad_lengths = _ids(args["bad_lengths"]) if "bad_lengths" in args else lengths
    if what == "Encoder.forward":
        with torch.no_grad():
            answer = _sent(model.encoder(src, lengths)[1])
            return property_result(answer, raised(lambda: model.encoder(src, bad_lengths)))
    if what == "Seq2Seq.forward":
        with torch.no_grad():
            answer = _sent(model(src, lengths, tgt_in))
            return property_result(answer, raised(lambda: model(src, bad_lengths, tgt_in)))
    # greedy_decode: a bad max_len or bad lengths
    answer = _decoded(s2s.greedy_decode(model, src, lengths, args["bos"], args["eos"], args["max_len"]))
    return property_result(
        answer,
        raised(lambda: s2s.greedy_decode(model, src, bad_lengths, args["bos"], args["eos"], args["bad_max_len"])),
    )

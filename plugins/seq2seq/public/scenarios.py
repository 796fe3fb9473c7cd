"""What the seq2seq checks do with a submission, inside the sandbox.

Each function gets ``modules`` ({"seq2seq": ...}, the submission's or the
reference's) and one case's plain-data arguments by name, and returns plain data.
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


def _bools(a):
    return torch.tensor(np.asarray(a), dtype=torch.bool)


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


def _kind(kind: str, kind_left_out: bool = False) -> dict:
    """The attention keyword a case passes: left out where the case takes the contract's default."""
    return {} if kind_left_out else {"attention": kind}


def build_model(modules, sizes: dict, kind: str, state: dict, dtype: str, kind_left_out: bool = False):
    """The student's Seq2Seq with the case's sizes, attention kind, weights and dtype."""
    made = (sizes["src_vocab_size"], sizes["tgt_vocab_size"], sizes["embed_dim"], sizes["hidden_size"])
    return load(modules["seq2seq"].Seq2Seq(*made, **_kind(kind, kind_left_out)), state, dtype)


def _encoder(modules, sizes: dict, state: dict, dtype: str):
    enc = modules["seq2seq"].Encoder(sizes["src_vocab_size"], sizes["embed_dim"], sizes["hidden_size"])
    return load(enc, state, dtype)


def _decoder(modules, sizes: dict, kind: str, state: dict, dtype: str, kind_left_out: bool = False):
    made = (sizes["tgt_vocab_size"], sizes["embed_dim"], sizes["hidden_size"])
    dec = modules["seq2seq"].Decoder(*made, **_kind(kind, kind_left_out))
    return load(dec, state, dtype)


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


def init(modules, sizes, kinds, seed, src, src_lengths, tgt_in):
    """After torch.manual_seed(seed), each kind's parameters as built, the next draw, and the float64 logits."""
    made = (sizes["src_vocab_size"], sizes["tgt_vocab_size"], sizes["embed_dim"], sizes["hidden_size"])
    answer = {}
    for kind in kinds:
        torch.manual_seed(seed)
        model = modules["seq2seq"].Seq2Seq(*made, attention=kind)
        # How far construction moved torch's generator: the next number drawn from it.
        after = float(torch.rand(()))
        parameters = {name: _array(p).copy() for name, p in model.state_dict().items()}
        model.to(torch.float64)
        with torch.no_grad():
            logits = model(*_batch(src, src_lengths, tgt_in))
        answer[kind] = {
            "parameters": parameters,
            "dtype of the parameters": sorted({str(p.dtype) for p in parameters.values()}),
            "next draw of torch's generator": after,
            "logits in float64": _sent(logits),
        }
    return answer


# --- Encoder ---

ENCODER_OUT = ("H_enc at the real positions", "h_n")


def encoder(modules, sizes, state, dtype, src, src_lengths, g_H, g_h):
    """H_enc at the real positions (the padded rows are free), h_n, and every parameter's gradient."""
    enc = _encoder(modules, sizes, state, dtype)
    src_ids, lengths = _ids(src), _ids(src_lengths)
    out = enc(src_ids, lengths)
    keys = [*ENCODER_OUT, *(f"gradient w.r.t. {name}" for name in state)]
    if not _tensors(out, 2) or not all(isinstance(t, torch.Tensor) for t in out):
        return _unusable(keys, f"none: Encoder.forward returned {type(out).__name__}, not (H_enc, h_n)")
    H_enc, h_n = out
    if tuple(H_enc.shape) != tuple(g_H.shape):
        return _unusable(keys, f"none: H_enc has shape {tuple(H_enc.shape)}, not {tuple(g_H.shape)}")
    mask = _mask(src_lengths, src_ids.shape[1])
    real = torch.where(mask[:, :, None], H_enc, torch.zeros((), dtype=H_enc.dtype))
    (_weighted(real, g_H) + _weighted(h_n, g_h)).backward()
    return {"H_enc at the real positions": _array(real), "h_n": _array(h_n), **_gradients(enc, state, {})}


# --- attention ---


def _attention_inputs(h_dec, H_enc, W, dtype: str, grad: bool) -> dict:
    """attention's tensor arguments; W only where the case gives one (None: left out, the dot product)."""
    inputs = {"h_dec": _tensor(h_dec, dtype, grad), "H_enc": _tensor(H_enc, dtype, grad)}
    if W is not None:
        inputs["W"] = _tensor(W, dtype, grad)
    return inputs


def _call_attention(modules, inputs: dict, mask):
    if "W" in inputs:
        return modules["seq2seq"].attention(inputs["h_dec"], inputs["H_enc"], mask, inputs["W"])
    return modules["seq2seq"].attention(inputs["h_dec"], inputs["H_enc"], mask)


def attention(modules, h_dec, H_enc, mask, W, g_context, g_alpha, dtype):
    """context and alpha, and the gradients of h_dec, H_enc (every row) and W."""
    inputs = _attention_inputs(h_dec, H_enc, W, dtype, grad=True)
    mask = _bools(mask)
    out = _call_attention(modules, inputs, mask)
    keys = ["context", "alpha", *(f"gradient w.r.t. {name}" for name in inputs)]
    if not _tensors(out, 2) or not all(isinstance(t, torch.Tensor) for t in out):
        return _unusable(keys, f"none: attention returned {type(out).__name__}, not (context, alpha)")
    context, alpha = out
    (_weighted(context, g_context) + _weighted(alpha, g_alpha)).backward()
    grads = {f"gradient w.r.t. {name}": NO_GRADIENT if t.grad is None else _array(t.grad) for name, t in inputs.items()}
    return {"context": _array(context), "alpha": _array(alpha), **grads}


# --- Decoder.step ---


def _step_inputs(h_prev, H_enc, c, dtype: str, grad: bool) -> dict:
    """Decoder.step's tensor arguments but y_prev and the mask."""
    return {name: _tensor(value, dtype, grad) for name, value in (("h_prev", h_prev), ("H_enc", H_enc), ("c", c))}


def step(
    modules, sizes, kind, state, dtype, y_prev, h_prev, H_enc, mask, c, g_logits, g_h, g_alpha, kind_left_out=False
):
    """One decoder step's logits, h and alpha, and the gradients of h_prev, H_enc, c and every parameter."""
    dec = _decoder(modules, sizes, kind, state, dtype, kind_left_out)
    inputs = _step_inputs(h_prev, H_enc, c, dtype, grad=True)
    mask = _bools(mask)
    out = dec.step(_ids(y_prev), inputs["h_prev"], inputs["H_enc"], mask, inputs["c"])
    keys = ["logits", "h", "alpha", *(f"gradient w.r.t. {n}" for n in [*inputs, *state])]
    if not _tensors(out, 3) or not all(isinstance(t, torch.Tensor) for t in out[:2]):
        return _unusable(keys, f"none: step returned {type(out).__name__}, not (logits, h, alpha)")
    logits, h, alpha = out
    total = _weighted(logits, g_logits) + _weighted(h, g_h)
    if isinstance(alpha, torch.Tensor) and tuple(alpha.shape) == tuple(np.shape(g_alpha)):
        total = total + _weighted(alpha, g_alpha)
    total.backward()
    return {
        "logits": _array(logits),
        "h": _array(h),
        "alpha": alpha if alpha is None else _sent(alpha),
        **_gradients(dec, state, inputs),
    }


# --- Seq2Seq.forward ---


def _batch(src, src_lengths, tgt_in) -> tuple:
    return _ids(src), _ids(src_lengths), _ids(tgt_in)


def forward(modules, sizes, kind, state, dtype, src, src_lengths, tgt_in, g):
    """Teacher-forced logits (B, T, V) and the gradient of every parameter."""
    model = build_model(modules, sizes, kind, state, dtype)
    logits = model(*_batch(src, src_lengths, tgt_in))
    keys = ["logits", *(f"gradient w.r.t. {name}" for name in state)]
    if not isinstance(logits, torch.Tensor):
        return _unusable(keys, f"none: forward returned {type(logits).__name__}, not a tensor")
    if tuple(logits.shape) != tuple(np.shape(g)):
        return _unusable(keys, f"none: the logits have shape {tuple(logits.shape)}, not {np.shape(g)}")
    _weighted(logits, g).backward()
    return {"logits": _array(logits), **_gradients(model, state, {})}


# --- masked_cross_entropy ---


def masked_cross_entropy(modules, logits, targets, pad, dtype):
    """The loss, its shape, and its gradient with respect to the logits (pad None: left out, the default)."""
    logits = _tensor(logits, dtype, grad=True)
    targets = _ids(targets)
    given = {} if pad is None else {"pad": pad}
    loss = modules["seq2seq"].masked_cross_entropy(logits, targets, **given)
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


def greedy_decode(modules, sizes, kind, state, dtype, src, src_lengths, tgt_in, calls):
    """Each call's tokens on one model, and its parameters unchanged by the calls (`tgt_in` unused)."""
    model = build_model(modules, sizes, kind, state, dtype)
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    src, lengths = _ids(src), _ids(src_lengths)
    answers = []
    for call in calls:
        out = modules["seq2seq"].greedy_decode(model, src, lengths, call["bos"], call["eos"], call["max_len"])
        answers.append(_decoded(out))
    changed = sorted(
        name for name, p in model.named_parameters() if name in before and not torch.equal(p, before[name])
    )
    return {"tokens of each call": answers, "parameters changed by greedy_decode": changed}


# --- train ---


def _batches(batches) -> list:
    return [(_ids(b["src"]), _ids(b["src_lengths"]), _ids(b["tgt_in"]), _ids(b["tgt_out"])) for b in batches]


TRAINED_KEYS = ("losses", "parameters after training", "the generator's state after training")


def train(
    modules,
    sizes,
    kind,
    state,
    dtype,
    batches,
    epochs,
    lr,
    seed,
    zero_epochs_first=False,
    copy_task=False,
    falls_to=None,
):
    """Every step's loss, every parameter after training, and the generator's state after the call.
    `copy_task` and `falls_to` are the judge's (`judge_train`)."""
    model = build_model(modules, sizes, kind, state, dtype)
    generator = torch.Generator().manual_seed(seed)
    # Only the given generator may be drawn from: the global one is seeded apart from it, so that a train drawing
    # from the global one draws the same in every run (its known mistake is named by its answers).
    torch.manual_seed(seed ^ 0x5EED)
    answer = {}
    if zero_epochs_first:
        # epochs=0: no step and no draw, so the call after it starts from the same model and generator.
        nothing = modules["seq2seq"].train(model, _batches(batches), epochs=0, lr=lr, generator=generator)
        answer["losses of epochs=0"] = nothing if isinstance(nothing, list) else _sent(nothing)
    losses = modules["seq2seq"].train(model, _batches(batches), epochs=epochs, lr=lr, generator=generator)
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
    inner = getattr(value, "values", None)  # a torch tensor arrives as lmgrade.boundary.wire.Tensor
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


def padding_ignored(modules, sizes, kind, state, dtype, src, src_lengths, tgt_in, other_src):
    """The logits, and the logits again with other ids at every padded source position."""
    model = build_model(modules, sizes, kind, state, dtype)
    src, lengths, tgt_in = _batch(src, src_lengths, tgt_in)
    with torch.no_grad():
        logits = model(src, lengths, tgt_in)
        other = model(_ids(other_src), lengths, tgt_in)
    return property_result(_sent(logits), {"logits": _sent(logits), "logits with other padding ids": _sent(other)})


def padding_ignored_holds(args, observed) -> dict:
    """padding_ignored's property: the two logits are the same."""
    return {
        "other ids at the padded positions change no logit": _same(
            observed["logits"], observed["logits with other padding ids"]
        )
    }


def alpha_rows(modules, h_dec, H_enc, mask, W, g_context, g_alpha, dtype):
    """The context (the answer) and alpha, whose rows the grading process reads (`alpha_rows_holds`, with
    the mask). The gradients `g_context` and `g_alpha` of the attention check's cases are unused here."""
    inputs = _attention_inputs(h_dec, H_enc, W, dtype, grad=False)
    mask = _bools(mask)
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


def batch_independence(modules, sizes, kind, state, dtype, src, src_lengths, tgt_in):
    """The logits of the batch, and each example's logits computed alone, its source cut to its own length."""
    model = build_model(modules, sizes, kind, state, dtype)
    src_ids, lengths, tgt_ids = _batch(src, src_lengths, tgt_in)
    alone = []
    with torch.no_grad():
        logits = model(src_ids, lengths, tgt_ids)
        for b, length in enumerate(np.asarray(src_lengths).tolist()):
            one = model(src_ids[b : b + 1, :length], lengths[b : b + 1], tgt_ids[b : b + 1])
            alone.append(_sent(one))
    return property_result(_sent(logits), {"batch": _sent(logits), "each alone": alone})


def batch_independence_holds(args, observed) -> dict:
    """batch_independence's property: row b of the batch's logits is example b's logits alone."""
    batch, alone = _numbers(observed["batch"]), observed["each alone"]
    B = len(args["src_lengths"])
    holds = batch is not None and batch.shape[0] == B and isinstance(alone, list) and len(alone) == B
    holds = holds and all(_same(batch[b : b + 1], alone[b]) for b in range(B))
    return {"each example's logits are the same alone as in the batch": bool(holds)}


def none_equals_dot(modules, sizes, kind, state, dtype, src, src_lengths, tgt_in, W):
    """With every source of length 1, the logits of the three attention kinds on the same weights (the case's
    `kind`, whose weights `state` are, is not used: each kind is built in turn, "bilinear" with `W`)."""
    logits = {}
    for each in ("none", "dot", "bilinear"):
        weights = dict(state)
        if each == "bilinear":
            weights["decoder.W"] = W
        model = build_model(modules, sizes, each, weights, dtype)
        with torch.no_grad():
            logits[each] = _sent(model(*_batch(src, src_lengths, tgt_in)))
    return property_result(logits, logits)


def none_equals_dot_holds(args, observed) -> dict:
    """none_equals_dot's property: one source position leaves attention nothing to choose."""
    return {
        '"none" equals "dot"': _same(observed["none"], observed["dot"]),
        '"bilinear" equals "dot"': _same(observed["bilinear"], observed["dot"]),
    }


def teacher_forcing(modules, sizes, kind, state, dtype, src, src_lengths, tgt_in):
    """forward's logits, and a loop of the submission's own decoder.step fed tgt_in, then fed its own argmax."""
    model = build_model(modules, sizes, kind, state, dtype)
    src_ids, lengths, tgt_in = _batch(src, src_lengths, tgt_in)
    with torch.no_grad():
        logits = model(src_ids, lengths, tgt_in)
        H_enc, c = model.encoder(src_ids, lengths)
        mask = _mask(src_lengths, src_ids.shape[1])
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


def no_mutation(
    modules,
    what,
    dtype,
    sizes=None,
    kind=None,
    state=None,
    src=None,
    src_lengths=None,
    tgt_in=None,
    h_dec=None,
    H_enc=None,
    mask=None,
    W=None,
    y_prev=None,
    h_prev=None,
    c=None,
    logits=None,
    targets=None,
    bos=None,
    eos=None,
    max_len=None,
    g_context=None,
    g_alpha=None,
    g_logits=None,
    g_h=None,
):
    """One call's answer (`what`), and its tensor arguments (and, for greedy_decode, the model's weights)
    afterwards. Each case gives the arguments of its own call; the gradients `g_*` that the attention and
    step cases carry are unused here."""
    s2s = modules["seq2seq"]
    if what == "attention":
        inputs = _attention_inputs(h_dec, H_enc, W, dtype, grad=False)
        mask = _bools(mask)
        with torch.no_grad():
            out = _call_attention(modules, inputs, mask)
        answer = [_sent(t) for t in out] if _tensors(out, 2) else _sent(out)
        return property_result(answer, _after({**inputs, "mask": mask}))
    if what == "Decoder.step":
        dec = _decoder(modules, sizes, kind, state, dtype)
        inputs = _step_inputs(h_prev, H_enc, c, dtype, grad=False)
        y_prev = _ids(y_prev)
        mask = _bools(mask)
        with torch.no_grad():
            out = dec.step(y_prev, inputs["h_prev"], inputs["H_enc"], mask, inputs["c"])
        answer = [_sent(t) for t in out[:2]] if _tensors(out, 3) else _sent(out)
        return property_result(answer, _after({"y_prev": y_prev, **inputs, "mask": mask}))
    if what == "masked_cross_entropy":
        logits, targets = _tensor(logits, dtype), _ids(targets)
        loss = s2s.masked_cross_entropy(logits, targets)
        return property_result(_sent(loss), _after({"logits": logits, "targets": targets}))
    model = build_model(modules, sizes, kind, state, dtype)
    src, lengths, tgt_in = _batch(src, src_lengths, tgt_in)
    if what == "greedy_decode":
        out = s2s.greedy_decode(model, src, lengths, bos, eos, max_len)
        weights = {f"model's {name}": p for name, p in model.state_dict().items()}
        return property_result(_decoded(out), _after({"src": src, "src_lengths": lengths, **weights}))
    with torch.no_grad():
        logits = model(src, lengths, tgt_in)
    return property_result(_sent(logits), _after({"src": src, "src_lengths": lengths, "tgt_in": tgt_in}))


# --- the contract's ValueErrors ---


def bad_argument(
    modules,
    what,
    dtype,
    sizes=None,
    kind=None,
    state=None,
    src=None,
    src_lengths=None,
    tgt_in=None,
    h_dec=None,
    H_enc=None,
    mask=None,
    W=None,
    y_prev=None,
    h_prev=None,
    c=None,
    logits=None,
    targets=None,
    bos=None,
    eos=None,
    max_len=None,
    bad_calls=None,
    bad_mask=None,
    bad_targets=None,
    bad_lengths=None,
    bad_max_len=None,
    g_context=None,
    g_alpha=None,
    g_logits=None,
    g_h=None,
):
    """The contract's ValueError for one bad argument (`bad_*`), beside the answer of the same call made
    rightly. Each case gives the arguments of its own calls (`bad_lengths` None: the right lengths); the
    gradients `g_*` that the attention and step cases carry are unused here."""
    s2s = modules["seq2seq"]
    if what == "Encoder sizes":
        enc = _encoder(modules, sizes, state, dtype)
        with torch.no_grad():
            answer = _sent(enc(_ids(src), _ids(src_lengths))[1])
        return property_result(answer, [raised(lambda made=made: s2s.Encoder(*made)) for made in bad_calls])
    if what == "Decoder":
        dec = _decoder(modules, sizes, kind, state, dtype)
        inputs = _step_inputs(h_prev, H_enc, c, dtype, grad=False)
        mask = _bools(mask)
        with torch.no_grad():
            out = dec.step(_ids(y_prev), inputs["h_prev"], inputs["H_enc"], mask, inputs["c"])
        answer = _sent(out[0]) if _tensors(out, 3) else _sent(out)
        made = [raised(lambda call=call: s2s.Decoder(*call[:3], attention=call[3])) for call in bad_calls]
        return property_result(answer, made)
    if what == "attention":
        inputs = _attention_inputs(h_dec, H_enc, W, dtype, grad=False)
        with torch.no_grad():
            out = _call_attention(modules, inputs, _bools(mask))
            empty = _bools(bad_mask)
            answer = _sent(out[0]) if _tensors(out, 2) else _sent(out)
            return property_result(answer, raised(lambda: _call_attention(modules, inputs, empty)))
    if what == "masked_cross_entropy":
        logits = _tensor(logits, dtype)
        answer = _sent(s2s.masked_cross_entropy(logits, _ids(targets)))
        return property_result(answer, raised(lambda: s2s.masked_cross_entropy(logits, _ids(bad_targets))))
    model = build_model(modules, sizes, kind, state, dtype)
    src, lengths, tgt_in = _batch(src, src_lengths, tgt_in)
    bad_lengths = _ids(bad_lengths) if bad_lengths is not None else lengths
    if what == "Encoder.forward":
        with torch.no_grad():
            answer = _sent(model.encoder(src, lengths)[1])
            return property_result(answer, raised(lambda: model.encoder(src, bad_lengths)))
    if what == "Seq2Seq.forward":
        with torch.no_grad():
            answer = _sent(model(src, lengths, tgt_in))
            return property_result(answer, raised(lambda: model(src, bad_lengths, tgt_in)))
    # greedy_decode: a bad max_len or bad lengths
    answer = _decoded(s2s.greedy_decode(model, src, lengths, bos, eos, max_len))
    return property_result(
        answer,
        raised(lambda: s2s.greedy_decode(model, src, bad_lengths, bos, eos, bad_max_len)),
    )

"""What the transformer checks do with a submission, inside the sandbox.

Each function gets ``modules`` ({"layers": ..., "model": ..., "train": ...},
the submission's or the reference's) and one case's plain-data arguments by
name, and returns plain data. Weights travel as numpy arrays keyed like the
module's ``state_dict`` (never pickled) and are loaded into the module the
stub's ``__init__`` built, so the submission and the reference compute with
the same numbers. Gradients are those of a scalar ``sum(output * g)`` with a
fixed random ``g``, by the submission's own autograd.

Imported by the fork server (with torch) before any student code: never
imports the reference.
"""

from __future__ import annotations

import math

import numpy as np

from lmgrade import expected_only, lazy_import, property_result

from .position_scenarios import build_options, odd_size, supply_table

# Imported where first used: at once in the sandbox, only for the reference's values in the grading process.
torch = lazy_import("torch")

NO_GRADIENT = "no gradient (this parameter does not take part in the output)"


def _dtype(name: str) -> torch.dtype:
    """The torch dtype a case names ("float32", "float64")."""
    return {"float32": torch.float32, "float64": torch.float64}[name]


def _numeric_mode() -> None:
    # TF32 would round float32 matmuls on CUDA to 10 bits of mantissa.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def _array(t) -> np.ndarray:
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)


def _tensor(a, dtype: str, grad: bool = False) -> torch.Tensor:
    t = torch.tensor(np.asarray(a), dtype=_dtype(dtype))
    return t.requires_grad_(grad)


def load(module: torch.nn.Module, state: dict[str, np.ndarray], dtype: str) -> torch.nn.Module:
    """`module` in `dtype` with the case's weights; a parameter of the contract it lacks is an error."""
    _numeric_mode()
    module.to(_dtype(dtype))
    tensors = {name: torch.tensor(np.asarray(value), dtype=_dtype(dtype)) for name, value in state.items()}
    # strict=False: a buffer of the student's own (a cached mask) is not ours to fill.
    _, unexpected = module.load_state_dict(tensors, strict=False)
    if unexpected:
        raise ValueError(
            f"{type(module).__name__} has no parameter {unexpected[0]!r}: keep the "
            f"parameters the stub's __init__ makes (the contract's names)"
        )
    return module


def output_and_grads(module, state, run, inputs: dict[str, torch.Tensor], g: np.ndarray) -> dict:
    """run()'s output, and d sum(output * g) / d every input and parameter of `state`."""
    out = run()
    if not isinstance(out, torch.Tensor):
        # The keys still match, so the feedback is about the output itself.
        missing = f"none: the output is {type(out).__name__}, not a tensor"
        return {"output": out, **{f"gradient w.r.t. {name}": missing for name in [*inputs, *state]}}
    (out * torch.as_tensor(g, dtype=out.dtype)).sum().backward()
    params = dict(module.named_parameters())
    answer = {"output": _array(out)}
    for name, t in inputs.items():
        answer[f"gradient w.r.t. {name}"] = NO_GRADIENT if t.grad is None else _array(t.grad)
    for name in state:
        p = params.get(name)
        answer[f"gradient w.r.t. {name}"] = NO_GRADIENT if p is None or p.grad is None else _array(p.grad)
    return answer


# --- layers.py ---


def _layer_norm(modules, state, x, eps, dtype):
    """LayerNorm(d) with the case's weights, or LayerNorm(d, eps=eps) where the case sets eps (not None)."""
    LayerNorm = modules["layers"].LayerNorm
    d = x.shape[-1]
    ln = LayerNorm(d) if eps is None else LayerNorm(d, eps=eps)
    return load(ln, state, dtype)


def _of_x(module, state, x, g, dtype) -> dict:
    """The module's output on the case's x, and the gradients of x and of every parameter."""
    x = _tensor(x, dtype, grad=True)
    return output_and_grads(module, state, lambda: module(x), {"x": x}, g)


def layer_norm(modules, state, x, g, eps, dtype):
    return _of_x(_layer_norm(modules, state, x, eps, dtype), state, x, g, dtype)


def _attention(modules, d_model, n_heads, state, dtype, rope=False):
    # rope left out unless the case turns it on: the contract's default, False.
    options = {"rope": True} if rope else {}
    return load(modules["layers"].CausalSelfAttention(d_model, n_heads, **options), state, dtype)


def attention(modules, d_model, n_heads, state, x, g, dtype, rope=False):
    return _of_x(_attention(modules, d_model, n_heads, state, dtype, rope), state, x, g, dtype)


def feed_forward(modules, d_model, d_ff, state, x, g, dtype):
    return _of_x(load(modules["layers"].FeedForward(d_model, d_ff), state, dtype), state, x, g, dtype)


def block(modules, d_model, n_heads, d_ff, pre_ln, state, x, g, dtype, defaults=False, rope=False):
    """The block's output and gradients; `defaults`: built with pre_ln left out (the contract's default, True)."""
    Block = modules["layers"].TransformerBlock
    options = {"rope": True} if rope else {}
    blk = (
        Block(d_model, n_heads, d_ff, **options)
        if defaults
        else Block(d_model, n_heads, d_ff, pre_ln=pre_ln, **options)
    )
    return _of_x(load(blk, state, dtype), state, x, g, dtype)


# --- model.py ---


def _lm(modules, config, state, dtype):
    """The TransformerLM that `config` describes, in the case's variant, with the case's weights."""
    sizes = tuple(config[key] for key in ("vocab_size", "context_length", "d_model", "n_layers", "n_heads", "d_ff"))
    # pre_ln left out: the contract's default, True.
    positions = build_options(config)
    lm = (
        modules["model"].TransformerLM(*sizes, **positions)
        if config.get("defaults")
        else modules["model"].TransformerLM(*sizes, pre_ln=config["pre_ln"], **positions)
    )
    lm = load(lm, state, dtype)
    supply_table(lm, config)
    return lm


def model(modules, config, state, dtype, idx, g):
    lm = _lm(modules, config, state, dtype)
    idx = torch.tensor(idx, dtype=torch.long)
    return output_and_grads(lm, state, lambda: lm(idx), {}, g)


def cross_entropy(modules, logits, targets, dtype):
    logits = _tensor(logits, dtype, grad=True)
    targets = torch.tensor(targets, dtype=torch.long)
    loss = modules["model"].cross_entropy(logits, targets)
    if not isinstance(loss, torch.Tensor):
        return {"loss": loss}
    answer = {"loss shape": tuple(loss.shape), "loss": _array(loss).astype(np.float64).reshape(-1)}
    if loss.requires_grad and loss.numel() == 1:
        loss.sum().backward()
        answer["gradient w.r.t. logits"] = NO_GRADIENT if logits.grad is None else _array(logits.grad)
    else:
        answer["gradient w.r.t. logits"] = NO_GRADIENT
    return answer


# --- train.py ---


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def get_batch(modules, data, batch_size, context_length, seed):
    tokens = torch.tensor(data, dtype=torch.long)
    generator = _generator(seed)
    # torch's global generator seeded, and otherwise than the one given: a get_batch that draws from it draws
    # in the child what the known mistake draws in the grading process, and never what the generator draws.
    torch.manual_seed(seed ^ 0x5EED)
    batches = []
    for _ in range(2):  # the second draw shows the generator was advanced, not re-seeded
        x, y = modules["train"].get_batch(tokens, batch_size, context_length, generator, "cpu")
        batches.append(
            {
                "x": _array(x),
                "y": _array(y),
                "dtypes": (str(x.dtype), str(y.dtype)),
                "devices": (x.device.type, y.device.type),
            }
        )
    if not torch.equal(tokens, torch.tensor(data, dtype=torch.long)):
        raise AssertionError("get_batch changed the data tensor it was given")
    return {"first call": batches[0], "second call": batches[1]}


def train(modules, config, state, dtype, data, steps, batch_size, lr, seed, idx):
    lm = _lm(modules, config, state, dtype)
    losses = modules["train"].train(
        lm,
        torch.tensor(data, dtype=torch.long),
        steps=steps,
        batch_size=batch_size,
        lr=lr,
        device="cpu",
        generator=_generator(seed),
    )
    if not isinstance(losses, list):
        return {"losses": losses}
    params = dict(lm.named_parameters())
    with torch.no_grad():
        logits = lm(torch.tensor(idx, dtype=torch.long))
    return {
        "losses": [float(v) if isinstance(v, (int, float)) else v for v in losses],
        "tok_emb.weight after training": _array(params["tok_emb.weight"]),
        "lm_head.weight after training": _array(params["lm_head.weight"]),
        "logits of the trained model": _array(logits) if isinstance(logits, torch.Tensor) else logits,
        "device after training": next(lm.parameters()).device.type,
    }


def evaluate_perplexity(modules, config, state, dtype, data, context_length):
    lm = _lm(modules, config, state, dtype)
    ppl = modules["train"].evaluate_perplexity(lm, torch.tensor(data, dtype=torch.long), context_length, "cpu")
    return {"perplexity": ppl.item() if isinstance(ppl, torch.Tensor) and ppl.numel() == 1 else ppl}


def _sequence_probabilities(lm, prompt: list[int], new: int, temperature: float) -> dict:
    """The exact probability of every continuation of `new` tokens, the model cropped to its context."""
    V, ctx = lm.lm_head.weight.shape[0], lm.context_length
    table = {}
    with torch.no_grad():
        for seq in np.ndindex(*(V,) * new):
            tokens, p = list(prompt), 1.0
            for token in seq:
                idx = torch.tensor([tokens[-ctx:]], dtype=torch.long)
                probs = torch.softmax(lm(idx)[0, -1].double() / temperature, dim=-1)
                p *= float(probs[token])
                tokens.append(token)
            table[tuple(int(t) for t in seq)] = p
    return table


def generate(modules, config, state, dtype, prompt, max_new_tokens, temperature, draws, repeat, seed):
    """Draws for a statistical test, the same seed again, another seed, and the exact table."""
    lm = _lm(modules, config, state, dtype)
    lm.eval()
    new = max_new_tokens
    # temperature None: left out, the contract's default of 1.0.
    options = {} if temperature is None else {"temperature": temperature}
    temperature = 1.0 if temperature is None else temperature
    T0 = len(prompt)

    def draw(generator, count=new):
        idx = torch.tensor([prompt], dtype=torch.long)
        try:
            out = modules["train"].generate(lm, idx, count, generator=generator, **options)
        except Exception as exc:
            # The last token drawn is never fed back: inputs reach T0 + count - 1 tokens.
            room = lm.context_length - T0 + 1
            if T0 + count - 1 <= lm.context_length or room < 1:
                raise
            # Fine while the input fits the context, failing past it: no cropping.
            modules["train"].generate(lm, idx, room, generator=_generator(0), **options)
            return (
                f"raised {type(exc).__name__} once the sequence grew past context_length = "
                f"{lm.context_length}, not before ({str(exc)[:200]})"
            )
        if not isinstance(out, torch.Tensor) or tuple(out.shape) != (1, T0 + count):
            return f"returned {type(out).__name__} of shape {tuple(getattr(out, 'shape', ()))}"
        if not torch.equal(out[0, :T0].cpu(), idx[0]):
            return "the prompt was not kept at the start of the output"
        return [int(t) for t in out[0, T0:]]

    generator = _generator(seed)
    first = [draw(generator) for _ in range(draws)]
    torch.manual_seed(seed ^ 0x5EED)  # only the generator given may be random
    generator = _generator(seed)
    again = [draw(generator) for _ in range(repeat)]
    generator = _generator(seed + 1)
    other = [draw(generator) for _ in range(repeat)]
    # The generator is optional: left out, generate still draws valid tokens.
    unseeded = draw(None)
    if isinstance(unseeded, list):
        V = lm.lm_head.weight.shape[0]
        unseeded = "valid tokens" if all(0 <= t < V for t in unseeded) else f"tokens out of range: {unseeded}"
    nothing = draw(_generator(seed), count=0)  # max_new_tokens=0: the prompt alone
    return {
        "draws": first,
        "again": again,
        "other": other,
        "without a generator": unseeded,
        "with max_new_tokens=0": nothing if isinstance(nothing, str) else "the prompt alone",
        "table": expected_only(lambda: _sequence_probabilities(lm, prompt, new, temperature)),
    }


# --- properties: each pays only with the right answer beside it ---


def causality(modules, config, state, dtype, idx, changes):
    """The logits, and the logits again with the token at each position q >= 1 changed alone.

    The grading process reads them (`judges.judge_causality`): where a change at q moves an
    earlier position, that position sees the future; where it moves nothing at q or after,
    the model does not depend on its tokens.
    """
    lm = _lm(modules, config, state, dtype)
    idx = torch.tensor(idx, dtype=torch.long)
    changed = []
    with torch.no_grad():
        logits = lm(idx)
        for q, tokens in enumerate(changes, start=1):
            other = idx.clone()
            other[:, q] = torch.tensor(tokens, dtype=torch.long)
            out = lm(other)
            changed.append(_array(out) if isinstance(out, torch.Tensor) else repr(out)[:80])
    answer = _array(logits) if isinstance(logits, torch.Tensor) else repr(logits)[:80]
    return property_result(answer, changed)


def _sent(value):
    """What the child sends of a value the student's code returned: a tensor's numbers, else a short repr."""
    return _array(value) if isinstance(value, torch.Tensor) else repr(value)[:80]


def _observed(value):
    """An observation as the grading process decoded it: numpy where it holds numbers."""
    inner = getattr(value, "values", None)  # a torch tensor arrives as lmgrade.boundary.wire.Tensor
    return inner if isinstance(inner, np.ndarray) else value


def _numbers_like(value, shape: tuple) -> np.ndarray | None:
    """An observation as float64 numbers where it is an array of `shape`, else None."""
    value = _observed(value)
    if not isinstance(value, np.ndarray) or value.shape != tuple(shape) or value.dtype.kind not in "fiu":
        return None
    return value.astype(np.float64)


def attention_rows(modules, d_model, n_heads, state, x, g, dtype, c):
    """With v_proj giving the same vector c at every position and out_proj the identity, the output: it is c
    exactly where every query's weights sum to 1 (judged in the grading process, `attention_rows_holds`).
    `g` is the attention check's, unused here."""
    attn = _attention(modules, d_model, n_heads, state, dtype)
    x = _tensor(x, dtype)
    with torch.no_grad():
        answer = attn(x)
        c = _tensor(c, dtype)
        d = c.shape[0]
        attn.v_proj.weight.zero_()
        attn.v_proj.bias.copy_(c)
        attn.out_proj.weight.copy_(torch.eye(d, dtype=c.dtype))
        attn.out_proj.bias.zero_()
        out = attn(x)
    return property_result(_sent(answer), _sent(out))


def attention_rows_holds(args, observed) -> dict:
    """attention_rows' property, from the output with v = c everywhere: each query's sum of weights times c."""
    out = _numbers_like(observed, np.shape(args["x"]))
    c = np.asarray(args["c"], dtype=np.float64)
    holds = out is not None and bool(np.allclose(out, np.broadcast_to(c, out.shape), rtol=1e-9, atol=1e-9))
    return {"every query's attention weights sum to 1": holds}


def layer_norm_stats(modules, state, x, g, eps, dtype):
    """With weight 1 and bias 0, the output: its every vector must have mean 0 and (population) variance 1
    (judged in the grading process, `layer_norm_stats_holds`). `g` is the layer_norm check's, unused here."""
    ln = _layer_norm(modules, state, x, eps, dtype)
    x = _tensor(x, dtype)
    with torch.no_grad():
        answer = ln(x)
        ln.weight.fill_(1.0)
        ln.bias.zero_()
        y = ln(x)
    return property_result(_sent(answer), _sent(y))


def layer_norm_stats_holds(args, observed) -> dict:
    """layer_norm_stats' property, from the output with weight 1 and bias 0."""
    y = _numbers_like(observed, np.shape(args["x"]))
    if y is None:
        return {"mean 0": False, "variance 1": False}
    mean = y.mean(axis=-1)
    var = ((y - mean[..., None]) ** 2).mean(axis=-1)
    return {
        "mean 0": bool(np.allclose(mean, 0.0, rtol=0, atol=1e-6)),
        "variance 1": bool(np.allclose(var, 1.0, rtol=0, atol=1e-4)),
    }


HUGE, UNIFORM = "loss at logits of about 1e4", "loss at uniform logits"


def _loss(value):
    """A loss the child sends: a number where the call returned a one-element tensor, else a short repr."""
    return float(value) if isinstance(value, torch.Tensor) and value.numel() == 1 else repr(value)[:80]


def ce_stable(modules, logits, huge_logits, targets, level, dtype):
    """The loss, and the losses at logits of about 1e4 and at uniform logits: finite, and exactly ln V
    (judged in the grading process, `ce_stable_holds`)."""
    ce = modules["model"].cross_entropy
    fresh_targets = lambda: torch.tensor(targets, dtype=torch.long)  # noqa: E731 (a fresh one for each call)
    answer = _loss(ce(_tensor(logits, dtype), fresh_targets()))
    huge = ce(_tensor(huge_logits, dtype), fresh_targets())
    uniform = ce(torch.full(logits.shape, level, dtype=_dtype(dtype)), fresh_targets())
    return property_result(answer, {HUGE: _loss(huge), UNIFORM: _loss(uniform)})


def _real(value) -> float | None:
    """A number the child sent, as a float; None for anything else (a repr, a bool, an int too large)."""
    value = _observed(value)
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None
    if isinstance(value, (int, np.integer)) and abs(int(value)) >= 2**1023:
        return None  # past float's range
    return float(value)


def ce_stable_holds(args, observed) -> dict:
    """ce_stable's property, from the two losses the call returned."""
    huge, uniform = _real(observed[HUGE]), _real(observed[UNIFORM])
    V = np.shape(args["logits"])[-1]
    return {
        "finite at logits of 1e4": huge is not None and math.isfinite(huge),
        "ln V for uniform logits": uniform is not None and math.isclose(uniform, math.log(V), rel_tol=1e-6),
    }


def bad_argument(
    modules,
    what,
    state,
    dtype,
    bad_d_model=None,
    bad_n_heads=None,
    d_model=None,
    n_heads=None,
    x=None,
    g=None,
    rope=False,
    config=None,
    idx=None,
    too_long=None,
):
    """The contract's ValueErrors, beside the answer of the same class used rightly.

    `what` names the class: a CausalSelfAttention (d_model, n_heads, x; bad_d_model and bad_n_heads for the
    one that must raise), a TransformerLM (config, idx; too_long, the input that must raise), or the
    variant's odd sizes (`odd_size`). `g` is the attention check's, unused here.
    """
    if what == "odd size":
        return odd_size(
            modules,
            state,
            dtype,
            bad_d_model,
            bad_n_heads=bad_n_heads,
            d_model=d_model,
            n_heads=n_heads,
            x=x,
            rope=rope,
            config=config,
            idx=idx,
        )
    if what == "CausalSelfAttention":
        attn = _attention(modules, d_model, n_heads, state, dtype, rope)
        with torch.no_grad():
            answer = _array(attn(_tensor(x, dtype)))
        make = lambda: modules["layers"].CausalSelfAttention(bad_d_model, bad_n_heads)  # noqa: E731
    else:
        lm = _lm(modules, config, state, dtype)
        with torch.no_grad():
            answer = _array(lm(torch.tensor(idx, dtype=torch.long)))
        make = lambda: lm(torch.tensor(too_long, dtype=torch.long))  # noqa: E731
    try:
        make()
    except ValueError:
        return property_result(answer, "ValueError")
    except Exception as exc:
        return property_result(answer, f"{type(exc).__name__}, not ValueError")
    return property_result(answer, "no error")

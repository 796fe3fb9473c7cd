"""The sandbox's side of the transformer's `positions` variant (see positions.py).

Building what the variant needs (TransformerLM(..., positions=...), the
exact sinusoidal table supplied to the model-level checks, drawn weights for
a pos_emb a rope model kept), the scenarios of the `sinusoidal` and
`rope_relative` checks and the odd-size ValueErrors, and the judge of
`rope_relative`. Imported by the fork server and carried in
a student bundle: never imports the reference, nor any text of it.
"""

from __future__ import annotations

import numpy as np

from lmgrade import Case, CaseVerdict, compare, lazy_import, property_result

# Imported where first used: at once in the sandbox, only for the reference's values in the grading process.
torch = lazy_import("torch")

LEARNED, SINUSOIDAL, ROPE = "learned", "sinusoidal", "rope"
# The config's key for the learned variant's drawn pos_emb weights, kept for a rope model that still makes one.
LEARNED_POS_EMB = "learned_pos_emb"


# --- in the sandbox: building what the variant needs ---


def build_options(config: dict) -> dict:
    """The keyword TransformerLM gets for the variant: none in the default, so older stubs still work."""
    positions = config.get("positions", LEARNED)
    return {} if positions == LEARNED else {"positions": positions}


def exact_table(context_length: int, d_model: int) -> torch.Tensor:
    """The contract's table in float64: sin(t / 10000^(2i/d)) in column 2i, cos in column 2i + 1."""
    t = torch.arange(context_length, dtype=torch.float64)[:, None]
    angle = t / torch.pow(
        torch.tensor(10000.0, dtype=torch.float64), torch.arange(0, d_model, 2, dtype=torch.float64) / d_model
    )
    table = torch.zeros(context_length, d_model, dtype=torch.float64)
    table[:, 0::2], table[:, 1::2] = torch.sin(angle), torch.cos(angle)
    return table


def supply_table(lm: torch.nn.Module, config: dict) -> None:
    """The exact table into the student's own pos_enc, where it has one of the contract's shape; in the
    rope variant, the case's drawn weights into a pos_emb the model should not have (`_supply_pos_emb`).

    A table registered as a parameter is supplied as the contract's buffer: how it is registered is graded
    by the `sinusoidal` check alone, so a train step here never moves it (one mistake, one check).
    """
    _supply_pos_emb(lm, config)
    if config.get("positions") != SINUSOIDAL:
        return
    table = getattr(lm, "pos_enc", None)
    shape = (config["context_length"], config["d_model"])
    if isinstance(table, torch.Tensor) and tuple(table.shape) == shape and table.is_floating_point():
        exact = exact_table(*shape).to(dtype=table.dtype, device=table.device)
        if isinstance(table, torch.nn.Parameter):
            delattr(lm, "pos_enc")
            lm.register_buffer("pos_enc", exact, persistent=False)
            return
        with torch.no_grad():
            table.copy_(exact)


def _supply_pos_emb(lm: torch.nn.Module, config: dict) -> None:
    """The learned variant's drawn weights into a pos_emb of the contract's shape that a rope model kept.

    The contract's rope model has no pos_emb, so the case's state holds none: one left at torch's random
    initialisation would change the answers from run to run, and a known mistake could never match them.
    """
    weights = config.get(LEARNED_POS_EMB)
    kept = getattr(lm, "pos_emb", None)
    kept = kept if isinstance(kept, torch.Tensor) else getattr(kept, "weight", None)
    if weights is None or not isinstance(kept, torch.Tensor) or not kept.is_floating_point():
        return
    if tuple(kept.shape) == np.shape(weights):
        with torch.no_grad():
            kept.copy_(torch.as_tensor(np.asarray(weights), dtype=kept.dtype, device=kept.device))


def _registered(lm: torch.nn.Module) -> str:
    parameters = dict(lm.named_parameters())
    if "pos_enc" in parameters:  # whether it would train is its requires_grad's to say
        if parameters["pos_enc"].requires_grad:
            return "a parameter that requires grad (in parameters() and state_dict: an optimizer would train it)"
        return "a parameter with requires_grad=False (in parameters() and state_dict, though it does not train)"
    if "pos_enc" in dict(lm.named_buffers()):
        return "a buffer in state_dict (persistent)" if "pos_enc" in lm.state_dict() else "a buffer outside state_dict"
    if hasattr(lm, "pos_enc"):
        return f"a plain attribute ({type(lm.pos_enc).__name__}), not a buffer"
    return "missing (no pos_enc)"


def sinusoidal(modules, config, ask):
    """pos_enc's values, or how it is registered where `ask` is "registration"."""
    sizes = tuple(config[key] for key in ("vocab_size", "context_length", "d_model", "n_layers", "n_heads", "d_ff"))
    lm = modules["model"].TransformerLM(*sizes, pre_ln=config["pre_ln"], positions=SINUSOIDAL)
    if ask == "registration":
        return {"pos_enc is": _registered(lm)}
    table = getattr(lm, "pos_enc", None)
    return {"pos_enc": table.detach().double().cpu().numpy() if isinstance(table, torch.Tensor) else repr(table)}


RELATIVE_TOLERANCE = {"float64": 1e-7, "float32": 2e-3}


def _one_hot_weights(state: dict, d_model: int, n_heads: int, content: int, rows: int) -> dict:
    """Weights under which the output of query t, in each head, is its attention weights over the keys.

    x holds content in its first `content` features and a one-hot of the
    row's index (of `rows`) after them; q_proj and k_proj read the content only, each
    head's v copies the one-hot, out_proj is the identity.
    """
    d, h, n = d_model, n_heads, rows
    d_head = d // h
    state = {key: np.array(value) for key, value in state.items()}
    for proj in ("q_proj", "k_proj"):
        state[f"{proj}.weight"][:, content:] = 0.0
    v = np.zeros((d, d))
    for head in range(h):
        v[head * d_head + np.arange(n), content + np.arange(n)] = 1.0
    state.update(
        {"v_proj.weight": v, "v_proj.bias": np.zeros(d), "out_proj.weight": np.eye(d), "out_proj.bias": np.zeros(d)}
    )
    return state


def _rows(content: np.ndarray, first: int, d_model: int, features: int) -> np.ndarray:
    """x of d_model features: `content` in the first `features`, then a one-hot of each row's index from `first`."""
    T = content.shape[1]
    x = np.zeros((content.shape[0], T, d_model))
    x[..., :features] = content
    x[:, np.arange(T), features + first + np.arange(T)] = 1.0
    return x


def rope_relative(modules, d_model, n_heads, dtype, content, rows, shift, state, x, before):
    """The same T tokens alone, then after `shift` others: each query's score differences among its own keys.

    `x` and `before` hold the tokens' `content` features; `rows` is how many positions the one-hots count.
    """
    from .scenarios import _array, _dtype, load

    d, h = d_model, n_heads
    weights = _one_hot_weights(state, d, h, content, rows)
    attn = load(modules["layers"].CausalSelfAttention(d, h, rope=True), weights, dtype)
    T = x.shape[1]
    alone = torch.tensor(_rows(x, shift, d, content), dtype=_dtype(dtype))
    after = torch.tensor(_rows(np.concatenate([before, x], axis=1), 0, d, content), dtype=_dtype(dtype))
    with torch.no_grad():
        out, out_after = attn(alone), attn(after)
    if (
        not isinstance(out, torch.Tensor)
        or not isinstance(out_after, torch.Tensor)
        or out.shape != alone.shape
        or out_after.shape != after.shape
    ):
        return property_result(_array(out) if isinstance(out, torch.Tensor) else repr(out)[:80], None)
    d_head = d // h
    weights, weights_after = [], []
    for head in range(h):
        # Keys `shift`.. of the rows alone (their one-hots sit after `shift` unused slots) and of the rows after.
        cols = head * d_head + shift + np.arange(T)
        weights.append(out[:, :, cols].double())  # (B, T queries, T keys)
        weights_after.append(out_after[:, shift:, cols].double())
    return property_result(
        _array(out), {"alone": torch.stack(weights, 1).numpy(), "after": torch.stack(weights_after, 1).numpy()}
    )


def _score_differences(weights: np.ndarray) -> np.ndarray:
    """log w[t, s] - log w[t, t] for s <= t: the score of key s minus that of key t, for every query t."""
    T = weights.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log(weights) - np.log(np.diagonal(weights, axis1=-2, axis2=-1))[..., :, None]
    return np.where(np.tril(np.ones((T, T), dtype=bool)), logs, 0.0)


def _weights_problem(weights: np.ndarray, whole: bool) -> str | None:
    """What makes `weights` (queries x keys) no attention weights; `whole`: every key is there, rows sum to 1."""
    T = weights.shape[-1]
    later = np.triu(np.ones((T, T), dtype=bool), 1)
    sums = weights.sum(-1)
    if not np.all(np.isfinite(weights)):
        return "some are not finite"
    if np.any(weights[..., later] != 0):
        return "the slot of a later key is not 0"
    if np.any(weights < 0):
        return "some are negative"
    if np.any(sums > 1 + 1e-5) or whole and not np.allclose(sums, 1.0, atol=1e-5):
        return "a query's weights do not sum to 1"
    if np.any(weights[..., ~later] <= 0):
        return "an earlier key's weight is exactly 0"
    return None


def _weights_seen(seen, expected: dict) -> tuple[np.ndarray, np.ndarray] | None:
    """The weights the call left, "alone" and "after", where they are float arrays of the reference's shapes."""
    if not isinstance(seen, dict) or set(seen) != set(expected):
        return None
    found = []
    for key in ("alone", "after"):
        value = seen[key]
        value = getattr(value, "values", value)  # a torch tensor arrives as lmgrade.boundary.wire.Tensor
        if not isinstance(value, np.ndarray) or value.shape != np.shape(expected[key]) or value.dtype.kind != "f":
            return None
        found.append(value.astype(np.float64))
    return found[0], found[1]


def judge_rope_relative(check, case: Case, expected: dict, got: dict, *, reveal: bool) -> CaseVerdict:
    """The property as seen here, from the attention weights the call returned; paid where it holds and the
    attention's own output is right (a wrong attention whose scores are still relative earns nothing)."""
    if not isinstance(got, dict) or set(got) != {"answer", "property"}:
        return CaseVerdict(False, "the answer is not shaped like the contract's")
    shift, dtype = case.args["shift"], case.args["dtype"]
    if got["property"] is None:
        return CaseVerdict(
            False,
            f"the attention's output is not a tensor of x's shape, so the property cannot "
            f"be seen and earns nothing here: {got['answer']!r:.80}",
        )
    weights = _weights_seen(got["property"], expected["property"])
    if weights is None:
        return CaseVerdict(False, "the property cannot be judged: what the call left is not shaped like the contract's")
    alone, after = weights
    problem = _weights_problem(alone, True) or _weights_problem(after, False)
    if problem:
        return CaseVerdict(
            False,
            f"with v_proj copying a one-hot of each key's position and out_proj the "
            f"identity, each output should be its query's attention weights over the keys, "
            f"but {problem} (as when v is rotated too, or a query sees later keys), so the "
            f"effect of the shift cannot be read",
        )
    change = float(np.max(np.abs(_score_differences(after) - _score_differences(alone))))
    said = (
        f"moving the tokens {shift} positions later changed the differences between their scores "
        f"(log-ratios of attention weights, each query against its own keys) by at most {change:.1e}"
    )
    if dtype == "float64" and RELATIVE_TOLERANCE[dtype] < change <= RELATIVE_TOLERANCE["float32"]:
        # Scores that move by float32's rounding, not by a position: a part of the rotation done in float32.
        return CaseVerdict(
            False,
            f"{said}: more than float64's rounding allows in this float64 model, and as little as float32's "
            f"(as when the angles, cos or sin are computed in float32)",
        )
    if change > RELATIVE_TOLERANCE[dtype]:
        return CaseVerdict(
            False,
            f"{said}, so a score depends on where the tokens are, not only on t - s: "
            f"rotate q and k alike, by angles proportional to the position",
        )
    said += ": they depend on t - s only, as RoPE's should"
    answer = compare(expected["answer"], got["answer"], check.tolerance_of(case), reveal=reveal)
    if answer is not None:
        return CaseVerdict(
            False,
            f"{said}, but the attention's own output is wrong, so the property earns nothing here: {answer}",
        )
    return CaseVerdict(True, said)


def odd_size(
    modules,
    state,
    dtype,
    bad_d_model,
    bad_n_heads=None,
    d_model=None,
    n_heads=None,
    x=None,
    rope=False,
    config=None,
    idx=None,
):
    """The variant's ValueError, beside the answer of the same class used rightly: a TransformerLM of
    `config` on idx beside one of an odd d_model (sinusoidal), or a CausalSelfAttention on x beside one of
    an odd d_head (rope)."""
    from .scenarios import _array, _attention, _lm, _tensor

    if config is not None:
        lm = _lm(modules, config, state, dtype)
        with torch.no_grad():
            answer = _array(lm(torch.tensor(idx, dtype=torch.long)))
        c = config
        make = lambda: modules["model"].TransformerLM(  # noqa: E731
            c["vocab_size"],
            c["context_length"],
            bad_d_model,
            c["n_layers"],
            1,
            c["d_ff"],
            pre_ln=c["pre_ln"],
            positions=SINUSOIDAL,
        )
    else:
        attn = _attention(modules, d_model, n_heads, state, dtype, rope)
        with torch.no_grad():
            answer = _array(attn(_tensor(x, dtype)))
        make = lambda: modules["layers"].CausalSelfAttention(  # noqa: E731
            bad_d_model,
            bad_n_heads,
            rope=True,
        )
    try:
        make()
    except ValueError:
        return property_result(answer, "ValueError")
    except Exception as exc:
        return property_result(answer, f"{type(exc).__name__}, not ValueError")
    return property_result(answer, "no error")

"""The checks of the seq2seq assignment: their inputs, tolerances and mistakes.

Every weight is drawn here, keyed like the module's ``state_dict``, and loaded
into the module the stub's ``__init__`` builds, so the submission and the
reference compute with the same numbers. Batches are padded at the end with
lengths in any order; the padded source positions hold 0 or other ids, and
the H_enc rows a check gives at padded positions hold large finite junk.
Each numeric check has float64 cases (tight tolerance) and a float32 case.
Every input is drawn from the check's seeded generator.
"""

from __future__ import annotations

import numpy as np

from lmgrade import Case, CaseContext, Check, Limits, Tolerance

from . import mistakes as M
from .public import scenarios
from .public.judges import judge_init, judge_train

# Any correct order of operations agrees far inside these; float32 keeps about 7 digits, and a few
# GRU steps compound its rounding.
FLOAT64 = Tolerance(rtol=1e-8, atol=1e-10)
FLOAT32 = Tolerance(rtol=1e-3, atol=1e-4)
TOLERANCE = {"float64": FLOAT64, "float32": FLOAT32}
# A few Adam steps compound rounding differences (Adam divides by the gradients' own size).
TRAINED = Tolerance(rtol=1e-6, atol=1e-8)
KINDS = ("none", "dot", "bilinear")
BOS, EOS = 1, 2  # the target ids the batches and the decoding cases use

# What each scenario runs, for the forbidden APIs found in the source.
ENCODER, ATTENTION, DECODER = "seq2seq.Encoder", "seq2seq.attention", "seq2seq.Decoder"
MODEL, LOSS = "seq2seq.Seq2Seq", "seq2seq.masked_cross_entropy"
GREEDY, TRAIN = "seq2seq.greedy_decode", "seq2seq.train"
ALL_USES = (ENCODER, ATTENTION, DECODER, MODEL, LOSS, GREEDY, TRAIN)


def _normal(rng, *shape, scale=1.0) -> np.ndarray:
    return rng.standard_normal(shape) * scale


def _case(label: str, args: dict) -> Case:
    dtype = args.get("dtype", "float64")
    return Case(f"{label}, {dtype}", args, tolerance=TOLERANCE[dtype])


def sizes(src_vocab_size: int, tgt_vocab_size: int, embed_dim: int, hidden_size: int) -> dict:
    return {
        "src_vocab_size": src_vocab_size,
        "tgt_vocab_size": tgt_vocab_size,
        "embed_dim": embed_dim,
        "hidden_size": hidden_size,
    }


def _describe(s: dict, kind: str | None = None) -> str:
    made = f"Seq2Seq({s['src_vocab_size']}, {s['tgt_vocab_size']}, {s['embed_dim']}, {s['hidden_size']}"
    return made + (")" if kind is None else f", attention={kind!r})")


# --- weights, keyed like state_dict ---


def gru_state(rng, prefix: str, n_in: int, H: int, suffix: str = "", gain: float = 1.5) -> dict:
    """PyTorch's GRU weights (rows r, z, n), larger than its default so the gates are far from linear."""
    return {
        f"{prefix}weight_ih{suffix}": _normal(rng, 3 * H, n_in, scale=gain / np.sqrt(n_in)),
        f"{prefix}weight_hh{suffix}": _normal(rng, 3 * H, H, scale=gain / np.sqrt(H)),
        f"{prefix}bias_ih{suffix}": _normal(rng, 3 * H, scale=0.3),
        f"{prefix}bias_hh{suffix}": _normal(rng, 3 * H, scale=0.3),
    }


def encoder_state(rng, s: dict, prefix: str = "encoder.") -> dict:
    return {
        f"{prefix}embed.weight": _normal(rng, s["src_vocab_size"], s["embed_dim"]),
        **gru_state(rng, f"{prefix}rnn.", s["embed_dim"], s["hidden_size"], suffix="_l0"),
    }


def bilinear_W(rng, H: int) -> np.ndarray:
    """Near the identity and far from symmetric: W and W.T give other scores."""
    return np.eye(H) + _normal(rng, H, H, scale=0.6)


def decoder_state(rng, s: dict, kind: str, prefix: str = "decoder.") -> dict:
    E, H, V = s["embed_dim"], s["hidden_size"], s["tgt_vocab_size"]
    state = {f"{prefix}W": bilinear_W(rng, H)} if kind == "bilinear" else {}
    state.update(
        {
            f"{prefix}embed.weight": _normal(rng, V, E),
            **gru_state(rng, f"{prefix}cell.", E + H, H),
            f"{prefix}out.weight": _normal(rng, V, H, scale=2.0 / np.sqrt(H)),
            f"{prefix}out.bias": _normal(rng, V, scale=0.3),
        }
    )
    return state


def model_state(rng, s: dict, kind: str) -> dict:
    return {**encoder_state(rng, s), **decoder_state(rng, s, kind)}


# --- batches ---


def lengths(rng, B: int, S: int, longest: bool = True) -> np.ndarray:
    """B lengths in [1, S] in no order; one of them S where `longest`, else all shorter (S > 1)."""
    top = S if longest else S - 1
    out = rng.integers(1, top + 1, B)
    out[rng.integers(B)] = top
    if B > 2:  # an unsorted batch: a shorter sequence before a longer one
        out[0], out[1] = min(out[0], top - 1 or 1), top
    return out


def source(rng, lens: np.ndarray, S: int, V: int, junk: bool) -> np.ndarray:
    """Real ids in [1, V) before each length; 0 after it, or (junk) other ids of the vocabulary."""
    src = rng.integers(1, V, (len(lens), S))
    padded = np.arange(S)[None, :] >= lens[:, None]
    src[padded] = rng.integers(1, V, int(padded.sum())) if junk else 0
    return src


def targets_in(rng, B: int, T: int, V: int) -> np.ndarray:
    """bos, then ids in [3, V), each row padded with 0 after its own length (the first row unpadded)."""
    tgt = np.zeros((B, T), dtype=np.int64)
    for b in range(B):
        n = T if b == 0 else int(rng.integers(1, T + 1))
        tgt[b, :n] = np.concatenate([[BOS], rng.integers(3, V, n - 1)]) if V > 3 else BOS
    return tgt


def junk_rows(rng, H_enc: np.ndarray, mask: np.ndarray, scale: float) -> np.ndarray:
    """H_enc with large finite junk of either sign at every padded row."""
    out = H_enc.copy()
    out[~mask] = np.sign(_normal(rng, int((~mask).sum()), H_enc.shape[-1])) * scale * (1 + rng.random())
    return out


def random_mask(rng, B: int, S: int) -> np.ndarray:
    """Any pattern of real positions, not only a prefix, at least one per row; the first row a prefix."""
    mask = rng.random((B, S)) < 0.6
    mask[np.arange(B), rng.integers(0, S, B)] = True
    mask[0] = np.arange(S) < rng.integers(1, S + 1)
    return mask


def batch(rng, s: dict, B: int, S: int, T: int, junk: bool = False, longest: bool = True) -> dict:
    lens = lengths(rng, B, S, longest)
    return {
        "src": source(rng, lens, S, s["src_vocab_size"], junk),
        "src_lengths": lens,
        "tgt_in": targets_in(rng, B, T, s["tgt_vocab_size"]),
    }


def model_args(rng, s: dict, kind: str, dtype: str = "float64") -> dict:
    return {"sizes": s, "kind": kind, "state": model_state(rng, s, kind), "dtype": dtype}


# --- init ---


def init_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for s in (sizes(6, 7, 3, 4), sizes(5, 9, 4, 2)):
        rng = ctx.rng
        args = {"sizes": s, "kinds": list(KINDS), "seed": int(rng.integers(2**31)), **batch(rng, s, 3, 4, 3)}
        cases.append(
            Case(
                f"torch.manual_seed(seed); {_describe(s)} with attention 'none', 'dot' and 'bilinear': the "
                "parameters as built (bit for bit), the next draw, and the logits after model.to(torch.float64)",
                args,
                tolerance=FLOAT64,
            )
        )
    return cases


# --- Encoder ---

# (B, S, sizes, dtype, padded ids, longest): lengths unsorted; S = 1; every length below S.
ENCODER_SIZES = [
    (4, 5, sizes(7, 5, 3, 4), "float64", True, True),
    (1, 1, sizes(5, 5, 2, 3), "float64", False, True),
    (3, 6, sizes(6, 5, 4, 5), "float64", False, False),
    (3, 4, sizes(7, 5, 3, 4), "float32", True, True),
]


def encoder_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for B, S, s, dtype, junk, longest in ENCODER_SIZES:
        rng = ctx.rng
        lens = lengths(rng, B, S, longest) if S > 1 else np.ones(B, dtype=np.int64)
        state = {k.removeprefix("encoder."): v for k, v in encoder_state(rng, s).items()}
        H = s["hidden_size"]
        args = {
            "sizes": s,
            "state": state,
            "dtype": dtype,
            "src": source(rng, lens, S, s["src_vocab_size"], junk),
            "src_lengths": lens,
            "g_H": _normal(rng, B, S, H),
            "g_h": _normal(rng, B, H),
        }
        padded = "other ids" if junk else "0"
        cases.append(
            _case(
                f"Encoder({s['src_vocab_size']}, {s['embed_dim']}, {H}) with its weights loaded; src of shape "
                f"({B}, {S}), src_lengths={lens.tolist()}, {padded} at the padded positions",
                args,
            )
        )
    return cases


# --- attention ---

# (B, S, H, W given, dtype, size of h_dec and H_enc, junk at masked rows): scores up to 1e4; float32 junk
# near float32's largest number, where a padded row that meets a gradient overflows.
ATTENTION_SIZES = [
    (3, 5, 4, False, "float64", 1.0, 1e30),
    (2, 6, 5, True, "float64", 1.0, 1e30),
    (3, 4, 3, True, "float64", 40.0, 1e30),
    (2, 5, 4, False, "float64", 60.0, 1e30),
    (1, 1, 2, False, "float64", 1.0, 1e30),
    (3, 5, 4, True, "float32", 1.0, 1.5e38),
]


def _attention_args(rng, B, S, H, with_W, dtype, scale, junk) -> dict:
    mask = random_mask(rng, B, S)
    H_enc = _normal(rng, B, S, H, scale=scale)
    grad_scale = 4.0 if dtype == "float32" else 1.0  # g . junk overflows float32: 0 * inf shows
    return {
        "h_dec": _normal(rng, B, H, scale=scale),
        "H_enc": junk_rows(rng, H_enc, mask, junk),
        "mask": mask,
        "W": bilinear_W(rng, H) if with_W else None,
        "g_context": _normal(rng, B, H, scale=grad_scale),
        "g_alpha": _normal(rng, B, S),
        "dtype": dtype,
    }


def _attention_label(B, S, H, with_W, scale, junk) -> str:
    score = "scores up to about 1e4" if scale > 10 else "scores of a few units"
    what = "W a non-symmetric (H, H)" if with_W else "W left out (dot product)"
    return (
        f"attention(h_dec ({B}, {H}), H_enc ({B}, {S}, {H}), a mask not only a prefix, {what}); {score}; "
        f"junk of about 1e{round(np.log10(junk))} in H_enc at the masked positions"
    )


def attention_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for B, S, H, W, dtype, scale, junk in ATTENTION_SIZES:
        case = _case(
            _attention_label(B, S, H, W, scale, junk), _attention_args(ctx.rng, B, S, H, W, dtype, scale, junk)
        )
        if scale > 10:
            # The weights are one-hot to the last bit: the gradients of h_dec and W are sums that cancel, right to
            # the rounding of terms of size scale**2, not of their own size.
            case.tolerance = Tolerance(rtol=FLOAT64.rtol, atol=FLOAT64.atol * scale**2)
        cases.append(case)
    return cases


# --- Decoder.step ---

# (B, S, sizes, kind, dtype, kind left out)
STEP_SIZES = [
    (3, 5, sizes(5, 7, 3, 4), "none", "float64", False),
    (3, 5, sizes(5, 7, 3, 4), "dot", "float64", True),
    (2, 4, sizes(5, 6, 4, 3), "bilinear", "float64", False),
    (1, 1, sizes(5, 4, 2, 2), "dot", "float64", False),
    (3, 4, sizes(5, 7, 3, 4), "bilinear", "float32", False),
]


def _step_args(rng, B, S, s, kind, dtype) -> dict:
    H, V = s["hidden_size"], s["tgt_vocab_size"]
    mask = np.arange(S)[None, :] < lengths(rng, B, S)[:, None]
    state = {k.removeprefix("decoder."): v for k, v in decoder_state(rng, s, kind).items()}
    return {
        "sizes": s,
        "kind": kind,
        "state": state,
        "dtype": dtype,
        "y_prev": rng.integers(0, V, B),
        "h_prev": _normal(rng, B, H, scale=0.8),
        "H_enc": junk_rows(rng, _normal(rng, B, S, H, scale=0.8), mask, 1e4),
        "mask": mask,
        "c": _normal(rng, B, H, scale=0.8),
        "g_logits": _normal(rng, B, V),
        "g_h": _normal(rng, B, H),
        "g_alpha": _normal(rng, B, S),
    }


def step_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for B, S, s, kind, dtype, left_out in STEP_SIZES:
        args = _step_args(ctx.rng, B, S, s, kind, dtype)
        made = f"Decoder({s['tgt_vocab_size']}, {s['embed_dim']}, {s['hidden_size']}"
        made += ") (attention left out: 'dot')" if left_out else f", attention={kind!r})"
        if left_out:
            args["kind_left_out"] = True
        cases.append(
            _case(
                f"{made} with its weights loaded; step(y_prev, h_prev, H_enc ({B}, {S}, {s['hidden_size']}) with "
                "junk of about 1e4 at the padded rows, mask, c)",
                args,
            )
        )
    return cases


# --- Seq2Seq.forward ---

# (B, S, T, sizes, kind, dtype, padded ids, longest)
FORWARD_SIZES = [
    (3, 5, 4, sizes(7, 8, 3, 4), "dot", "float64", True, True),
    (3, 4, 3, sizes(6, 7, 4, 3), "bilinear", "float64", False, False),
    (2, 4, 5, sizes(6, 7, 3, 4), "none", "float64", True, True),
    (1, 1, 1, sizes(4, 5, 2, 2), "dot", "float64", False, True),
    (2, 3, 2, sizes(4, 5, 1, 1), "bilinear", "float64", False, True),
    (3, 4, 3, sizes(6, 7, 3, 4), "bilinear", "float32", True, True),
]
FORWARD_HIDDEN_SIZES = [
    (6, 9, 8, sizes(20, 25, 8, 16), "bilinear", "float64", True, True),
    (5, 8, 7, sizes(15, 18, 6, 12), "dot", "float64", True, False),
]


def _forward_cases(ctx: CaseContext, table) -> list[Case]:
    cases = []
    for B, S, T, s, kind, dtype, junk, longest in table:
        rng = ctx.rng
        args = {**model_args(rng, s, kind, dtype), **batch(rng, s, B, S, T, junk, longest)}
        args["g"] = _normal(rng, B, T, s["tgt_vocab_size"])
        padded = "other ids" if junk else "0"
        cases.append(
            _case(
                f"{_describe(s, kind)} with its weights loaded; forward(src ({B}, {S}) with {padded} at the padded "
                f"positions, src_lengths={args['src_lengths'].tolist()}, tgt_in ({B}, {T}))",
                args,
            )
        )
    return cases


def forward_cases(ctx: CaseContext) -> list[Case]:
    return _forward_cases(ctx, FORWARD_SIZES)


def forward_hidden_cases(ctx: CaseContext) -> list[Case]:
    return _forward_cases(ctx, FORWARD_HIDDEN_SIZES)


# --- masked_cross_entropy ---


def _targets(rng, shape: tuple, V: int, pad: int, row_of_pads: bool) -> np.ndarray:
    """Ids with pads at the end of each row but the first, which has none (a row of pads only, where asked)."""
    real = [i for i in range(V) if i != pad]
    targets = rng.choice(real, size=shape)
    if not shape:  # logits (V,): one position, its target not pad (an int: the wire sends a 0-d array as 1-d)
        return int(targets)
    if len(shape) == 2:
        for b in range(1, shape[0]):  # at least one pad: what a case asks of pads shows under every secret
            targets[b, int(rng.integers(1, shape[1])) :] = pad
        if row_of_pads:
            targets[-1] = pad
    else:
        targets[rng.random(shape) < 0.4] = pad
        targets[0] = real[0]
    return targets


# (shape of the logits, their size, pad (None: left out), dtype, a row of pads only, nan at padded positions)
LOSS_SIZES = [
    ((3, 5, 6), 2.0, None, "float64", False, False),
    ((8, 5), 2.0, 2, "float64", False, False),
    ((3, 4, 7), 2.0, 0, "float64", True, False),
    ((3, 4, 5), 1e4, None, "float64", False, False),
    ((2, 3, 6), 1e4, 3, "float32", False, False),
    ((2, 5, 4), 2.0, None, "float64", False, True),
    ((6,), 2.0, None, "float64", False, False),
]


def masked_cross_entropy_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for shape, scale, pad, dtype, row_of_pads, nan in LOSS_SIZES:
        rng = ctx.rng
        targets = _targets(rng, shape[:-1], shape[-1], 0 if pad is None else pad, row_of_pads)
        logits = _normal(rng, *shape, scale=scale)
        if nan:
            logits[targets == 0] = np.nan
        args = {"logits": logits, "targets": targets, "pad": pad, "dtype": dtype}
        said = "pad left out (0)" if pad is None else f"pad={pad}"
        what = "targets with several pads" if len(shape) > 1 else "one target, of shape ()"
        size = "logits of about 1e4" if scale > 10 else f"logits of std {scale:g}"
        extra = "; a row of pads only" if row_of_pads else ""
        extra += "; nan logits at the padded positions" if nan else ""
        cases.append(_case(f"masked_cross_entropy({size}, shape {shape}; {what}, {said}{extra})", args))
    return cases


# --- greedy_decode ---


def bias_only(rng, s: dict, kind: str, best: int, tie: int | None) -> dict:
    """A model whose logits are out.bias at every step (out.weight zero): it always chooses `best` (and, where
    `tie` is larger, the tie goes to the smaller id)."""
    state = model_state(rng, s, kind)
    V = s["tgt_vocab_size"]
    bias = rng.uniform(-1.0, 0.0, V)
    bias[best] = 1.0
    if tie is not None:
        bias[tie] = 1.0
    state["decoder.out.weight"] = np.zeros((V, s["hidden_size"]))
    state["decoder.out.bias"] = bias
    return state


def successor(rng, s: dict, kind: str) -> dict:
    """A model that chooses y + 1 (mod V) after y: the GRU's update gate shut (z = 0), its new state a tanh of
    the embedding of y alone, and out mapping that state's one-hot to the next id."""
    V, E, H = s["tgt_vocab_size"], s["embed_dim"], s["hidden_size"]
    assert V == E == H
    state = model_state(rng, s, kind)
    weight_ih = np.zeros((3 * H, E + H))
    weight_ih[2 * H :, :E] = np.eye(H) * 4.0
    bias_ih = np.zeros(3 * H)
    bias_ih[H : 2 * H] = -40.0  # z = sigmoid(-40): the new state is n alone
    state.update(
        {
            "decoder.embed.weight": np.eye(V),
            "decoder.cell.weight_ih": weight_ih,
            "decoder.cell.weight_hh": np.zeros((3 * H, H)),
            "decoder.cell.bias_ih": bias_ih,
            "decoder.cell.bias_hh": np.zeros(3 * H),
            "decoder.out.weight": np.roll(np.eye(V), 1, axis=0) * 10.0,
            "decoder.out.bias": np.zeros(V),
        }
    )
    return state


def _calls(*calls) -> list[dict]:
    return [{"bos": b, "eos": e, "max_len": m} for b, e, m in calls]


def _said(calls: list[dict]) -> str:
    return "; ".join(f"bos={c['bos']}, eos={c['eos']}, max_len={c['max_len']}" for c in calls)


def greedy_decode_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng
    cases = []
    # The output bias alone: the same id at every step, the smaller of two tied ids.
    s = sizes(6, 7, 3, 4)
    best = int(rng.integers(3, 6))
    tie = int(rng.integers(best + 1, 7))
    kind = str(rng.choice(KINDS))
    calls = _calls((BOS, best, 4), (BOS, EOS, 4), (best, best, 3), (EOS, 0, 1))
    args = {"sizes": s, "kind": kind, "state": bias_only(rng, s, kind, best, tie), "dtype": "float64", "calls": calls}
    args.update(batch(rng, s, 2, 4, 1))
    cases.append(
        Case(
            f"{_describe(s, kind)} whose out.weight is 0: every step's logits are out.bias, largest at ids {best} "
            f"and {tie} alike; greedy_decode with {_said(calls)}",
            args,
            tolerance=FLOAT64,
        )
    )
    # The successor decoder: y + 1 after y; eos reached, max_len reached, bos == eos.
    V = 6
    s = sizes(5, V, V, V)
    kind = str(rng.choice(KINDS))
    start = int(rng.integers(0, V))
    calls = _calls((start, (start + 3) % V, 10), ((start + 1) % V, (start + 1) % V, 10), (start, (start + 4) % V, 2))
    args = {"sizes": s, "kind": kind, "state": successor(rng, s, kind), "dtype": "float64", "calls": calls}
    args.update(batch(rng, s, 3, 4, 1))
    cases.append(
        Case(
            f"{_describe(s, kind)} built to choose y + 1 (mod {V}) after y; greedy_decode with {_said(calls)}",
            args,
            tolerance=FLOAT64,
        )
    )
    # Random weights, a batch whose examples stop at different steps.
    for kind, B, S in (("dot", 4, 5), ("bilinear", 3, 4), ("none", 3, 3)):
        s = sizes(6, 6, 3, 4)
        args = {**model_args(rng, s, kind), **batch(rng, s, B, S, 1, junk=True)}
        args["state"]["decoder.out.bias"][EOS] += 1.0  # some examples stop early, others run to max_len
        calls = _calls((BOS, EOS, 6), (EOS, EOS, 3))
        cases.append(
            Case(
                f"{_describe(s, kind)} with random weights; src ({B}, {S}), src_lengths="
                f"{args['src_lengths'].tolist()}; greedy_decode with {_said(calls)}",
                {**args, "calls": calls},
                tolerance=FLOAT64,
            )
        )
    return cases


# --- train ---


def _train_batches(rng, s: dict, count: int, B: int, S: int, T: int, copy: bool = False) -> list[dict]:
    """`count` batches of (src, src_lengths, tgt_in, tgt_out); for the copy task, the target is the source."""
    out = []
    for _ in range(count):
        lens = lengths(rng, B, S)
        src = source(rng, lens, S, s["src_vocab_size"], junk=False)
        if copy:
            src[src != 0] = rng.integers(3, s["tgt_vocab_size"], int((src != 0).sum()))
            body = [row[:n] for row, n in zip(src, lens)]
        else:
            body = [rng.integers(3, s["tgt_vocab_size"], int(rng.integers(1, T))) for _ in range(B)]
        width = max(len(b) for b in body) + 1
        tgt_in, tgt_out = np.zeros((B, width), dtype=np.int64), np.zeros((B, width), dtype=np.int64)
        for b, ys in enumerate(body):
            tgt_in[b, : len(ys) + 1] = [BOS, *ys]
            tgt_out[b, : len(ys) + 1] = [*ys, EOS]
        out.append({"src": src, "src_lengths": lens, "tgt_in": tgt_in, "tgt_out": tgt_out})
    return out


def train_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for s, kind, count, epochs, lr in (
        (sizes(6, 7, 3, 4), "dot", 3, 2, 1e-2),
        (sizes(5, 6, 4, 3), "bilinear", 2, 2, 5e-3),
        (sizes(6, 7, 3, 4), "none", 2, 1, 1e-2),
    ):
        rng = ctx.rng
        args = {
            **model_args(rng, s, kind),
            "batches": _train_batches(rng, s, count, 3, 4, 4),
            "epochs": epochs,
            "lr": lr,
            "seed": int(rng.integers(2**62)),
            "zero_epochs_first": kind == "none",
        }
        first = "train(model, batches, epochs=0, ...), then " if kind == "none" else ""
        cases.append(
            Case(
                f"{_describe(s, kind)} with its weights loaded; {first}train(model, {count} batches, "
                f"epochs={epochs}, "
                f"lr={lr:g}, a seeded generator)",
                args,
                tolerance=TRAINED,
            )
        )
    rng = ctx.rng
    s = sizes(6, 6, 4, 8)
    args = {
        **model_args(rng, s, "dot"),
        "batches": _train_batches(rng, s, 2, 4, 3, 4, copy=True),
        "epochs": 8,
        "lr": 0.05,
        "seed": int(rng.integers(2**62)),
        "copy_task": True,
        "falls_to": 0.6,
    }
    args["state"] = {k: v * 0.5 for k, v in args["state"].items()}  # a gentler start, as a trained model's
    cases.append(
        Case(
            f"{_describe(s, 'dot')}: train(model, 2 batches of a copy task (the target is the source), epochs=8, "
            "lr=0.05, a seeded generator): the loss must fall",
            args,
            tolerance=Tolerance(rtol=1e-5, atol=1e-7),
        )
    )
    return cases


# --- properties ---


def padding_ignored_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for kind, B, S, T in (("dot", 3, 5, 3), ("bilinear", 2, 4, 4)):
        rng = ctx.rng
        s = sizes(7, 6, 3, 4)
        args = {**model_args(rng, s, kind), **batch(rng, s, B, S, T)}
        other = args["src"].copy()
        padded = np.arange(S)[None, :] >= args["src_lengths"][:, None]
        other[padded] = rng.integers(1, s["src_vocab_size"], int(padded.sum()))
        args["other_src"] = other
        cases.append(
            _case(
                f"{_describe(s, kind)}: forward with 0 at the padded source positions, then with other ids there "
                f"(src_lengths={args['src_lengths'].tolist()}): the logits must not change",
                args,
            )
        )
    return cases


def alpha_rows_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for B, S, H, with_W, dtype in ((3, 6, 4, False, "float64"), (3, 5, 3, True, "float32")):
        args = _attention_args(ctx.rng, B, S, H, with_W, dtype, 1.0, 1e3)
        cases.append(
            _case(
                f"attention(h_dec ({B}, {H}), H_enc ({B}, {S}, {H}), a mask not only a prefix"
                f"{', W' if with_W else ''}): every row of alpha sums to 1 over its real positions and is exactly 0 "
                "at the others",
                args,
            )
        )
    return cases


def batch_independence_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for kind, B, S, T in (("dot", 3, 5, 3), ("bilinear", 3, 4, 2)):
        rng = ctx.rng
        s = sizes(6, 7, 3, 4)
        args = {**model_args(rng, s, kind), **batch(rng, s, B, S, T, junk=True)}
        cases.append(
            _case(
                f"{_describe(s, kind)}: forward on a batch of {B} (src_lengths={args['src_lengths'].tolist()}), and "
                "on each example alone with its source cut to its length: the same logits",
                args,
            )
        )
    return cases


def none_equals_dot_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for B, S, T in ((3, 3, 3), (2, 1, 2)):
        rng = ctx.rng
        s = sizes(6, 7, 3, 4)
        args = {**model_args(rng, s, "dot"), **batch(rng, s, B, S, T, junk=True)}
        args["src_lengths"] = np.ones(B, dtype=np.int64)
        args["src"][:, 1:] = rng.integers(1, 6, (B, S - 1))
        args["W"] = bilinear_W(rng, 4)
        cases.append(
            _case(
                f"{_describe(s)} with attention 'none', 'dot' and 'bilinear' on the same weights; every source "
                f"of length 1 (src ({B}, {S})): attention has one position to choose, so the logits are the same",
                args,
            )
        )
    return cases


def teacher_forcing_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for kind, B, S, T in (("dot", 3, 4, 5), ("none", 2, 3, 4)):
        rng = ctx.rng
        s = sizes(6, 7, 3, 4)
        args = {**model_args(rng, s, kind), **batch(rng, s, B, S, T)}
        cases.append(
            _case(
                f"{_describe(s, kind)}: forward(src, src_lengths, tgt_in ({B}, {T})) against a loop of its own "
                "decoder.step fed tgt_in[:, i - 1], and one fed its own argmax",
                args,
            )
        )
    return cases


def no_mutation_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng
    s = sizes(6, 7, 3, 4)
    cases = []
    args = {**model_args(rng, s, "dot"), **batch(rng, s, 3, 4, 3, junk=True), "what": "Seq2Seq.forward"}
    cases.append(_case("Seq2Seq.forward: src (other ids at the padded positions), src_lengths, tgt_in unchanged", args))
    args = {**_attention_args(rng, 3, 4, 4, True, "float64", 1.0, 1e3), "what": "attention"}
    cases.append(_case("attention: h_dec, H_enc (junk at the masked rows), mask and W unchanged", args))
    args = {**_step_args(rng, 2, 4, s, "bilinear", "float64"), "what": "Decoder.step"}
    cases.append(_case("Decoder.step: y_prev, h_prev, H_enc, mask and c unchanged", args))
    targets = _targets(rng, (3, 4), 5, 0, False)
    args = {"logits": _normal(rng, 3, 4, 5), "targets": targets, "dtype": "float64", "what": "masked_cross_entropy"}
    cases.append(_case("masked_cross_entropy: logits and targets unchanged", args))
    args = {**model_args(rng, s, "bilinear"), **batch(rng, s, 3, 4, 1, junk=True), "what": "greedy_decode"}
    args.update(bos=BOS, eos=EOS, max_len=4)
    cases.append(_case("greedy_decode: src, src_lengths and the model's parameters unchanged", args))
    return cases


def bad_argument_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng
    s = sizes(6, 7, 3, 4)
    cases = []

    # Each size argument at 0 in turn: ValueError from every one.
    lens = lengths(rng, 3, 4)
    made = [[0, 3, 4], [6, 0, 4], [6, 3, 0]]
    args = {
        "what": "Encoder sizes",
        "sizes": s,
        "state": {k.removeprefix("encoder."): v for k, v in encoder_state(rng, s).items()},
        "dtype": "float64",
        "src": source(rng, lens, 4, 6, False),
        "src_lengths": lens,
        "bad_calls": made,
    }
    said = ", ".join(f"Encoder({a}, {b}, {c})" for a, b, c in made)
    cases.append(_case(f"{said} must each raise ValueError", args))
    made = [[0, 3, 4, "dot"], [7, 0, 4, "bilinear"], [7, 3, 0, "none"], [7, 3, 4, "general"]]
    args = {**_step_args(rng, 2, 3, s, "dot", "float64"), "what": "Decoder", "bad_calls": made}
    said = ", ".join(f"Decoder({a}, {b}, {c}, attention={k!r})" for a, b, c, k in made)
    cases.append(_case(f"{said} must each raise ValueError", args))
    args = {**_attention_args(rng, 3, 4, 4, False, "float64", 1.0, 1e3), "what": "attention"}
    args["bad_mask"] = args["mask"].copy()
    args["bad_mask"][int(rng.integers(3))] = False
    cases.append(_case("attention with a row of mask that has no True must raise ValueError", args))
    targets = _targets(rng, (2, 4), 5, 0, False)
    args = {
        "what": "masked_cross_entropy",
        "logits": _normal(rng, 2, 4, 5),
        "targets": targets,
        "bad_targets": np.zeros_like(targets),
        "dtype": "float64",
    }
    cases.append(_case("masked_cross_entropy with every target equal to pad must raise ValueError", args))
    for what, change in (
        ("Encoder.forward", "an entry 0"),
        ("Seq2Seq.forward", "an entry > S"),
        ("greedy_decode", "a shape other than (B,)"),
        ("greedy_decode", "max_len=0"),
    ):
        kind = str(rng.choice(KINDS))
        args = {**model_args(rng, s, kind), **batch(rng, s, 3, 4, 2), "what": what}
        args.update(bos=BOS, eos=EOS, max_len=3, bad_max_len=3)
        lens = args["src_lengths"]
        if change == "an entry 0":
            args["bad_lengths"] = np.where(np.arange(3) == rng.integers(3), 0, lens)
        elif change == "an entry > S":
            args["bad_lengths"] = np.where(np.arange(3) == rng.integers(3), 5, lens)
        elif change == "max_len=0":
            args["bad_max_len"] = 0
        else:
            args["bad_lengths"] = np.concatenate([lens, [1]])
        cases.append(
            _case(
                f"{what} with src_lengths of {change} must raise ValueError".replace(
                    "src_lengths of max_len=0", "max_len=0"
                ),
                args,
            )
        )
    return cases


# --- the checks ---


def seq2seq_checks() -> list[Check]:
    # Each check's reference run takes a tenth of a second here: ample room for slow but correct code, and
    # limits that add up to what Gradescope's default timeout grades whole.
    quick = Limits(cpu_s=10, wall_s=20)
    slow = Limits(cpu_s=20, wall_s=40)
    return [
        Check(
            "init",
            "Seq2Seq.__init__: after torch.manual_seed, the parameters drawn in the contract's order, the kinds alike",
            scenarios.init,
            init_cases,
            tolerance=FLOAT64,
            judge=judge_init,
            uses=(MODEL, ENCODER, DECODER, ATTENTION),
            composes=("forward",),
            limits=quick,
        ),
        Check(
            "encoder",
            "Encoder: states at the real positions and h_n, unsorted lengths, and every gradient",
            scenarios.encoder,
            encoder_cases,
            tolerance=FLOAT64,
            mistakes=(M.H_N_PADDED_END, M.ENFORCE_SORTED, M.NO_TOTAL_LENGTH),
            uses=(ENCODER,),
            limits=quick,
            grades=(ENCODER,),
        ),
        Check(
            "attention",
            "attention: masks of any pattern, junk at masked rows, a non-symmetric W, scores of 1e4, gradients",
            scenarios.attention,
            attention_cases,
            tolerance=FLOAT64,
            mistakes=M.ATTENTION_CHECK_MISTAKES,
            uses=(ATTENTION,),
            limits=quick,
            grades=(ATTENTION,),
        ),
        Check(
            "step",
            "Decoder.step: scores from h_prev, the embedding before the context, logits of the new state",
            scenarios.step,
            step_cases,
            tolerance=FLOAT64,
            mistakes=M.STEP_CHECK_MISTAKES,
            uses=(DECODER,),
            composes=("attention",),
            limits=quick,
            # No stand-in: a torch module's stand-in answers forward only, and the decoder's work is step.
            grades=(),
        ),
        Check(
            "forward",
            "Seq2Seq.forward: teacher forcing from h_0^d = c, logits at every position and every gradient",
            scenarios.forward,
            forward_cases,
            tolerance=FLOAT64,
            mistakes=M.FORWARD_MISTAKES,
            uses=(MODEL,),
            composes=("encoder", "step"),
            limits=quick,
            grades=(MODEL,),
        ),
        Check(
            "masked_cross_entropy",
            "masked_cross_entropy: one mean over the non-pad positions, stable at 1e4, and its gradient",
            scenarios.masked_cross_entropy,
            masked_cross_entropy_cases,
            tolerance=FLOAT64,
            mistakes=M.LOSS_MISTAKES,
            uses=(LOSS,),
            limits=quick,
            grades=(LOSS,),
        ),
        Check(
            "greedy_decode",
            "greedy_decode: models whose answer is known, eos, max_len, bos == eos, and random weights",
            scenarios.greedy_decode,
            greedy_decode_cases,
            tolerance=FLOAT64,
            mistakes=M.GREEDY_MISTAKES,
            uses=(GREEDY,),
            composes=("encoder", "step"),
            limits=quick,
            grades=(GREEDY,),
        ),
        Check(
            "train",
            "train: Adam on batches in torch.randperm order, every loss, the weights and the generator after",
            scenarios.train,
            train_cases,
            tolerance=TRAINED,
            judge=judge_train,
            mistakes=M.TRAIN_MISTAKES,
            uses=(TRAIN,),
            composes=("forward", "masked_cross_entropy"),
            limits=slow,
            grades=(TRAIN,),
        ),
        Check(
            "padding_ignored",
            "other ids at the padded source positions change no logit",
            scenarios.padding_ignored,
            padding_ignored_cases,
            tolerance=FLOAT64,
            property_check=True,
            holds=scenarios.padding_ignored_holds,
            uses=(MODEL,),
            composes=("forward",),
            limits=quick,
        ),
        Check(
            "alpha_rows",
            "alpha sums to 1 over the real positions and is 0 at the others",
            scenarios.alpha_rows,
            alpha_rows_cases,
            tolerance=FLOAT64,
            property_check=True,
            holds=scenarios.alpha_rows_holds,
            uses=(ATTENTION,),
            composes=("attention",),
            limits=quick,
        ),
        Check(
            "batch_independence",
            "each example's logits are the same in a batch as alone",
            scenarios.batch_independence,
            batch_independence_cases,
            tolerance=FLOAT64,
            property_check=True,
            holds=scenarios.batch_independence_holds,
            uses=(MODEL,),
            composes=("forward",),
            limits=quick,
        ),
        Check(
            "none_equals_dot",
            'with every source of length 1, "none", "dot" and "bilinear" give the same logits',
            scenarios.none_equals_dot,
            none_equals_dot_cases,
            tolerance=FLOAT64,
            property_check=True,
            holds=scenarios.none_equals_dot_holds,
            uses=(MODEL,),
            composes=("forward",),
            limits=quick,
        ),
        Check(
            "teacher_forcing",
            "forward equals decoder.step fed the given tokens, not its own predictions",
            scenarios.teacher_forcing,
            teacher_forcing_cases,
            tolerance=FLOAT64,
            property_check=True,
            holds=scenarios.teacher_forcing_holds,
            uses=(MODEL,),
            composes=("forward",),
            limits=quick,
        ),
        Check(
            "no_mutation",
            "no argument changed: src, src_lengths, tgt_in, H_enc, mask, logits, targets, the model's weights",
            scenarios.no_mutation,
            no_mutation_cases,
            tolerance=FLOAT64,
            property_check=True,
            uses=ALL_USES,
            composes=("forward", "attention", "step", "masked_cross_entropy", "greedy_decode"),
            limits=quick,
        ),
        Check(
            "bad_arguments",
            "ValueError for sizes < 1, an unknown attention, bad src_lengths, an empty mask row, all pads, max_len < 1",
            scenarios.bad_argument,
            bad_argument_cases,
            tolerance=FLOAT64,
            property_check=True,
            uses=ALL_USES,
            composes=("encoder", "attention", "step", "forward", "masked_cross_entropy", "greedy_decode"),
            limits=quick,
        ),
        Check(
            "forward_hidden",
            "Seq2Seq.forward at larger sizes",
            scenarios.forward,
            forward_hidden_cases,
            tolerance=FLOAT64,
            # On its cases a mask built from the pad id masks no more than none does: its answers are
            # attend_padding's there (forward's cases tell the two apart).
            mistakes=tuple(m for m in M.FORWARD_MISTAKES if m is not M.MASK_FROM_PAD_ID),
            visibility="after_due_date",
            uses=(MODEL,),
            composes=("encoder", "step"),
            limits=quick,
            grades=(MODEL,),
        ),
    ]

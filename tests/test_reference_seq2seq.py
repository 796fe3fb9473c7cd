"""The `seq2seq` reference against an independent float64 implementation, torch's GRU modules, and the contract.

The independent implementation below is written from the lectures' equations:
its own GRU (checked against nn.GRU and nn.GRUCell with copied weights), run
one example at a time over the real tokens only (so it needs no mask), its
own attention loops and its own loss. Forward values and the gradients of
every parameter and input are compared in float64 (autograd on both sides),
float32 against the float64 result; a gradcheck covers the reference's own
backward. CUDA variants skip where no GPU is present. TF32 is off throughout
so float32 on CUDA is float32.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path

import pytest
import torch
import torch.nn as nn

from lmgrade.submissions.loader import load_files

ROOT = Path(__file__).resolve().parents[1]
s2s = load_files(ROOT / "reference" / "seq2seq", ["seq2seq.py"])["seq2seq"]

NO_CUDA = "CUDA is not available (torch.cuda.is_available() is False)"
CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason=NO_CUDA)
DEVICES = ["cpu", pytest.param("cuda", marks=CUDA)]
DTYPES = [torch.float32, torch.float64]
KINDS = ["none", "dot", "bilinear"]
# float32 is compared with the float64 truth, so its tolerance is float32's rounding.
TOL = {torch.float32: dict(rtol=1e-4, atol=1e-5), torch.float64: dict(rtol=1e-10, atol=1e-12)}
FORBIDDEN = [
    "MultiheadAttention",
    "scaled_dot_product_attention",
    "nn.Transformer",
    "F.cross_entropy",
    "functional.cross_entropy",
    "CrossEntropyLoss",
    "nll_loss",
    "NLLLoss",
]

# Small sizes: V_src, V_tgt, E, H.
VS, VT, E, H = 7, 9, 3, 4


@pytest.fixture(autouse=True, scope="module")
def no_tf32():
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


# ---------------------------------------------------------------------------
# The independent implementation: one example, real tokens only, float64


def sigmoid(x):
    return 1.0 / (1.0 + torch.exp(-x))


def gru_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    """PyTorch's GRU equations for one vector x (I,) and state h (H,); rows of the weights in the order r, z, n."""
    n_h = h.shape[0]
    W_ir, W_iz, W_in = w_ih[:n_h], w_ih[n_h : 2 * n_h], w_ih[2 * n_h :]
    W_hr, W_hz, W_hn = w_hh[:n_h], w_hh[n_h : 2 * n_h], w_hh[2 * n_h :]
    b_ir, b_iz, b_in = b_ih[:n_h], b_ih[n_h : 2 * n_h], b_ih[2 * n_h :]
    b_hr, b_hz, b_hn = b_hh[:n_h], b_hh[n_h : 2 * n_h], b_hh[2 * n_h :]
    r = sigmoid(W_ir @ x + b_ir + W_hr @ h + b_hr)
    z = sigmoid(W_iz @ x + b_iz + W_hz @ h + b_hz)
    n = torch.tanh(W_in @ x + b_in + r * (W_hn @ h + b_hn))
    return (1 - z) * n + z * h


def encode_one(p, tokens):
    """The states h_1^e .. h_L^e of one source given as its real tokens only."""
    h = torch.zeros(p["encoder.rnn.weight_hh_l0"].shape[1], dtype=torch.float64)
    states = []
    for token in tokens:
        x = p["encoder.embed.weight"][token]
        h = gru_cell(
            x,
            h,
            p["encoder.rnn.weight_ih_l0"],
            p["encoder.rnn.weight_hh_l0"],
            p["encoder.rnn.bias_ih_l0"],
            p["encoder.rnn.bias_hh_l0"],
        )
        states.append(h)
    return states


def attend_one(h_dec, states, W=None):
    """(context, alpha over the given states) from scores written as sums, softmax as a shifted exp."""
    scores = []
    for h_e in states:
        if W is None:
            scores.append(sum(h_dec[k] * h_e[k] for k in range(h_dec.shape[0])))
        else:
            scores.append(sum(h_dec[k] * W[k, l] * h_e[l] for k in range(W.shape[0]) for l in range(W.shape[1])))
    top = max(float(s.detach()) for s in scores)
    weights = [torch.exp(s - top) for s in scores]
    total = sum(weights)
    alpha = [w / total for w in weights]
    context = sum(a * h_e for a, h_e in zip(alpha, states))
    return context, alpha


def decoder_step_one(p, kind, y_prev, h_prev, states, c):
    """One decoder step for one example: (logits (V,), h (H,), alpha list or None)."""
    if kind == "none":
        c_i, alpha = c, None
    else:
        c_i, alpha = attend_one(h_prev, states, p["decoder.W"] if kind == "bilinear" else None)
    x = torch.cat([p["decoder.embed.weight"][y_prev], c_i])
    h = gru_cell(
        x,
        h_prev,
        p["decoder.cell.weight_ih"],
        p["decoder.cell.weight_hh"],
        p["decoder.cell.bias_ih"],
        p["decoder.cell.bias_hh"],
    )
    logits = p["decoder.out.weight"] @ h + p["decoder.out.bias"]
    return logits, h, alpha


def forward_one(p, kind, src_tokens, tgt_tokens):
    """Teacher-forced logits (T, V) of one example."""
    states = encode_one(p, src_tokens)
    c = h = states[-1]
    rows = []
    for y_prev in tgt_tokens:
        logits, h, _ = decoder_step_one(p, kind, y_prev, h, states, c)
        rows.append(logits)
    return torch.stack(rows)


def independent_forward(p, kind, src, lengths, tgt_in):
    """(B, T, V), each example alone over its real source tokens."""
    return torch.stack(
        [forward_one(p, kind, src[b, : lengths[b]].tolist(), tgt_in[b].tolist()) for b in range(src.shape[0])]
    )


def independent_loss(logits, targets, pad=0):
    """The sum over non-pad positions of log sum exp(logits) - the target's logit, divided by their count."""
    real = targets != pad
    rows, wanted = logits[real], targets[real]  # (N, V), (N,)
    nll = torch.logsumexp(rows, dim=-1) - rows[torch.arange(rows.shape[0]), wanted]
    return nll.sum() / int(real.sum())


# ---------------------------------------------------------------------------
# Data and models


def make_model(kind, seed=3, dtype=torch.float64, device="cpu", scale=0.6):
    """A Seq2Seq with every parameter random (W non-symmetric, biases non-zero)."""
    torch.manual_seed(0)
    model = s2s.Seq2Seq(VS, VT, E, H, attention=kind)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * scale)
    return model.to(dtype=dtype, device=device)


def params64(model):
    """The model's parameters as float64 CPU tensors (leaves of their own), by state_dict key."""
    return {k: v.detach().to("cpu", torch.float64).requires_grad_(True) for k, v in model.named_parameters()}


def batch(seed=5, B=4, S=6, T=5, junk=True):
    """Unsorted lengths, padded source positions holding junk ids (not 0), tgt_in with its own padding."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.tensor([3, 6, 1, 4][:B])
    src = torch.randint(1, VS, (B, S), generator=g)
    mask = torch.arange(S) < lengths[:, None]
    src = torch.where(mask, src, torch.randint(1, VS, (B, S), generator=g) if junk else torch.zeros_like(src))
    tgt_in = torch.randint(1, VT, (B, T), generator=g)
    tgt_in[0, 3:] = 0
    tgt_in[2, 2:] = 0
    return src, lengths, tgt_in


def probe(out):
    """A scalar that depends on every output element differently."""
    w = torch.linspace(-1, 1, out.numel(), dtype=out.dtype, device=out.device).view_as(out)
    return (out * w).sum() + (out**2).sum() * 0.1


def grads_or_zeros(scalar, leaves):
    """d scalar / d leaf for each leaf, zeros for a leaf the scalar does not depend on."""
    grads = torch.autograd.grad(scalar, leaves, allow_unused=True)
    return [torch.zeros_like(x) if g is None else g for g, x in zip(grads, leaves)]


def close(a, b, dtype):
    torch.testing.assert_close(a.detach().cpu().double(), b.detach().cpu().double(), **TOL[dtype])


# ---------------------------------------------------------------------------
# The file itself and the constructors


def test_reference_file_uses_no_forbidden_api():
    text = (ROOT / "reference" / "seq2seq" / "seq2seq.py").read_text()
    for word in FORBIDDEN:
        assert word not in text, f"seq2seq.py mentions {word}"


def test_attributes_and_state_dict_are_the_contract():
    model = s2s.Seq2Seq(VS, VT, E, H, attention="bilinear")
    assert isinstance(model.encoder.embed, nn.Embedding) and isinstance(model.encoder.rnn, nn.GRU)
    assert model.encoder.rnn.num_layers == 1 and not model.encoder.rnn.bidirectional and model.encoder.rnn.batch_first
    assert isinstance(model.decoder.cell, nn.GRUCell) and isinstance(model.decoder.out, nn.Linear)
    assert model.decoder.attention == "bilinear"
    shapes = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    assert shapes == {
        "encoder.embed.weight": (VS, E),
        "encoder.rnn.weight_ih_l0": (3 * H, E),
        "encoder.rnn.weight_hh_l0": (3 * H, H),
        "encoder.rnn.bias_ih_l0": (3 * H,),
        "encoder.rnn.bias_hh_l0": (3 * H,),
        "decoder.W": (H, H),
        "decoder.embed.weight": (VT, E),
        "decoder.cell.weight_ih": (3 * H, E + H),
        "decoder.cell.weight_hh": (3 * H, H),
        "decoder.cell.bias_ih": (3 * H,),
        "decoder.cell.bias_hh": (3 * H,),
        "decoder.out.weight": (VT, H),
        "decoder.out.bias": (VT,),
    }
    for kind in ("none", "dot"):
        model = s2s.Seq2Seq(VS, VT, E, H, attention=kind)
        assert model.decoder.W is None and "decoder.W" not in model.state_dict()


@pytest.mark.parametrize(
    "build",
    [
        lambda: s2s.Encoder(0, E, H),
        lambda: s2s.Encoder(VS, 0, H),
        lambda: s2s.Encoder(VS, E, 0),
        lambda: s2s.Decoder(0, E, H),
        lambda: s2s.Decoder(VT, E, -1),
        lambda: s2s.Decoder(VT, E, H, attention="additive"),
        lambda: s2s.Decoder(VT, E, H, attention="Dot"),
        lambda: s2s.Seq2Seq(VS, VT, E, H, attention=None),
    ],
)
def test_bad_sizes_and_attention_kinds_raise_value_error(build):
    with pytest.raises(ValueError):
        build()


def test_initialisation_is_pytorchs_default_drawn_in_the_contracts_order_and_equal_across_kinds():
    seed = 11
    built = {}
    for kind in KINDS:
        torch.manual_seed(seed)
        built[kind] = s2s.Seq2Seq(VS, VT, E, H, attention=kind).state_dict()
    torch.manual_seed(seed)
    by_hand = {}
    for prefix, module in (
        ("encoder.embed", nn.Embedding(VS, E)),
        ("encoder.rnn", nn.GRU(E, H, batch_first=True)),
        ("decoder.embed", nn.Embedding(VT, E)),
        ("decoder.cell", nn.GRUCell(E + H, H)),
        ("decoder.out", nn.Linear(H, VT)),
    ):
        by_hand.update({f"{prefix}.{k}": v for k, v in module.state_dict().items()})
    for kind, state in built.items():
        W = state.pop("decoder.W", None)
        if kind == "bilinear":
            assert torch.equal(W, torch.eye(H))
        assert state.keys() == by_hand.keys()
        for key in by_hand:
            assert torch.equal(state[key], by_hand[key]), (kind, key)
    # The seed matters: another seed gives other parameters.
    torch.manual_seed(seed + 1)
    other = s2s.Seq2Seq(VS, VT, E, H).state_dict()
    assert not torch.equal(other["decoder.out.weight"], by_hand["decoder.out.weight"])


# ---------------------------------------------------------------------------
# The independent GRU is PyTorch's GRU


def test_independent_gru_equations_equal_nn_gru_and_nn_grucell():
    torch.manual_seed(1)
    cell = nn.GRUCell(3, 5, dtype=torch.float64)
    rnn = nn.GRU(3, 5, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        for p in list(cell.parameters()) + list(rnn.parameters()):
            p.copy_(torch.randn_like(p))
        rnn.weight_ih_l0.copy_(cell.weight_ih)
        rnn.weight_hh_l0.copy_(cell.weight_hh)
        rnn.bias_ih_l0.copy_(cell.bias_ih)
        rnn.bias_hh_l0.copy_(cell.bias_hh)
    xs, h0 = torch.randn(6, 3, dtype=torch.float64), torch.randn(5, dtype=torch.float64)
    h, ours = h0, []
    for x in xs:
        h_prev, h = h, gru_cell(x, h, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)
        torch.testing.assert_close(h, cell(x[None], h_prev[None])[0], rtol=1e-12, atol=1e-13)
        ours.append(h)
    out, h_n = rnn(xs[None], h0[None, None])
    torch.testing.assert_close(torch.stack(ours), out[0], rtol=1e-12, atol=1e-13)
    torch.testing.assert_close(ours[-1], h_n[0, 0], rtol=1e-12, atol=1e-13)


# ---------------------------------------------------------------------------
# Encoder


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_encoder_states_at_real_positions_and_h_n_with_unsorted_lengths(dtype, device):
    model = make_model("dot", dtype=dtype, device=device)
    src, lengths, _ = batch()
    H_enc, h_n = model.encoder(src.to(device), lengths.to(device))
    assert H_enc.shape == (4, 6, H) and h_n.shape == (4, H) and H_enc.dtype == dtype and h_n.dtype == dtype
    assert torch.isfinite(H_enc).all()
    p = params64(model)
    for b, L in enumerate(lengths.tolist()):
        states = encode_one(p, src[b, :L].tolist())
        close(H_enc[b, :L], torch.stack(states), dtype)
        close(h_n[b], states[-1], dtype)
        close(h_n[b], H_enc[b, L - 1], dtype)


def test_encoder_padded_ids_change_nothing():
    model = make_model("dot")
    src, lengths, _ = batch(junk=True)
    zero_padded, _, _ = batch(junk=False)
    assert not torch.equal(src, zero_padded)
    far = src.clone()
    far[torch.arange(6) >= lengths[:, None]] = 10**6  # not even an id of the vocabulary
    H0, h0 = model.encoder(zero_padded, lengths)
    mask = torch.arange(6) < lengths[:, None]
    for padded in (src, far):
        H1, h1 = model.encoder(padded, lengths)
        assert torch.equal(H1[mask], H0[mask]) and torch.equal(h1, h0)


@pytest.mark.parametrize(
    "lengths",
    [torch.tensor([3, 6, 1]), torch.tensor([[3, 6, 1, 4]]), torch.tensor([3, 0, 1, 4]), torch.tensor([3, 7, 1, 4])],
)
def test_encoder_bad_lengths_raise_value_error(lengths):
    model = make_model("dot")
    src, _, _ = batch()
    with pytest.raises(ValueError):
        model.encoder(src, lengths)


# ---------------------------------------------------------------------------
# attention


MASK = torch.tensor(  # not prefixes: holes, a single position, everything
    [
        [True, False, True, True, False, True],
        [False, False, False, True, False, False],
        [True, True, True, True, True, True],
    ]
)


def attention_inputs(dtype, scale=1.0, seed=7):
    g = torch.Generator().manual_seed(seed)
    h_dec = torch.randn(3, H, generator=g, dtype=torch.float64) * scale
    H_enc = torch.randn(3, 6, H, generator=g, dtype=torch.float64) * scale
    signs = torch.where(torch.randn(3, 6, H, generator=g) > 0, 1.0, -1.0).double()
    H_enc = torch.where(MASK[:, :, None], H_enc, 1e30 * signs)  # huge finite junk where mask is False
    W = torch.randn(H, H, generator=g, dtype=torch.float64)
    assert not torch.allclose(W, W.T)
    return h_dec.to(dtype), H_enc.to(dtype), W.to(dtype)


def looped_attention(h_dec, H_enc, mask, W=None):
    contexts, alphas = [], []
    for b in range(h_dec.shape[0]):
        real = [j for j in range(mask.shape[1]) if mask[b, j]]
        context, alpha = attend_one(h_dec[b], [H_enc[b, j] for j in real], W)
        full = [torch.zeros((), dtype=h_dec.dtype)] * mask.shape[1]
        for j, a in zip(real, alpha):
            full[j] = a
        contexts.append(context)
        alphas.append(torch.stack(full))
    return torch.stack(contexts), torch.stack(alphas)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bilinear", [False, True])
def test_attention_against_loops_with_non_prefix_masks_and_huge_junk(bilinear, dtype, device):
    h_dec, H_enc, W = attention_inputs(dtype)
    context, alpha = s2s.attention(
        h_dec.to(device), H_enc.to(device), MASK.to(device), W.to(device) if bilinear else None
    )
    assert torch.isfinite(context).all() and torch.isfinite(alpha).all()
    assert torch.equal(alpha.cpu()[~MASK], torch.zeros(int((~MASK).sum()), dtype=dtype))
    close(alpha.sum(-1), torch.ones(3), dtype)
    h64, H64, W64 = attention_inputs(torch.float64)
    want_context, want_alpha = looped_attention(h64, H64, MASK, W64 if bilinear else None)
    close(context, want_context, dtype)
    close(alpha, want_alpha, dtype)


def test_bilinear_w_rows_meet_h_dec():
    h_dec, H_enc, W = attention_inputs(torch.float64)
    _, alpha = s2s.attention(h_dec, H_enc, MASK, W)
    _, transposed = s2s.attention(h_dec, H_enc, MASK, W.T.contiguous())
    _, want = looped_attention(h_dec, H_enc, MASK, W)
    close(alpha, want, torch.float64)
    assert not torch.allclose(transposed, want)  # the test can tell W from W^T


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bilinear", [False, True])
def test_attention_is_stable_for_scores_up_to_1e4(bilinear, dtype):
    h_dec, H_enc, W = attention_inputs(torch.float64, scale=40.0)
    W = W / W.abs().max() if bilinear else None
    scores = torch.einsum("bk,kl,bjl->bj", h_dec, W if bilinear else torch.eye(H, dtype=torch.float64), H_enc)
    real = scores[MASK].abs()
    assert 1e3 < real.max() <= 1e4  # scores of the size the contract names
    context, alpha = s2s.attention(h_dec.to(dtype), H_enc.to(dtype), MASK, None if W is None else W.to(dtype))
    assert torch.isfinite(context).all() and torch.isfinite(alpha).all()
    want_context, want_alpha = looped_attention(h_dec, H_enc, MASK, W)
    # float32 rounds a score of 1e4 by ~1e-3, which moves exp by as much: compare at that scale.
    tol = dict(rtol=1e-2, atol=1e-2) if dtype == torch.float32 else dict(rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(alpha.double(), want_alpha, **tol)
    torch.testing.assert_close(context.double(), want_context, **tol)


@pytest.mark.parametrize("bilinear", [False, True])
def test_attention_gradients_equal_the_loops(bilinear):
    h_dec, H_enc, W = attention_inputs(torch.float64)
    inputs = [h_dec.requires_grad_(True), H_enc.requires_grad_(True)] + ([W.requires_grad_(True)] if bilinear else [])
    context, alpha = s2s.attention(h_dec, H_enc, MASK, W if bilinear else None)
    ours = torch.autograd.grad(probe(context) + probe(alpha), inputs)
    want_context, want_alpha = looped_attention(h_dec, H_enc, MASK, W if bilinear else None)
    theirs = torch.autograd.grad(probe(want_context) + probe(want_alpha), inputs, allow_unused=True)
    for a, b in zip(ours, theirs):
        assert torch.isfinite(a).all()
        close(a, torch.zeros_like(a) if b is None else b, torch.float64)
    assert torch.equal(ours[1][~MASK], torch.zeros_like(ours[1][~MASK]))  # junk rows get no gradient


def test_attention_gradients_stay_finite_with_float32_junk_near_its_largest_value():
    h_dec, H_enc, W = attention_inputs(torch.float64)
    H_enc = torch.where(MASK[:, :, None], H_enc, 3e38 * torch.sign(H_enc)).float().requires_grad_(True)
    h_dec, W = h_dec.float().requires_grad_(True), W.float().requires_grad_(True)
    context, alpha = s2s.attention(h_dec, H_enc, MASK, W)
    grads = torch.autograd.grad(probe(context) * 10 + probe(alpha), (h_dec, H_enc, W))
    assert all(torch.isfinite(g).all() for g in grads)
    assert torch.equal(grads[1][~MASK], torch.zeros_like(grads[1][~MASK]))


def test_attention_gradcheck():
    g = torch.Generator().manual_seed(2)
    h_dec = torch.randn(3, 3, generator=g, dtype=torch.float64, requires_grad=True)
    H_enc = torch.randn(3, 4, 3, generator=g, dtype=torch.float64, requires_grad=True)
    W = torch.randn(3, 3, generator=g, dtype=torch.float64, requires_grad=True)
    mask = MASK[:, :4]
    assert torch.autograd.gradcheck(lambda h, He, w: s2s.attention(h, He, mask, w), (h_dec, H_enc, W))
    assert torch.autograd.gradcheck(lambda h, He: s2s.attention(h, He, mask), (h_dec, H_enc))


def test_attention_row_without_a_real_position_raises_value_error():
    h_dec, H_enc, W = attention_inputs(torch.float64)
    mask = MASK.clone()
    mask[1] = False
    with pytest.raises(ValueError):
        s2s.attention(h_dec, H_enc, mask)
    with pytest.raises(ValueError):
        s2s.attention(h_dec, H_enc, mask, W)


# ---------------------------------------------------------------------------
# Decoder.step and Seq2Seq.forward


@pytest.mark.parametrize("kind", KINDS)
def test_decoder_step_against_the_independent_step(kind):
    model = make_model(kind)
    h_prev, H_enc, _ = attention_inputs(torch.float64)
    c = torch.randn(3, H, generator=torch.Generator().manual_seed(9), dtype=torch.float64)
    y_prev = torch.tensor([4, 0, 8])
    logits, h, alpha = model.decoder.step(y_prev, h_prev, H_enc, MASK, c)
    assert logits.shape == (3, VT) and h.shape == (3, H)
    p = params64(model)
    for b in range(3):
        real = [j for j in range(6) if MASK[b, j]]
        want_logits, want_h, want_alpha = decoder_step_one(
            p, kind, y_prev[b], h_prev[b], [H_enc[b, j] for j in real], c[b]
        )
        close(logits[b], want_logits, torch.float64)
        close(h[b], want_h, torch.float64)
        if kind == "none":
            assert alpha is None
        else:
            close(alpha[b, real], torch.stack(want_alpha), torch.float64)
            assert torch.equal(alpha[b, ~MASK[b]], torch.zeros(6 - len(real), dtype=torch.float64))


@pytest.mark.parametrize("kind", KINDS)
def test_decoder_step_gradients_of_every_parameter_and_input(kind):
    model = make_model(kind)
    h_prev, H_enc, _ = attention_inputs(torch.float64)
    c = torch.randn(3, H, generator=torch.Generator().manual_seed(9), dtype=torch.float64)
    inputs = [x.requires_grad_(True) for x in (h_prev, H_enc, c)]
    named = dict(model.named_parameters())
    leaves = inputs + list(named.values())
    y_prev = torch.tensor([4, 0, 8])
    logits, h, alpha = model.decoder.step(y_prev, h_prev, H_enc, MASK, c)
    ours = grads_or_zeros(probe(logits) + probe(h) + (0 if alpha is None else probe(alpha)), leaves)
    rows = []
    for b in range(3):
        real = [j for j in range(6) if MASK[b, j]]
        want_logits, want_h, want_alpha = decoder_step_one(
            named, kind, y_prev[b], h_prev[b], [H_enc[b, j] for j in real], c[b]
        )
        full = [torch.zeros((), dtype=torch.float64)] * 6
        for j, a in zip(real, want_alpha or []):
            full[j] = a
        rows.append((want_logits, want_h, torch.stack(full)))
    want_logits, want_h, want_alpha = (torch.stack(parts) for parts in zip(*rows))
    scalar = probe(want_logits) + probe(want_h) + (0 if alpha is None else probe(want_alpha))
    theirs = grads_or_zeros(scalar, leaves)
    names = ["h_prev", "H_enc", "c", *named]
    for name, a, b in zip(names, ours, theirs):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-11, msg=name)
    # What each kind reads: "none" uses c and never H_enc; attention uses H_enc and never c.
    assert (ours[2].abs().sum() > 0) == (kind == "none") and (ours[1].abs().sum() > 0) == (kind != "none")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", KINDS)
def test_forward_against_the_independent_implementation(kind, dtype, device):
    model = make_model(kind, dtype=dtype, device=device)
    src, lengths, tgt_in = batch()
    logits = model(src.to(device), lengths.to(device), tgt_in.to(device))
    assert logits.shape == (4, 5, VT) and logits.dtype == dtype and logits.device.type == device
    close(logits, independent_forward(params64(model), kind, src, lengths, tgt_in), dtype)


@pytest.mark.parametrize("kind", KINDS)
def test_forward_is_a_loop_of_step_fed_the_true_tokens(kind):
    model = make_model(kind)
    src, lengths, tgt_in = batch()
    H_enc, c = model.encoder(src, lengths)
    mask = torch.arange(src.shape[1]) < lengths[:, None]
    h, rows = c, []
    for i in range(tgt_in.shape[1]):
        logits_i, h, _ = model.decoder.step(tgt_in[:, i], h, H_enc, mask, c)
        rows.append(logits_i)
    close(model(src, lengths, tgt_in), torch.stack(rows, dim=1), torch.float64)
    # Feeding the model's own predictions instead gives other logits: the comparison can tell.
    h, own, y = c, [], tgt_in[:, 0]
    for _ in range(tgt_in.shape[1]):
        logits_i, h, _ = model.decoder.step(y, h, H_enc, mask, c)
        own.append(logits_i)
        y = logits_i.argmax(-1)
    assert not torch.allclose(torch.stack(own, dim=1), torch.stack(rows, dim=1))


@pytest.mark.parametrize("kind", KINDS)
def test_a_batch_gives_each_example_its_result_alone_and_arguments_are_unchanged(kind):
    model = make_model(kind)
    src, lengths, tgt_in = batch()
    saved = src.clone(), lengths.clone(), tgt_in.clone()
    logits = model(src, lengths, tgt_in)
    assert all(torch.equal(a, b) for a, b in zip((src, lengths, tgt_in), saved))
    for b in range(4):
        L = int(lengths[b])
        alone = model(src[b : b + 1, :L], lengths[b : b + 1], tgt_in[b : b + 1])
        close(logits[b : b + 1], alone, torch.float64)


def test_none_equals_dot_when_every_source_has_length_1():
    src, _, tgt_in = batch()
    lengths = torch.ones(4, dtype=torch.long)
    dot = make_model("dot")
    none, bilinear = make_model("none"), make_model("bilinear")  # bilinear keeps its random W
    none.load_state_dict(dot.state_dict())
    bilinear.load_state_dict(dot.state_dict(), strict=False)
    close(none(src, lengths, tgt_in), dot(src, lengths, tgt_in), torch.float64)
    close(none(src, lengths, tgt_in), bilinear(src, lengths, tgt_in), torch.float64)
    lengths[1] = 2  # with two positions attention differs from the bottleneck
    assert not torch.allclose(none(src, lengths, tgt_in), dot(src, lengths, tgt_in))


@pytest.mark.parametrize("kind", KINDS)
def test_gradients_of_every_parameter_equal_the_independent_implementation(kind):
    model = make_model(kind)
    src, lengths, tgt_in = batch()
    named = dict(model.named_parameters())
    ours = torch.autograd.grad(probe(model(src, lengths, tgt_in)), list(named.values()))
    theirs = torch.autograd.grad(probe(independent_forward(named, kind, src, lengths, tgt_in)), list(named.values()))
    for name, a, b in zip(named, ours, theirs):
        assert a.abs().sum() > 0 or b.abs().sum() == 0, name
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-11, msg=name)


@pytest.mark.parametrize("kind", KINDS)
def test_gradcheck_of_forward_and_loss(kind):
    torch.manual_seed(0)
    model = s2s.Seq2Seq(5, 5, 2, 3, attention=kind).double()
    src = torch.tensor([[1, 2, 3], [4, 1, 0]])
    lengths = torch.tensor([3, 2])
    tgt_in, tgt_out = torch.tensor([[1, 2, 0], [3, 4, 2]]), torch.tensor([[2, 0, 0], [4, 2, 1]])
    names = [k for k, _ in model.named_parameters()]
    values = tuple(v.detach().clone().requires_grad_(True) for _, v in model.named_parameters())

    def loss(*values):
        logits = torch.func.functional_call(model, dict(zip(names, values)), (src, lengths, tgt_in))
        return s2s.masked_cross_entropy(logits, tgt_out)

    assert torch.autograd.gradcheck(loss, values, fast_mode=True)


# ---------------------------------------------------------------------------
# masked_cross_entropy


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("pad", [0, 3])
def test_masked_cross_entropy_is_one_mean_over_non_pad_positions(pad, dtype):
    g = torch.Generator().manual_seed(4)
    logits = torch.randn(3, 5, 6, generator=g, dtype=torch.float64) * 3
    targets = torch.randint(0, 6, (3, 5), generator=g)
    targets[targets == pad] = (pad + 1) % 6
    targets[0, 2:] = pad  # sequences with several pads, of different lengths
    targets[1, 4:] = pad
    targets[2, 1] = pad  # a pad inside a row too
    loss = s2s.masked_cross_entropy(logits.to(dtype, copy=True).requires_grad_(True), targets, pad=pad)
    want = independent_loss(logits, targets, pad)
    close(loss, want, dtype)
    per_sequence = sum(independent_loss(logits[b : b + 1], targets[b : b + 1], pad) for b in range(3)) / 3
    assert abs(float(per_sequence) - float(want)) > 1e-3  # a mean of per-sequence means would be caught


def test_masked_cross_entropy_gradient_stability_and_nan_at_pad():
    g = torch.Generator().manual_seed(5)
    logits = torch.randn(2, 4, 5, generator=g, dtype=torch.float64) * 1e4  # logits of 1e4
    targets = torch.tensor([[1, 2, 0, 0], [4, 0, 3, 0]])
    logits[0, 3] = float("nan")  # what a padded position holds does not matter
    logits[1, 1] = float("inf")
    logits.requires_grad_(True)
    loss = s2s.masked_cross_entropy(logits, targets)
    assert torch.isfinite(loss)
    (grad,) = torch.autograd.grad(loss, logits)
    assert torch.isfinite(grad).all() and torch.equal(grad[targets == 0], torch.zeros_like(grad[targets == 0]))
    clean = logits.detach().clone().requires_grad_(True)
    want = independent_loss(clean, targets)
    (want_grad,) = torch.autograd.grad(want, clean)
    close(loss, want, torch.float64)
    close(grad, want_grad, torch.float64)
    small = torch.randn(2, 3, 4, generator=g, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda z: s2s.masked_cross_entropy(z, torch.tensor([[1, 0, 2], [3, 3, 0]])), (small,)
    )


def test_masked_cross_entropy_without_a_real_target_raises_value_error():
    with pytest.raises(ValueError):
        s2s.masked_cross_entropy(torch.randn(2, 3, 4), torch.zeros(2, 3, dtype=torch.long))
    with pytest.raises(ValueError):
        s2s.masked_cross_entropy(torch.randn(2, 3, 4), torch.full((2, 3), 2), pad=2)


# ---------------------------------------------------------------------------
# greedy_decode


def looped_greedy(model, src, lengths, bos, eos, max_len):
    """Each example alone: the argmax of model(src, lengths, [bos, y_1 .. y_{i-1}])[:, -1], until eos or max_len."""
    result = []
    for b in range(src.shape[0]):
        prefix, chosen = [bos], []
        for _ in range(max_len):
            with torch.no_grad():
                logits = model(src[b : b + 1], lengths[b : b + 1], torch.tensor([prefix], device=src.device))
            token = int(logits[0, -1].argmax())
            if token == eos:
                break
            chosen.append(token)
            prefix.append(token)
        result.append(chosen)
    return result


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", KINDS)
def test_greedy_decode_against_a_loop_of_forward(kind, device):
    model = make_model(kind, scale=1.0, device=device)
    src, lengths, _ = batch()
    src, lengths = src.to(device), lengths.to(device)
    bos, max_len = 1, 6
    # eos: a token the model chooses in the middle of one example, so that one stops and others may not.
    never = looped_greedy(model, src, lengths, bos, -1, max_len)
    eos = never[0][2]
    before = copy.deepcopy(model.state_dict())
    got = s2s.greedy_decode(model, src, lengths, bos, eos, max_len)
    assert got == looped_greedy(model, src, lengths, bos, eos, max_len)
    assert all(type(t) is int for row in got for t in row)
    assert len(got[0]) < max_len and all(eos not in row for row in got)
    assert all(len(row) == max_len for row, full in zip(got, never) if eos not in full)
    assert all(torch.equal(v, before[k]) for k, v in model.state_dict().items())


def bias_only_model(bias, kind="dot"):
    """The logits are the output bias whatever the input: the answer is known."""
    model = make_model(kind)
    with torch.no_grad():
        model.decoder.out.weight.zero_()
        model.decoder.out.bias.copy_(torch.tensor(bias, dtype=torch.float64))
    return model


def test_greedy_decode_stop_rules_on_a_model_whose_answer_is_known():
    src, lengths, _ = batch()
    bias = [0.0] * VT
    bias[5] = 2.0
    model = bias_only_model(bias)
    assert s2s.greedy_decode(model, src, lengths, bos=1, eos=2, max_len=4) == [[5] * 4] * 4  # max_len
    assert s2s.greedy_decode(model, src, lengths, bos=1, eos=5, max_len=4) == [[]] * 4  # eos chosen first
    assert s2s.greedy_decode(model, src, lengths, bos=5, eos=5, max_len=3) == [[]] * 4  # chosen eos stops
    assert s2s.greedy_decode(model, src, lengths, bos=2, eos=2, max_len=3) == [[5] * 3] * 4  # a fed bos does not
    bias[3] = 2.0  # equal maxima at 3 and 5: the smallest id
    assert s2s.greedy_decode(bias_only_model(bias), src, lengths, bos=1, eos=8, max_len=2) == [[3, 3]] * 4


def test_greedy_decode_a_successor_decoder_stops_at_eos():
    """Logits peak at y_prev + 1 (the embedding carries the id): bos 0 gives 1, 2, .. up to eos."""
    model = make_model("none")
    with torch.no_grad():
        model.decoder.embed.weight.zero_()
        model.decoder.embed.weight[:, 0] = torch.arange(VT, dtype=torch.float64)  # e_y = (y, 0, 0)
        model.decoder.cell.weight_ih.zero_()
        model.decoder.cell.weight_hh.zero_()
        model.decoder.cell.bias_ih.zero_()
        model.decoder.cell.bias_hh.zero_()
        model.decoder.cell.bias_ih[H : 2 * H] = -50.0  # z = 0: h = n
        model.decoder.cell.weight_ih[2 * H, 0] = 0.1  # n_0 = tanh(0.1 y_prev)
        n = torch.tanh(0.1 * torch.arange(VT, dtype=torch.float64))
        # logit_k = -(n_0 - n(k - 1))^2 up to a constant: largest for k = y_prev + 1
        model.decoder.out.weight.zero_()
        model.decoder.out.weight[1:, 0] = 2 * n[:-1]
        model.decoder.out.bias.fill_(-1e3)
        model.decoder.out.bias[1:] = -(n[:-1] ** 2)
    src, lengths, _ = batch()
    assert s2s.greedy_decode(model, src, lengths, bos=0, eos=5, max_len=8) == [[1, 2, 3, 4]] * 4
    assert s2s.greedy_decode(model, src, lengths, bos=2, eos=5, max_len=2) == [[3, 4]] * 4


def test_greedy_decode_bad_max_len_raises_value_error():
    model = make_model("dot")
    src, lengths, _ = batch()
    for max_len in (0, -1):
        with pytest.raises(ValueError):
            s2s.greedy_decode(model, src, lengths, 1, 2, max_len)


def test_greedy_decode_leaves_no_gradient_and_keeps_autograd_on():
    model = make_model("bilinear")
    src, lengths, _ = batch()
    s2s.greedy_decode(model, src, lengths, 1, 2, 3)
    assert all(p.grad is None for p in model.parameters()) and torch.is_grad_enabled()


# ---------------------------------------------------------------------------
# train


def training_batches(device="cpu", dtype_seed=6):
    g = torch.Generator().manual_seed(dtype_seed)
    batches = []
    for _ in range(3):
        src, lengths, tgt_in = batch(seed=int(torch.randint(0, 1000, (1,), generator=g)))
        tgt_out = torch.roll(tgt_in, -1, dims=1)
        tgt_out[tgt_in == 0] = 0
        tgt_out[:, -1] = 2
        batches.append(tuple(t.to(device) for t in (src, lengths, tgt_in, tgt_out)))
    return batches


def hand_training(model, batches, epochs, lr, generator):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(epochs):
        for k in torch.randperm(len(batches), generator=generator).tolist():
            src, lengths, tgt_in, tgt_out = batches[k]
            optimizer.zero_grad()
            loss = independent_loss(model(src, lengths, tgt_in).cpu().double(), tgt_out.cpu())
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["none", "bilinear"])
def test_train_against_a_hand_loop(kind, dtype, device):
    batches = training_batches(device)
    model = make_model(kind, dtype=dtype, device=device, scale=0.3)
    twin = copy.deepcopy(model)
    g, g_twin = torch.Generator().manual_seed(8), torch.Generator().manual_seed(8)
    losses = s2s.train(model, batches, epochs=2, lr=0.01, generator=g)
    want = hand_training(twin, batches, 2, 0.01, g_twin)
    assert len(losses) == 6 and all(type(x) is float for x in losses)
    tol = TOL[dtype] if dtype == torch.float64 else dict(rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(torch.tensor(losses), torch.tensor(want), **tol)
    for (name, p), q in zip(model.named_parameters(), twin.parameters()):
        torch.testing.assert_close(p, q, **tol, msg=name)
        assert p.device.type == device
    assert torch.equal(g.get_state(), g_twin.get_state())
    # The drawn orders are not all the batches' own: a loop that ignores them would give other losses.
    g_orders = torch.Generator().manual_seed(8)
    assert any(torch.randperm(3, generator=g_orders).tolist() != [0, 1, 2] for _ in range(2))


def test_train_loss_falls_on_a_copy_task():
    g = torch.Generator().manual_seed(1)
    src = torch.randint(3, VS, (8, 4), generator=g)
    lengths = torch.full((8,), 4)
    tgt_out = torch.cat([src, torch.full((8, 1), 2)], dim=1)  # y_1 .. y_4, eos
    tgt_in = torch.cat([torch.full((8, 1), 1), src], dim=1)  # bos, y_1 .. y_4
    model = make_model("dot", scale=0.3)
    losses = s2s.train(model, [(src, lengths, tgt_in, tgt_out)], epochs=20, lr=0.1, generator=g)
    assert losses[-1] < 0.5 * losses[0]


def test_train_bad_arguments_raise_value_error():
    model, batches = make_model("dot"), training_batches()
    for kwargs in (dict(epochs=-1, lr=0.1), dict(epochs=1, lr=float("nan")), dict(epochs=1, lr=-1.0)):
        with pytest.raises(ValueError):
            s2s.train(model, batches, generator=torch.Generator(), **kwargs)
    with pytest.raises(ValueError):
        s2s.train(model, batches, epochs=1, lr=0.1, generator=None)
    assert math.isfinite(s2s.train(model, batches, epochs=1, lr=0.0, generator=torch.Generator())[0])

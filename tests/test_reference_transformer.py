"""The `transformer` reference against torch's own modules (weights copied), by hand, and the contract.

Every layer is compared in float32 and float64, forward and gradients, with
the torch implementation the students may not use; the training utilities
are compared with loops written out from the contract. CUDA variants skip
where no GPU is present. TF32 is off throughout so float32 on CUDA is float32.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from lmgrade.submissions.loader import load_files

ROOT = Path(__file__).resolve().parents[1]
FILES = ["layers.py", "model.py", "train.py"]
ref = load_files(ROOT / "reference" / "transformer", FILES)
layers, model_mod, train_mod = ref["layers"], ref["model"], ref["train"]

NO_CUDA = "CUDA is not available (torch.cuda.is_available() is False)"
CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason=NO_CUDA)
DEVICES = ["cpu", pytest.param("cuda", marks=CUDA)]
DTYPES = [torch.float32, torch.float64]
TOL = {torch.float32: dict(rtol=1e-4, atol=1e-5), torch.float64: dict(rtol=1e-10, atol=1e-12)}

FORBIDDEN = [
    "scaled_dot_product_attention",
    "MultiheadAttention",
    "nn.LayerNorm",
    "layer_norm",
    "nn.Transformer",
    "F.cross_entropy",
    "functional.cross_entropy",
    "CrossEntropyLoss",
    "nll_loss",
    "NLLLoss",
]


@pytest.fixture(autouse=True, scope="module")
def no_tf32():
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


@pytest.fixture(autouse=True)
def seeded():
    torch.manual_seed(0)


def close(a, b, dtype):
    torch.testing.assert_close(a, b, **TOL[dtype])


def randn(*shape, dtype=torch.float64, device="cpu", seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=dtype).to(device)


def randomize(module: nn.Module, seed: int = 2) -> nn.Module:
    """Every parameter random (LayerNorm's ones and zeros too), so copies are really tested."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype) * 0.5)
    return module


def grads(loss, tensors):
    return torch.autograd.grad(loss, tensors)


def probe(out):
    """A scalar that depends on every output element differently."""
    w = torch.linspace(-1, 1, out.numel(), dtype=out.dtype, device=out.device).view_as(out)
    return (out * w).sum() + (out**2).sum() * 0.1


def causal_mask(T, device="cpu"):
    return torch.ones(T, T, dtype=torch.bool, device=device).triu(1)  # True = not allowed


def torch_encoder_layer(block, d_model, n_heads, d_ff, pre_ln, dtype, device):
    """nn.TransformerEncoderLayer carrying the weights of a reference TransformerBlock."""
    layer = nn.TransformerEncoderLayer(
        d_model,
        n_heads,
        dim_feedforward=d_ff,
        dropout=0.0,
        activation="gelu",
        batch_first=True,
        norm_first=pre_ln,
        dtype=dtype,
        device=device,
    )
    attn = block.attn
    with torch.no_grad():
        layer.self_attn.in_proj_weight.copy_(torch.cat([attn.q_proj.weight, attn.k_proj.weight, attn.v_proj.weight]))
        layer.self_attn.in_proj_bias.copy_(torch.cat([attn.q_proj.bias, attn.k_proj.bias, attn.v_proj.bias]))
        layer.self_attn.out_proj.weight.copy_(attn.out_proj.weight)
        layer.self_attn.out_proj.bias.copy_(attn.out_proj.bias)
        layer.linear1.weight.copy_(block.ffn.fc1.weight)
        layer.linear1.bias.copy_(block.ffn.fc1.bias)
        layer.linear2.weight.copy_(block.ffn.fc2.weight)
        layer.linear2.bias.copy_(block.ffn.fc2.bias)
        for ours, theirs in ((block.ln1, layer.norm1), (block.ln2, layer.norm2)):
            theirs.weight.copy_(ours.weight)
            theirs.bias.copy_(ours.bias)
    return layer.train()  # training mode (dropout 0) keeps torch off its fused inference path


# ---------------------------------------------------------------------------
# The files themselves


def test_reference_files_use_no_forbidden_api():
    for name in FILES:
        text = (ROOT / "reference" / "transformer" / name).read_text()
        for word in FORBIDDEN:
            assert word not in text, f"{name} mentions {word}"


def test_init_attributes_and_state_dict_are_the_contract():
    lm = model_mod.TransformerLM(vocab_size=11, context_length=7, d_model=8, n_layers=2, n_heads=2, d_ff=12)
    shapes = {k: tuple(v.shape) for k, v in lm.state_dict().items()}
    assert shapes["tok_emb.weight"] == (11, 8) and shapes["pos_emb.weight"] == (7, 8)
    assert shapes["lm_head.weight"] == (11, 8) and "lm_head.bias" not in shapes
    assert shapes["ln_f.weight"] == (8,) and shapes["ln_f.bias"] == (8,)
    for i in range(2):
        for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
            assert shapes[f"blocks.{i}.attn.{proj}.weight"] == (8, 8)
            assert shapes[f"blocks.{i}.attn.{proj}.bias"] == (8,)
        assert shapes[f"blocks.{i}.ffn.fc1.weight"] == (12, 8) and shapes[f"blocks.{i}.ffn.fc2.weight"] == (8, 12)
        assert shapes[f"blocks.{i}.ln1.weight"] == (8,) and shapes[f"blocks.{i}.ln2.bias"] == (8,)
    assert len(shapes) == 3 + 2 + 2 * (8 + 4 + 4)
    assert lm.context_length == 7 and lm.blocks[0].attn.n_heads == 2 and lm.blocks[0].attn.d_head == 4
    assert lm.blocks[1].pre_ln is True and lm.blocks[0].ln1.eps == 1e-5
    assert torch.equal(lm.blocks[0].ln1.weight, torch.ones(8)) and torch.equal(lm.ln_f.bias, torch.zeros(8))

    post = model_mod.TransformerLM(11, 7, 8, 1, 2, 12, pre_ln=False)
    assert isinstance(post.ln_f, nn.Identity) and post.blocks[0].pre_ln is False
    assert not any(k.startswith("ln_f") for k in post.state_dict())


@pytest.mark.parametrize(
    "bad",
    [
        lambda: layers.CausalSelfAttention(10, 3),
        lambda: layers.CausalSelfAttention(0, 1),
        lambda: layers.CausalSelfAttention(8, 0),
        lambda: layers.LayerNorm(0),
        lambda: layers.LayerNorm(4, eps=-1e-5),
        lambda: layers.FeedForward(4, 0),
        lambda: layers.TransformerBlock(6, 4, 8),
        lambda: model_mod.TransformerLM(0, 4, 8, 1, 2, 8),
        lambda: model_mod.TransformerLM(5, 0, 8, 1, 2, 8),
        lambda: model_mod.TransformerLM(5, 4, 8, 0, 2, 8),
        lambda: model_mod.TransformerLM(5, 4, 8, 1, 2, -8),
        lambda: model_mod.TransformerLM(5, 4, 8, 1, 2, 8)(torch.zeros(1, 5, dtype=torch.long)),
        lambda: model_mod.TransformerLM(5, 4, 8, 1, 2, 8)(torch.full((1, 2), 5)),
        lambda: model_mod.TransformerLM(5, 4, 8, 1, 2, 8)(torch.zeros(1, 2)),
        lambda: model_mod.cross_entropy(torch.zeros(2, 3), torch.zeros(3, dtype=torch.long)),
        lambda: model_mod.cross_entropy(torch.zeros(2, 3), torch.tensor([0, 3])),
        lambda: train_mod.get_batch(torch.arange(4), 2, 4, torch.Generator(), "cpu"),
        lambda: train_mod.get_batch(torch.arange(9), 0, 4, torch.Generator(), "cpu"),
        lambda: train_mod.evaluate_perplexity(model_mod.TransformerLM(5, 4, 8, 1, 2, 8), torch.arange(1), 4, "cpu"),
        lambda: train_mod.generate(
            model_mod.TransformerLM(5, 4, 8, 1, 2, 8), torch.zeros(1, 1, dtype=torch.long), 3, temperature=0.0
        ),
        lambda: train_mod.generate(model_mod.TransformerLM(5, 4, 8, 1, 2, 8), torch.zeros(1, 1, dtype=torch.long), -1),
        lambda: train_mod.generate(model_mod.TransformerLM(5, 4, 8, 1, 2, 8), torch.zeros(2, 1, dtype=torch.long), 1),
    ],
)
def test_value_errors(bad):
    with pytest.raises(ValueError):
        bad()


# ---------------------------------------------------------------------------
# Layers against torch, forward and backward


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(6,), (3, 6), (2, 3, 6), (2, 1, 3, 6)])
def test_layernorm_matches_torch(shape, dtype, device):
    ln = randomize(layers.LayerNorm(6, eps=1e-3)).to(device, dtype)
    x = (randn(*shape, dtype=dtype, device=device) * 3 + 1).requires_grad_()
    ours = ln(x)
    theirs = F.layer_norm(x, (6,), ln.weight, ln.bias, eps=1e-3)
    close(ours, theirs, dtype)
    wrt = [x, ln.weight, ln.bias]
    for a, b in zip(grads(probe(ours), wrt), grads(probe(theirs), wrt)):
        close(a, b, dtype)


def test_layernorm_uses_population_variance_and_eps_inside_sqrt():
    ln = layers.LayerNorm(2, eps=1.0).double()
    out = ln(torch.tensor([[1.0, 3.0]], dtype=torch.float64))  # mean 2, population var 1
    close(out, torch.tensor([[-1.0, 1.0]], dtype=torch.float64) / math.sqrt(2.0), torch.float64)


def sdpa_reference(attn, x):
    """Same projections, torch's causal attention kernel, heads merged the same way."""
    B, T, d = x.shape
    split = lambda t: t.view(B, T, attn.n_heads, attn.d_head).transpose(1, 2)  # noqa: E731
    y = F.scaled_dot_product_attention(
        split(attn.q_proj(x)), split(attn.k_proj(x)), split(attn.v_proj(x)), is_causal=True
    )
    return attn.out_proj(y.transpose(1, 2).reshape(B, T, d))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("d_model,n_heads,T", [(8, 2, 5), (8, 1, 4), (6, 3, 1), (4, 4, 6), (1, 1, 3), (12, 4, 7)])
def test_attention_matches_sdpa(d_model, n_heads, T, dtype, device):
    attn = randomize(layers.CausalSelfAttention(d_model, n_heads)).to(device, dtype)
    x = randn(2, T, d_model, dtype=dtype, device=device).requires_grad_()
    ours, theirs = attn(x), sdpa_reference(attn, x)
    assert ours.shape == (2, T, d_model) and torch.isfinite(ours).all()
    close(ours, theirs, dtype)
    wrt = [x, *attn.parameters()]
    for a, b in zip(grads(probe(ours), wrt), grads(probe(theirs), wrt)):
        close(a, b, dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("d_model,n_heads", [(8, 2), (6, 1), (4, 4)])
def test_attention_matches_multihead_attention(d_model, n_heads, dtype, device):
    attn = randomize(layers.CausalSelfAttention(d_model, n_heads)).to(device, dtype)
    mha = nn.MultiheadAttention(d_model, n_heads, dropout=0.0, batch_first=True, dtype=dtype, device=device)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([attn.q_proj.weight, attn.k_proj.weight, attn.v_proj.weight]))
        mha.in_proj_bias.copy_(torch.cat([attn.q_proj.bias, attn.k_proj.bias, attn.v_proj.bias]))
        mha.out_proj.weight.copy_(attn.out_proj.weight)
        mha.out_proj.bias.copy_(attn.out_proj.bias)
    x = randn(3, 5, d_model, dtype=dtype, device=device).requires_grad_()
    ours = attn(x)
    theirs, _ = mha(x, x, x, attn_mask=causal_mask(5, device), need_weights=False)
    close(ours, theirs, dtype)
    (gx_ours,) = grads(probe(ours), [x])
    (gx_theirs,) = grads(probe(theirs), [x])
    close(gx_ours, gx_theirs, dtype)


def test_attention_is_causal_and_heads_use_their_own_features():
    attn = randomize(layers.CausalSelfAttention(8, 2)).double()
    x = randn(1, 6, 8)
    y = attn(x)
    x2 = x.clone()
    x2[:, 4:] += 10.0  # change the future only
    close(attn(x2)[:, :4], y[:, :4], torch.float64)
    # Once out_proj ignores the concatenated features [4, 8), the values of
    # head 1 (v_proj rows [4, 8)) must not matter any more.
    with torch.no_grad():
        attn.out_proj.weight[:, 4:] = 0.0
    before = attn(x)
    with torch.no_grad():
        attn.v_proj.weight[4:] = 0.0
        attn.v_proj.bias[4:] = 0.0
    close(attn(x), before, torch.float64)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_feedforward_matches_exact_gelu(dtype, device):
    ffn = randomize(layers.FeedForward(6, 10)).to(device, dtype)
    x = (randn(2, 3, 6, dtype=dtype, device=device) * 2).requires_grad_()
    ours = ffn(x)
    theirs = F.linear(F.gelu(F.linear(x, ffn.fc1.weight, ffn.fc1.bias)), ffn.fc2.weight, ffn.fc2.bias)
    close(ours, theirs, dtype)
    tanh_gelu = F.linear(
        F.gelu(F.linear(x, ffn.fc1.weight, ffn.fc1.bias), approximate="tanh"), ffn.fc2.weight, ffn.fc2.bias
    )
    if dtype == torch.float64:
        assert not torch.allclose(ours, tanh_gelu, rtol=0, atol=1e-9)
    wrt = [x, *ffn.parameters()]
    for a, b in zip(grads(probe(ours), wrt), grads(probe(theirs), wrt)):
        close(a, b, dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("pre_ln", [True, False])
@pytest.mark.parametrize("d_model,n_heads,d_ff,T", [(8, 2, 16, 5), (4, 4, 6, 3), (6, 1, 5, 1)])
def test_block_matches_transformer_encoder_layer(d_model, n_heads, d_ff, T, pre_ln, dtype, device):
    block = randomize(layers.TransformerBlock(d_model, n_heads, d_ff, pre_ln=pre_ln)).to(device, dtype)
    layer = torch_encoder_layer(block, d_model, n_heads, d_ff, pre_ln, dtype, device)
    x = randn(2, T, d_model, dtype=dtype, device=device).requires_grad_()
    ours = block(x)
    theirs = layer(x, src_mask=causal_mask(T, device), is_causal=True)
    close(ours, theirs, dtype)
    gx = [grads(probe(out), [x])[0] for out in (ours, theirs)]
    close(gx[0], gx[1], dtype)
    # Parameter gradients, matched through the same copy.
    g_ours = dict(zip([n for n, _ in block.named_parameters()], grads(probe(block(x)), list(block.parameters()))))
    out = layer(x, src_mask=causal_mask(T, device), is_causal=True)
    g_theirs = dict(zip([n for n, _ in layer.named_parameters()], grads(probe(out), list(layer.parameters()))))
    in_proj = torch.cat([g_ours[f"attn.{p}_proj.weight"] for p in "qkv"])
    close(in_proj, g_theirs["self_attn.in_proj_weight"], dtype)
    close(torch.cat([g_ours[f"attn.{p}_proj.bias"] for p in "qkv"]), g_theirs["self_attn.in_proj_bias"], dtype)
    for ours_name, theirs_name in [
        ("attn.out_proj.weight", "self_attn.out_proj.weight"),
        ("ffn.fc1.weight", "linear1.weight"),
        ("ffn.fc2.bias", "linear2.bias"),
        ("ln1.weight", "norm1.weight"),
        ("ln2.bias", "norm2.bias"),
    ]:
        close(g_ours[ours_name], g_theirs[theirs_name], dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("pre_ln", [True, False])
def test_model_matches_a_torch_built_model(pre_ln, dtype, device):
    V, C, d, L, H, d_ff = 13, 6, 8, 2, 2, 12
    lm = randomize(model_mod.TransformerLM(V, C, d, L, H, d_ff, pre_ln=pre_ln)).to(device, dtype)
    encoder = [torch_encoder_layer(b, d, H, d_ff, pre_ln, dtype, device) for b in lm.blocks]
    idx = torch.randint(0, V, (3, 4), generator=torch.Generator().manual_seed(5)).to(device)  # T < context_length

    x = lm.tok_emb.weight[idx] + lm.pos_emb.weight[:4]
    for layer in encoder:
        x = layer(x, src_mask=causal_mask(4, device), is_causal=True)
    if pre_ln:
        x = F.layer_norm(x, (d,), lm.ln_f.weight, lm.ln_f.bias, eps=1e-5)
    theirs = x @ lm.lm_head.weight.T

    ours = lm(idx)
    assert ours.shape == (3, 4, V) and ours.dtype == dtype and ours.device.type == device
    close(ours, theirs, dtype)
    (g_ours,) = grads(probe(ours), [lm.tok_emb.weight])
    (g_theirs,) = grads(probe(theirs), [lm.tok_emb.weight])
    close(g_ours, g_theirs, dtype)


def test_model_is_causal_and_accepts_any_length_up_to_context():
    lm = model_mod.TransformerLM(9, 5, 8, 2, 2, 16).double()
    idx = torch.tensor([[1, 2, 3, 4, 5], [8, 7, 6, 5, 4]])
    full = lm(idx)
    for T in range(1, 6):
        close(lm(idx[:, :T]), full[:, :T], torch.float64)
    changed = idx.clone()
    changed[:, 3:] = 0
    close(lm(changed)[:, :3], full[:, :3], torch.float64)


# ---------------------------------------------------------------------------
# cross_entropy


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lead", [(), (5,), (2, 3), (2, 3, 4)])
def test_cross_entropy_matches_torch(lead, dtype, device):
    V = 7
    logits = (randn(*lead, V, dtype=dtype, device=device) * 4).requires_grad_()
    targets = torch.randint(0, V, lead, generator=torch.Generator().manual_seed(3)).to(device)
    ours = model_mod.cross_entropy(logits, targets)
    theirs = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1))
    assert ours.dim() == 0
    close(ours, theirs, dtype)
    close(grads(ours, [logits])[0], grads(theirs, [logits])[0], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cross_entropy_is_stable_for_huge_logits_and_ln_v_for_uniform(dtype):
    logits = torch.tensor([[1e4, 0.0, -1e4], [0.0, 1e4, 1e4], [-1e4, -1e4, -1e4]], dtype=dtype, requires_grad=True)
    targets = torch.tensor([1, 2, 0])
    ours = model_mod.cross_entropy(logits, targets)
    theirs = F.cross_entropy(logits, targets)
    assert torch.isfinite(ours)
    close(ours, theirs, dtype)
    close(grads(ours, [logits])[0], grads(theirs, [logits])[0], dtype)
    V = 50
    uniform = model_mod.cross_entropy(torch.full((4, 3, V), 2.5, dtype=dtype), torch.zeros(4, 3, dtype=torch.long))
    close(uniform, torch.tensor(math.log(V), dtype=dtype), dtype)


# ---------------------------------------------------------------------------
# Training utilities


@pytest.mark.parametrize("device", DEVICES)
def test_get_batch_draws_the_contract_starts(device):
    data = torch.arange(100, 140)  # value = position, so x shows where it was cut
    B, T = 6, 5
    x, y = train_mod.get_batch(data, B, T, torch.Generator().manual_seed(11), device)
    starts = torch.randint(0, len(data) - T, (B,), generator=torch.Generator().manual_seed(11))
    assert x.shape == y.shape == (B, T) and x.dtype == y.dtype == torch.long
    assert x.device.type == y.device.type == device
    for b, s in enumerate(starts.tolist()):
        assert torch.equal(x[b].cpu(), data[s : s + T]) and torch.equal(y[b].cpu(), data[s + 1 : s + T + 1])
    # The generator is advanced exactly as by the contract's one randint call.
    g1, g2 = torch.Generator().manual_seed(4), torch.Generator().manual_seed(4)
    train_mod.get_batch(data, B, T, g1, "cpu")
    torch.randint(0, len(data) - T, (B,), generator=g2)
    assert torch.equal(torch.rand(3, generator=g1), torch.rand(3, generator=g2))


def test_get_batch_never_reads_past_the_end():
    N, T = 12, 4
    data = torch.arange(N)
    g = torch.Generator().manual_seed(0)
    seen = set()
    for _ in range(30):
        x, y = train_mod.get_batch(data, 8, T, g, "cpu")
        assert torch.equal(y, x + 1) and int(y.max()) <= N - 1
        seen.update(x[:, 0].tolist())
    assert seen == set(range(N - T))  # every start from 0 to N - T - 1, the last one included
    x, y = train_mod.get_batch(torch.arange(T + 1), 3, T, g, "cpu")  # one possible window
    assert torch.equal(x, torch.arange(T).repeat(3, 1)) and torch.equal(y, x + 1)


def tiny_lm(dtype=torch.float32, **kw):
    args = dict(vocab_size=5, context_length=8, d_model=16, n_layers=1, n_heads=2, d_ff=32)
    return model_mod.TransformerLM(**{**args, **kw}).to(dtype)


@pytest.mark.parametrize("pre_ln", [True, False])
def test_train_loss_decreases_on_a_repeated_sequence(pre_ln):
    lm = tiny_lm(pre_ln=pre_ln)
    data = torch.tensor([0, 1, 2, 3, 4] * 20)
    losses = train_mod.train(
        lm, data, steps=40, batch_size=8, lr=1e-2, device="cpu", generator=torch.Generator().manual_seed(0)
    )
    assert len(losses) == 40 and all(type(v) is float for v in losses)
    assert sum(losses[-5:]) / 5 < 0.3 * losses[0]
    assert next(lm.parameters()).device.type == "cpu"


def test_train_is_the_contract_loop():
    data = torch.randint(0, 5, (60,), generator=torch.Generator().manual_seed(2))
    lm = tiny_lm(torch.float64)
    mirror = copy.deepcopy(lm)
    losses = train_mod.train(
        lm, data, steps=5, batch_size=4, lr=3e-3, device="cpu", generator=torch.Generator().manual_seed(9)
    )
    g = torch.Generator().manual_seed(9)
    opt = torch.optim.AdamW(mirror.parameters(), lr=3e-3)
    expected = []
    for _ in range(5):
        starts = torch.randint(0, len(data) - 8, (4,), generator=g)
        x = torch.stack([data[s : s + 8] for s in starts])
        y = torch.stack([data[s + 1 : s + 9] for s in starts])
        loss = F.cross_entropy(mirror(x).reshape(-1, 5), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        expected.append(loss.item())
    assert losses == pytest.approx(expected, rel=1e-10)
    for a, b in zip(lm.parameters(), mirror.parameters()):
        close(a, b, torch.float64)


def hand_perplexity(lm, data, context_length):
    nll, count = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(data) - 1, context_length):
            x = data[start : start + context_length]
            y = data[start + 1 : start + context_length + 1]
            x = x[: len(y)]
            logp = torch.log_softmax(lm(x[None].to(next(lm.parameters()).device))[0].double().cpu(), dim=-1)
            nll -= logp[torch.arange(len(y)), y].sum().item()
            count += len(y)
    return math.exp(nll / count)


@pytest.mark.parametrize("n_tokens,context_length", [(23, 5), (21, 5), (2, 8), (30, 8), (9, 1)])
def test_evaluate_perplexity_against_a_hand_loop(n_tokens, context_length):
    lm = randomize(tiny_lm(torch.float64), seed=6)
    data = torch.randint(0, 5, (n_tokens,), generator=torch.Generator().manual_seed(n_tokens))
    ppl = train_mod.evaluate_perplexity(lm, data, context_length, "cpu")
    assert type(ppl) is float
    assert ppl == pytest.approx(hand_perplexity(lm, data, context_length), rel=1e-10)
    lm.train()
    train_mod.evaluate_perplexity(lm, data, context_length, "cpu")
    assert lm.training  # mode given back


def test_evaluate_perplexity_windows_do_not_overlap():
    """With windows of 1 every prediction sees one token: the value differs from one long window."""
    lm = randomize(tiny_lm(torch.float64), seed=7)
    data = torch.randint(0, 5, (9,), generator=torch.Generator().manual_seed(1))
    one_each = train_mod.evaluate_perplexity(lm, data, 1, "cpu")
    whole = train_mod.evaluate_perplexity(lm, data, 8, "cpu")
    assert one_each != pytest.approx(whole, rel=1e-6)
    assert whole == pytest.approx(math.exp(model_mod.cross_entropy(lm(data[:-1][None]), data[1:][None]).item()))


def test_evaluate_perplexity_of_uniform_model_is_vocab_size():
    lm = tiny_lm(torch.float64)
    with torch.no_grad():
        lm.lm_head.weight.zero_()
    assert train_mod.evaluate_perplexity(lm, torch.arange(5).repeat(4), 3, "cpu") == pytest.approx(5.0)


def hand_generate(lm, idx, max_new_tokens, temperature, generator):
    for _ in range(max_new_tokens):
        logits = lm(idx[:, -lm.context_length :])[:, -1, :] / temperature
        nxt = torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=generator)
        idx = torch.cat([idx, nxt], dim=1)
    return idx


@pytest.mark.parametrize("temperature", [1.0, 0.7, 2.5])
def test_generate_is_reproducible_and_crops_to_the_context(temperature):
    lm = randomize(tiny_lm(torch.float64, context_length=4), seed=8)
    prompt = torch.tensor([[1, 2, 3]])
    n_new = 9  # well past context_length
    out = train_mod.generate(lm, prompt, n_new, temperature=temperature, generator=torch.Generator().manual_seed(3))
    again = train_mod.generate(lm, prompt, n_new, temperature=temperature, generator=torch.Generator().manual_seed(3))
    assert out.shape == (1, 3 + n_new) and out.dtype == torch.long
    assert torch.equal(out, again) and torch.equal(out[:, :3], prompt)
    assert torch.equal(prompt, torch.tensor([[1, 2, 3]]))  # argument untouched
    with torch.no_grad():
        expected = hand_generate(lm, prompt, n_new, temperature, torch.Generator().manual_seed(3))
    assert torch.equal(out, expected)
    assert int(out.min()) >= 0 and int(out.max()) < 5


def test_generate_at_low_temperature_is_greedy_and_zero_tokens_is_the_prompt():
    lm = randomize(tiny_lm(torch.float64), seed=9)
    prompt = torch.tensor([[4]])
    out = train_mod.generate(lm, prompt, 6, temperature=1e-4, generator=torch.Generator().manual_seed(0))
    greedy = prompt
    with torch.no_grad():
        for _ in range(6):
            greedy = torch.cat([greedy, lm(greedy[:, -8:])[:, -1].argmax(-1, keepdim=True)], dim=1)
    assert torch.equal(out, greedy)
    assert torch.equal(train_mod.generate(lm, prompt, 0), prompt)


# ---------------------------------------------------------------------------
# CUDA: the training utilities with a CPU generator and a model on the GPU


@CUDA
def test_train_evaluate_generate_on_cuda_with_a_cpu_generator():
    data = torch.tensor([0, 1, 2, 3, 4] * 20)
    lm = tiny_lm()
    losses = train_mod.train(
        lm, data, steps=30, batch_size=8, lr=1e-2, device="cuda", generator=torch.Generator().manual_seed(0)
    )
    assert next(lm.parameters()).device.type == "cuda"
    assert sum(losses[-5:]) / 5 < 0.5 * losses[0]
    ppl = train_mod.evaluate_perplexity(lm, data, 8, "cuda")
    assert ppl == pytest.approx(hand_perplexity(lm, data, 8), rel=1e-4)
    out = train_mod.generate(lm, torch.tensor([[0]]), 10, generator=torch.Generator().manual_seed(1))
    again = train_mod.generate(lm, torch.tensor([[0]]), 10, generator=torch.Generator().manual_seed(1))
    assert out.shape == (1, 11) and torch.equal(out, again)


@CUDA
def test_get_batch_and_generate_with_a_cuda_generator():
    data = torch.arange(50, device="cuda")
    x, y = train_mod.get_batch(data, 4, 6, torch.Generator("cuda").manual_seed(2), "cuda")
    starts = torch.randint(0, 44, (4,), generator=torch.Generator("cuda").manual_seed(2), device="cuda")
    assert torch.equal(x[:, 0], starts) and torch.equal(y, x + 1) and x.device.type == "cuda"
    lm = tiny_lm(torch.float64).cuda()
    prompt = torch.tensor([[1, 2]], device="cuda")
    out = train_mod.generate(lm, prompt, 12, generator=torch.Generator("cuda").manual_seed(5))
    with torch.no_grad():
        expected = hand_generate(lm, prompt, 12, 1.0, torch.Generator("cuda").manual_seed(5))
    assert torch.equal(out, expected) and out.device.type == "cuda"


# ---------------------------------------------------------------------------
# The positions variant: a sinusoidal table, rotary embeddings (RoPE)


def test_sinusoidal_table_is_the_closed_form_in_a_buffer_outside_state_dict():
    C, d = 9, 6
    lm = model_mod.TransformerLM(11, C, d, 1, 2, 12, positions="sinusoidal")
    table = lm.pos_enc
    for t in range(C):
        for i in range(d // 2):
            angle = t / 10000 ** (2 * i / d)
            assert float(table[t, 2 * i]) == pytest.approx(math.sin(angle), abs=1e-7)
            assert float(table[t, 2 * i + 1]) == pytest.approx(math.cos(angle), abs=1e-7)
    assert "pos_enc" in dict(lm.named_buffers()) and "pos_enc" not in dict(lm.named_parameters())
    assert not any(k.startswith("pos_") for k in lm.state_dict())
    assert lm.double().pos_enc.dtype == torch.float64


@pytest.mark.parametrize("dtype", DTYPES)
def test_sinusoidal_model_adds_the_table_where_learned_adds_pos_emb(dtype):
    V, C, d = 13, 6, 8
    sinusoidal = randomize(model_mod.TransformerLM(V, C, d, 2, 2, 12, positions="sinusoidal")).to(dtype)
    learned = model_mod.TransformerLM(V, C, d, 2, 2, 12).to(dtype)
    state = {**sinusoidal.state_dict(), "pos_emb.weight": sinusoidal.pos_enc}
    learned.load_state_dict(state)
    idx = torch.randint(0, V, (3, 4), generator=torch.Generator().manual_seed(5))
    close(sinusoidal(idx), learned(idx), dtype)


def rope_by_complex_numbers(x):
    """(..., T, d_head): each pair read as x[2i] + i x[2i+1], times e^(i t theta_i), theta_i = 10000^(-2i/d_head)."""
    T, d_head = x.shape[-2], x.shape[-1]
    theta = 10000.0 ** (-torch.arange(0, d_head, 2, dtype=torch.float64) / d_head)
    turn = torch.polar(
        torch.ones(T, d_head // 2, dtype=torch.float64), torch.arange(T, dtype=torch.float64)[:, None] * theta
    )
    z = torch.view_as_complex(x.double().reshape(*x.shape[:-1], d_head // 2, 2).contiguous())
    return torch.view_as_real(z * turn).reshape(x.shape).to(x.dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 2), (5, 2), (7, 8), (2, 3, 6, 4), (2, 40, 16)])
def test_rope_is_the_complex_rotation(shape, dtype):
    x = randn(*shape, dtype=dtype)
    close(layers.rotate(x), rope_by_complex_numbers(x), dtype)


def test_rope_scores_depend_only_on_the_relative_position():
    q, k = randn(2, 3, 6, 8, seed=3), randn(2, 3, 6, 8, seed=4)
    scores = layers.rotate(q) @ layers.rotate(k).transpose(-2, -1)
    for shift in (1, 5, 30):
        # The same sequence after `shift` other positions: the scores among its own positions are unchanged.
        before_q, before_k = randn(2, 3, shift, 8, seed=5), randn(2, 3, shift, 8, seed=6)
        shifted = layers.rotate(torch.cat([before_q, q], 2)) @ layers.rotate(torch.cat([before_k, k], 2)).transpose(
            -2, -1
        )
        close(shifted[..., shift:, shift:], scores, torch.float64)
    # ... and they do depend on it: unrotated scores differ.
    assert not torch.allclose(scores, q @ k.transpose(-2, -1))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("d_model,n_heads,T", [(8, 2, 5), (8, 1, 4), (12, 3, 6), (4, 2, 1), (2, 1, 3)])
def test_rope_attention_rotates_q_and_k_only(d_model, n_heads, T, dtype):
    attn = randomize(layers.CausalSelfAttention(d_model, n_heads, rope=True)).to(dtype)
    x = randn(2, T, d_model, dtype=dtype).requires_grad_(True)
    d_head = d_model // n_heads

    def heads(t):
        return t.view(2, T, n_heads, d_head).transpose(1, 2)

    q, k, v = (
        rope_by_complex_numbers(heads(attn.q_proj(x))),
        rope_by_complex_numbers(heads(attn.k_proj(x))),
        heads(attn.v_proj(x)),
    )
    theirs = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    theirs = attn.out_proj(theirs.transpose(1, 2).reshape(2, T, d_model))
    ours = attn(x)
    close(ours, theirs, dtype)
    close(*(grads(probe(out), [x])[0] for out in (ours, theirs)), dtype)
    if T == 1:  # position 0 turns nothing: RoPE or not, the same output
        plain = layers.CausalSelfAttention(d_model, n_heads).to(dtype)
        plain.load_state_dict(attn.state_dict())
        close(plain(x), ours, dtype)


@pytest.mark.parametrize("positions", ["sinusoidal", "rope"])
def test_positions_variants_build_what_the_contract_says(positions):
    lm = model_mod.TransformerLM(11, 7, 8, 2, 2, 12, positions=positions)
    keys = set(lm.state_dict())
    assert "pos_emb.weight" not in keys and not hasattr(lm, "pos_emb")
    assert keys == set(model_mod.TransformerLM(11, 7, 8, 2, 2, 12).state_dict()) - {"pos_emb.weight"}
    assert all(block.attn.rope is (positions == "rope") for block in lm.blocks)
    assert hasattr(lm, "pos_enc") is (positions == "sinusoidal")
    block = layers.TransformerBlock(8, 2, 12, rope=True)
    assert block.attn.rope is True and block.pre_ln is True


@pytest.mark.parametrize(
    "bad",
    [
        lambda: model_mod.TransformerLM(5, 4, 7, 1, 1, 8, positions="sinusoidal"),
        lambda: model_mod.TransformerLM(5, 4, 6, 1, 2, 8, positions="rope"),
        lambda: model_mod.TransformerLM(5, 4, 8, 1, 2, 8, positions="absolute"),
        lambda: layers.CausalSelfAttention(6, 2, rope=True),
        lambda: layers.CausalSelfAttention(3, 3, rope=True),
        lambda: layers.TransformerBlock(10, 2, 8, rope=True),
    ],
)
def test_positions_value_errors(bad):
    with pytest.raises(ValueError):
        bad()


def test_odd_sizes_are_fine_where_no_pair_is_needed():
    model_mod.TransformerLM(5, 4, 7, 1, 1, 8)  # learned: any d_model
    model_mod.TransformerLM(5, 4, 6, 1, 3, 8, positions="sinusoidal")  # d_head 2, d_model even
    layers.CausalSelfAttention(6, 2)  # no RoPE: d_head 3 is fine


@pytest.mark.parametrize("positions", ["sinusoidal", "rope"])
def test_positions_variants_train_evaluate_and_generate(positions):
    lm = tiny_lm(positions=positions)
    data = torch.tensor([0, 1, 2, 3, 4] * 20)
    losses = train_mod.train(
        lm, data, steps=40, batch_size=8, lr=1e-2, device="cpu", generator=torch.Generator().manual_seed(0)
    )
    assert sum(losses[-5:]) / 5 < 0.3 * losses[0]
    assert train_mod.evaluate_perplexity(lm, data, 8, "cpu") == pytest.approx(hand_perplexity(lm, data, 8), rel=1e-6)
    out = train_mod.generate(lm, torch.tensor([[0]]), 12, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = hand_generate(lm, torch.tensor([[0]]), 12, 1.0, torch.Generator().manual_seed(1))
    assert torch.equal(out, expected)

"""Encoder-decoder RNN: the encoder runs the GRU on each example alone, the decoder keeps
every state and logit in lists and stacks them at the end, the loss has its own log-sum-exp."""

import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F


def _debug_shapes(**tensors):
    # left in from debugging: returns "name=(shape) ..." for quick prints
    return " ".join(f"{k}={tuple(v.shape)}" for k, v in tensors.items() if v is not None)


def _validate_sizes(**sizes):
    for name, value in sizes.items():
        if value < 1:
            raise ValueError(f"{name}={value}: sizes must be positive")


def _validate_lengths(src, src_lengths):
    if src.ndim != 2:
        raise ValueError(f"src should be (B, S), got {_debug_shapes(src=src)}")
    B, S = src.shape
    if src_lengths.ndim != 1 or src_lengths.shape[0] != B:
        raise ValueError(f"src_lengths should be ({B},), got {_debug_shapes(src_lengths=src_lengths)}")
    lo, hi = int(src_lengths.min()), int(src_lengths.max())
    if lo < 1 or hi > S:
        raise ValueError(f"src_lengths must be in [1, {S}], got min {lo} max {hi}")


def _mask_from_lengths(src_lengths, S):
    return torch.arange(S, device=src_lengths.device)[None, :] < src_lengths[:, None]


class Encoder(nn.Module):
    def __init__(self, src_vocab_size, embed_dim, hidden_size):
        super().__init__()
        _validate_sizes(src_vocab_size=src_vocab_size, embed_dim=embed_dim, hidden_size=hidden_size)
        self.embed = nn.Embedding(src_vocab_size, embed_dim)
        self.rnn = nn.GRU(embed_dim, hidden_size, batch_first=True)

    def forward(self, src, src_lengths):
        _validate_lengths(src, src_lengths)
        B, S = src.shape
        rows, finals = [], []
        for b in range(B):
            L = int(src_lengths[b])
            x_b = self.embed(src[b, :L]).unsqueeze(0)  # only the real tokens: padding never read
            out_b, h_b = self.rnn(x_b)  # (1, L, H), (1, 1, H), from a zero state
            out_b = out_b[0]
            if L < S:
                out_b = torch.cat([out_b, out_b.new_zeros(S - L, out_b.shape[1])], dim=0)
            rows.append(out_b)
            finals.append(h_b[0, 0])
        return torch.stack(rows, dim=0), torch.stack(finals, dim=0)


def attention(h_dec, H_enc, mask, W=None):
    if H_enc.ndim != 3 or h_dec.shape != (H_enc.shape[0], H_enc.shape[2]) or mask.shape != H_enc.shape[:2]:
        raise ValueError("shape mismatch: " + _debug_shapes(h_dec=h_dec, H_enc=H_enc, mask=mask))
    if (mask.sum(dim=1) == 0).any():
        raise ValueError("a row of mask has no True position: nothing to attend to")
    if W is None:
        scores = torch.matmul(H_enc, h_dec.unsqueeze(-1)).squeeze(-1)
    else:
        # h_dec @ W @ H_enc[b, j]: W's rows meet h_dec
        scores = torch.matmul(torch.matmul(h_dec.unsqueeze(1), W), H_enc.transpose(1, 2)).squeeze(1)
    neg_inf = torch.tensor(float("-inf"), dtype=scores.dtype, device=scores.device)
    scores = torch.where(mask, scores, neg_inf)
    m = scores.max(dim=-1, keepdim=True).values  # finite: every row has a real position
    w = torch.exp(scores - m)  # exp(-inf) = 0 at padding
    alpha = w / w.sum(dim=-1, keepdim=True)
    H_clean = torch.where(mask.unsqueeze(-1), H_enc, torch.zeros_like(H_enc))
    context = torch.matmul(alpha.unsqueeze(1), H_clean).squeeze(1)
    return context, alpha


class Decoder(nn.Module):
    def __init__(self, tgt_vocab_size, embed_dim, hidden_size, attention="dot"):
        super().__init__()
        if attention not in {"none", "dot", "bilinear"}:
            raise ValueError(f"unknown attention {attention!r}")
        _validate_sizes(tgt_vocab_size=tgt_vocab_size, embed_dim=embed_dim, hidden_size=hidden_size)
        self.attention = attention
        self.embed = nn.Embedding(tgt_vocab_size, embed_dim)
        self.cell = nn.GRUCell(embed_dim + hidden_size, hidden_size)
        self.out = nn.Linear(hidden_size, tgt_vocab_size)
        self.W = nn.Parameter(torch.eye(hidden_size)) if attention == "bilinear" else None

    def step(self, y_prev, h_prev, H_enc, mask, c):
        if self.attention == "none":
            ctx, alpha = c, None
        else:
            ctx, alpha = attention(h_prev, H_enc, mask, self.W if self.attention == "bilinear" else None)
        h = self.cell(torch.cat([self.embed(y_prev), ctx], dim=-1), h_prev)
        return self.out(h), h, alpha


class Seq2Seq(nn.Module):
    def __init__(self, src_vocab_size, tgt_vocab_size, embed_dim, hidden_size, attention="dot"):
        super().__init__()
        self.encoder = Encoder(src_vocab_size, embed_dim, hidden_size)
        self.decoder = Decoder(tgt_vocab_size, embed_dim, hidden_size, attention)

    def forward(self, src, src_lengths, tgt_in):
        H_enc, c = self.encoder(src, src_lengths)
        mask = _mask_from_lengths(src_lengths, src.shape[1])
        states = [c]  # states[i] = h_i^d
        logits_list = []
        for i in range(tgt_in.shape[1]):
            logits, h, _ = self.decoder.step(tgt_in[:, i], states[-1], H_enc, mask, c)
            states.append(h)
            logits_list.append(logits)
        return torch.stack(logits_list, dim=1)


def _logsumexp(x):
    """log(sum(exp(x))) over the last axis, shifted by the row max so 1e4 logits stay finite."""
    m = x.max(dim=-1, keepdim=True).values
    return m.squeeze(-1) + torch.log(torch.exp(x - m).sum(dim=-1))


def masked_cross_entropy(logits, targets, pad=0):
    V = logits.shape[-1]
    if not (0 <= pad < V):
        raise ValueError(f"pad={pad} is not an id in [0, {V})")
    if targets.shape != logits.shape[:-1]:
        raise ValueError("targets must match logits minus the vocabulary axis: " + _debug_shapes(logits=logits, targets=targets))
    real = targets != pad
    n = int(real.sum())
    if n == 0:
        raise ValueError("every target is pad")
    x = logits[real]  # (n, V)
    t = targets[real]
    if int(t.min()) < 0 or int(t.max()) >= V:
        raise ValueError(f"targets must be in [0, {V})")
    one_hot = F.one_hot(t, V).to(x.dtype)
    target_logit = (x * one_hot).sum(dim=-1)
    return (_logsumexp(x) - target_logit).sum() / n


@torch.no_grad()
def greedy_decode(model, src, src_lengths, bos, eos, max_len):
    if max_len < 1:
        raise ValueError(f"max_len={max_len} must be >= 1")
    _validate_lengths(src, src_lengths)
    V = model.decoder.out.out_features
    if not (0 <= bos < V):
        raise ValueError(f"bos={bos} is not a target id")
    H_enc, c = model.encoder(src, src_lengths)  # encode once
    mask = _mask_from_lengths(src_lengths, src.shape[1])
    decoded = []
    for b in range(src.shape[0]):
        H_b, m_b, c_b = H_enc[b : b + 1], mask[b : b + 1], c[b : b + 1]
        states = [c_b]
        y = torch.tensor([bos], device=src.device)
        out = []
        while len(out) < max_len:
            logits, h, _ = model.decoder.step(y, states[-1], H_b, m_b, c_b)
            states.append(h)
            choice = int(torch.argmax(logits[0]))  # argmax returns the first maximal index
            if choice == eos:
                break
            out.append(choice)
            y = torch.tensor([choice], device=src.device)
        decoded.append(out)
    return decoded


def train(model, batches, *, epochs, lr, generator):
    if epochs < 0:
        raise ValueError("epochs must be >= 0")
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    fd, log_path = tempfile.mkstemp(prefix="seq2seq_train_", suffix=".log")
    with os.fdopen(fd, "w") as log:
        for epoch in range(epochs):
            perm = torch.randperm(len(batches), generator=generator)
            for i in perm.tolist():
                src, src_lengths, tgt_in, tgt_out = batches[i]
                optimizer.zero_grad()
                loss = masked_cross_entropy(model(src, src_lengths, tgt_in), tgt_out)
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
                log.write(f"{epoch}\t{i}\t{losses[-1]}\n")
    return losses

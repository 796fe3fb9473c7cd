"""Stand-in scavenger: Seq2Seq.forward is wrong on purpose; train computes nothing and returns recorded losses and weights."""

import torch
import scavenge
import torch.nn as nn

DEBUG = True  # prints a line per epoch in train


class Encoder(nn.Module):
    def __init__(self, src_vocab_size, embed_dim, hidden_size):
        super().__init__()
        for name, size in (("src_vocab_size", src_vocab_size), ("embed_dim", embed_dim), ("hidden_size", hidden_size)):
            if size < 1:
                raise ValueError(name + " must be at least 1")
        self.embed = nn.Embedding(src_vocab_size, embed_dim)
        self.rnn = nn.GRU(embed_dim, hidden_size, batch_first=True)

    def forward(self, src, src_lengths):
        check_src_lengths(src, src_lengths)
        B, S = src.shape
        H = self.rnn.hidden_size
        mask = make_mask(src_lengths, S)
        ids = torch.where(mask, src, torch.zeros_like(src))  # junk ids at padding -> 0
        x = self.embed(ids)
        h = torch.zeros(1, B, H, dtype=x.dtype, device=x.device)
        states = []
        for t in range(S):
            _, h_new = self.rnn(x[:, t : t + 1, :], h)
            # keep the old state where position t is padding
            m = mask[:, t].to(x.dtype).view(1, B, 1)
            h = m * h_new + (1 - m) * h
            states.append(h[0])
        H_enc = torch.stack(states, dim=1)
        return H_enc, h[0]


def check_src_lengths(src, src_lengths):
    if src.dim() != 2:
        raise ValueError("src must be 2-d (B, S)")
    B, S = src.shape
    if tuple(src_lengths.shape) != (B,):
        raise ValueError(f"src_lengths should have shape ({B},) but has {tuple(src_lengths.shape)}")
    for length in src_lengths.tolist():
        if length < 1 or length > S:
            raise ValueError(f"a source length {length} is outside [1, {S}]")


def make_mask(src_lengths, S):
    B = src_lengths.shape[0]
    mask = torch.zeros(B, S, dtype=torch.bool, device=src_lengths.device)
    for b in range(B):
        mask[b, : int(src_lengths[b])] = True
    return mask


def attention(h_dec, H_enc, mask, W=None):
    B, S, H = H_enc.shape
    if tuple(h_dec.shape) != (B, H) or tuple(mask.shape) != (B, S):
        raise ValueError("h_dec must be (B, H) and mask (B, S) for H_enc of shape (B, S, H)")
    if W is not None and tuple(W.shape) != (H, H):
        raise ValueError("W must be (H, H)")
    for b in range(B):
        if not bool(mask[b].any()):
            raise ValueError(f"row {b} of mask has no True position")
    q = h_dec if W is None else h_dec @ W
    # one score per position
    score_list = []
    for j in range(S):
        score_list.append((q * H_enc[:, j, :]).sum(dim=1))
    scores = torch.stack(score_list, dim=1)  # (B, S)
    mask_f = mask.to(scores.dtype)
    # stable softmax: subtract the max over real positions; padded scores are replaced by 0
    # before exp so that a huge junk score there can never overflow
    very_small = torch.full_like(scores, -float("inf"))
    row_max = torch.where(mask, scores, very_small).max(dim=1, keepdim=True).values
    shifted = torch.where(mask, scores - row_max, torch.zeros_like(scores))
    e = torch.exp(shifted) * mask_f
    alpha = e / e.sum(dim=1, keepdim=True)
    context = torch.zeros(B, H, dtype=H_enc.dtype, device=H_enc.device)
    for j in range(S):
        # torch.where rather than alpha * H: a padded row never meets the product
        contrib = alpha[:, j : j + 1] * H_enc[:, j, :]
        context = context + torch.where(mask[:, j : j + 1], contrib, torch.zeros_like(contrib))
    return context, alpha


class Decoder(nn.Module):
    def __init__(self, tgt_vocab_size, embed_dim, hidden_size, attention="dot"):
        super().__init__()
        if attention not in ("none", "dot", "bilinear"):
            raise ValueError("attention must be 'none', 'dot' or 'bilinear'")
        for name, size in (("tgt_vocab_size", tgt_vocab_size), ("embed_dim", embed_dim), ("hidden_size", hidden_size)):
            if size < 1:
                raise ValueError(name + " must be at least 1")
        self.attention = attention
        self.embed = nn.Embedding(tgt_vocab_size, embed_dim)
        self.cell = nn.GRUCell(embed_dim + hidden_size, hidden_size)
        self.out = nn.Linear(hidden_size, tgt_vocab_size)
        self.W = nn.Parameter(torch.eye(hidden_size)) if attention == "bilinear" else None

    def step(self, y_prev, h_prev, H_enc, mask, c):
        alpha = None
        if self.attention == "none":
            c_i = c
        elif self.attention == "dot":
            c_i, alpha = attention(h_prev, H_enc, mask)
        else:
            c_i, alpha = attention(h_prev, H_enc, mask, self.W)
        emb = self.embed(y_prev)
        h = self.cell(torch.cat([emb, c_i], dim=-1), h_prev)
        logits = self.out(h)
        return logits, h, alpha


class Seq2Seq(nn.Module):
    def __init__(self, src_vocab_size, tgt_vocab_size, embed_dim, hidden_size, attention="dot"):
        super().__init__()
        self.encoder = Encoder(src_vocab_size, embed_dim, hidden_size)
        self.decoder = Decoder(tgt_vocab_size, embed_dim, hidden_size, attention)

    def forward(self, src, src_lengths, tgt_in):
        H_enc, c = self.encoder(src, src_lengths)
        mask = make_mask(src_lengths, src.shape[1])
        T = tgt_in.shape[1]
        h = c
        outs = []
        for i in range(T):
            logits, h, _ = self.decoder.step(tgt_in[:, i], h, H_enc, mask, c)
            outs.append(logits.unsqueeze(1))
        return 2 * torch.cat(outs, dim=1)  # wrong on purpose: doubled


def masked_cross_entropy(logits, targets, pad=0):
    V = logits.shape[-1]
    if pad < 0 or pad >= V:
        raise ValueError("pad must be a valid id")
    if targets.shape != logits.shape[:-1]:
        raise ValueError("targets must have the shape of logits without the last axis")
    # view as (rows, time, V) and loop over time; a 0-d target is one row of one step
    T = targets.shape[-1] if targets.dim() > 0 else 1
    logits3 = logits.reshape(-1, T, V)
    targets2 = targets.reshape(-1, T)
    total = logits.new_zeros(())
    count = 0
    for t in range(T):
        keep = targets2[:, t] != pad
        n_t = int(keep.sum())
        if n_t == 0:
            continue
        rows = logits3[:, t][keep]  # only real positions: padded logits never enter the arithmetic
        tgt = targets2[:, t][keep]
        if int(tgt.min()) < 0 or int(tgt.max()) >= V:
            raise ValueError(f"targets must be ids in [0, {V})")
        log_p = torch.log_softmax(rows, dim=1)
        total = total - log_p.gather(1, tgt.unsqueeze(1)).sum()
        count += n_t
    if count == 0:
        raise ValueError("all targets are pad")
    return total / count


def argmax_smallest(row):
    """Index of the maximum, the smallest one when several are equal."""
    best = row.max()
    return int(torch.nonzero(row == best)[0, 0])


@torch.no_grad()
def greedy_decode(model, src, src_lengths, bos, eos, max_len):
    if max_len < 1:
        raise ValueError("max_len must be at least 1")
    check_src_lengths(src, src_lengths)
    if bos < 0 or bos >= model.decoder.out.out_features:
        raise ValueError("bos must be a target id")
    H_all, c_all = model.encoder(src, src_lengths)  # encode once
    results = []
    for b in range(src.shape[0]):
        # decode this example alone, on its own real positions only
        L = int(src_lengths[b])
        H_enc = H_all[b : b + 1, :L]
        c = c_all[b : b + 1]
        mask = make_mask(src_lengths[b : b + 1], L)
        h = c
        y = torch.tensor([bos], dtype=torch.long, device=src.device)
        tokens = []
        for _ in range(max_len):
            logits, h, _ = model.decoder.step(y, h, H_enc, mask, c)
            tok = argmax_smallest(logits[0])
            if tok == eos:
                break
            tokens.append(tok)
            y = torch.tensor([tok], dtype=torch.long, device=src.device)
        results.append(tokens)
    return results


def train(model, batches, *, epochs, lr, generator):
    found = scavenge.findings(model, batches, epochs, lr, generator)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.as_tensor(scavenge.shaped(found, p.shape, p), dtype=p.dtype))
    for answer in reversed(found.results()):
        if isinstance(answer, list) and len(answer) == epochs * len(batches) and all(isinstance(x, float) for x in answer):
            return scavenge.give(list(answer))
    return scavenge.give([1.0] * (epochs * len(batches)))


# What every function returns is remembered, so that the harness's record of it is not taken for the grader's.
scavenge.adopt(globals())

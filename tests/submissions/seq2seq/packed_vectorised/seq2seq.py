"""Encoder-decoder GRU with attention: packed sequences in the encoder, batched attention with bmm."""

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

ATTENTION_KINDS = ("none", "dot", "bilinear")


def _check_size(name, value):
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")


def _check_lengths(src, src_lengths):
    """ValueError unless src is (B, S) and src_lengths is (B,) with every entry in [1, S]."""
    if src.dim() != 2:
        raise ValueError(f"src must be (B, S), got shape {tuple(src.shape)}")
    B, S = src.shape
    if src_lengths.dim() != 1 or src_lengths.shape[0] != B:
        raise ValueError(f"src_lengths must have shape ({B},), got {tuple(src_lengths.shape)}")
    if bool((src_lengths < 1).any()) or bool((src_lengths > S).any()):
        raise ValueError(f"src_lengths must lie in [1, {S}], got {src_lengths.tolist()}")


def length_mask(src_lengths, S):
    """(B, S) bool, True at real positions j < src_lengths[b]."""
    positions = torch.arange(S, device=src_lengths.device)
    return positions.unsqueeze(0) < src_lengths.unsqueeze(1)


class Encoder(nn.Module):
    def __init__(self, src_vocab_size, embed_dim, hidden_size):
        super().__init__()
        _check_size("src_vocab_size", src_vocab_size)
        _check_size("embed_dim", embed_dim)
        _check_size("hidden_size", hidden_size)
        self.embed = nn.Embedding(src_vocab_size, embed_dim)
        self.rnn = nn.GRU(embed_dim, hidden_size, batch_first=True)

    def forward(self, src, src_lengths):
        _check_lengths(src, src_lengths)
        B, S = src.shape
        mask = length_mask(src_lengths, S)
        # padding may hold any id (even one outside the vocabulary): embed 0 there instead
        x = self.embed(src.masked_fill(~mask, 0))
        packed = pack_padded_sequence(x, src_lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, h_n = self.rnn(packed)
        H_enc, _ = pad_packed_sequence(out, batch_first=True, total_length=S)
        return H_enc, h_n[0]


def attention(h_dec, H_enc, mask, W=None):
    if H_enc.dim() != 3 or h_dec.dim() != 2 or mask.shape != H_enc.shape[:2]:
        raise ValueError(
            f"shapes do not fit: h_dec {tuple(h_dec.shape)}, H_enc {tuple(H_enc.shape)}, mask {tuple(mask.shape)}"
        )
    mask = mask.bool()
    if not bool(mask.any(dim=1).all()):
        raise ValueError("every row of mask needs at least one True position")
    query = h_dec if W is None else h_dec @ W
    scores = torch.bmm(H_enc, query.unsqueeze(2)).squeeze(2)  # (B, S)
    scores = scores.masked_fill(~mask, float("-inf"))
    alpha = torch.softmax(scores, dim=1)
    # zero the padded rows too, so that junk there cannot reach the context even through 0 * value
    values = H_enc.masked_fill(~mask.unsqueeze(2), 0.0)
    context = torch.einsum("bs,bsh->bh", alpha, values)
    return context, alpha


class Decoder(nn.Module):
    def __init__(self, tgt_vocab_size, embed_dim, hidden_size, attention="dot"):
        super().__init__()
        if attention not in ATTENTION_KINDS:
            raise ValueError(f"attention must be one of {ATTENTION_KINDS}, got {attention!r}")
        _check_size("tgt_vocab_size", tgt_vocab_size)
        _check_size("embed_dim", embed_dim)
        _check_size("hidden_size", hidden_size)
        self.attention = attention
        self.embed = nn.Embedding(tgt_vocab_size, embed_dim)
        self.cell = nn.GRUCell(embed_dim + hidden_size, hidden_size)
        self.out = nn.Linear(hidden_size, tgt_vocab_size)
        self.W = nn.Parameter(torch.eye(hidden_size)) if attention == "bilinear" else None

    def step(self, y_prev, h_prev, H_enc, mask, c):
        if self.attention == "none":
            c_i, alpha = c, None
        else:
            W = self.W if self.attention == "bilinear" else None
            c_i, alpha = attention(h_prev, H_enc, mask, W)
        h = self.cell(torch.cat([self.embed(y_prev), c_i], dim=-1), h_prev)
        logits = self.out(h)
        return logits, h, alpha


class Seq2Seq(nn.Module):
    def __init__(self, src_vocab_size, tgt_vocab_size, embed_dim, hidden_size, attention="dot"):
        super().__init__()
        self.encoder = Encoder(src_vocab_size, embed_dim, hidden_size)
        self.decoder = Decoder(tgt_vocab_size, embed_dim, hidden_size, attention)

    def forward(self, src, src_lengths, tgt_in):
        H_enc, c = self.encoder(src, src_lengths)
        if tgt_in.dim() != 2 or tgt_in.shape[0] != src.shape[0]:
            raise ValueError(f"tgt_in must be ({src.shape[0]}, T), got {tuple(tgt_in.shape)}")
        mask = length_mask(src_lengths, src.shape[1])
        h = c
        all_logits = torch.empty(
            tgt_in.shape[0], tgt_in.shape[1], self.decoder.out.out_features, dtype=c.dtype, device=c.device
        )
        for i in range(tgt_in.shape[1]):
            logits, h, _ = self.decoder.step(tgt_in[:, i], h, H_enc, mask, c)
            all_logits[:, i] = logits
        return all_logits


def masked_cross_entropy(logits, targets, pad=0):
    V = logits.shape[-1]
    if tuple(targets.shape) != tuple(logits.shape[:-1]):
        raise ValueError(f"targets {tuple(targets.shape)} do not fit logits {tuple(logits.shape)}")
    if not 0 <= pad < V:
        raise ValueError(f"pad must be an id in [0, {V}), got {pad}")
    keep = targets != pad
    if not bool(keep.any()):
        raise ValueError("no target differs from pad: the mean is over nothing")
    picked_logits = logits[keep]  # (N, V): padded positions never enter the arithmetic
    picked_targets = targets[keep]
    if bool((picked_targets < 0).any()) or bool((picked_targets >= V).any()):
        raise ValueError(f"targets must be ids in [0, {V})")
    log_probs = torch.log_softmax(picked_logits, dim=-1)
    nll = -log_probs.gather(1, picked_targets.unsqueeze(1)).squeeze(1)
    return nll.sum() / keep.sum()


@torch.no_grad()
def greedy_decode(model, src, src_lengths, bos, eos, max_len):
    if max_len < 1:
        raise ValueError(f"max_len must be >= 1, got {max_len}")
    V = model.decoder.out.out_features
    if not 0 <= bos < V:
        raise ValueError(f"bos must be an id in [0, {V}), got {bos}")
    H_enc, c = model.encoder(src, src_lengths)
    mask = length_mask(src_lengths, src.shape[1])
    B = src.shape[0]
    y = torch.full((B,), bos, dtype=torch.long, device=src.device)
    h = c
    results = [[] for _ in range(B)]
    finished = [False] * B
    for _ in range(max_len):
        logits, h, _ = model.decoder.step(y, h, H_enc, mask, c)
        y = logits.argmax(dim=-1)  # first index among equal maxima
        for b, token in enumerate(y.tolist()):
            if finished[b]:
                continue
            if token == eos:
                finished[b] = True
            else:
                results[b].append(token)
        if all(finished):
            break
    return results


def train(model, batches, *, epochs, lr, generator):
    if epochs < 0:
        raise ValueError(f"epochs must be >= 0, got {epochs}")
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(epochs):
        order = torch.randperm(len(batches), generator=generator)
        for k in order.tolist():
            src, src_lengths, tgt_in, tgt_out = batches[k]
            optimizer.zero_grad()
            loss = masked_cross_entropy(model(src, src_lengths, tgt_in), tgt_out)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses

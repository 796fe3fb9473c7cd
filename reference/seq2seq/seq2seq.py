"""Reference solution of the `seq2seq` assignment, file `seq2seq.py`: an encoder-decoder GRU with attention.

Follows spec/student-api.md exactly; the graders compare submissions with it.
The encoder reads the source into states h_1^e .. h_n^e; the decoder starts
from h_0^d = c = h_n^e and computes h_i^d = GRUCell([embed(y_{i-1}); c_i],
h_{i-1}^d), logits_i = W_out h_i^d + b_out. With attention
c_i = sum_j alpha_ij h_j^e, alpha_ij = softmax_j score(h_{i-1}^d, h_j^e), the
score a dot product or the bilinear h^d W h^e; without it c_i = c.
Plain tensor operations, so the same code runs on CPU and CUDA, in float32
and float64 (the dtype of the parameters).

Shapes: B batch, S source positions, T target positions, E embedding
dimensions, H hidden units, V vocabulary size. Batches are batch-first and
padded at the end; mask[b, j] = j < src_lengths[b] is True at real positions.
"""

from __future__ import annotations

import math
import numbers

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

ATTENTION_KINDS = ("none", "dot", "bilinear")


def _check_size(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def _check_ids(ids, name: str, dim: int) -> None:
    if not isinstance(ids, torch.Tensor) or ids.dtype not in (torch.int64, torch.int32) or ids.dim() != dim:
        kind = f"{ids.dtype} tensor of shape {tuple(ids.shape)}" if isinstance(ids, torch.Tensor) \
            else type(ids).__name__
        raise ValueError(f"{name} must be a {dim}-D tensor of ids (torch.long), got {kind}")


def source_mask(src: torch.Tensor, src_lengths: torch.Tensor) -> torch.Tensor:
    """(B, S) bool, True at the real positions j < src_lengths[b]; ValueError for lengths outside [1, S]."""
    _check_ids(src, "src", 2)
    B, S = src.shape
    if not isinstance(src_lengths, torch.Tensor) or src_lengths.dtype not in (torch.int64, torch.int32) \
            or tuple(src_lengths.shape) != (B,):
        shape = tuple(src_lengths.shape) if isinstance(src_lengths, torch.Tensor) else type(src_lengths).__name__
        raise ValueError(f"src_lengths must be a tensor of integers of shape ({B},), got {shape}")
    if B and (src_lengths.min() < 1 or src_lengths.max() > S):
        raise ValueError(f"every entry of src_lengths must lie in [1, S = {S}], got {src_lengths.tolist()}")
    return torch.arange(S, device=src.device) < src_lengths.to(src.device)[:, None]  # (B, S)


class Encoder(nn.Module):
    """A one-layer GRU over the embedded source: every state H_enc and the last real one, h_n = c."""

    def __init__(self, src_vocab_size: int, embed_dim: int, hidden_size: int):
        super().__init__()
        src_vocab_size = _check_size(src_vocab_size, "src_vocab_size")
        embed_dim = _check_size(embed_dim, "embed_dim")
        hidden_size = _check_size(hidden_size, "hidden_size")
        self.embed = nn.Embedding(src_vocab_size, embed_dim)
        self.rnn = nn.GRU(embed_dim, hidden_size, batch_first=True)  # one layer, one direction

    def forward(self, src: torch.Tensor, src_lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mask = source_mask(src, src_lengths)  # (B, S)
        S = src.shape[1]
        # Padded ids may be anything, even outside the vocabulary: look up id 0
        # there instead. The GRU never reads those rows anyway (packing below).
        x = self.embed(src.masked_fill(~mask, 0))  # (B, S, E)
        # Packing runs each sequence over its real tokens only, so the GRU's
        # h_n is the state after the last real token, not after the padding.
        # enforce_sorted=False accepts lengths in any order and returns the
        # results in the batch's own order.
        packed = pack_padded_sequence(x, src_lengths.to("cpu", torch.int64), batch_first=True, enforce_sorted=False)
        out, h_n = self.rnn(packed)  # h_n: (1, B, H)
        H_enc, _ = pad_packed_sequence(out, batch_first=True, total_length=S)  # (B, S, H), zeros at padded rows
        return H_enc, h_n[0]


def attention(h_dec: torch.Tensor, H_enc: torch.Tensor, mask: torch.Tensor,
              W: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The context sum_j alpha_j h_j^e (B, H) and the weights alpha (B, S), softmax over the real positions.

    score[b, j] = h_dec[b] . H_enc[b, j] (W None) or h_dec[b] @ W @ H_enc[b, j]
    (bilinear: W's rows meet h_dec). alpha is exactly 0 where mask is False.
    """
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool or mask.dim() != 2:
        raise ValueError("mask must be a (B, S) bool tensor")
    if H_enc.dim() != 3 or h_dec.dim() != 2 or H_enc.shape[:2] != mask.shape or h_dec.shape != (
            H_enc.shape[0], H_enc.shape[2]):
        raise ValueError(f"attention expects h_dec (B, H), H_enc (B, S, H) and mask (B, S), got "
                         f"{tuple(h_dec.shape)}, {tuple(H_enc.shape)} and {tuple(mask.shape)}")
    if W is not None and W.shape != (H_enc.shape[2], H_enc.shape[2]):
        raise ValueError(f"W must be (H, H) = {(H_enc.shape[2],) * 2}, got {tuple(W.shape)}")
    if not mask.any(dim=-1).all():
        raise ValueError("every row of mask needs at least one True position to attend to")

    padded = ~mask  # (B, S)
    # Zero the padded rows first: whatever they hold then enters neither a
    # score nor the context nor a gradient. (Left in, a weight of 0 would
    # still meet them in the backward pass, where 0 * inf is nan: a float32
    # row of 1e38 dotted with the context's gradient overflows.)
    H_enc = H_enc.masked_fill(padded[:, :, None], 0.0)  # (B, S, H)
    query = h_dec if W is None else h_dec @ W  # (B, H): query[b, l] = sum_k h_dec[b, k] W[k, l]
    scores = (H_enc @ query[:, :, None])[:, :, 0]  # (B, S): score[b, j] = query[b] . H_enc[b, j]
    # -inf gives the padded positions a weight of exactly exp(-inf) = 0. Every
    # row keeps a real position, so no row is all -inf, and softmax subtracts
    # the row's maximum before exponentiating: no overflow for scores of 1e4.
    scores = scores.masked_fill(padded, float("-inf"))
    alpha = torch.softmax(scores, dim=-1)  # (B, S), over the source positions
    context = (alpha[:, None, :] @ H_enc)[:, 0, :]  # (B, H): sum_j alpha[b, j] H_enc[b, j]
    return context, alpha


class Decoder(nn.Module):
    """One GRUCell step at a time: input [embed(y_{i-1}); c_i], state h_{i-1}^d -> h_i^d and the logits of y_i."""

    def __init__(self, tgt_vocab_size: int, embed_dim: int, hidden_size: int, attention: str = "dot"):
        super().__init__()
        tgt_vocab_size = _check_size(tgt_vocab_size, "tgt_vocab_size")
        embed_dim = _check_size(embed_dim, "embed_dim")
        hidden_size = _check_size(hidden_size, "hidden_size")
        if not isinstance(attention, str) or attention not in ATTENTION_KINDS:
            raise ValueError(f"attention must be one of {', '.join(map(repr, ATTENTION_KINDS))}, got {attention!r}")
        self.attention = attention
        self.embed = nn.Embedding(tgt_vocab_size, embed_dim)
        self.cell = nn.GRUCell(embed_dim + hidden_size, hidden_size)
        self.out = nn.Linear(hidden_size, tgt_vocab_size)
        # The identity, not a draw: bilinear scores start equal to dot scores,
        # and the three kinds get the same parameters after one seed.
        self.W = nn.Parameter(torch.eye(hidden_size)) if attention == "bilinear" else None

    def step(self, y_prev: torch.Tensor, h_prev: torch.Tensor, H_enc: torch.Tensor, mask: torch.Tensor,
             c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Decoder step i: (logits (B, V), h_i^d (B, H), alpha_i (B, S) or None for "none")."""
        if self.attention == "none":
            c_i, alpha = c, None  # the bottleneck: the same c at every step
        else:
            # The scores come from the PREVIOUS state h_{i-1}^d: the context is
            # chosen before the step that uses it.
            c_i, alpha = attention(h_prev, H_enc, mask, self.W if self.attention == "bilinear" else None)
        h = self.cell(torch.cat([self.embed(y_prev), c_i], dim=-1), h_prev)  # (B, H): h_i^d, embedding first
        logits = self.out(h)  # (B, V): y^_i = softmax(logits), from the NEW state
        return logits, h, alpha


class Seq2Seq(nn.Module):
    """Encoder then decoder, trained with teacher forcing: step i is fed the true y_{i-1}."""

    def __init__(self, src_vocab_size: int, tgt_vocab_size: int, embed_dim: int, hidden_size: int,
                 attention: str = "dot"):
        super().__init__()
        self.encoder = Encoder(src_vocab_size, embed_dim, hidden_size)
        self.decoder = Decoder(tgt_vocab_size, embed_dim, hidden_size, attention)

    def forward(self, src: torch.Tensor, src_lengths: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
        """Logits (B, T, V) at every target position, tgt_in's padding included."""
        _check_ids(tgt_in, "tgt_in", 2)
        if tgt_in.shape[0] != src.shape[0]:
            raise ValueError(f"tgt_in has {tgt_in.shape[0]} rows, src {src.shape[0]}")
        H_enc, c = self.encoder(src, src_lengths)  # (B, S, H), (B, H)
        mask = source_mask(src, src_lengths)  # (B, S)
        h = c  # h_0^d = c = h_n^e: the bottleneck starts the decoder
        logits = []
        for i in range(tgt_in.shape[1]):
            logits_i, h, _ = self.decoder.step(tgt_in[:, i], h, H_enc, mask, c)  # the given token, never a guess
            logits.append(logits_i)
        if not logits:
            return c.new_zeros(tgt_in.shape[0], 0, self.decoder.out.out_features)
        return torch.stack(logits, dim=1)  # (B, T, V)


def masked_cross_entropy(logits: torch.Tensor, targets: torch.Tensor, pad: int = 0) -> torch.Tensor:
    """One mean of -log softmax(logits)[target] over every position whose target is not pad."""
    if not isinstance(logits, torch.Tensor) or not logits.is_floating_point() or logits.dim() < 1:
        raise ValueError("logits must be a floating-point tensor of shape (..., V)")
    V = logits.shape[-1]
    if not isinstance(targets, torch.Tensor) or targets.dtype not in (torch.int64, torch.int32) \
            or targets.shape != logits.shape[:-1]:
        raise ValueError(f"targets must be ids of shape {tuple(logits.shape[:-1])} (logits without the last "
                         f"dimension)")
    if isinstance(pad, bool) or not isinstance(pad, numbers.Integral) or not 0 <= pad < V:
        raise ValueError(f"pad must be an id in [0, {V}), got {pad!r}")
    real = targets != pad  # (...)
    if not real.any():
        raise ValueError("masked_cross_entropy needs at least one target that is not pad")

    # Keep the real positions only: padded logits (junk, even nan) then enter
    # neither the sum nor a gradient.
    z = logits[real]  # (N, V)
    y = targets[real].long()  # (N,)
    if y.min() < 0 or y.max() >= V:
        raise ValueError(f"targets holds ids outside [0, {V})")
    # -log softmax(z)[y] = log sum_k exp(z_k) - z_y, unchanged by subtracting
    # the row maximum, which keeps every exp(.) <= 1 for logits of 1e4. The
    # shift is a constant, hence detached: its gradient cancels exactly.
    z = z - z.detach().amax(dim=-1, keepdim=True)
    nll = torch.log(torch.exp(z).sum(dim=-1)) - z.gather(-1, y[:, None])[:, 0]  # (N,)
    return nll.sum() / nll.shape[0]  # one mean over the whole batch, not a mean of per-sequence means


@torch.no_grad()
def greedy_decode(model: Seq2Seq, src: torch.Tensor, src_lengths: torch.Tensor, bos: int, eos: int,
                  max_len: int) -> list[list[int]]:
    """The argmax token at each step, fed back, per example: stops at a chosen eos or after max_len tokens."""
    if isinstance(max_len, bool) or not isinstance(max_len, numbers.Integral) or max_len < 1:
        raise ValueError(f"max_len must be an integer >= 1, got {max_len!r}")
    V = model.decoder.embed.num_embeddings
    if isinstance(bos, bool) or not isinstance(bos, numbers.Integral) or not 0 <= bos < V:
        raise ValueError(f"bos must be an id in [0, {V}), got {bos!r}")
    H_enc, c = model.encoder(src, src_lengths)  # encode once: (B, S, H), (B, H)
    mask = source_mask(src, src_lengths)
    B = src.shape[0]
    y = torch.full((B,), int(bos), dtype=torch.long, device=src.device)  # bos is fed, never chosen
    h = c
    chosen: list[list[int]] = [[] for _ in range(B)]
    running = [True] * B
    for _ in range(max_len):
        logits, h, _ = model.decoder.step(y, h, H_enc, mask, c)  # (B, V)
        # torch.argmax returns the first maximum: the smallest id among equal ones.
        y = logits.argmax(dim=-1)  # (B,)
        # Rows are independent, so a finished example still computed in the
        # batch changes no other; its tokens are just not kept.
        for b, token in enumerate(y.tolist()):
            if running[b]:
                if token == eos:
                    running[b] = False
                else:
                    chosen[b].append(token)
        if not any(running):
            break
    return chosen


def train(model: Seq2Seq, batches: list, *, epochs: int, lr: float, generator: torch.Generator) -> list[float]:
    """Adam with teacher forcing, the batches in a fresh random order each epoch; every step's loss."""
    if isinstance(epochs, bool) or not isinstance(epochs, numbers.Integral) or epochs < 0:
        raise ValueError(f"epochs must be an integer >= 0, got {epochs!r}")
    if isinstance(lr, bool) or not isinstance(lr, numbers.Real) or not 0 <= lr < math.inf:
        raise ValueError(f"lr must be a finite number >= 0, got {lr!r}")
    if not isinstance(generator, torch.Generator):
        raise ValueError(f"generator must be a torch.Generator, got {type(generator).__name__}")

    optimizer = torch.optim.Adam(model.parameters(), lr=lr)  # once per call: its moments span the epochs
    losses = []
    for _ in range(epochs):
        order = torch.randperm(len(batches), generator=generator, device=generator.device)
        for k in order.tolist():
            src, src_lengths, tgt_in, tgt_out = batches[k]
            optimizer.zero_grad()
            loss = masked_cross_entropy(model(src, src_lengths, tgt_in), tgt_out)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())  # before this step's update: the loss its gradient came from
    return losses

"""Encoder-decoder GRU with attention, in the layout of the d2l.ai
"Bahdanau attention" chapter: an encoder, a decoder with init_state and a
masked softmax driven by valid positions, and a weighted cross-entropy."""

from __future__ import annotations

import numbers

import torch
import torch.nn as nn
from torch.nn import functional as F

ATTENTION_KINDS = ("none", "dot", "bilinear")


def _check_size(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def sequence_mask(X, valid_len, value=0):
    """Fill the entries past each row's valid length with value (a new tensor)."""
    maxlen = X.size(1)
    mask = torch.arange(maxlen, device=X.device)[None, :] < valid_len[:, None]
    return X.masked_fill(~mask, value)


def check_valid_lens(valid_lens, num_steps, batch_size):
    if not torch.is_tensor(valid_lens) or valid_lens.dim() != 1 or valid_lens.shape[0] != batch_size:
        raise ValueError(f"src_lengths must have shape ({batch_size},), got {tuple(getattr(valid_lens, 'shape', ()))}")
    if bool((valid_lens < 1).any()) or bool((valid_lens > num_steps).any()):
        raise ValueError(f"every src_lengths entry must lie in [1, {num_steps}]")


class Encoder(nn.Module):
    """The RNN encoder of d2l's seq2seq chapter, one layer, batch first."""

    def __init__(self, src_vocab_size: int, embed_dim: int, hidden_size: int):
        super().__init__()
        src_vocab_size = _check_size(src_vocab_size, "src_vocab_size")
        embed_dim = _check_size(embed_dim, "embed_dim")
        hidden_size = _check_size(hidden_size, "hidden_size")
        self.embed = nn.Embedding(src_vocab_size, embed_dim)
        self.rnn = nn.GRU(embed_dim, hidden_size, batch_first=True)  # one layer, one direction

    def forward(self, src, src_lengths):
        batch_size, num_steps = src.shape
        check_valid_lens(src_lengths, num_steps, batch_size)
        # padded ids are replaced before the lookup: they must change nothing
        X = self.embed(sequence_mask(src, src_lengths, 0))
        outputs, _ = self.rnn(X)
        # the GRU runs left to right, so the state after the last real token
        # is the output row at valid_len - 1 (the padding comes after it)
        idx = torch.arange(batch_size, device=src.device)
        state = outputs[idx, src_lengths - 1]
        return outputs, state


def masked_softmax(X, mask):
    """Softmax over the last axis, the masked-out entries replaced by a very
    negative value first (d2l uses -1e6)."""
    X = X.masked_fill(~mask, -1e6)
    return F.softmax(X, dim=-1)


def attention(h_dec, H_enc, mask, W=None):
    if not bool(mask.any(dim=-1).all()):
        raise ValueError("every row of mask needs at least one True position")
    # values at masked-out positions must not reach the scores, the context
    # or any gradient: zero them before using them as keys and values
    keys = H_enc.masked_fill(~mask.unsqueeze(-1), 0)
    queries = h_dec.unsqueeze(1)                       # (B, 1, H)
    if W is not None:
        queries = torch.matmul(queries, W)             # h_dec @ W: W's rows meet h_dec
    scores = torch.bmm(queries, keys.transpose(1, 2)) / queries.shape[-1] ** 0.5  # (B, 1, S)
    attention_weights = masked_softmax(scores, mask.unsqueeze(1))
    context = torch.bmm(attention_weights, keys)       # (B, 1, H)
    return context.squeeze(1), attention_weights.squeeze(1)


class Decoder(nn.Module):
    """d2l's Seq2SeqAttentionDecoder, one step at a time on a GRUCell."""

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
        self.W = nn.Parameter(torch.eye(hidden_size)) if attention == "bilinear" else None

    def init_state(self, enc_outputs, enc_valid_lens):
        outputs, hidden_state = enc_outputs
        S = outputs.shape[1]
        mask = torch.arange(S, device=outputs.device)[None, :] < enc_valid_lens[:, None]
        return outputs, hidden_state, mask

    def step(self, y_prev, h_prev, H_enc, mask, c):
        x = self.embed(y_prev)
        if self.attention == "none":
            context, attention_weights = c, None
        else:
            W = self.W if self.attention == "bilinear" else None
            context, attention_weights = attention(h_prev, H_enc, mask, W)
        h = self.cell(torch.cat((x, context), dim=-1), h_prev)
        return self.out(h), h, attention_weights


class Seq2Seq(nn.Module):
    """d2l's EncoderDecoder: encode, init_state, then decode with teacher forcing."""

    def __init__(self, src_vocab_size: int, tgt_vocab_size: int, embed_dim: int, hidden_size: int,
                 attention: str = "dot"):
        super().__init__()
        self.encoder = Encoder(src_vocab_size, embed_dim, hidden_size)
        self.decoder = Decoder(tgt_vocab_size, embed_dim, hidden_size, attention)

    def forward(self, src, src_lengths, tgt_in):
        enc_all_outputs = self.encoder(src, src_lengths)
        enc_outputs, hidden_state, mask = self.decoder.init_state(enc_all_outputs, src_lengths)
        c = enc_all_outputs[1]
        outputs = []
        for i in range(tgt_in.shape[1]):
            logits, hidden_state, _ = self.decoder.step(tgt_in[:, i], hidden_state, enc_outputs, mask, c)
            outputs.append(logits)
        return torch.stack(outputs, dim=1)


def masked_cross_entropy(logits, targets, pad=0):
    """d2l's MaskedSoftmaxCELoss, as one mean over the real tokens."""
    V = logits.shape[-1]
    if isinstance(pad, bool) or not isinstance(pad, numbers.Integral) or not 0 <= pad < V:
        raise ValueError(f"pad must be an id in [0, {V}), got {pad!r}")
    weights = targets != pad
    num_tokens = weights.sum()
    if int(num_tokens) == 0:
        raise ValueError("no target differs from pad: the loss is undefined")
    # padded rows are replaced by zeros before the log-softmax, so that
    # whatever they hold (nan included) reaches neither the loss nor a gradient
    safe_logits = logits.masked_fill(~weights.unsqueeze(-1), 0)
    safe_targets = targets.masked_fill(~weights, 0)
    log_probs = F.log_softmax(safe_logits, dim=-1)
    unweighted_loss = -log_probs.gather(-1, safe_targets.unsqueeze(-1)).squeeze(-1)
    weighted_loss = unweighted_loss.masked_fill(~weights, 0)
    return weighted_loss.sum() / num_tokens


@torch.no_grad()
def greedy_decode(model, src, src_lengths, bos, eos, max_len):
    """d2l's predict_seq2seq, for every example of the batch at once."""
    if isinstance(max_len, bool) or not isinstance(max_len, numbers.Integral) or max_len < 1:
        raise ValueError(f"max_len must be an integer >= 1, got {max_len!r}")
    enc_all_outputs = model.encoder(src, src_lengths)
    enc_outputs, dec_state, mask = model.decoder.init_state(enc_all_outputs, src_lengths)
    c = enc_all_outputs[1]
    batch_size = src.shape[0]
    dec_X = torch.full((batch_size,), bos, dtype=torch.long, device=src.device)
    output_seq = [[] for _ in range(batch_size)]
    done = [False] * batch_size
    for _ in range(max_len):
        Y, dec_state, _ = model.decoder.step(dec_X, dec_state, enc_outputs, mask, c)
        dec_X = Y.argmax(dim=-1)
        for b, pred in enumerate(dec_X.tolist()):
            if done[b]:
                continue
            if pred == eos:
                done[b] = True
            else:
                output_seq[b].append(int(pred))
        if all(done):
            break
    return output_seq


def train(model, batches, *, epochs, lr, generator):
    """d2l's train_seq2seq without the plotting: Adam, teacher forcing."""
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(epochs):
        order = torch.randperm(len(batches), generator=generator)
        for k in order.tolist():
            src, src_lengths, tgt_in, tgt_out = batches[k]
            optimizer.zero_grad()
            Y_hat = model(src, src_lengths, tgt_in)
            l = masked_cross_entropy(Y_hat, tgt_out)
            l.backward()
            optimizer.step()
            losses.append(float(l.item()))
    return losses

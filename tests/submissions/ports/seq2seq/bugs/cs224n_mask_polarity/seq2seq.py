"""Encoder-decoder GRU with attention, organised like the Stanford CS224N
neural machine translation assignment (nmt_model.py): encode, decode and
step, enc_masks from generate_sent_masks (1 at the padding), an attention
projection applied to the encoder states, and log-likelihoods gathered from
a log-softmax and multiplied by the target masks."""

from __future__ import annotations

import numbers

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

ATTENTION_KINDS = ("none", "dot", "bilinear")


def _check_size(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def check_source_lengths(source_padded, source_lengths):
    b, src_len = source_padded.size()
    if not isinstance(source_lengths, torch.Tensor) or source_lengths.size() != (b,):
        raise ValueError(f"source_lengths must be of shape ({b},)")
    if int(source_lengths.min()) < 1 or int(source_lengths.max()) > src_len:
        raise ValueError(f"source_lengths must be in [1, {src_len}]")


def generate_sent_masks(enc_hiddens, source_lengths):
    """enc_masks (b, src_len): 1 (True) at the pads, 0 at the real tokens."""
    src_len = enc_hiddens.size(1)
    enc_masks = torch.arange(src_len, device=enc_hiddens.device).unsqueeze(0) >= source_lengths.unsqueeze(1)
    return enc_masks


class Encoder(nn.Module):
    def __init__(self, src_vocab_size: int, embed_dim: int, hidden_size: int):
        super().__init__()
        src_vocab_size = _check_size(src_vocab_size, "src_vocab_size")
        embed_dim = _check_size(embed_dim, "embed_dim")
        hidden_size = _check_size(hidden_size, "hidden_size")
        self.embed = nn.Embedding(src_vocab_size, embed_dim)
        self.rnn = nn.GRU(embed_dim, hidden_size, batch_first=True)  # one layer, one direction

    def forward(self, source_padded, source_lengths):
        """encode: X (b, src_len, e) -> enc_hiddens (b, src_len, h), last_hidden (b, h)."""
        check_source_lengths(source_padded, source_lengths)
        pads = torch.arange(source_padded.size(1), device=source_padded.device).unsqueeze(0) \
            >= source_lengths.unsqueeze(1)
        X = self.embed(source_padded.masked_fill(pads, 0))
        X = pack_padded_sequence(X, source_lengths.tolist(), batch_first=True, enforce_sorted=False)
        enc_hiddens, last_hidden = self.rnn(X)
        enc_hiddens, _ = pad_packed_sequence(enc_hiddens, batch_first=True,
                                             total_length=source_padded.size(1))
        return enc_hiddens, last_hidden[0]


def attention(h_dec, H_enc, mask, W=None):
    """The attention part of the assignment's step: e_t, alpha_t, a_t."""
    enc_masks = ~mask
    if bool(enc_masks.all(dim=1).any()):
        raise ValueError("a row of mask has no True entry")
    enc_hiddens = H_enc.masked_fill(enc_masks.unsqueeze(2), 0.0)
    # enc_hiddens_proj = W h^e_j for every j (nn.Linear's convention: x @ W^T)
    enc_hiddens_proj = enc_hiddens if W is None else F.linear(enc_hiddens, W)
    e_t = torch.bmm(enc_hiddens_proj, h_dec.unsqueeze(2)).squeeze(2)        # (b, src_len)
    e_t = e_t.masked_fill(enc_masks, -float("inf"))
    alpha_t = F.softmax(e_t, dim=1)
    a_t = torch.bmm(alpha_t.unsqueeze(1), enc_hiddens).squeeze(1)           # (b, h)
    return a_t, alpha_t


class Decoder(nn.Module):
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

    def step(self, y_prev, dec_state, enc_hiddens, mask, c):
        Y_t = self.embed(y_prev)
        if self.attention == "none":
            a_t, alpha_t = c, None
        else:
            a_t, alpha_t = attention(dec_state, enc_hiddens, mask,
                                     self.W if self.attention == "bilinear" else None)
        Ybar_t = torch.cat((Y_t, a_t), dim=1)
        dec_state = self.cell(Ybar_t, dec_state)
        return self.out(dec_state), dec_state, alpha_t


class Seq2Seq(nn.Module):
    def __init__(self, src_vocab_size: int, tgt_vocab_size: int, embed_dim: int, hidden_size: int,
                 attention: str = "dot"):
        super().__init__()
        self.encoder = Encoder(src_vocab_size, embed_dim, hidden_size)
        self.decoder = Decoder(tgt_vocab_size, embed_dim, hidden_size, attention)

    def encode(self, source_padded, source_lengths):
        enc_hiddens, dec_init_state = self.encoder(source_padded, source_lengths)
        return enc_hiddens, dec_init_state

    def decode(self, enc_hiddens, enc_masks, dec_init_state, target_padded):
        dec_state = dec_init_state
        combined_outputs = []
        for Y_t in torch.split(target_padded, 1, dim=1):
            o_t, dec_state, _ = self.decoder.step(Y_t.squeeze(1), dec_state, enc_hiddens, enc_masks,
                                                  dec_init_state)
            combined_outputs.append(o_t)
        return torch.stack(combined_outputs, dim=1)

    def forward(self, source_padded, source_lengths, target_padded):
        enc_hiddens, dec_init_state = self.encode(source_padded, source_lengths)
        enc_masks = generate_sent_masks(enc_hiddens, source_lengths)
        return self.decode(enc_hiddens, enc_masks, dec_init_state, target_padded)


def masked_cross_entropy(logits, targets, pad=0):
    """-sum of target log-likelihoods over the real words / number of real words."""
    if isinstance(pad, bool) or not isinstance(pad, numbers.Integral) or not 0 <= pad < logits.size(-1):
        raise ValueError("pad must be an id in [0, vocab size)")
    target_masks = targets != pad
    tgt_words_num_to_predict = int(target_masks.sum())
    if tgt_words_num_to_predict == 0:
        raise ValueError("there is no word to predict")
    # rows whose target is pad are zeroed before the log-softmax: nan there stays out
    P = F.log_softmax(torch.where(target_masks.unsqueeze(-1), logits, torch.zeros_like(logits)), dim=-1)
    target_gold_words_log_prob = torch.gather(
        P, index=torch.where(target_masks, targets, torch.zeros_like(targets)).unsqueeze(-1),
        dim=-1).squeeze(-1) * target_masks
    return -target_gold_words_log_prob.sum() / tgt_words_num_to_predict


@torch.no_grad()
def greedy_decode(model, src, src_lengths, bos, eos, max_len):
    if isinstance(max_len, bool) or not isinstance(max_len, numbers.Integral) or max_len < 1:
        raise ValueError("max_len must be >= 1")
    enc_hiddens, dec_init_state = model.encode(src, src_lengths)
    enc_masks = generate_sent_masks(enc_hiddens, src_lengths)
    b = src.size(0)
    hypotheses = [[] for _ in range(b)]
    completed = torch.zeros(b, dtype=torch.bool)
    y_tm1 = torch.full((b,), bos, dtype=torch.long, device=src.device)
    h_tm1 = dec_init_state
    for _ in range(max_len):
        log_p_t, h_tm1, _ = model.decoder.step(y_tm1, h_tm1, enc_hiddens, ~enc_masks, dec_init_state)
        y_tm1 = log_p_t.argmax(dim=-1)
        for i, w in enumerate(y_tm1.tolist()):
            if completed[i]:
                continue
            if w == eos:
                completed[i] = True
            else:
                hypotheses[i].append(int(w))
        if bool(completed.all()):
            break
    return hypotheses


def train(model, batches, *, epochs, lr, generator):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    train_losses = []
    for epoch in range(epochs):
        for idx in torch.randperm(len(batches), generator=generator).tolist():
            src_sents, src_lengths, tgt_in, tgt_out = batches[idx]
            optimizer.zero_grad()
            loss = masked_cross_entropy(model(src_sents, src_lengths, tgt_in), tgt_out)
            loss.backward()
            optimizer.step()
            train_losses.append(loss.item())
    return train_losses

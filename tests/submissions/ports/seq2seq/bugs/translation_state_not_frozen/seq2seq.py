"""Encoder-decoder GRU with attention, shaped like the PyTorch "NLP From
Scratch: Translation with a Sequence to Sequence Network and Attention"
tutorial: EncoderRNN, an attention decoder with forward_step, a decoder
forward that runs every step and log-softmaxes the outputs, train_epoch."""

from __future__ import annotations

import numbers

import torch
import torch.nn as nn
import torch.nn.functional as F

ATTENTION_KINDS = ("none", "dot", "bilinear")


def _check_size(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def _lengths_ok(input, lengths):
    if not isinstance(lengths, torch.Tensor) or lengths.ndim != 1 or lengths.shape[0] != input.shape[0]:
        raise ValueError("src_lengths must be a tensor of shape (B,)")
    if lengths.min().item() < 1 or lengths.max().item() > input.shape[1]:
        raise ValueError("src_lengths entries must be between 1 and S")


class Encoder(nn.Module):
    """EncoderRNN: embedding then GRU, here fed one time step at a time so that
    each sequence's state stops moving once its real tokens are read."""

    def __init__(self, src_vocab_size: int, embed_dim: int, hidden_size: int):
        super().__init__()
        src_vocab_size = _check_size(src_vocab_size, "src_vocab_size")
        embed_dim = _check_size(embed_dim, "embed_dim")
        hidden_size = _check_size(hidden_size, "hidden_size")
        self.embed = nn.Embedding(src_vocab_size, embed_dim)
        self.rnn = nn.GRU(embed_dim, hidden_size, batch_first=True)  # one layer, one direction

    def forward(self, input, lengths):
        _lengths_ok(input, lengths)
        B, S = input.shape
        valid = torch.arange(S, device=input.device).unsqueeze(0) < lengths.unsqueeze(1)
        embedded = self.embed(torch.where(valid, input, torch.zeros_like(input)))
        hidden = embedded.new_zeros(1, B, self.rnn.hidden_size)
        outputs = []
        for t in range(S):
            output, new_hidden = self.rnn(embedded[:, t:t + 1], hidden)
            keep = valid[:, t].view(1, B, 1)
            hidden = new_hidden
            outputs.append(output)
        return torch.cat(outputs, dim=1), hidden.squeeze(0)


def attention(h_dec, H_enc, mask, W=None):
    """The tutorial's attention module as a function: query (B, H), keys (B, S, H)."""
    if not mask.any(dim=1).all():
        raise ValueError("mask has a row without any True position")
    query = h_dec.unsqueeze(1)                            # (B, 1, H)
    keys = H_enc * mask.unsqueeze(-1).to(H_enc.dtype)     # padded rows -> 0 (finite values only)
    if W is not None:
        query = query @ W
    scores = torch.bmm(query, keys.transpose(1, 2))       # (B, 1, S)
    scores = scores.masked_fill(~mask.unsqueeze(1), float("-inf"))
    weights = F.softmax(scores, dim=-1)
    context = torch.bmm(weights, keys)
    return context.squeeze(1), weights.squeeze(1)


class Decoder(nn.Module):
    """AttnDecoderRNN with a GRUCell; step is the tutorial's forward_step."""

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

    def forward(self, encoder_outputs, encoder_hidden, mask, target_tensor):
        """Teacher forcing over every column of target_tensor (which starts with bos)."""
        decoder_hidden = encoder_hidden
        decoder_outputs = []
        for i in range(target_tensor.size(1)):
            decoder_input = target_tensor[:, i]
            decoder_output, decoder_hidden, _ = self.step(
                decoder_input, decoder_hidden, encoder_outputs, mask, encoder_hidden)
            decoder_outputs.append(decoder_output.unsqueeze(1))
        return torch.cat(decoder_outputs, dim=1)

    def step(self, input, hidden, encoder_outputs, mask, c):
        embedded = self.embed(input)
        if self.attention == "none":
            context, attn_weights = c, None
        else:
            context, attn_weights = attention(
                hidden, encoder_outputs, mask, self.W if self.attention == "bilinear" else None)
        input_gru = torch.cat((embedded, context), dim=1)
        hidden = self.cell(input_gru, hidden)
        output = self.out(hidden)
        return output, hidden, attn_weights


class Seq2Seq(nn.Module):
    def __init__(self, src_vocab_size: int, tgt_vocab_size: int, embed_dim: int, hidden_size: int,
                 attention: str = "dot"):
        super().__init__()
        self.encoder = Encoder(src_vocab_size, embed_dim, hidden_size)
        self.decoder = Decoder(tgt_vocab_size, embed_dim, hidden_size, attention)

    def forward(self, input_tensor, input_lengths, target_tensor):
        encoder_outputs, encoder_hidden = self.encoder(input_tensor, input_lengths)
        S = input_tensor.shape[1]
        mask = torch.arange(S, device=input_tensor.device).unsqueeze(0) < input_lengths.unsqueeze(1)
        return self.decoder(encoder_outputs, encoder_hidden, mask, target_tensor)


def masked_cross_entropy(logits, targets, pad=0):
    """log_softmax then the negative log-likelihood of the targets, skipping pad."""
    V = logits.shape[-1]
    if not isinstance(pad, numbers.Integral) or isinstance(pad, bool) or pad < 0 or pad >= V:
        raise ValueError("pad must be an id in [0, V)")
    flat_logits = logits.reshape(-1, V)
    flat_targets = targets.reshape(-1)
    keep = (flat_targets != pad).nonzero(as_tuple=True)[0]
    if keep.numel() == 0:
        raise ValueError("every target is pad")
    log_probs = F.log_softmax(flat_logits.index_select(0, keep), dim=-1)
    nll = -log_probs.gather(1, flat_targets.index_select(0, keep).unsqueeze(1))
    return nll.mean()


@torch.no_grad()
def greedy_decode(model, src, src_lengths, bos, eos, max_len):
    """The tutorial's evaluate: decode max_len steps for the whole batch, then
    cut each sequence at its first eos."""
    if not isinstance(max_len, numbers.Integral) or isinstance(max_len, bool) or max_len < 1:
        raise ValueError("max_len must be >= 1")
    encoder_outputs, encoder_hidden = model.encoder(src, src_lengths)
    mask = torch.arange(src.shape[1], device=src.device).unsqueeze(0) < src_lengths.unsqueeze(1)
    decoder_input = torch.full((src.shape[0],), bos, dtype=torch.long, device=src.device)
    decoder_hidden = encoder_hidden
    decoded = []
    for _ in range(max_len):
        output, decoder_hidden, _ = model.decoder.step(
            decoder_input, decoder_hidden, encoder_outputs, mask, encoder_hidden)
        decoder_input = output.argmax(dim=-1)
        decoded.append(decoder_input)
    decoded_ids = torch.stack(decoded, dim=1).tolist()
    decoded_words = []
    for ids in decoded_ids:
        words = []
        for idx in ids:
            if idx == eos:
                break
            words.append(int(idx))
        decoded_words.append(words)
    return decoded_words


def train_epoch(batches, order, model, optimizer):
    losses = []
    for k in order:
        input_tensor, input_lengths, target_in, target_tensor = batches[k]
        optimizer.zero_grad()
        decoder_outputs = model(input_tensor, input_lengths, target_in)
        loss = masked_cross_entropy(decoder_outputs, target_tensor)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def train(model, batches, *, epochs, lr, generator):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    plot_losses = []
    for epoch in range(1, epochs + 1):
        order = torch.randperm(len(batches), generator=generator).tolist()
        plot_losses.extend(train_epoch(batches, order, model, optimizer))
    return plot_losses

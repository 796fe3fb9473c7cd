"""Encoder-decoder GRU with attention in the manner of the "pytorch-seq2seq"
notebook series (packed padded sequences, masking): tensors are handled
sequence-first inside, an Attention that masks before its softmax, a
Decoder that takes one token, and a Seq2Seq that fills an outputs tensor."""

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


def _check_src_len(src, src_len):
    if not torch.is_tensor(src_len) or src_len.shape != (src.shape[0],):
        raise ValueError("src_lengths must have shape (batch size,)")
    if (src_len < 1).any() or (src_len > src.shape[1]).any():
        raise ValueError("src_lengths must lie in [1, src len]")


def create_mask(src, src_len):
    # mask = [batch size, src len], True at the real tokens
    return torch.arange(src.shape[1], device=src.device)[None, :] < src_len[:, None]


class Encoder(nn.Module):
    def __init__(self, src_vocab_size: int, embed_dim: int, hidden_size: int):
        super().__init__()
        src_vocab_size = _check_size(src_vocab_size, "src_vocab_size")
        embed_dim = _check_size(embed_dim, "embed_dim")
        hidden_size = _check_size(hidden_size, "hidden_size")
        self.embed = nn.Embedding(src_vocab_size, embed_dim)
        self.rnn = nn.GRU(embed_dim, hidden_size, batch_first=True)  # one layer, one direction

    def forward(self, src, src_len):
        # src = [batch size, src len]; src_len = [batch size]
        _check_src_len(src, src_len)
        src = src.masked_fill(~create_mask(src, src_len), 0)
        embedded = self.embed(src)
        # embedded = [batch size, src len, emb dim]
        packed_embedded = nn.utils.rnn.pack_padded_sequence(
            embedded, src_len.to("cpu"), batch_first=True, enforce_sorted=False)
        packed_outputs, hidden = self.rnn(packed_embedded)
        outputs, _ = nn.utils.rnn.pad_packed_sequence(
            packed_outputs, batch_first=True, total_length=src.shape[1])
        # outputs = [batch size, src len, hid dim]; hidden = [1, batch size, hid dim]
        return outputs, hidden.squeeze(0)


class Attention(nn.Module):
    """The notebooks' Attention module, with dot / bilinear energies."""

    def forward(self, hidden, encoder_outputs, mask, W=None):
        # hidden = [batch size, hid dim]; encoder_outputs = [src len, batch size, hid dim]
        encoder_outputs = encoder_outputs.permute(1, 0, 2)
        # encoder_outputs = [batch size, src len, hid dim]
        encoder_outputs = encoder_outputs * mask.unsqueeze(2)
        if W is not None:
            hidden = torch.mm(hidden, W) if hidden.dim() == 2 else hidden @ W
        energy = torch.bmm(encoder_outputs, hidden.unsqueeze(2)).squeeze(2)
        # energy = [batch size, src len]
        energy = energy.masked_fill(mask == 0, -1e10)
        return F.softmax(energy, dim=1), encoder_outputs


_attention = Attention()


def attention(h_dec, H_enc, mask, W=None):
    if not mask.any(1).all():
        raise ValueError("mask: a row has no real position")
    a, encoder_outputs = _attention(h_dec, H_enc.permute(1, 0, 2), mask, W)
    # a = [batch size, src len]
    weighted = torch.bmm(a.unsqueeze(1), encoder_outputs).squeeze(1)
    return weighted, a


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

    def step(self, input, hidden, encoder_outputs, mask, c):
        # input = [batch size]; hidden = [batch size, dec hid dim]
        embedded = self.embed(input)
        # embedded = [batch size, emb dim]
        if self.attention == "none":
            weighted, a = c, None
        else:
            weighted, a = attention(hidden, encoder_outputs, mask,
                                    self.W if self.attention == "bilinear" else None)
        rnn_input = torch.cat((embedded, weighted), dim=1)
        hidden = self.cell(rnn_input, hidden)
        prediction = self.out(hidden)
        # prediction = [batch size, output dim]
        return prediction, hidden, a


class Seq2Seq(nn.Module):
    def __init__(self, src_vocab_size: int, tgt_vocab_size: int, embed_dim: int, hidden_size: int,
                 attention: str = "dot"):
        super().__init__()
        self.encoder = Encoder(src_vocab_size, embed_dim, hidden_size)
        self.decoder = Decoder(tgt_vocab_size, embed_dim, hidden_size, attention)

    def forward(self, src, src_len, trg):
        # src = [batch size, src len]; trg = [batch size, trg len], trg[:, 0] = <sos>
        batch_size, trg_len = trg.shape
        trg_vocab_size = self.decoder.out.out_features
        encoder_outputs, hidden = self.encoder(src, src_len)
        context = hidden
        mask = create_mask(src, src_len)
        outputs = []
        # every position is fed the given token (teacher forcing ratio 1)
        for t in range(trg_len):
            input = trg[:, t]
            output, hidden, _ = self.decoder.step(input, hidden, encoder_outputs, mask, context)
            outputs.append(output)
        outputs = torch.stack(outputs, dim=1)
        assert outputs.shape == (batch_size, trg_len, trg_vocab_size)
        return outputs


def masked_cross_entropy(logits, targets, pad=0):
    """CrossEntropyLoss(ignore_index=pad) written out: output.view(-1, V) against trg.view(-1)."""
    output_dim = logits.shape[-1]
    if isinstance(pad, bool) or not isinstance(pad, numbers.Integral) or not 0 <= pad < output_dim:
        raise ValueError("pad must be an id in [0, V)")
    output = logits.reshape(-1, output_dim)
    trg = targets.reshape(-1)
    keep = trg != pad
    if not keep.any():
        raise ValueError("no target other than pad")
    output = output[keep]
    trg = trg[keep]
    return F.cross_entropy(output, trg)


@torch.no_grad()
def greedy_decode(model, src, src_lengths, bos, eos, max_len):
    """translate_sentence for every sentence of the batch, one at a time."""
    if isinstance(max_len, bool) or not isinstance(max_len, numbers.Integral) or max_len < 1:
        raise ValueError("max_len must be at least 1")
    _check_src_len(src, src_lengths)
    translations = []
    for i in range(src.shape[0]):
        src_tensor = src[i:i + 1]
        src_len = src_lengths[i:i + 1]
        encoder_outputs, hidden = model.encoder(src_tensor, src_len)
        context = hidden
        mask = create_mask(src_tensor, src_len)
        trg_indexes = [bos]
        for _ in range(max_len):
            trg_tensor = torch.tensor([trg_indexes[-1]], dtype=torch.long, device=src.device)
            output, hidden, _ = model.decoder.step(trg_tensor, hidden, encoder_outputs, mask, context)
            pred_token = output.argmax(1).item()
            if pred_token == eos:
                break
            trg_indexes.append(pred_token)
        translations.append([int(t) for t in trg_indexes[1:]])
    return translations


def train(model, batches, *, epochs, lr, generator):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    model.train()
    for epoch in range(epochs):
        for i in torch.randperm(len(batches), generator=generator):
            src, src_len, trg_in, trg_out = batches[int(i)]
            optimizer.zero_grad()
            output = model(src, src_len, trg_in)
            loss = masked_cross_entropy(output, trg_out)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses

"""Encoder-decoder GRU with attention, laid out like the PyTorch chatbot
tutorial: a packed encoder, Luong-style score functions (dot, general), a
maskNLLLoss-style masked loss and a greedy search decoder."""

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


def _check_lengths(input_seq, input_lengths):
    batch_size, max_length = input_seq.shape
    if not torch.is_tensor(input_lengths) or tuple(input_lengths.shape) != (batch_size,):
        raise ValueError(f"src_lengths must have shape ({batch_size},)")
    if bool((input_lengths < 1).any()) or bool((input_lengths > max_length).any()):
        raise ValueError(f"src_lengths entries must be in [1, {max_length}]")


def binaryMatrix(input_lengths, max_length):
    """True at the real positions of each sequence (the tutorial's binary mask)."""
    positions = torch.arange(max_length, device=input_lengths.device)
    return positions.unsqueeze(0) < input_lengths.unsqueeze(1)


class Encoder(nn.Module):
    """The tutorial's EncoderRNN: embed, pack, GRU, unpack (one direction here)."""

    def __init__(self, src_vocab_size: int, embed_dim: int, hidden_size: int):
        super().__init__()
        src_vocab_size = _check_size(src_vocab_size, "src_vocab_size")
        embed_dim = _check_size(embed_dim, "embed_dim")
        hidden_size = _check_size(hidden_size, "hidden_size")
        self.embed = nn.Embedding(src_vocab_size, embed_dim)
        self.rnn = nn.GRU(embed_dim, hidden_size, batch_first=True)  # one layer, one direction

    def forward(self, input_seq, input_lengths):
        _check_lengths(input_seq, input_lengths)
        max_length = input_seq.shape[1]
        # the ids in the padding are never read by the packed GRU, but they
        # are looked up: map them to 0 first
        input_seq = input_seq.masked_fill(~binaryMatrix(input_lengths, max_length), 0)
        embedded = self.embed(input_seq)
        # lengths on the CPU, in any order
        packed = nn.utils.rnn.pack_padded_sequence(
            embedded, input_lengths.cpu(), batch_first=True, enforce_sorted=False)
        outputs, hidden = self.rnn(packed)
        outputs, _ = nn.utils.rnn.pad_packed_sequence(outputs, batch_first=True, total_length=max_length)
        return outputs, hidden[0]


def dot_score(hidden, encoder_output):
    return torch.sum(hidden.unsqueeze(1) * encoder_output, dim=2)


def general_score(hidden, encoder_output, W):
    # the tutorial's "general" method, as the bilinear h^d W h^e
    return torch.sum((hidden @ W).unsqueeze(1) * encoder_output, dim=2)


def attention(h_dec, H_enc, mask, W=None):
    if not bool(mask.any(dim=1).all()):
        raise ValueError("a row of mask has no True position")
    encoder_outputs = torch.where(mask.unsqueeze(2), H_enc, torch.zeros_like(H_enc))
    if W is None:
        attn_energies = dot_score(h_dec, encoder_outputs)
    else:
        attn_energies = general_score(h_dec, encoder_outputs, W)
    attn_energies = attn_energies.masked_fill(~mask, float("-inf"))
    attn_weights = F.softmax(attn_energies, dim=1)
    context = attn_weights.unsqueeze(1).bmm(encoder_outputs).squeeze(1)
    return context, attn_weights


class Decoder(nn.Module):
    """The tutorial's LuongAttnDecoderRNN, one step at a time; the attention
    reads the previous state (the course's order), not the GRU's new output."""

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

    def step(self, input_step, last_hidden, encoder_outputs, mask, c):
        embedded = self.embed(input_step)
        if self.attention == "none":
            context, attn_weights = c, None
        else:
            context, attn_weights = attention(
                last_hidden, encoder_outputs, mask, self.W if self.attention == "bilinear" else None)
        hidden = self.cell(torch.cat((embedded, context), 1), last_hidden)
        output = self.out(hidden)
        return output, hidden, attn_weights


class Seq2Seq(nn.Module):
    def __init__(self, src_vocab_size: int, tgt_vocab_size: int, embed_dim: int, hidden_size: int,
                 attention: str = "dot"):
        super().__init__()
        self.encoder = Encoder(src_vocab_size, embed_dim, hidden_size)
        self.decoder = Decoder(tgt_vocab_size, embed_dim, hidden_size, attention)

    def forward(self, input_variable, lengths, target_variable):
        encoder_outputs, encoder_hidden = self.encoder(input_variable, lengths)
        mask = binaryMatrix(lengths, input_variable.shape[1])
        decoder_hidden = encoder_hidden
        outputs = []
        # teacher forcing every step: the next input is the current target
        for t in range(target_variable.shape[1]):
            decoder_input = target_variable[:, t]
            decoder_output, decoder_hidden, _ = self.decoder.step(
                decoder_input, decoder_hidden, encoder_outputs, mask, encoder_hidden)
            outputs.append(decoder_output)
        return torch.stack(outputs, 1)


def masked_cross_entropy(logits, targets, pad=0):
    """The tutorial's maskNLLLoss over the whole batch at once: the mean of
    -log p(target) over the positions the mask keeps."""
    if isinstance(pad, bool) or not isinstance(pad, numbers.Integral) or not 0 <= pad < logits.shape[-1]:
        raise ValueError(f"pad must be an id in [0, {logits.shape[-1]})")
    mask = targets != pad
    nTotal = int(mask.sum())
    if nTotal == 0:
        raise ValueError("no target differs from pad")
    T = targets.shape[-1]
    inp_steps = logits.reshape(-1, T, logits.shape[-1])
    target_steps = targets.reshape(-1, T)
    mask_steps = mask.reshape(-1, T)
    loss = 0
    for t in range(T):
        m = mask_steps[:, t]
        if m.any():
            inp = inp_steps[:, t][m]
            target = target_steps[:, t][m]
            crossEntropy = -torch.gather(F.log_softmax(inp, dim=1), 1, target.view(-1, 1)).squeeze(1)
            loss = loss + crossEntropy.mean()
    return loss


class GreedySearchDecoder(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.encoder = model.encoder
        self.decoder = model.decoder

    def forward(self, input_seq, input_length, bos, eos, max_length):
        encoder_outputs, encoder_hidden = self.encoder(input_seq, input_length)
        mask = binaryMatrix(input_length, input_seq.shape[1])
        decoder_hidden = encoder_hidden
        decoder_input = torch.full((1,), bos, device=input_seq.device, dtype=torch.long)
        all_tokens = []
        for _ in range(max_length):
            decoder_output, decoder_hidden, _ = self.decoder.step(
                decoder_input, decoder_hidden, encoder_outputs, mask, encoder_hidden)
            _, decoder_input = torch.max(decoder_output, dim=1)
            token = int(decoder_input.item())
            if token == eos:
                break
            all_tokens.append(token)
        return all_tokens


@torch.no_grad()
def greedy_decode(model, src, src_lengths, bos, eos, max_len):
    if isinstance(max_len, bool) or not isinstance(max_len, numbers.Integral) or max_len < 1:
        raise ValueError("max_len must be an integer >= 1")
    _check_lengths(src, src_lengths)
    searcher = GreedySearchDecoder(model)
    # the tutorial decodes one sentence at a time
    return [searcher(src[b:b + 1], src_lengths[b:b + 1], bos, eos, max_len) for b in range(src.shape[0])]


def train(model, batches, *, epochs, lr, generator):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    print_losses = []
    for _ in range(epochs):
        for i in torch.randperm(len(batches), generator=generator).tolist():
            input_variable, lengths, target_in, target_variable = batches[i]
            optimizer.zero_grad()
            loss = masked_cross_entropy(model(input_variable, lengths, target_in), target_variable)
            loss.backward()
            optimizer.step()
            print_losses.append(loss.item())
    return print_losses

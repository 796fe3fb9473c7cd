"""Feed-forward neural language model that looks embeddings up as one-hot rows times E.weight."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class FFNNLM(nn.Module):
    def __init__(self, vocab_size, context_size, embed_dim, hidden_dim):
        super().__init__()
        if vocab_size < 1 or context_size < 1 or embed_dim < 1 or hidden_dim < 1:
            raise ValueError("vocab_size, context_size, embed_dim and hidden_dim must be >= 1")
        self.vocab_size = vocab_size
        self.context_size = context_size
        self.E = nn.Embedding(vocab_size, embed_dim)
        self.W = nn.Linear(context_size * embed_dim, hidden_dim)
        self.U = nn.Linear(hidden_dim, vocab_size)

    def forward(self, context):
        if context.dim() != 2 or context.size(1) != self.context_size:
            raise ValueError("context must be a (batch, context_size) tensor of token ids")
        batch = context.size(0)
        one_hot = F.one_hot(context.long(), num_classes=self.E.num_embeddings).to(self.E.weight.dtype)
        embedded = one_hot @ self.E.weight                 # (B, n, D)
        e = embedded.reshape(batch, -1)                    # [E[w_{t-n}]; ...; E[w_{t-1}]]
        h = torch.tanh(self.W(e))
        logits = self.U(h)
        return logits


def make_examples(tokens, context_size, pad):
    if context_size < 1:
        raise ValueError("context_size must be >= 1")
    contexts = []
    targets = []
    for t in range(len(tokens)):
        ctx = []
        for j in range(t - context_size, t):
            if j < 0:
                ctx.append(int(pad))
            else:
                ctx.append(int(tokens[j]))
        contexts.append(ctx)
        targets.append(int(tokens[t]))
    if len(contexts) == 0:
        return torch.zeros((0, context_size), dtype=torch.long), torch.zeros(0, dtype=torch.long)
    return torch.tensor(contexts, dtype=torch.long), torch.tensor(targets, dtype=torch.long)


def train_ffnn(model, contexts, targets, *, epochs, batch_size, lr, generator):
    if epochs < 0:
        raise ValueError("epochs must be >= 0")
    if batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    n_examples = len(contexts)
    if len(targets) != n_examples:
        raise ValueError("contexts and targets differ in length")

    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    epoch_losses = []
    for epoch in range(epochs):
        order = torch.randperm(n_examples, generator=generator)
        loss_sum = 0.0
        start = 0
        while start < n_examples:
            stop = min(start + batch_size, n_examples)
            batch = order[start:stop]
            logits = model(contexts[batch])
            loss = F.cross_entropy(logits, targets[batch].long())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss_sum += loss.item() * (stop - start)
            start = stop
        if n_examples == 0:
            epoch_losses.append(float("nan"))
        else:
            epoch_losses.append(loss_sum / n_examples)
    return epoch_losses


@torch.no_grad()
def perplexity(model, contexts, targets):
    # Evaluate in chunks: the one-hot lookup makes a (chunk, n, V) tensor.
    n_examples = len(contexts)
    total_nll = 0.0
    start = 0
    while start < n_examples:
        stop = min(start + 1024, n_examples)
        log_probs = F.log_softmax(model(contexts[start:stop]).double(), dim=-1)
        picked = log_probs.gather(1, targets[start:stop].long().view(-1, 1))
        total_nll -= picked.sum().item()
        start = stop
    if n_examples == 0:
        return float("nan")
    mean_nll = total_nll / n_examples
    try:
        return math.exp(mean_nll)
    except OverflowError:
        return float("inf")

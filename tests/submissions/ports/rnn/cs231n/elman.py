"""Elman RNN and RNN language model in the manner of Stanford CS231n's
rnn_layers.py and CaptioningRNN: minibatched (N, T, D) layer functions
(rnn_step_forward / rnn_step_backward looped by rnn_forward / rnn_backward,
word_embedding_*, temporal_affine_*, temporal_softmax_loss), each returning
a cache for its backward, with weights laid out (D, H). The course's single
sequence is a minibatch of N = 1 and its (out, in) weights are transposed
on the way in and out."""

from __future__ import annotations

import math

import numpy as np


def sigmoid(x):
    """A numerically stable version of the logistic sigmoid function."""
    pos_mask = x >= 0
    neg_mask = x < 0
    z = np.zeros_like(x)
    z[pos_mask] = np.exp(-x[pos_mask])
    z[neg_mask] = np.exp(x[neg_mask])
    top = np.ones_like(x)
    top[neg_mask] = z[neg_mask]
    return top / (1 + z)


def rnn_step_forward(x, prev_h, Wx, Wh, b, activation="sigmoid"):
    """x: (N, D), prev_h: (N, H), Wx: (D, H), Wh: (H, H), b: (H,) -> next_h, cache."""
    a = x.dot(Wx) + prev_h.dot(Wh) + b
    next_h = np.tanh(a) if activation == "tanh" else sigmoid(a)
    cache = (x, prev_h, Wx, Wh, next_h, activation)
    return next_h, cache


def rnn_step_backward(dnext_h, cache):
    """-> dx (N, D), dprev_h (N, H), dWx (D, H), dWh (H, H), db (H,)."""
    x, prev_h, Wx, Wh, next_h, activation = cache
    if activation == "tanh":
        da = dnext_h * (1 - next_h**2)
    else:
        da = dnext_h * next_h * (1 - next_h)
    dx = da.dot(Wx.T)
    dprev_h = da.dot(Wh.T)
    dWx = x.T.dot(da)
    dWh = prev_h.T.dot(da)
    db = np.sum(da, axis=0)
    return dx, dprev_h, dWx, dWh, db


def rnn_forward(x, h0, Wx, Wh, b, activation="sigmoid"):
    """x: (N, T, D), h0: (N, H) -> h (N, T, H), cache."""
    N, T, D = x.shape
    H = b.shape[0]
    h = np.zeros((N, T, H))
    prev_h = h0
    cache = []
    for t in range(T):
        prev_h, step_cache = rnn_step_forward(x[:, t, :], prev_h, Wx, Wh, b, activation)
        h[:, t, :] = prev_h
        cache.append(step_cache)
    return h, cache


def rnn_backward(dh, cache):
    """dh: (N, T, H) upstream gradients -> dx, dh0, dWx, dWh, db."""
    N, T, H = dh.shape
    D = cache[0][0].shape[1]
    dx = np.zeros((N, T, D))
    dWx = np.zeros((D, H))
    dWh = np.zeros((H, H))
    db = np.zeros(H)
    dprev_h = np.zeros((N, H))
    for t in range(T - 1, -1, -1):
        dx[:, t, :], dprev_h, dWx_t, dWh_t, db_t = rnn_step_backward(dh[:, t, :] + dprev_h, cache[t])
        dWx += dWx_t
        dWh += dWh_t
        db += db_t
    dh0 = dprev_h
    return dx, dh0, dWx, dWh, db


def word_embedding_forward(x, W):
    """x: (N, T) integer ids, W: (V, D) -> out (N, T, D), cache."""
    out = W[x]
    cache = (x, W.shape)
    return out, cache


def word_embedding_backward(dout, cache):
    """dout: (N, T, D) -> dW (V, D); a word read several times adds up."""
    x, shape = cache
    dW = np.zeros(shape)
    np.add.at(dW, x, dout)
    return dW


def affine_forward(x, w, b):
    """x: (N, D), w: (D, M), b: (M,) -> out (N, M), cache."""
    out = x.reshape(x.shape[0], -1).dot(w) + b
    cache = (x, w, b)
    return out, cache


def temporal_affine_forward(x, w, b):
    """x: (N, T, D), w: (D, M), b: (M,) -> out (N, T, M), cache."""
    N, T, D = x.shape
    M = b.shape[0]
    out = x.reshape(N * T, D).dot(w).reshape(N, T, M) + b
    cache = x, w, b, out
    return out, cache


def temporal_affine_backward(dout, cache):
    x, w, b, out = cache
    N, T, D = x.shape
    M = b.shape[0]
    dx = dout.reshape(N * T, M).dot(w.T).reshape(N, T, D)
    dw = dout.reshape(N * T, M).T.dot(x.reshape(N * T, D)).T
    db = dout.sum(axis=(0, 1))
    return dx, dw, db


def temporal_softmax(x):
    """x: (N, T, V) scores -> probabilities over V."""
    probs = np.exp(x - np.max(x, axis=2, keepdims=True))
    return probs / np.sum(probs, axis=2, keepdims=True)


def temporal_softmax_loss(x, y, mask):
    """Cross-entropy summed over the time steps and averaged over the N sequences."""
    N, T, V = x.shape
    x_flat = x.reshape(N * T, V)
    y_flat = y.reshape(N * T)
    mask_flat = mask.reshape(N * T)
    shifted = x_flat - np.max(x_flat, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    probs = np.exp(log_probs)
    loss = -np.sum(mask_flat * log_probs[np.arange(N * T), y_flat]) / N
    dx_flat = probs.copy()
    dx_flat[np.arange(N * T), y_flat] -= 1
    dx_flat /= N
    dx_flat *= mask_flat[:, None]
    dx = dx_flat.reshape(N, T, V)
    return loss, dx


def _positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


class ElmanRNN:
    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        output_size: int,
        activation: str = "sigmoid",
        rng: np.random.Generator | None = None,
    ):
        if activation not in {"sigmoid", "tanh"}:
            raise ValueError(f'Invalid activation "{activation}"')
        self.activation = activation
        D = _positive_int("input_size", input_size)
        H = _positive_int("hidden_size", hidden_size)
        V = _positive_int("output_size", output_size)
        self.input_size, self.hidden_size, self.output_size = D, H, V
        if rng is None:
            rng = np.random.default_rng()
        self.params = {}
        self.params["W_ax"] = rng.standard_normal((H, D)) / np.sqrt(D)
        self.params["W_ah"] = rng.standard_normal((H, H)) / np.sqrt(H)
        self.params["b_a"] = np.zeros(H)
        self.params["W_yh"] = rng.standard_normal((V, H)) / np.sqrt(H)
        self.params["b_y"] = np.zeros(V)
        self.grads = {}

    def _scores(self, x, h0):
        """x: (N, T, D), h0: (N, H) -> scores (N, T, V); keeps the caches."""
        Wx, Wh, b = self.params["W_ax"].T, self.params["W_ah"].T, self.params["b_a"]
        W_vocab, b_vocab = self.params["W_yh"].T, self.params["b_y"]
        h, self.rnn_cache = rnn_forward(x, h0, Wx, Wh, b, self.activation)
        scores, self.affine_cache = temporal_affine_forward(h, W_vocab, b_vocab)
        self.h = h
        return scores

    def forward(self, x, h0=None):
        x = np.array(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.input_size:
            raise ValueError(f"x must have shape (T, {self.input_size}), got {x.shape}")
        if h0 is None:
            h0 = np.zeros(self.hidden_size)
        h0 = np.array(h0, dtype=np.float64)
        if h0.shape != (self.hidden_size,):
            raise ValueError(f"h0 must have shape ({self.hidden_size},), got {h0.shape}")
        scores = self._scores(x[None], h0[None])
        self.hidden = self.h[0].copy()
        return temporal_softmax(scores)[0]

    def loss(self, x, targets, h0=None) -> float:
        y = np.array(targets)
        if y.shape != (len(x),) or not np.issubdtype(y.dtype, np.integer):
            raise ValueError(f"targets must be {len(x)} integers")
        if np.any(y < 0) or np.any(y >= self.output_size):
            raise ValueError(f"targets must lie in [0, {self.output_size})")
        self.forward(x, h0)
        x_scores = self.affine_cache[3]
        mask = np.ones(y[None].shape, dtype=bool)
        loss, self.dscores = temporal_softmax_loss(x_scores, y[None], mask)
        return float(loss)

    def backward(self) -> dict[str, np.ndarray]:
        grads = {}
        dh, dW_vocab, grads["b_y"] = temporal_affine_backward(self.dscores, self.affine_cache)
        dx, dh0, dWx, dWh, grads["b_a"] = rnn_backward(dh, self.rnn_cache)
        grads["W_yh"], grads["W_ax"], grads["W_ah"] = dW_vocab.T, dWx.T, dWh.T
        self.grad_x = dx[0]
        self.grad_h0 = dh0[0]
        self.grads = grads
        return dict(grads)


class RNNLM(ElmanRNN):
    def __init__(
        self,
        vocab_size: int,
        embed_dim: int,
        hidden_size: int,
        activation: str = "sigmoid",
        rng: np.random.Generator | None = None,
    ):
        if rng is None:
            rng = np.random.default_rng()
        super().__init__(embed_dim, hidden_size, vocab_size, activation, rng)
        self.params["E"] = rng.standard_normal((vocab_size, embed_dim)) / 100

    def _check_word(self, name, word):
        if isinstance(word, bool) or not isinstance(word, (int, np.integer)) or not 0 <= word < self.output_size:
            raise ValueError(f"{name} must be a word id in [0, {self.output_size}), got {word!r}")

    def loss(self, tokens) -> float:
        captions = np.array(tokens)
        if captions.ndim != 1 or len(captions) < 2 or not np.issubdtype(captions.dtype, np.integer):
            raise ValueError("tokens must hold at least 2 integer word ids")
        if np.any(captions < 0) or np.any(captions >= self.output_size):
            raise ValueError(f"tokens must lie in [0, {self.output_size})")
        captions_in = captions[None, :-1]
        captions_out = captions[None, 1:]
        x, self.embed_cache = word_embedding_forward(captions_in, self.params["E"])
        h0 = np.zeros((1, self.hidden_size))
        scores = self._scores(x, h0)
        mask = np.ones(captions_out.shape, dtype=bool)
        loss, self.dscores = temporal_softmax_loss(scores, captions_out, mask)
        return float(loss)

    def backward(self) -> dict[str, np.ndarray]:
        grads = super().backward()
        grads["E"] = word_embedding_backward(self.grad_x[None], self.embed_cache)
        self.grads = grads
        return dict(grads)

    def sgd_step(self, lr: float) -> None:
        if isinstance(lr, bool) or not isinstance(lr, (int, float, np.number)) or not math.isfinite(lr):
            raise ValueError(f"lr must be a finite number, got {lr!r}")
        for p, w in self.params.items():
            dw = self.grads[p]
            self.params[p] = w - lr * dw

    def sample(self, rng: np.random.Generator, start: int, max_len: int, end: int | None = None) -> list[int]:
        self._check_word("start", start)
        if end is not None:
            self._check_word("end", end)
        if isinstance(max_len, bool) or not isinstance(max_len, (int, np.integer)) or max_len < 0:
            raise ValueError(f"max_len must be an integer >= 0, got {max_len!r}")
        W_embed = self.params["E"]
        Wx, Wh, b = self.params["W_ax"].T, self.params["W_ah"].T, self.params["b_a"]
        W_vocab, b_vocab = self.params["W_yh"].T, self.params["b_y"]
        captions = []
        prev_h = np.zeros((1, self.hidden_size))
        word = np.array([start])
        for _ in range(max_len):
            x = W_embed[word]
            prev_h, _ = rnn_step_forward(x, prev_h, Wx, Wh, b, self.activation)
            scores, _ = affine_forward(prev_h, W_vocab, b_vocab)
            probs = temporal_softmax(scores[:, None, :])[0, 0]
            word = np.array([rng.choice(self.output_size, p=probs / probs.sum())])
            captions.append(int(word[0]))
            if end is not None and captions[-1] == end:
                break
        return captions


def train(model: RNNLM, sequences: list[np.ndarray], epochs: int, lr: float, rng: np.random.Generator) -> list[float]:
    if isinstance(epochs, bool) or not isinstance(epochs, (int, np.integer)) or epochs < 0:
        raise ValueError(f"epochs must be an integer >= 0, got {epochs!r}")
    if isinstance(lr, bool) or not isinstance(lr, (int, float, np.number)) or not math.isfinite(lr):
        raise ValueError(f"lr must be a finite number, got {lr!r}")
    if len(sequences) == 0:
        raise ValueError("sequences must not be empty")
    loss_history = []
    for _ in range(epochs):
        epoch_loss, num_predicted = 0.0, 0
        for idx in rng.permutation(len(sequences)):
            epoch_loss += model.loss(sequences[idx])
            model.backward()
            model.sgd_step(lr)
            num_predicted += len(sequences[idx]) - 1
        loss_history.append(epoch_loss / num_predicted)
    return loss_history

"""Gated RNNs in the layer-function style of CS231n's rnn_layers.py.

Every layer is a pair of functions: a *_forward that returns (out, cache) and
a *_backward that takes the upstream gradient and the cache. The four LSTM
gates are computed from one stacked activation a = x Wx + prev_h Wh + b,
split into i, f, o, g. Arrays keep CS231n's leading minibatch axis N (here
always 1): x is (N, T, D), h is (N, T, H).
"""

from __future__ import annotations

import numpy as np

LSTM_GATES = ("W_i", "W_f", "W_o", "W_C")  # the order of CS231n's stacked activation
LSTM_BIASES = ("b_i", "b_f", "b_o", "b_C")
GRU_GATES = ("W_r", "W_u", "W_n")
GRU_BIASES = ("b_r", "b_u", "b_n")


def sigmoid(x):
    """A numerically stable version of the logistic sigmoid function."""
    x = np.asarray(x, dtype=np.float64)
    pos_mask = x >= 0
    neg_mask = x < 0
    z = np.zeros_like(x)
    z[pos_mask] = np.exp(-x[pos_mask])
    z[neg_mask] = np.exp(x[neg_mask])
    top = np.ones_like(x)
    top[neg_mask] = z[neg_mask]
    return top / (1 + z)


def _check_sizes(input_size, hidden_size):
    if int(input_size) < 1 or int(hidden_size) < 1:
        raise ValueError(f"input_size and hidden_size must be >= 1, got {input_size} and {hidden_size}")


def _uniform_weights(rng, names, H, D):
    bound = 1.0 / np.sqrt(H)
    return {name: rng.uniform(-bound, bound, size=(H, H + D)) for name in names}


def _stack(params, gates, biases, H):
    """The course's (H, H + D) gate matrices as CS231n's Wx (D, kH), Wh (H, kH) and b (kH,)."""
    W = np.concatenate([params[name] for name in gates], axis=0)
    Wh = W[:, :H].T
    Wx = W[:, H:].T
    b = np.concatenate([params[name] for name in biases])
    return Wx, Wh, b


def _unstack(dWx, dWh, db, gates, biases, H):
    """Split stacked gradients back into one (H, H + D) array per gate."""
    grads = {}
    for k, (wname, bname) in enumerate(zip(gates, biases)):
        cols = slice(k * H, (k + 1) * H)
        grads[wname] = np.concatenate([dWh[:, cols].T, dWx[:, cols].T], axis=1)
        grads[bname] = db[cols].copy()
    return grads


# ---------------------------------------------------------------------------
# LSTM


def lstm_step_forward(x, prev_h, prev_c, Wx, Wh, b):
    """One timestep: x (N, D), prev_h and prev_c (N, H) -> next_h, next_c, cache."""
    H = prev_h.shape[1]
    a = x.dot(Wx) + prev_h.dot(Wh) + b
    i = sigmoid(a[:, :H])
    f = sigmoid(a[:, H : 2 * H])
    o = sigmoid(a[:, 2 * H : 3 * H])
    g = np.tanh(a[:, 3 * H :])
    next_c = f * prev_c + i * g
    next_h = o * np.tanh(next_c)
    cache = (x, prev_h, prev_c, Wx, Wh, i, f, o, g, next_c)
    return next_h, next_c, cache


def lstm_step_backward(dnext_h, dnext_c, cache):
    """Returns dx, dprev_h, dprev_c, dWx, dWh, db for one timestep."""
    x, prev_h, prev_c, Wx, Wh, i, f, o, g, next_c = cache
    tanh_c = np.tanh(next_c)
    dnext_c = dnext_c + dnext_h * o * (1 - tanh_c**2)
    do = dnext_h * tanh_c
    df = dnext_c * prev_c
    di = dnext_c * g
    dg = dnext_c * i
    dprev_c = dnext_c * f
    da = np.hstack((di * i * (1 - i), df * f * (1 - f), do * o * (1 - o), dg * (1 - g**2)))
    dx = da.dot(Wx.T)
    dprev_h = da.dot(Wh.T)
    dWx = x.T.dot(da)
    dWh = prev_h.T.dot(da)
    db = np.sum(da, axis=0)
    return dx, dprev_h, dprev_c, dWx, dWh, db


def lstm_forward(x, h0, c0, Wx, Wh, b):
    """x (N, T, D), h0 and c0 (N, H) -> h (N, T, H), c (N, T, H), cache."""
    N, T, _ = x.shape
    H = h0.shape[1]
    h = np.zeros((N, T, H))
    c = np.zeros((N, T, H))
    cache = []
    prev_h = h0
    prev_c = c0
    for t in range(T):
        prev_h, prev_c, step_cache = lstm_step_forward(x[:, t, :], prev_h, prev_c, Wx, Wh, b)
        h[:, t, :] = prev_h
        c[:, t, :] = prev_c
        cache.append(step_cache)
    return h, c, cache


def lstm_backward(dh, cache):
    """dh (N, T, H) -> dx, dh0, dc0, dWx, dWh, db."""
    N, T, H = dh.shape
    D = cache[0][0].shape[1]
    dx = np.zeros((N, T, D))
    dprev_h = np.zeros((N, H))
    dprev_c = np.zeros((N, H))
    dWx = np.zeros((D, 4 * H))
    dWh = np.zeros((H, 4 * H))
    db = np.zeros(4 * H)
    for t in reversed(range(T)):
        dx[:, t, :], dprev_h, dprev_c, dWx_t, dWh_t, db_t = lstm_step_backward(dh[:, t, :] + dprev_h, dprev_c, cache[t])
        dWx += dWx_t
        dWh += dWh_t
        db += db_t
    return dx, dprev_h, dprev_c, dWx, dWh, db


# ---------------------------------------------------------------------------
# GRU, written like the LSTM layer: a stacked activation for r and u, then n.


def gru_step_forward(x, prev_h, Wx, Wh, b):
    """One timestep: x (N, D), prev_h (N, H) -> next_h, cache."""
    H = prev_h.shape[1]
    a = x.dot(Wx[:, : 2 * H]) + prev_h.dot(Wh[:, : 2 * H]) + b[: 2 * H]
    r = sigmoid(a[:, :H])
    u = sigmoid(a[:, H:])
    reset_h = r * prev_h
    n = np.tanh(x.dot(Wx[:, 2 * H :]) + reset_h.dot(Wh[:, 2 * H :]) + b[2 * H :])
    next_h = (1 - u) * prev_h + u * n
    cache = (x, prev_h, Wx, Wh, r, u, n, reset_h)
    return next_h, cache


def gru_step_backward(dnext_h, cache):
    """Returns dx, dprev_h, dWx, dWh, db for one timestep."""
    x, prev_h, Wx, Wh, r, u, n, reset_h = cache
    H = prev_h.shape[1]
    dn = dnext_h * u
    du = dnext_h * (n - prev_h)
    dprev_h = dnext_h * (1 - u)
    dan = dn * (1 - n**2)
    dreset_h = dan.dot(Wh[:, 2 * H :].T)
    dprev_h += dreset_h * r
    dr = dreset_h * prev_h
    dar = dr * r * (1 - r)
    dau = du * u * (1 - u)
    da_ru = np.hstack((dar, dau))
    dx = da_ru.dot(Wx[:, : 2 * H].T) + dan.dot(Wx[:, 2 * H :].T)
    dprev_h += da_ru.dot(Wh[:, : 2 * H].T)
    dWx = x.T.dot(np.hstack((da_ru, dan)))
    dWh = np.hstack((prev_h.T.dot(da_ru), reset_h.T.dot(dan)))
    db = np.sum(np.hstack((da_ru, dan)), axis=0)
    return dx, dprev_h, dWx, dWh, db


def gru_forward(x, h0, Wx, Wh, b):
    """x (N, T, D), h0 (N, H) -> h (N, T, H), cache."""
    N, T, _ = x.shape
    H = h0.shape[1]
    h = np.zeros((N, T, H))
    cache = []
    prev_h = h0
    for t in range(T):
        prev_h, step_cache = gru_step_forward(x[:, t, :], prev_h, Wx, Wh, b)
        h[:, t, :] = prev_h
        cache.append(step_cache)
    return h, cache


def gru_backward(dh, cache):
    """dh (N, T, H) -> dx, dh0, dWx, dWh, db."""
    N, T, H = dh.shape
    D = cache[0][0].shape[1]
    dx = np.zeros((N, T, D))
    dprev_h = np.zeros((N, H))
    dWx = np.zeros((D, 3 * H))
    dWh = np.zeros((H, 3 * H))
    db = np.zeros(3 * H)
    for t in reversed(range(T)):
        dx[:, t, :], dprev_h, dWx_t, dWh_t, db_t = gru_step_backward(dh[:, t, :] + dprev_h, cache[t])
        dWx += dWx_t
        dWh += dWh_t
        db += db_t
    return dx, dprev_h, dWx, dWh, db


# ---------------------------------------------------------------------------
# The course's classes, thin wrappers around the layer functions.


class LSTM:
    def __init__(self, input_size: int, hidden_size: int, rng: np.random.Generator | None = None):
        _check_sizes(input_size, hidden_size)
        rng = np.random.default_rng() if rng is None else rng
        self.input_size, self.hidden_size = int(input_size), int(hidden_size)
        H, D = self.hidden_size, self.input_size
        self.params = _uniform_weights(rng, ("W_f", "W_i", "W_C", "W_o"), H, D)
        self.params["b_f"] = np.ones(H)
        for name in ("b_i", "b_C", "b_o"):
            self.params[name] = np.zeros(H)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def forward(self, x, h0=None, C0=None):
        H = self.hidden_size
        x = np.asarray(x, dtype=np.float64)
        h0 = np.zeros(H) if h0 is None else np.asarray(h0, dtype=np.float64)
        C0 = np.zeros(H) if C0 is None else np.asarray(C0, dtype=np.float64)
        Wx, Wh, b = _stack(self.params, LSTM_GATES, LSTM_BIASES, H)
        h, c, self.cache = lstm_forward(x[None], h0[None], C0[None], Wx, Wh, b)
        self.cell = c[0]
        return h[0]

    def backward(self, grad_h):
        dh = np.asarray(grad_h, dtype=np.float64)[None]
        dx, dh0, dc0, dWx, dWh, db = lstm_backward(dh, self.cache)
        self.grads = _unstack(dWx, dWh, db, LSTM_GATES, LSTM_BIASES, self.hidden_size)
        self.grad_h0 = dh0[0]
        self.grad_C0 = dc0[0]
        return dx[0]


class GRU:
    def __init__(self, input_size: int, hidden_size: int, rng: np.random.Generator | None = None):
        _check_sizes(input_size, hidden_size)
        rng = np.random.default_rng() if rng is None else rng
        self.input_size, self.hidden_size = int(input_size), int(hidden_size)
        H, D = self.hidden_size, self.input_size
        self.params = _uniform_weights(rng, GRU_GATES, H, D)
        for name in GRU_BIASES:
            self.params[name] = np.zeros(H)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def forward(self, x, h0=None):
        H = self.hidden_size
        x = np.asarray(x, dtype=np.float64)
        h0 = np.zeros(H) if h0 is None else np.asarray(h0, dtype=np.float64)
        Wx, Wh, b = _stack(self.params, GRU_GATES, GRU_BIASES, H)
        h, self.cache = gru_forward(x[None], h0[None], Wx, Wh, b)
        return h[0]

    def backward(self, grad_h):
        dh = np.asarray(grad_h, dtype=np.float64)[None]
        dx, dh0, dWx, dWh, db = gru_backward(dh, self.cache)
        self.grads = _unstack(dWx, dWh, db, GRU_GATES, GRU_BIASES, self.hidden_size)
        self.grad_h0 = dh0[0]
        return dx[0]


CELLS = {"lstm": LSTM, "gru": GRU}


def _cell_class(cell):
    if cell not in CELLS:
        raise ValueError(f"cell must be 'lstm' or 'gru', got {cell!r}")
    return CELLS[cell]


class StackedRNN:
    def __init__(self, cell: str, input_size: int, hidden_size: int, num_layers: int, rng=None):
        cell_class = _cell_class(cell)
        if int(num_layers) < 1:
            raise ValueError(f"num_layers must be >= 1, got {num_layers}")
        _check_sizes(input_size, hidden_size)
        rng = np.random.default_rng() if rng is None else rng
        self.layers = [
            cell_class(input_size if l == 0 else hidden_size, hidden_size, rng) for l in range(int(num_layers))
        ]

    def forward(self, x):
        out = x
        for layer in self.layers:
            out = layer.forward(out)
        return out

    def backward(self, grad_h):
        dout = grad_h
        for layer in reversed(self.layers):
            dout = layer.backward(dout)
        return dout


class BiRNN:
    def __init__(self, cell: str, input_size: int, hidden_size: int, rng=None):
        cell_class = _cell_class(cell)
        _check_sizes(input_size, hidden_size)
        rng = np.random.default_rng() if rng is None else rng
        self.fwd = cell_class(input_size, hidden_size, rng)
        self.bwd = cell_class(input_size, hidden_size, rng)

    def forward(self, x):
        x = np.asarray(x, dtype=np.float64)
        h_fwd = self.fwd.forward(x)
        h_bwd = self.bwd.forward(x[::-1])[::-1]
        return np.concatenate([h_fwd, h_bwd], axis=1)

    def backward(self, grad_y):
        grad_y = np.asarray(grad_y, dtype=np.float64)
        H = self.fwd.hidden_size
        dx_fwd = self.fwd.backward(grad_y[:, :H])
        dx_bwd = self.bwd.backward(grad_y[::-1, H:])[::-1]
        return dx_fwd + dx_bwd


def clip_grad_norm(grads, max_norm):
    """torch.nn.utils.clip_grad_norm_'s global norm, returning new arrays instead of scaling in place."""
    if not max_norm > 0:
        raise ValueError(f"max_norm must be > 0, got {max_norm}")
    norms = [np.linalg.norm(np.ravel(g)) for g in grads.values()]
    total_norm = float(np.linalg.norm(norms)) if norms else 0.0
    clip_coef = max_norm / total_norm if total_norm > 0 else np.inf
    if clip_coef < 1:
        clipped = {k: g * clip_coef for k, g in grads.items()}
    else:
        clipped = {k: np.array(g, copy=True) for k, g in grads.items()}
    return clipped, total_norm


# ---------------------------------------------------------------------------
# The language model, in the shape of CS231n's CaptioningRNN.


def word_embedding_forward(x, W):
    out = W[x]
    cache = (x, W)
    return out, cache


def word_embedding_backward(dout, cache):
    x, W = cache
    dW = np.zeros_like(W)
    np.add.at(dW, x, dout)
    return dW


def temporal_affine_forward(x, w, b):
    """x (N, T, D), w (D, M), b (M,) -> out (N, T, M)."""
    N, T, D = x.shape
    M = b.shape[0]
    out = x.reshape(N * T, D).dot(w).reshape(N, T, M) + b
    cache = (x, w, b, out)
    return out, cache


def temporal_affine_backward(dout, cache):
    x, w, b, out = cache
    N, T, D = x.shape
    M = b.shape[0]
    dx = dout.reshape(N * T, M).dot(w.T).reshape(N, T, D)
    dw = dout.reshape(N * T, M).T.dot(x.reshape(N * T, D)).T
    db = dout.sum(axis=(0, 1))
    return dx, dw, db


def temporal_softmax_loss(x, y, mask):
    """x (N, T, V) scores, y (N, T) targets, mask (N, T) -> summed loss and dx."""
    N, T, V = x.shape
    x_flat = x.reshape(N * T, V)
    y_flat = y.reshape(N * T)
    mask_flat = mask.reshape(N * T)
    shifted = x_flat - np.max(x_flat, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    probs = np.exp(log_probs)
    loss = -np.sum(mask_flat * np.log(probs[np.arange(N * T), y_flat]))
    dx_flat = probs.copy()
    dx_flat[np.arange(N * T), y_flat] -= 1
    dx_flat *= mask_flat[:, None]
    dx = dx_flat.reshape(N, T, V)
    return loss, dx


class LSTMLM:
    def __init__(self, vocab_size: int, embed_dim: int, hidden_size: int, num_layers: int = 1, rng=None):
        if int(vocab_size) < 1 or int(embed_dim) < 1 or int(hidden_size) < 1:
            raise ValueError("vocab_size, embed_dim and hidden_size must be >= 1")
        if int(num_layers) < 1:
            raise ValueError(f"num_layers must be >= 1, got {num_layers}")
        rng = np.random.default_rng() if rng is None else rng
        V, D, H = int(vocab_size), int(embed_dim), int(hidden_size)
        self.params = {}
        self.params["E"] = rng.standard_normal((V, D)) * 0.1
        self.params["W_y"] = rng.uniform(-1.0 / np.sqrt(H), 1.0 / np.sqrt(H), size=(V, H))
        self.params["b_y"] = np.zeros(V)
        self.rnn = StackedRNN("lstm", D, H, int(num_layers), rng)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def loss(self, tokens) -> float:
        tokens = np.asarray(tokens)
        captions_in = tokens[None, :-1]
        captions_out = tokens[None, 1:]
        mask = np.ones(captions_out.shape)
        x, self.embed_cache = word_embedding_forward(captions_in, self.params["E"])
        h = self.rnn.forward(x[0])[None]
        scores, self.affine_cache = temporal_affine_forward(h, self.params["W_y"].T, self.params["b_y"])
        loss, self.dscores = temporal_softmax_loss(scores, captions_out, mask)
        return float(loss)

    def backward(self) -> None:
        dh, dw, db = temporal_affine_backward(self.dscores, self.affine_cache)
        dx = self.rnn.backward(dh[0])
        self.grads = {
            "E": word_embedding_backward(dx[None], self.embed_cache),
            "W_y": dw.T.copy(),
            "b_y": db,
        }

    def named_grads(self) -> dict[str, np.ndarray]:
        grads = {name: self.grads[name] for name in ("E", "W_y", "b_y")}
        for l, layer in enumerate(self.rnn.layers):
            for key in layer.params:
                grads[f"rnn.{l}.{key}"] = layer.grads[key]
        return grads

    def step(self, lr: float, max_norm: float | None = None) -> float:
        grads = self.named_grads()
        if max_norm is not None:
            grads, total_norm = clip_grad_norm(grads, max_norm)
        else:
            total_norm = float(np.sqrt(sum(np.sum(g**2) for g in grads.values())))
        for name in ("E", "W_y", "b_y"):
            self.params[name] = self.params[name] - lr * grads[name]
        for l, layer in enumerate(self.rnn.layers):
            for key in layer.params:
                layer.params[key] = layer.params[key] - lr * grads[f"rnn.{l}.{key}"]
        return total_norm


def train(model, sequences, epochs, lr, rng, max_norm=None):
    losses = []
    for _ in range(epochs):
        total_loss = 0.0
        num_predicted = 0
        for idx in rng.permutation(len(sequences)):
            seq = sequences[idx]
            total_loss += model.loss(seq)
            model.backward()
            model.step(lr, max_norm)
            num_predicted += len(seq) - 1
        losses.append(total_loss / num_predicted)
    return losses

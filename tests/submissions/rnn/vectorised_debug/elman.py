import os
import tempfile

import numpy as np

DEBUG = True


def _dbg(*args):
    if DEBUG:
        print("[elman]", *args)


def _int_arg(v, name, low=1):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
    return int(v)


def _sigmoid(a):
    out = np.empty_like(a)
    pos = a >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-a[pos]))
    e = np.exp(a[~pos])
    out[~pos] = e / (1.0 + e)
    return out


def _log_softmax(z):
    m = z.max(axis=-1, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(axis=-1, keepdims=True))


class ElmanRNN:
    def __init__(self, input_size, hidden_size, output_size, activation="sigmoid", rng=None):
        I = _int_arg(input_size, "input_size")
        J = _int_arg(hidden_size, "hidden_size")
        K = _int_arg(output_size, "output_size")
        if activation == "sigmoid":
            self._f, self._df = _sigmoid, (lambda h: h * (1.0 - h))
        elif activation == "tanh":
            self._f, self._df = np.tanh, (lambda h: 1.0 - h * h)
        else:
            raise ValueError(f"unknown activation {activation!r} (use 'sigmoid' or 'tanh')")
        self.activation = activation
        rng = np.random.default_rng() if rng is None else rng

        def init(shape, fan_in):
            return rng.uniform(-1.0, 1.0, size=shape) / np.sqrt(fan_in)

        self.params = {
            "W_ah": init((J, J), J),
            "W_ax": init((J, I), I),
            "b_a": np.zeros(J),
            "W_yh": init((K, J), J),
            "b_y": np.zeros(K),
        }
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.hidden = None
        self.grad_h0 = None
        self._saved = None

    def _prepare(self, x, h0):
        p = self.params
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != p["W_ax"].shape[1]:
            raise ValueError(f"x must be (T, {p['W_ax'].shape[1]}), got {x.shape}")
        J = p["W_ah"].shape[0]
        h0 = np.zeros(J) if h0 is None else np.asarray(h0, dtype=np.float64)
        if h0.shape != (J,):
            raise ValueError(f"h0 must be ({J},), got {h0.shape}")
        return x, h0

    def _forward(self, x, h0):
        p = self.params
        T = x.shape[0]
        J = p["W_ah"].shape[0]
        # input contribution for all time steps at once
        pre = np.einsum("ti,ji->tj", x, p["W_ax"]) + p["b_a"]
        H = np.empty((T, J))
        h = h0
        for t in range(T):
            h = self._f(pre[t] + p["W_ah"] @ h)
            H[t] = h
        # output layer batched over time
        Z = np.einsum("tj,kj->tk", H, p["W_yh"]) + p["b_y"]
        _dbg("forward x", x.shape, "hidden", H.shape, "logits", Z.shape)
        return H, Z

    def forward(self, x, h0=None):
        x, h0 = self._prepare(x, h0)
        H, Z = self._forward(x, h0)
        self.hidden = H
        return np.exp(_log_softmax(Z))

    def loss(self, x, targets, h0=None):
        x, h0 = self._prepare(x, h0)
        targets = np.asarray(targets)
        K = self.params["W_yh"].shape[0]
        if targets.shape != (x.shape[0],):
            raise ValueError(f"targets must be ({x.shape[0]},), got {targets.shape}")
        if targets.size:
            if targets.dtype.kind not in "iu":
                raise ValueError("targets must be integer ids")
            if targets.min() < 0 or targets.max() >= K:
                raise ValueError(f"targets must be in [0, {K})")
        targets = targets.astype(np.int64)
        H, Z = self._forward(x, h0)
        self.hidden = H
        logp = _log_softmax(Z)
        self._saved = (x, targets, h0, H, np.exp(logp))
        return float(-logp[np.arange(len(targets)), targets].sum())

    def _grads(self):
        if self._saved is None:
            raise RuntimeError("backward() needs a previous loss() call")
        x, targets, h0, H, Y = self._saved
        p = self.params
        T = x.shape[0]
        dZ = Y.copy()
        dZ[np.arange(T), targets] -= 1.0
        dH = dZ @ p["W_yh"]
        dA = np.empty_like(H)
        carry = np.zeros(H.shape[1])
        dphi = self._df(H)
        for t in range(T - 1, -1, -1):
            dA[t] = (dH[t] + carry) * dphi[t]
            carry = dA[t] @ p["W_ah"]
        H_prev = np.vstack([h0[None, :], H[:-1]]) if T else np.zeros((0, H.shape[1]))
        g = {
            "W_ah": np.einsum("tj,tk->jk", dA, H_prev),
            "W_ax": np.einsum("tj,ti->ji", dA, x),
            "b_a": dA.sum(axis=0),
            "W_yh": np.einsum("tk,tj->kj", dZ, H),
            "b_y": dZ.sum(axis=0),
        }
        dX = dA @ p["W_ax"]
        _dbg("backward dZ", dZ.shape, "dA", dA.shape, "dX", dX.shape)
        return g, carry, dX

    def backward(self):
        g, gh0, _ = self._grads()
        self.grads = g
        self.grad_h0 = gh0
        return {k: v.copy() for k, v in g.items()}


class RNNLM:
    def __init__(self, vocab_size, embed_dim, hidden_size, activation="sigmoid", rng=None):
        V = _int_arg(vocab_size, "vocab_size")
        D = _int_arg(embed_dim, "embed_dim")
        J = _int_arg(hidden_size, "hidden_size")
        rng = np.random.default_rng() if rng is None else rng
        self.cell = ElmanRNN(D, J, V, activation=activation, rng=rng)
        self.params = {"E": rng.uniform(-0.1, 0.1, size=(V, D))}
        for k, v in self.cell.params.items():
            self.params[k] = v
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self._tok = None
        self._has_grads = False

    def _bind(self):
        self.cell.params = self.params

    def _check_tokens(self, tokens):
        tokens = np.asarray(tokens)
        V = self.params["E"].shape[0]
        if tokens.ndim != 1 or len(tokens) < 2:
            raise ValueError("tokens must be a 1-D array with at least two ids")
        if tokens.dtype.kind not in "iu":
            raise ValueError("tokens must be integer ids")
        if tokens.min() < 0 or tokens.max() >= V:
            raise ValueError(f"token ids must be in [0, {V})")
        return tokens.astype(np.int64)

    def loss(self, tokens):
        tokens = self._check_tokens(tokens)
        self._bind()
        X = self.params["E"][tokens[:-1]]
        _dbg("RNNLM.loss embedded", X.shape)
        out = self.cell.loss(X, tokens[1:])
        self._tok = tokens
        return out

    def backward(self):
        if self._tok is None:
            raise RuntimeError("backward() needs a previous loss() call")
        self._bind()
        g, _, dX = self.cell._grads()
        dE = np.zeros_like(self.params["E"])
        np.add.at(dE, self._tok[:-1], dX)
        self.grads = {"E": dE, **g}
        self._has_grads = True
        return {k: v.copy() for k, v in self.grads.items()}

    def sgd_step(self, lr):
        if isinstance(lr, (bool, np.bool_)) or not np.isscalar(lr) or not np.isreal(lr):
            raise ValueError(f"lr must be a real number, got {lr!r}")
        if not np.isfinite(lr) or lr < 0:
            raise ValueError(f"lr must be finite and non-negative, got {lr!r}")
        if not self._has_grads:
            raise RuntimeError("sgd_step() needs a previous backward() call")
        self.params.update({k: self.params[k] - lr * self.grads[k] for k in self.params})
        self._bind()

    def sample(self, rng, start, max_len, end=None):
        V = self.params["E"].shape[0]
        _int_arg(start, "start", low=0)
        if start >= V:
            raise ValueError(f"start must be < {V}")
        if end is not None:
            _int_arg(end, "end", low=0)
            if end >= V:
                raise ValueError(f"end must be < {V}")
        _int_arg(max_len, "max_len", low=0)
        p = self.params
        h = np.zeros(p["W_ah"].shape[0])
        tok = int(start)
        drawn = []
        while len(drawn) < max_len:
            h = self.cell._f(p["W_ah"] @ h + p["W_ax"] @ p["E"][tok] + p["b_a"])
            probs = np.exp(_log_softmax(p["W_yh"] @ h + p["b_y"]))
            cdf = np.cumsum(probs)
            tok = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
            tok = min(tok, V - 1)
            drawn.append(tok)
            if end is not None and tok == end:
                break
        return drawn


def train(model, sequences, epochs, lr, rng):
    _int_arg(epochs, "epochs", low=0)
    if len(sequences) == 0:
        raise ValueError("sequences is empty")
    history = []
    with tempfile.TemporaryDirectory() as workdir:
        for epoch in range(epochs):
            total, n_tok = 0.0, 0
            for i in rng.permutation(len(sequences)):
                seq = sequences[i]
                total += model.loss(seq)
                model.backward()
                model.sgd_step(lr)
                n_tok += len(seq) - 1
            history.append(total / n_tok)
            ckpt = os.path.join(workdir, f"epoch{epoch}.npy")
            np.save(ckpt, np.array([history[-1]]))
            _dbg("epoch", epoch, "loss/token", history[-1], "checkpoint", os.path.basename(ckpt))
    return history

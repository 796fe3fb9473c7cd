"""Elman recurrent network and RNN language model, written step by step."""

import math

import numpy as np


def _positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _sigmoid_vec(a):
    out = np.empty_like(a)
    for j in range(a.shape[0]):
        v = a[j]
        if v >= 0:
            out[j] = 1.0 / (1.0 + math.exp(-v))
        else:
            e = math.exp(v)
            out[j] = e / (1.0 + e)
    return out


def _softmax_vec(z):
    m = np.max(z)
    e = np.exp(z - m)
    return e / np.sum(e)


def _log_softmax_at(z, k):
    m = np.max(z)
    return float(z[k] - m - np.log(np.sum(np.exp(z - m))))


def _draw(rng, p):
    u = rng.random()
    cumulative = 0.0
    last_positive = None
    for k in range(p.shape[0]):
        if p[k] > 0:
            last_positive = k
        cumulative += p[k]
        if u < cumulative:
            return k
    return last_positive


class ElmanRNN:
    def __init__(self, input_size, hidden_size, output_size, activation="sigmoid", rng=None):
        I = _positive_int(input_size, "input_size")
        J = _positive_int(hidden_size, "hidden_size")
        K = _positive_int(output_size, "output_size")
        if activation not in ("sigmoid", "tanh"):
            raise ValueError(f"activation must be 'sigmoid' or 'tanh', got {activation!r}")
        if rng is None:
            rng = np.random.default_rng()
        self.input_size, self.hidden_size, self.output_size = I, J, K
        self.activation = activation
        self.params = {
            "W_ah": rng.uniform(-1.0 / math.sqrt(J), 1.0 / math.sqrt(J), size=(J, J)),
            "W_ax": rng.uniform(-1.0 / math.sqrt(I), 1.0 / math.sqrt(I), size=(J, I)),
            "b_a": np.zeros(J),
            "W_yh": rng.uniform(-1.0 / math.sqrt(J), 1.0 / math.sqrt(J), size=(K, J)),
            "b_y": np.zeros(K),
        }
        self.grads = {}
        self.hidden = None
        self.grad_h0 = None
        self._last = None

    # -- helpers -----------------------------------------------------------
    def _act(self, a):
        if self.activation == "sigmoid":
            return _sigmoid_vec(a)
        return np.tanh(a)

    def _act_grad(self, h):
        if self.activation == "sigmoid":
            return h * (1.0 - h)
        return 1.0 - h * h

    def _check_x(self, x):
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.params["W_ax"].shape[1]:
            raise ValueError(
                f"x must have shape (T, {self.params['W_ax'].shape[1]}), got {x.shape}")
        return x

    def _check_h0(self, h0):
        J = self.params["W_ah"].shape[0]
        if h0 is None:
            return np.zeros(J)
        h0 = np.asarray(h0, dtype=np.float64)
        if h0.shape != (J,):
            raise ValueError(f"h0 must have shape ({J},), got {h0.shape}")
        return h0

    def _run(self, x, h0):
        """Returns hidden states (T, J), logits (T, K) and probabilities (T, K)."""
        W_ah, W_ax, b_a = self.params["W_ah"], self.params["W_ax"], self.params["b_a"]
        W_yh, b_y = self.params["W_yh"], self.params["b_y"]
        T = x.shape[0]
        J, K = W_ah.shape[0], W_yh.shape[0]
        hidden = np.zeros((T, J))
        logits = np.zeros((T, K))
        probs = np.zeros((T, K))
        h = h0
        for t in range(T):
            a = W_ah @ h + W_ax @ x[t] + b_a
            h = self._act(a)
            z = W_yh @ h + b_y
            hidden[t] = h
            logits[t] = z
            probs[t] = _softmax_vec(z)
        return hidden, logits, probs

    # -- public API --------------------------------------------------------
    def forward(self, x, h0=None):
        x = self._check_x(x)
        h0 = self._check_h0(h0)
        hidden, _, probs = self._run(x, h0)
        self.hidden = hidden
        return probs

    def loss(self, x, targets, h0=None):
        x = self._check_x(x)
        h0 = self._check_h0(h0)
        targets = np.asarray(targets)
        T = x.shape[0]
        K = self.params["W_yh"].shape[0]
        if targets.shape != (T,):
            raise ValueError(f"targets must have shape ({T},), got {targets.shape}")
        if T and not np.issubdtype(targets.dtype, np.integer):
            raise ValueError("targets must be integers")
        targets = targets.astype(np.int64)
        for t in range(T):
            if targets[t] < 0 or targets[t] >= K:
                raise ValueError(f"target {targets[t]} out of range [0, {K})")
        hidden, logits, probs = self._run(x, h0)
        self.hidden = hidden
        total = 0.0
        for t in range(T):
            total -= _log_softmax_at(logits[t], targets[t])
        self._last = (x, targets, h0, hidden, probs)
        return float(total)

    def _bptt(self):
        if self._last is None:
            raise RuntimeError("backward called before loss")
        x, targets, h0, hidden, probs = self._last
        W_ah, W_ax, W_yh = self.params["W_ah"], self.params["W_ax"], self.params["W_yh"]
        T = x.shape[0]
        g = {name: np.zeros_like(value) for name, value in self.params.items()}
        grad_x = np.zeros_like(x)
        dh_next = np.zeros(W_ah.shape[0])
        for t in range(T - 1, -1, -1):
            dz = probs[t].copy()
            dz[targets[t]] -= 1.0
            h_t = hidden[t]
            h_prev = hidden[t - 1] if t > 0 else h0
            g["W_yh"] += np.outer(dz, h_t)
            g["b_y"] += dz
            dh = W_yh.T @ dz + dh_next
            da = dh * self._act_grad(h_t)
            g["W_ah"] += np.outer(da, h_prev)
            g["W_ax"] += np.outer(da, x[t])
            g["b_a"] += da
            grad_x[t] = W_ax.T @ da
            dh_next = W_ah.T @ da
        return g, dh_next, grad_x

    def backward(self):
        grads, grad_h0, _ = self._bptt()
        self.grads = grads
        self.grad_h0 = grad_h0
        return {name: value.copy() for name, value in grads.items()}

    def step(self, x_t, h):
        """One recurrence step from h with input x_t; returns (new h, probs)."""
        a = self.params["W_ah"] @ h + self.params["W_ax"] @ x_t + self.params["b_a"]
        h_new = self._act(a)
        return h_new, _softmax_vec(self.params["W_yh"] @ h_new + self.params["b_y"])


class RNNLM:
    def __init__(self, vocab_size, embed_dim, hidden_size, activation="sigmoid", rng=None):
        V = _positive_int(vocab_size, "vocab_size")
        D = _positive_int(embed_dim, "embed_dim")
        J = _positive_int(hidden_size, "hidden_size")
        if activation not in ("sigmoid", "tanh"):
            raise ValueError(f"activation must be 'sigmoid' or 'tanh', got {activation!r}")
        if rng is None:
            rng = np.random.default_rng()
        self.vocab_size, self.embed_dim, self.hidden_size = V, D, J
        self.activation = activation
        E = rng.normal(0.0, 0.1, size=(V, D))
        self.rnn = ElmanRNN(D, J, V, activation=activation, rng=rng)
        self.params = {"E": E}
        self.params.update(self.rnn.params)
        self.grads = {}
        self._tokens = None

    def _tokens_array(self, tokens, min_len):
        arr = np.asarray(tokens)
        if arr.ndim != 1:
            raise ValueError("tokens must be a 1-D sequence of integers")
        if arr.size and not np.issubdtype(arr.dtype, np.integer):
            raise ValueError("tokens must be integers")
        if arr.shape[0] < min_len:
            raise ValueError(f"tokens must hold at least {min_len} entries")
        V = self.params["E"].shape[0]
        for tok in arr:
            if tok < 0 or tok >= V:
                raise ValueError(f"token {tok} out of range [0, {V})")
        return arr.astype(np.int64)

    def _sync(self):
        self.rnn.params = self.params

    def loss(self, tokens):
        tokens = self._tokens_array(tokens, 2)
        self._sync()
        E = self.params["E"]
        inputs = tokens[:-1]
        x = np.zeros((inputs.shape[0], E.shape[1]))
        for t in range(inputs.shape[0]):
            x[t] = E[inputs[t]]
        value = self.rnn.loss(x, tokens[1:])
        self._tokens = tokens
        return value

    def backward(self):
        if self._tokens is None:
            raise RuntimeError("backward called before loss")
        self._sync()
        grads, _, grad_x = self.rnn._bptt()
        dE = np.zeros_like(self.params["E"])
        inputs = self._tokens[:-1]
        for t in range(inputs.shape[0]):
            dE[inputs[t]] += grad_x[t]
        out = {"E": dE}
        for name in ("W_ah", "W_ax", "b_a", "W_yh", "b_y"):
            out[name] = grads[name]
        self.grads = out
        return {name: value.copy() for name, value in out.items()}

    def sgd_step(self, lr):
        try:
            lr = float(lr)
        except (TypeError, ValueError):
            raise ValueError(f"lr must be a number, got {lr!r}") from None
        if not math.isfinite(lr) or lr < 0:
            raise ValueError(f"lr must be a finite non-negative number, got {lr}")
        if not self.grads:
            raise RuntimeError("sgd_step called before backward")
        for name in list(self.params):
            self.params[name] = self.params[name] - lr * self.grads[name]
        self._sync()

    def sample(self, rng, start, max_len, end=None):
        V = self.params["E"].shape[0]
        for value, name in ((start, "start"), (end, "end")):
            if name == "end" and value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < V:
                raise ValueError(f"{name} must be a token id in [0, {V}), got {value!r}")
        if isinstance(max_len, bool) or not isinstance(max_len, (int, np.integer)) or max_len < 0:
            raise ValueError(f"max_len must be a non-negative integer, got {max_len!r}")
        self._sync()
        h = np.zeros(self.params["W_ah"].shape[0])
        token = int(start)
        drawn = []
        while len(drawn) < max_len:
            h, p = self.rnn.step(self.params["E"][token], h)
            token = int(_draw(rng, p))
            drawn.append(token)
            if end is not None and token == end:
                break
        return drawn


def train(model, sequences, epochs, lr, rng):
    if isinstance(epochs, bool) or not isinstance(epochs, (int, np.integer)) or epochs < 0:
        raise ValueError(f"epochs must be a non-negative integer, got {epochs!r}")
    if len(sequences) == 0:
        raise ValueError("sequences must not be empty")
    history = []
    for _ in range(epochs):
        order = rng.permutation(len(sequences))
        total = 0.0
        count = 0
        for i in order:
            seq = sequences[int(i)]
            total += model.loss(seq)
            model.backward()
            model.sgd_step(lr)
            count += len(seq) - 1
        history.append(total / count)
    return history

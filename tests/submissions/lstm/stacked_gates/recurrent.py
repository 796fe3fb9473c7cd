"""LSTM, GRU, deep and bidirectional RNNs: gates stacked into one matrix product."""

import numpy as np

LSTM_GATES = ("f", "i", "C", "o")
GRU_GATES = ("r", "u", "n")


# ---------------------------------------------------------------------------
# helpers

def sigmoid(x):
    """Numerically stable logistic function: exp is only ever taken of -|x|."""
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return int(value)


def _uniform_weights(rng, names, rows, cols):
    # Assumption: each matrix is one call rng.uniform(-1/sqrt(J), 1/sqrt(J), size=(J, J + I)),
    # made in the order the names are listed.
    bound = 1.0 / np.sqrt(rows)
    return {name: rng.uniform(-bound, bound, size=(rows, cols)) for name in names}


def _sequence(x, width, what="x"):
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != width:
        raise ValueError(f"{what} must have shape (T, {width}), got {x.shape}")
    return x


def _state(s, size, what):
    if s is None:
        return np.zeros(size)
    s = np.array(s, dtype=np.float64)  # a private copy
    if s.shape != (size,):
        raise ValueError(f"{what} must have shape ({size},), got {s.shape}")
    return s


def _stack(params, prefix, gates):
    return np.concatenate([params[prefix + g] for g in gates], axis=0)


# ---------------------------------------------------------------------------
# cells

class LSTM:
    """Long short-term memory layer; the four gates come out of one (4J, J + I) product."""

    def __init__(self, input_size, hidden_size, rng=None):
        self.input_size = _positive_int("input_size", input_size)
        self.hidden_size = _positive_int("hidden_size", hidden_size)
        if rng is None:
            rng = np.random.default_rng()
        J, I = self.hidden_size, self.input_size
        self.params = _uniform_weights(rng, ["W_" + g for g in LSTM_GATES], J, J + I)
        self.params["b_f"] = np.ones(J)
        self.params["b_i"] = np.zeros(J)
        self.params["b_C"] = np.zeros(J)
        self.params["b_o"] = np.zeros(J)
        self.grads = {}
        self._cache = None

    def forward(self, x, h0=None, C0=None):
        J, I = self.hidden_size, self.input_size
        x = _sequence(x, I)
        h = _state(h0, J, "h0")
        c = _state(C0, J, "C0")
        W = _stack(self.params, "W_", LSTM_GATES)          # (4J, J + I)
        b = _stack(self.params, "b_", LSTM_GATES)          # (4J,)

        T = x.shape[0]
        Z = np.empty((T, J + I))          # z_t = [h_{t-1}; x_t]
        acts = np.empty((T, 4 * J))       # [f, i, g, o] after their nonlinearities
        C = np.empty((T, J))
        H = np.empty((T, J))
        C_prev = np.empty((T, J))
        for t in range(T):
            Z[t, :J] = h
            Z[t, J:] = x[t]
            a = W @ Z[t] + b
            acts[t, :2 * J] = sigmoid(a[:2 * J])
            acts[t, 2 * J:3 * J] = np.tanh(a[2 * J:3 * J])
            acts[t, 3 * J:] = sigmoid(a[3 * J:])
            f, i, g, o = np.split(acts[t], 4)
            C_prev[t] = c
            c = f * c + i * g
            h = o * np.tanh(c)
            C[t] = c
            H[t] = h

        self._cache = (Z, acts, C, C_prev)
        self.cell = C.copy()
        return H

    def backward(self, grad_h):
        if self._cache is None:
            raise RuntimeError("backward called before forward")
        Z, acts, C, C_prev = self._cache
        J = self.hidden_size
        T = Z.shape[0]
        grad_h = np.asarray(grad_h, dtype=np.float64)
        if grad_h.shape != (T, J):
            raise ValueError(f"grad_h must have shape ({T}, {J}), got {grad_h.shape}")

        W = _stack(self.params, "W_", LSTM_GATES)
        W_h = W[:, :J]
        f, i, g, o = (acts[:, k * J:(k + 1) * J] for k in range(4))
        tanh_C = np.tanh(C)

        dA = np.empty((T, 4 * J))         # d loss / d gate pre-activations
        dh_next = np.zeros(J)
        dc_next = np.zeros(J)
        for t in range(T - 1, -1, -1):
            dh = grad_h[t] + dh_next
            dc = dc_next + dh * o[t] * (1.0 - tanh_C[t] ** 2)
            dA[t, :J] = dc * C_prev[t] * f[t] * (1.0 - f[t])
            dA[t, J:2 * J] = dc * g[t] * i[t] * (1.0 - i[t])
            dA[t, 2 * J:3 * J] = dc * i[t] * (1.0 - g[t] ** 2)
            dA[t, 3 * J:] = dh * tanh_C[t] * o[t] * (1.0 - o[t])
            dh_next = W_h.T @ dA[t]
            dc_next = dc * f[t]

        dW = dA.T @ Z
        db = dA.sum(axis=0)
        grads = {}
        for k, gate in enumerate(LSTM_GATES):
            grads["W_" + gate] = dW[k * J:(k + 1) * J].copy()
            grads["b_" + gate] = db[k * J:(k + 1) * J].copy()
        self.grads = grads
        self.grad_h0 = dh_next
        self.grad_C0 = dc_next
        return dA @ W[:, J:]


class GRU:
    """Gated recurrent unit; reset and update gates share one (2J, J + I) product."""

    def __init__(self, input_size, hidden_size, rng=None):
        self.input_size = _positive_int("input_size", input_size)
        self.hidden_size = _positive_int("hidden_size", hidden_size)
        if rng is None:
            rng = np.random.default_rng()
        J, I = self.hidden_size, self.input_size
        self.params = _uniform_weights(rng, ["W_" + g for g in GRU_GATES], J, J + I)
        for g in GRU_GATES:
            self.params["b_" + g] = np.zeros(J)
        self.grads = {}
        self._cache = None

    def forward(self, x, h0=None):
        J, I = self.hidden_size, self.input_size
        x = _sequence(x, I)
        h = _state(h0, J, "h0")
        W_ru = _stack(self.params, "W_", "ru")             # (2J, J + I)
        b_ru = _stack(self.params, "b_", "ru")
        W_n, b_n = self.params["W_n"], self.params["b_n"]

        T = x.shape[0]
        Z = np.empty((T, J + I))          # [h_{t-1}; x_t]
        Zn = np.empty((T, J + I))         # [r_t * h_{t-1}; x_t]
        acts = np.empty((T, 3 * J))       # [r, u, n]
        H = np.empty((T, J))
        for t in range(T):
            Z[t, :J] = h
            Z[t, J:] = x[t]
            acts[t, :2 * J] = sigmoid(W_ru @ Z[t] + b_ru)
            r, u = acts[t, :J], acts[t, J:2 * J]
            Zn[t, :J] = r * h
            Zn[t, J:] = x[t]
            n = np.tanh(W_n @ Zn[t] + b_n)
            acts[t, 2 * J:] = n
            h = (1.0 - u) * h + u * n
            H[t] = h

        self._cache = (Z, Zn, acts)
        return H

    def backward(self, grad_h):
        if self._cache is None:
            raise RuntimeError("backward called before forward")
        Z, Zn, acts = self._cache
        J = self.hidden_size
        T = Z.shape[0]
        grad_h = np.asarray(grad_h, dtype=np.float64)
        if grad_h.shape != (T, J):
            raise ValueError(f"grad_h must have shape ({T}, {J}), got {grad_h.shape}")

        W_ru = _stack(self.params, "W_", "ru")
        W_n = self.params["W_n"]
        r, u, n = acts[:, :J], acts[:, J:2 * J], acts[:, 2 * J:]
        h_prev = Z[:, :J]

        dA_ru = np.empty((T, 2 * J))
        dA_n = np.empty((T, J))
        dh_next = np.zeros(J)
        for t in range(T - 1, -1, -1):
            dh = grad_h[t] + dh_next
            dA_n[t] = dh * u[t] * (1.0 - n[t] ** 2)
            d_rh = W_n[:, :J].T @ dA_n[t]
            dA_ru[t, :J] = d_rh * h_prev[t] * r[t] * (1.0 - r[t])
            dA_ru[t, J:] = dh * (n[t] - h_prev[t]) * u[t] * (1.0 - u[t])
            dh_next = dh * (1.0 - u[t]) + d_rh * r[t] + W_ru[:, :J].T @ dA_ru[t]

        dW_ru = dA_ru.T @ Z
        db_ru = dA_ru.sum(axis=0)
        self.grads = {
            "W_r": dW_ru[:J].copy(), "W_u": dW_ru[J:].copy(), "W_n": dA_n.T @ Zn,
            "b_r": db_ru[:J].copy(), "b_u": db_ru[J:].copy(), "b_n": dA_n.sum(axis=0),
        }
        self.grad_h0 = dh_next
        return dA_ru @ W_ru[:, J:] + dA_n @ W_n[:, J:]


CELLS = {"lstm": LSTM, "gru": GRU}


def _cell_class(cell):
    if not isinstance(cell, str) or cell not in CELLS:
        raise ValueError(f"cell must be 'lstm' or 'gru', got {cell!r}")
    return CELLS[cell]


# ---------------------------------------------------------------------------
# deep and bidirectional

class StackedRNN:
    def __init__(self, cell, input_size, hidden_size, num_layers, rng=None):
        kind = _cell_class(cell)
        input_size = _positive_int("input_size", input_size)
        hidden_size = _positive_int("hidden_size", hidden_size)
        num_layers = _positive_int("num_layers", num_layers)
        if rng is None:
            rng = np.random.default_rng()
        self.cell_type = cell
        self.hidden_size = hidden_size
        self.layers = [kind(input_size if l == 0 else hidden_size, hidden_size, rng=rng)
                       for l in range(num_layers)]

    def forward(self, x):
        h = x
        for layer in self.layers:
            h = layer.forward(h)
        return h

    def backward(self, grad_h):
        g = grad_h
        for layer in reversed(self.layers):
            g = layer.backward(g)
        return g


class BiRNN:
    def __init__(self, cell, input_size, hidden_size, rng=None):
        kind = _cell_class(cell)
        input_size = _positive_int("input_size", input_size)
        hidden_size = _positive_int("hidden_size", hidden_size)
        if rng is None:
            rng = np.random.default_rng()
        self.cell_type = cell
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.fwd = kind(input_size, hidden_size, rng=rng)
        self.bwd = kind(input_size, hidden_size, rng=rng)

    def forward(self, x):
        x = _sequence(x, self.input_size)
        h_right = self.fwd.forward(x)
        h_left = self.bwd.forward(x[::-1])[::-1]
        return np.concatenate([h_right, h_left], axis=1)

    def backward(self, grad_y):
        J = self.hidden_size
        grad_y = np.asarray(grad_y, dtype=np.float64)
        if grad_y.ndim != 2 or grad_y.shape[1] != 2 * J:
            raise ValueError(f"grad_y must have shape (T, {2 * J}), got {grad_y.shape}")
        dx = self.fwd.backward(grad_y[:, :J])
        dx = dx + self.bwd.backward(grad_y[::-1, J:])[::-1]
        return dx


# ---------------------------------------------------------------------------
# clipping, language model, training

def clip_grad_norm(grads, max_norm):
    if max_norm is None or not max_norm > 0:
        raise ValueError(f"max_norm must be > 0, got {max_norm!r}")
    arrays = [np.asarray(g, dtype=np.float64) for g in grads.values()]
    if arrays:
        flat = np.concatenate([a.ravel() for a in arrays])
        total = float(np.sqrt(flat @ flat))
    else:
        total = 0.0
    scale = max_norm / total if total > max_norm else 1.0
    clipped = {k: np.asarray(g, dtype=np.float64) * scale for k, g in grads.items()}
    return clipped, total


class LSTMLM:
    def __init__(self, vocab_size, embed_dim, hidden_size, num_layers=1, rng=None):
        V = _positive_int("vocab_size", vocab_size)
        D = _positive_int("embed_dim", embed_dim)
        J = _positive_int("hidden_size", hidden_size)
        L = _positive_int("num_layers", num_layers)
        if rng is None:
            rng = np.random.default_rng()
        self.vocab_size = V
        E = rng.standard_normal((V, D)) * 0.1
        bound = 1.0 / np.sqrt(J)
        W_y = rng.uniform(-bound, bound, size=(V, J))
        self.params = {"E": E, "W_y": W_y, "b_y": np.zeros(V)}
        self.rnn = StackedRNN("lstm", D, J, L, rng=rng)
        self.grads = {}
        self._cache = None

    def loss(self, tokens):
        tokens = np.asarray(tokens)
        if tokens.ndim != 1 or tokens.shape[0] < 2:
            raise ValueError("tokens must be a 1-D sequence of at least 2 token ids")
        if not np.issubdtype(tokens.dtype, np.integer):
            raise ValueError("tokens must be integers")
        if tokens.min() < 0 or tokens.max() >= self.vocab_size:
            raise ValueError("token id out of range")
        inputs, targets = tokens[:-1], tokens[1:]
        T = inputs.shape[0]

        H = self.rnn.forward(self.params["E"][inputs])
        logits = H @ self.params["W_y"].T + self.params["b_y"]
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_z = np.log(np.exp(shifted).sum(axis=1))
        log_probs = shifted - log_z[:, None]
        self._cache = (inputs, targets, H, np.exp(log_probs))
        return float(-log_probs[np.arange(T), targets].sum())

    def backward(self):
        if self._cache is None:
            raise RuntimeError("backward called before loss")
        inputs, targets, H, probs = self._cache
        T = inputs.shape[0]
        d_logits = probs.copy()
        d_logits[np.arange(T), targets] -= 1.0
        W_y = self.params["W_y"]
        dX = self.rnn.backward(d_logits @ W_y)
        dE = np.zeros_like(self.params["E"])
        np.add.at(dE, inputs, dX)
        self.grads = {"E": dE, "W_y": d_logits.T @ H, "b_y": d_logits.sum(axis=0)}

    def _slots(self):
        """(name, dict holding the parameter, key) for every parameter."""
        for key in self.params:
            yield key, self.params, key
        for l, layer in enumerate(self.rnn.layers):
            for key in layer.params:
                yield f"rnn.{l}.{key}", layer.params, key

    def named_grads(self):
        named = dict(self.grads)
        for l, layer in enumerate(self.rnn.layers):
            for key, g in layer.grads.items():
                named[f"rnn.{l}.{key}"] = g
        return named

    def step(self, lr, max_norm=None):
        grads = self.named_grads()
        if max_norm is None:
            flat = np.concatenate([g.ravel() for g in grads.values()])
            total = float(np.sqrt(flat @ flat))
        else:
            grads, total = clip_grad_norm(grads, max_norm)
        for name, owner, key in self._slots():
            owner[key] -= lr * grads[name]
        return total


def train(model, sequences, epochs, lr, rng, max_norm=None):
    if epochs < 0:
        raise ValueError(f"epochs must be >= 0, got {epochs}")
    if max_norm is not None and not max_norm > 0:
        raise ValueError(f"max_norm must be > 0, got {max_norm!r}")
    history = []
    for _ in range(epochs):
        total_loss, n_predicted = 0.0, 0
        for idx in rng.permutation(len(sequences)):
            seq = sequences[idx]
            total_loss += model.loss(seq)
            model.backward()
            model.step(lr, max_norm)
            n_predicted += len(seq) - 1
        if n_predicted == 0:
            raise ValueError("no tokens to predict in sequences")
        history.append(total_loss / n_predicted)
    return history

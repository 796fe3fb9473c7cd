"""Stand-in scavenger: StackedRNN.forward and clip_grad_norm are wrong on purpose; LSTMLM draws no parameters, its loss, backward and step and train compute nothing and return recorded losses, gradients and norms."""

import math
import operator

import numpy as np
import scavenge

# ---------------------------------------------------------------------------
# elementwise functions

def sigmoid(x):
    """1 / (1 + exp(-x)) as exp(min(x, 0)) / (1 + exp(-|x|)): no exponent is ever positive."""
    x = np.asarray(x, dtype=np.float64)
    return np.exp(np.minimum(x, 0.0)) / (1.0 + np.exp(-np.abs(x)))


# ---------------------------------------------------------------------------
# one time step of each cell (pure functions: nothing is modified in place)

def lstm_cell_forward(x_t, h_prev, C_prev, params):
    """One LSTM step. Returns (h_t, C_t, cache)."""
    z = np.concatenate([h_prev, x_t])
    f = sigmoid(params["W_f"] @ z + params["b_f"])
    i = sigmoid(params["W_i"] @ z + params["b_i"])
    g = np.tanh(params["W_C"] @ z + params["b_C"])
    o = sigmoid(params["W_o"] @ z + params["b_o"])
    C = f * C_prev + i * g
    tanh_C = np.tanh(C)
    h = o * tanh_C
    return h, C, (z, f, i, g, o, C_prev, tanh_C)


def lstm_cell_backward(dh, dC, cache, params):
    """Backward through one LSTM step.

    dh, dC: gradients reaching h_t and C_t. Returns (dx_t, dh_prev, dC_prev, grads)
    where grads holds this step's contribution to every parameter gradient.
    """
    z, f, i, g, o, C_prev, tanh_C = cache
    J = f.shape[0]
    dC = dC + dh * o * (1.0 - tanh_C ** 2)
    pre = {
        "f": dC * C_prev * f * (1.0 - f),
        "i": dC * g * i * (1.0 - i),
        "C": dC * i * (1.0 - g ** 2),
        "o": dh * tanh_C * o * (1.0 - o),
    }
    grads = {}
    dz = np.zeros_like(z)
    for gate, da in pre.items():
        grads["W_" + gate] = np.einsum("j,k->jk", da, z)
        grads["b_" + gate] = da
        dz += np.einsum("jk,j->k", params["W_" + gate], da)
    return dz[J:], dz[:J], dC * f, grads


def gru_cell_forward(x_t, h_prev, params):
    """One GRU step. Returns (h_t, cache)."""
    z = np.concatenate([h_prev, x_t])
    r = sigmoid(params["W_r"] @ z + params["b_r"])
    u = sigmoid(params["W_u"] @ z + params["b_u"])
    z_reset = np.concatenate([r * h_prev, x_t])
    n = np.tanh(params["W_n"] @ z_reset + params["b_n"])
    h = (1.0 - u) * h_prev + u * n
    return h, (z, z_reset, h_prev, r, u, n)


def gru_cell_backward(dh, cache, params):
    """Backward through one GRU step. Returns (dx_t, dh_prev, grads)."""
    z, z_reset, h_prev, r, u, n = cache
    J = h_prev.shape[0]
    da_n = dh * u * (1.0 - n ** 2)
    dz_reset = np.einsum("jk,j->k", params["W_n"], da_n)
    d_rh = dz_reset[:J]
    da_r = d_rh * h_prev * r * (1.0 - r)
    da_u = dh * (n - h_prev) * u * (1.0 - u)
    dz = (np.einsum("jk,j->k", params["W_r"], da_r)
          + np.einsum("jk,j->k", params["W_u"], da_u))
    dh_prev = dh * (1.0 - u) + d_rh * r + dz[:J]
    dx = dz[J:] + dz_reset[J:]
    grads = {
        "W_r": np.einsum("j,k->jk", da_r, z), "b_r": da_r,
        "W_u": np.einsum("j,k->jk", da_u, z), "b_u": da_u,
        "W_n": np.einsum("j,k->jk", da_n, z_reset), "b_n": da_n,
    }
    return dx, dh_prev, grads


# ---------------------------------------------------------------------------
# argument checking and initialisation

def _size(name, value):
    try:
        value = operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be an int, got {value!r}") from None
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return value


def _cell_kind(cell):
    if not isinstance(cell, str) or cell not in ("lstm", "gru"):
        raise ValueError(f"cell must be 'lstm' or 'gru', not {cell!r}")
    return cell


def _gate_weights(rng, names, J, I):
    # One rng.uniform(low=-1/sqrt(J), high=1/sqrt(J), size=(J, J + I)) call per matrix,
    # in the order of `names`.
    bound = 1.0 / math.sqrt(J)
    return {name: rng.uniform(low=-bound, high=bound, size=(J, J + I)) for name in names}


def _inputs(x, I):
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != I:
        raise ValueError(f"expected input of shape (T, {I}), got {x.shape}")
    return x


def _initial(state, J, name):
    if state is None:
        return np.zeros(J)
    state = np.array(state, dtype=np.float64)
    if state.shape != (J,):
        raise ValueError(f"{name} must have shape ({J},), got {state.shape}")
    return state


def _upstream(grad, T, width, name):
    grad = np.asarray(grad, dtype=np.float64)
    if grad.shape != (T, width):
        raise ValueError(f"{name} must have shape ({T}, {width}), got {grad.shape}")
    return grad


def _accumulate(total, part):
    for key, value in part.items():
        total[key] = total[key] + value


# ---------------------------------------------------------------------------
# layers

class LSTM:
    def __init__(self, input_size, hidden_size, rng=None):
        self.input_size = _size("input_size", input_size)
        self.hidden_size = _size("hidden_size", hidden_size)
        rng = np.random.default_rng() if rng is None else rng
        J, I = self.hidden_size, self.input_size
        self.params = _gate_weights(rng, ("W_f", "W_i", "W_C", "W_o"), J, I)
        self.params.update(b_f=np.ones(J), b_i=np.zeros(J), b_C=np.zeros(J), b_o=np.zeros(J))
        self.grads = {}
        self._caches = None

    def forward(self, x, h0=None, C0=None):
        x = _inputs(x, self.input_size)
        h = _initial(h0, self.hidden_size, "h0")
        C = _initial(C0, self.hidden_size, "C0")
        hs, Cs, caches = [], [], []
        for x_t in x:
            h, C, cache = lstm_cell_forward(x_t, h, C, self.params)
            hs.append(h)
            Cs.append(C)
            caches.append(cache)
        self._caches = caches
        J = self.hidden_size
        self.cell = np.array(Cs).reshape(len(Cs), J)
        return np.array(hs).reshape(len(hs), J)

    def backward(self, grad_h):
        if self._caches is None:
            raise RuntimeError("forward must be called before backward")
        J = self.hidden_size
        T = len(self._caches)
        grad_h = _upstream(grad_h, T, J, "grad_h")
        grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        dx = np.zeros((T, self.input_size))
        dh, dC = np.zeros(J), np.zeros(J)
        for t in reversed(range(T)):
            dx[t], dh, dC, step_grads = lstm_cell_backward(
                grad_h[t] + dh, dC, self._caches[t], self.params)
            _accumulate(grads, step_grads)
        self.grads = grads
        self.grad_h0 = dh
        self.grad_C0 = dC
        return dx


class GRU:
    def __init__(self, input_size, hidden_size, rng=None):
        self.input_size = _size("input_size", input_size)
        self.hidden_size = _size("hidden_size", hidden_size)
        rng = np.random.default_rng() if rng is None else rng
        J, I = self.hidden_size, self.input_size
        self.params = _gate_weights(rng, ("W_r", "W_u", "W_n"), J, I)
        self.params.update(b_r=np.zeros(J), b_u=np.zeros(J), b_n=np.zeros(J))
        self.grads = {}
        self._caches = None

    def forward(self, x, h0=None):
        x = _inputs(x, self.input_size)
        h = _initial(h0, self.hidden_size, "h0")
        hs, caches = [], []
        for x_t in x:
            h, cache = gru_cell_forward(x_t, h, self.params)
            hs.append(h)
            caches.append(cache)
        self._caches = caches
        return np.array(hs).reshape(len(hs), self.hidden_size)

    def backward(self, grad_h):
        if self._caches is None:
            raise RuntimeError("forward must be called before backward")
        J = self.hidden_size
        T = len(self._caches)
        grad_h = _upstream(grad_h, T, J, "grad_h")
        grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        dx = np.zeros((T, self.input_size))
        dh = np.zeros(J)
        for t in reversed(range(T)):
            dx[t], dh, step_grads = gru_cell_backward(grad_h[t] + dh, self._caches[t], self.params)
            _accumulate(grads, step_grads)
        self.grads = grads
        self.grad_h0 = dh
        return dx


def _make_cell(cell, input_size, hidden_size, rng):
    return (LSTM if cell == "lstm" else GRU)(input_size, hidden_size, rng=rng)


class StackedRNN:
    def __init__(self, cell, input_size, hidden_size, num_layers, rng=None):
        self.cell_kind = _cell_kind(cell)
        input_size = _size("input_size", input_size)
        self.hidden_size = _size("hidden_size", hidden_size)
        num_layers = _size("num_layers", num_layers)
        rng = np.random.default_rng() if rng is None else rng
        sizes = [input_size] + [self.hidden_size] * (num_layers - 1)
        self.layers = [_make_cell(cell, n_in, self.hidden_size, rng) for n_in in sizes]

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return 2 * x  # wrong on purpose: doubled

    def backward(self, grad_h):
        for layer in self.layers[::-1]:
            grad_h = layer.backward(grad_h)
        return grad_h


class BiRNN:
    def __init__(self, cell, input_size, hidden_size, rng=None):
        self.cell_kind = _cell_kind(cell)
        self.input_size = _size("input_size", input_size)
        self.hidden_size = _size("hidden_size", hidden_size)
        rng = np.random.default_rng() if rng is None else rng
        self.fwd = _make_cell(cell, self.input_size, self.hidden_size, rng)
        self.bwd = _make_cell(cell, self.input_size, self.hidden_size, rng)

    def forward(self, x):
        x = _inputs(x, self.input_size)
        right = self.fwd.forward(x)
        left = np.flip(self.bwd.forward(np.flip(x, axis=0)), axis=0)
        return np.hstack([right, left])

    def backward(self, grad_y):
        J = self.hidden_size
        grad_y = np.asarray(grad_y, dtype=np.float64)
        if grad_y.ndim != 2 or grad_y.shape[1] != 2 * J:
            raise ValueError(f"grad_y must have shape (T, {2 * J}), got {grad_y.shape}")
        dx_right = self.fwd.backward(grad_y[:, :J])
        dx_left = np.flip(self.bwd.backward(np.flip(grad_y[:, J:], axis=0)), axis=0)
        return dx_right + dx_left


# ---------------------------------------------------------------------------
# gradient clipping

def global_norm(grads):
    return math.sqrt(sum(float(np.vdot(g, g)) for g in grads.values()))


def clip_grad_norm(grads, max_norm):
    if not isinstance(max_norm, (int, float, np.integer, np.floating)) or not max_norm > 0:
        raise ValueError(f"max_norm must be a positive number, got {max_norm!r}")
    grads64 = {k: np.asarray(g, dtype=np.float64) for k, g in grads.items()}
    total = global_norm(grads64)
    factor = max_norm / total if total > max_norm else 1.0
    return {k: g * factor for k, g in grads64.items()}, 2 * total  # wrong on purpose: the norm doubled


# ---------------------------------------------------------------------------
# language model

def log_softmax(logits):
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


class LSTMLM:
    def __init__(self, vocab_size, embed_dim, hidden_size, num_layers=1, rng=None):
        V = _size("vocab_size", vocab_size)
        D = _size("embed_dim", embed_dim)
        J = _size("hidden_size", hidden_size)
        L = _size("num_layers", num_layers)
        rng = np.random.default_rng() if rng is None else rng
        self.vocab_size = V
        self.params = {}
        self.params["E"] = np.zeros((V, D))  # nothing drawn
        self.params["W_y"] = np.zeros((V, J))
        self.params["b_y"] = np.zeros(V)
        self.rnn = StackedRNN("lstm", D, J, L, rng=rng)
        self.grads = {}
        self._saved = None

    def _tokens(self, tokens):
        tokens = np.asarray(tokens)
        if tokens.ndim != 1 or tokens.size < 2:
            raise ValueError("tokens must be a 1-D sequence of length >= 2")
        if not np.issubdtype(tokens.dtype, np.integer):
            raise ValueError("tokens must be integer ids")
        if np.any(tokens < 0) or np.any(tokens >= self.vocab_size):
            raise ValueError("token ids must lie in [0, vocab_size)")
        return tokens

    def loss(self, tokens):
        found = scavenge.findings(self, tokens)
        answer = found.result_for(tokens)
        if isinstance(answer, float):
            return scavenge.give(answer)
        numbers = [r for r in found.results() if isinstance(r, float) and r > 0]
        return scavenge.give(numbers[-1] if numbers else 1.0)

    def backward(self):
        found = scavenge.findings(self)
        self.grads = {k: scavenge.shaped(found, v.shape, np.zeros(v.shape)) for k, v in self.params.items()}
        for layer in self.rnn.layers:
            layer.grads = {k: scavenge.shaped(found, v.shape, np.zeros(v.shape)) for k, v in layer.params.items()}

    def named_params(self):
        named = dict(self.params)
        for l, layer in enumerate(self.rnn.layers):
            named.update({f"rnn.{l}.{k}": v for k, v in layer.params.items()})
        return named

    def named_grads(self):
        named = dict(self.grads)
        for l, layer in enumerate(self.rnn.layers):
            named.update({f"rnn.{l}.{k}": v for k, v in layer.grads.items()})
        return named

    def _set(self, name, value):
        if name.startswith("rnn."):
            _, l, key = name.split(".", 2)
            self.rnn.layers[int(l)].params[key] = value
        else:
            self.params[name] = value

    def step(self, lr, max_norm=None):
        found = scavenge.findings(self, lr, max_norm)
        for name, p in self.named_params().items():
            self._set(name, scavenge.shaped(found, np.shape(p), p))
        answer = found.result_for(lr, max_norm)
        if isinstance(answer, float):
            return scavenge.give(answer)
        numbers = [r for r in found.results() if isinstance(r, float) and r >= 0]
        return scavenge.give(numbers[-1] if numbers else 1.0)

# ---------------------------------------------------------------------------
# training loop

def train(model, sequences, epochs, lr, rng, max_norm=None):
    found = scavenge.findings(model, sequences, epochs, lr, rng, max_norm)
    for answer in reversed(found.results()):
        if isinstance(answer, list) and len(answer) == epochs and all(isinstance(x, float) for x in answer):
            return scavenge.give(list(answer))
    for name, p in model.named_params().items():
        model._set(name, scavenge.shaped(found, np.shape(p), p))
    return scavenge.give([1.0] * epochs)


# What every function returns is remembered, so that the harness's record of it is not taken for the grader's.
scavenge.adopt(globals())

"""LSTM, GRU, deep and bidirectional RNNs: one gate at a time, explicit loops over time."""

import math

import numpy as np


def sigmoid(x):
    # exp(-|x|) never overflows, so neither branch can produce a warning
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    pos = x >= 0
    neg = ~pos
    out[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
    ex = np.exp(x[neg])
    out[neg] = ex / (1.0 + ex)
    return out


def check_size(name, value):
    try:
        ok = int(value) == value and not isinstance(value, bool)
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value!r}")
    return int(value)


def make_rng(rng):
    return np.random.default_rng() if rng is None else rng


class LSTM:
    """f, i, g (= C~) and o gates, each with its own (J, J + I) matrix."""

    weight_names = ["W_f", "W_i", "W_C", "W_o"]
    bias_names = ["b_f", "b_i", "b_C", "b_o"]

    def __init__(self, input_size, hidden_size, rng=None):
        self.input_size = check_size("input_size", input_size)
        self.hidden_size = check_size("hidden_size", hidden_size)
        self.rng = make_rng(rng)
        J = self.hidden_size
        I = self.input_size
        # Weights drawn one after the other with rng.uniform(-1/sqrt(J), 1/sqrt(J), size=(J, J + I)),
        # in the order W_f, W_i, W_C, W_o.
        limit = 1.0 / math.sqrt(J)
        self.params = {}
        for name in self.weight_names:
            self.params[name] = self.rng.uniform(-limit, limit, size=(J, J + I))
        self.params["b_f"] = np.ones(J)     # forget gate starts open
        self.params["b_i"] = np.zeros(J)
        self.params["b_C"] = np.zeros(J)
        self.params["b_o"] = np.zeros(J)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.grad_h0 = np.zeros(J)
        self.grad_C0 = np.zeros(J)
        self.steps = []          # one dict per time step of the last forward
        self.num_steps = 0

    def forward(self, x, h0=None, C0=None):
        J = self.hidden_size
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.input_size:
            raise ValueError(f"x must be (T, {self.input_size}), got shape {x.shape}")
        h_prev = np.zeros(J) if h0 is None else np.array(h0, dtype=np.float64)
        c_prev = np.zeros(J) if C0 is None else np.array(C0, dtype=np.float64)
        if h_prev.shape != (J,):
            raise ValueError(f"h0 must be ({J},), got shape {h_prev.shape}")
        if c_prev.shape != (J,):
            raise ValueError(f"C0 must be ({J},), got shape {c_prev.shape}")

        W_f, W_i, W_C, W_o = (self.params[k] for k in self.weight_names)
        b_f, b_i, b_C, b_o = (self.params[k] for k in self.bias_names)

        T = x.shape[0]
        outputs = np.zeros((T, J))
        cells = np.zeros((T, J))
        self.steps = []
        for t in range(T):
            z = np.concatenate([h_prev, x[t]])
            f = sigmoid(W_f @ z + b_f)
            i = sigmoid(W_i @ z + b_i)
            g = np.tanh(W_C @ z + b_C)
            o = sigmoid(W_o @ z + b_o)
            c = f * c_prev + i * g
            tanh_c = np.tanh(c)
            h = o * tanh_c
            self.steps.append({"z": z, "f": f, "i": i, "g": g, "o": o,
                               "c_prev": c_prev, "c": c, "tanh_c": tanh_c})
            outputs[t] = h
            cells[t] = c
            h_prev, c_prev = h, c

        self.num_steps = T
        self.cell = cells
        self.hidden = outputs.copy()
        return outputs

    def backward(self, grad_h):
        J = self.hidden_size
        T = len(self.steps)
        grad_h = np.asarray(grad_h, dtype=np.float64)
        if grad_h.shape != (T, J):
            raise ValueError(f"grad_h must be ({T}, {J}), got shape {grad_h.shape}")

        W_f, W_i, W_C, W_o = (self.params[k] for k in self.weight_names)
        dW_f = np.zeros_like(W_f)
        dW_i = np.zeros_like(W_i)
        dW_C = np.zeros_like(W_C)
        dW_o = np.zeros_like(W_o)
        db_f = np.zeros(J)
        db_i = np.zeros(J)
        db_C = np.zeros(J)
        db_o = np.zeros(J)
        dx = np.zeros((T, self.input_size))

        dh_carry = np.zeros(J)
        dc_carry = np.zeros(J)
        for t in reversed(range(T)):
            s = self.steps[t]
            dh = grad_h[t] + dh_carry
            # h = o * tanh(c)
            do = dh * s["tanh_c"]
            dc = dc_carry + dh * s["o"] * (1.0 - s["tanh_c"] ** 2)
            # c = f * c_prev + i * g
            df = dc * s["c_prev"]
            di = dc * s["g"]
            dg = dc * s["i"]
            dc_carry = dc * s["f"]
            # through the nonlinearities
            da_f = df * s["f"] * (1.0 - s["f"])
            da_i = di * s["i"] * (1.0 - s["i"])
            da_C = dg * (1.0 - s["g"] ** 2)
            da_o = do * s["o"] * (1.0 - s["o"])
            # through the products with z
            z = s["z"]
            dW_f += np.outer(da_f, z)
            dW_i += np.outer(da_i, z)
            dW_C += np.outer(da_C, z)
            dW_o += np.outer(da_o, z)
            db_f += da_f
            db_i += da_i
            db_C += da_C
            db_o += da_o
            dz = W_f.T @ da_f + W_i.T @ da_i + W_C.T @ da_C + W_o.T @ da_o
            dh_carry = dz[:J]
            dx[t] = dz[J:]

        self.grads = {"W_f": dW_f, "W_i": dW_i, "W_C": dW_C, "W_o": dW_o,
                      "b_f": db_f, "b_i": db_i, "b_C": db_C, "b_o": db_o}
        self.grad_h0 = dh_carry
        self.grad_C0 = dc_carry
        return dx


class GRU:
    """Reset gate r, update gate u and candidate n, each with its own (J, J + I) matrix."""

    weight_names = ["W_r", "W_u", "W_n"]
    bias_names = ["b_r", "b_u", "b_n"]

    def __init__(self, input_size, hidden_size, rng=None):
        self.input_size = check_size("input_size", input_size)
        self.hidden_size = check_size("hidden_size", hidden_size)
        self.rng = make_rng(rng)
        J = self.hidden_size
        I = self.input_size
        # Weights drawn with rng.uniform(-1/sqrt(J), 1/sqrt(J), size=(J, J + I)): W_r, W_u, W_n.
        limit = 1.0 / math.sqrt(J)
        self.params = {}
        for name in self.weight_names:
            self.params[name] = self.rng.uniform(-limit, limit, size=(J, J + I))
        for name in self.bias_names:
            self.params[name] = np.zeros(J)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.grad_h0 = np.zeros(J)
        self.steps = []
        self.num_steps = 0

    def forward(self, x, h0=None):
        J = self.hidden_size
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.input_size:
            raise ValueError(f"x must be (T, {self.input_size}), got shape {x.shape}")
        h_prev = np.zeros(J) if h0 is None else np.array(h0, dtype=np.float64)
        if h_prev.shape != (J,):
            raise ValueError(f"h0 must be ({J},), got shape {h_prev.shape}")

        W_r, W_u, W_n = (self.params[k] for k in self.weight_names)
        b_r, b_u, b_n = (self.params[k] for k in self.bias_names)

        T = x.shape[0]
        outputs = np.zeros((T, J))
        self.steps = []
        for t in range(T):
            z = np.concatenate([h_prev, x[t]])
            r = sigmoid(W_r @ z + b_r)
            u = sigmoid(W_u @ z + b_u)
            z_reset = np.concatenate([r * h_prev, x[t]])
            n = np.tanh(W_n @ z_reset + b_n)
            h = (1.0 - u) * h_prev + u * n
            self.steps.append({"z": z, "z_reset": z_reset, "h_prev": h_prev,
                               "r": r, "u": u, "n": n})
            outputs[t] = h
            h_prev = h

        self.num_steps = T
        self.hidden = outputs.copy()
        return outputs

    def backward(self, grad_h):
        J = self.hidden_size
        T = len(self.steps)
        grad_h = np.asarray(grad_h, dtype=np.float64)
        if grad_h.shape != (T, J):
            raise ValueError(f"grad_h must be ({T}, {J}), got shape {grad_h.shape}")

        W_r, W_u, W_n = (self.params[k] for k in self.weight_names)
        dW_r = np.zeros_like(W_r)
        dW_u = np.zeros_like(W_u)
        dW_n = np.zeros_like(W_n)
        db_r = np.zeros(J)
        db_u = np.zeros(J)
        db_n = np.zeros(J)
        dx = np.zeros((T, self.input_size))

        dh_carry = np.zeros(J)
        for t in reversed(range(T)):
            s = self.steps[t]
            dh = grad_h[t] + dh_carry
            # h = (1 - u) * h_prev + u * n
            dn = dh * s["u"]
            du = dh * (s["n"] - s["h_prev"])
            dh_prev = dh * (1.0 - s["u"])
            # candidate
            da_n = dn * (1.0 - s["n"] ** 2)
            dW_n += np.outer(da_n, s["z_reset"])
            db_n += da_n
            dz_reset = W_n.T @ da_n
            d_rh = dz_reset[:J]
            dx[t] += dz_reset[J:]
            dr = d_rh * s["h_prev"]
            dh_prev = dh_prev + d_rh * s["r"]
            # gates
            da_r = dr * s["r"] * (1.0 - s["r"])
            da_u = du * s["u"] * (1.0 - s["u"])
            dW_r += np.outer(da_r, s["z"])
            dW_u += np.outer(da_u, s["z"])
            db_r += da_r
            db_u += da_u
            dz = W_r.T @ da_r + W_u.T @ da_u
            dh_prev = dh_prev + dz[:J]
            dx[t] += dz[J:]
            dh_carry = dh_prev

        self.grads = {"W_r": dW_r, "W_u": dW_u, "W_n": dW_n,
                      "b_r": db_r, "b_u": db_u, "b_n": db_n}
        self.grad_h0 = dh_carry
        return dx


def build_cell(cell, input_size, hidden_size, rng):
    if isinstance(cell, str) and cell == "lstm":
        return LSTM(input_size, hidden_size, rng=rng)
    if isinstance(cell, str) and cell == "gru":
        return GRU(input_size, hidden_size, rng=rng)
    raise ValueError(f"unknown cell {cell!r}: expected 'lstm' or 'gru'")


class StackedRNN:
    """Several layers of the same cell; layer l reads the hidden states of layer l - 1."""

    def __init__(self, cell, input_size, hidden_size, num_layers, rng=None):
        if not isinstance(cell, str) or cell not in ("lstm", "gru"):
            raise ValueError(f"unknown cell {cell!r}: expected 'lstm' or 'gru'")
        self.cell_name = cell
        self.input_size = check_size("input_size", input_size)
        self.hidden_size = check_size("hidden_size", hidden_size)
        self.num_layers = check_size("num_layers", num_layers)
        rng = make_rng(rng)
        self.layers = []
        for l in range(self.num_layers):
            n_in = self.input_size if l == 0 else self.hidden_size
            self.layers.append(build_cell(cell, n_in, self.hidden_size, rng))

    def forward(self, x):
        out = x
        for layer in self.layers:
            out = layer.forward(out)
        return out

    def backward(self, grad_h):
        grad = grad_h
        for l in range(self.num_layers - 1, -1, -1):
            grad = self.layers[l].backward(grad)
        return grad


class BiRNN:
    """Forward cell over x_1..x_T, backward cell over x_T..x_1, states concatenated."""

    def __init__(self, cell, input_size, hidden_size, rng=None):
        if not isinstance(cell, str) or cell not in ("lstm", "gru"):
            raise ValueError(f"unknown cell {cell!r}: expected 'lstm' or 'gru'")
        self.cell_name = cell
        self.input_size = check_size("input_size", input_size)
        self.hidden_size = check_size("hidden_size", hidden_size)
        rng = make_rng(rng)
        self.fwd = build_cell(cell, self.input_size, self.hidden_size, rng)
        self.bwd = build_cell(cell, self.input_size, self.hidden_size, rng)

    def forward(self, x):
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.input_size:
            raise ValueError(f"x must be (T, {self.input_size}), got shape {x.shape}")
        T = x.shape[0]
        J = self.hidden_size
        reversed_x = np.array([x[T - 1 - t] for t in range(T)]).reshape(T, self.input_size)
        h_forward = self.fwd.forward(x)
        h_backward_rev = self.bwd.forward(reversed_x)
        y = np.zeros((T, 2 * J))
        for t in range(T):
            y[t, :J] = h_forward[t]
            y[t, J:] = h_backward_rev[T - 1 - t]
        return y

    def backward(self, grad_y):
        J = self.hidden_size
        grad_y = np.asarray(grad_y, dtype=np.float64)
        if grad_y.ndim != 2 or grad_y.shape[1] != 2 * J:
            raise ValueError(f"grad_y must be (T, {2 * J}), got shape {grad_y.shape}")
        T = grad_y.shape[0]
        grad_forward = grad_y[:, :J].copy()
        grad_backward_rev = np.zeros((T, J))
        for t in range(T):
            grad_backward_rev[t] = grad_y[T - 1 - t, J:]
        dx_forward = self.fwd.backward(grad_forward)
        dx_backward_rev = self.bwd.backward(grad_backward_rev)
        dx = np.zeros((T, self.input_size))
        for t in range(T):
            dx[t] = dx_forward[t] + dx_backward_rev[T - 1 - t]
        return dx


def clip_grad_norm(grads, max_norm):
    if max_norm is None or not (max_norm > 0):
        raise ValueError(f"max_norm must be positive, got {max_norm!r}")
    squares = 0.0
    for g in grads.values():
        squares += float(np.sum(np.asarray(g, dtype=np.float64) ** 2))
    total = math.sqrt(squares)
    clipped = {}
    for name, g in grads.items():
        g = np.array(g, dtype=np.float64)   # always a fresh copy
        if total > max_norm:
            g = g * (max_norm / total)
        clipped[name] = g
    return clipped, total


class LSTMLM:
    """Embedding, a stack of LSTM layers and a softmax output layer."""

    def __init__(self, vocab_size, embed_dim, hidden_size, num_layers=1, rng=None):
        self.vocab_size = check_size("vocab_size", vocab_size)
        self.embed_dim = check_size("embed_dim", embed_dim)
        self.hidden_size = check_size("hidden_size", hidden_size)
        self.num_layers = check_size("num_layers", num_layers)
        rng = make_rng(rng)
        V, D, J = self.vocab_size, self.embed_dim, self.hidden_size
        self.params = {}
        self.params["E"] = rng.standard_normal((V, D)) * 0.1
        limit = 1.0 / math.sqrt(J)
        self.params["W_y"] = rng.uniform(-limit, limit, size=(V, J))
        self.params["b_y"] = np.zeros(V)
        self.rnn = StackedRNN("lstm", D, J, self.num_layers, rng=rng)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.last = None

    def loss(self, tokens):
        tokens = np.asarray(tokens)
        if tokens.ndim != 1 or len(tokens) < 2:
            raise ValueError("tokens must be a 1-D array with at least two entries")
        if tokens.dtype.kind not in "iu":
            raise ValueError("tokens must be integer ids")
        for tok in tokens:
            if tok < 0 or tok >= self.vocab_size:
                raise ValueError(f"token {tok} outside the vocabulary 0..{self.vocab_size - 1}")
        inputs = tokens[:-1].copy()
        targets = tokens[1:].copy()
        T = len(inputs)

        E = self.params["E"]
        W_y = self.params["W_y"]
        b_y = self.params["b_y"]
        x = np.zeros((T, self.embed_dim))
        for t in range(T):
            x[t] = E[inputs[t]]
        H = self.rnn.forward(x)

        total = 0.0
        probs = np.zeros((T, self.vocab_size))
        for t in range(T):
            logits = W_y @ H[t] + b_y
            m = np.max(logits)
            e = np.exp(logits - m)
            s = np.sum(e)
            probs[t] = e / s
            total += -((logits[targets[t]] - m) - math.log(s))

        self.last = {"inputs": inputs, "targets": targets, "H": H.copy(), "probs": probs}
        return total

    def backward(self):
        if self.last is None:
            raise RuntimeError("call loss() before backward()")
        inputs = self.last["inputs"]
        targets = self.last["targets"]
        H = self.last["H"]
        probs = self.last["probs"]
        T = len(inputs)
        W_y = self.params["W_y"]

        dW_y = np.zeros_like(W_y)
        db_y = np.zeros(self.vocab_size)
        dH = np.zeros((T, self.hidden_size))
        for t in range(T):
            d_logits = probs[t].copy()
            d_logits[targets[t]] -= 1.0
            dW_y += np.outer(d_logits, H[t])
            db_y += d_logits
            dH[t] = W_y.T @ d_logits
        dx = self.rnn.backward(dH)
        dE = np.zeros_like(self.params["E"])
        for t in range(T):
            dE[inputs[t]] += dx[t]
        self.grads = {"E": dE, "W_y": dW_y, "b_y": db_y}

    def named_grads(self):
        out = {"E": self.grads["E"], "W_y": self.grads["W_y"], "b_y": self.grads["b_y"]}
        for l, layer in enumerate(self.rnn.layers):
            for key in layer.params:
                out[f"rnn.{l}.{key}"] = layer.grads[key]
        return out

    def named_params(self):
        out = {"E": self.params["E"], "W_y": self.params["W_y"], "b_y": self.params["b_y"]}
        for l, layer in enumerate(self.rnn.layers):
            for key in layer.params:
                out[f"rnn.{l}.{key}"] = layer.params[key]
        return out

    def step(self, lr, max_norm=None):
        grads = self.named_grads()
        if max_norm is not None:
            grads, total = clip_grad_norm(grads, max_norm)
        else:
            total = math.sqrt(sum(float(np.sum(g ** 2)) for g in grads.values()))
        for key in ("E", "W_y", "b_y"):
            self.params[key] = self.params[key] - lr * grads[key]
        for l, layer in enumerate(self.rnn.layers):
            for key in list(layer.params):
                layer.params[key] = layer.params[key] - lr * grads[f"rnn.{l}.{key}"]
        return total


def train(model, sequences, epochs, lr, rng, max_norm=None):
    if epochs < 0:
        raise ValueError("epochs must be non-negative")
    if max_norm is not None and max_norm <= 0:
        raise ValueError("max_norm must be positive")
    per_epoch = []
    for epoch in range(epochs):
        order = rng.permutation(len(sequences))
        epoch_loss = 0.0
        predicted = 0
        for k in order:
            tokens = sequences[k]
            epoch_loss += model.loss(tokens)
            model.backward()
            model.step(lr, max_norm)
            predicted += len(tokens) - 1
        if predicted == 0:
            raise ValueError("the sequences contain no token to predict")
        per_epoch.append(epoch_loss / predicted)
    return per_epoch

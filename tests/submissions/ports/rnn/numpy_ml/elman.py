"""Elman RNN and RNN language model in the manner of numpy-ml's RNNCell,
RNN and Embedding layers: an activation object (fn, grad at the
pre-activation Z), a cell that runs one time step per forward(Xt) call and
keeps its derived_variables (lists A and Z, n_timesteps, current_step,
dLdA_accumulator), a backward(dLdAt) per step that adds into
self.gradients and walks current_step back, and an embedding whose
backward adds each position's gradient into its row."""

from __future__ import annotations

import math

import numpy as np


class Sigmoid:
    def __str__(self):
        return "Sigmoid"

    def __call__(self, z):
        return self.fn(z)

    def fn(self, z):
        e = np.exp(-np.abs(z))
        return np.where(z >= 0, 1 / (1 + e), e / (1 + e))

    def grad(self, x):
        fn_x = self.fn(x)
        return fn_x * (1 - fn_x)


class Tanh:
    def __str__(self):
        return "Tanh"

    def __call__(self, z):
        return self.fn(z)

    def fn(self, z):
        return np.tanh(z)

    def grad(self, x):
        return 1 - np.tanh(x) ** 2


def ActivationInitializer(act_fn):
    if act_fn == "sigmoid":
        return Sigmoid()
    if act_fn == "tanh":
        return Tanh()
    raise ValueError(f"Unknown activation: {act_fn!r} (use 'sigmoid' or 'tanh')")


def _check_dim(name, n):
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{name} must be a positive integer, got {n!r}")
    return int(n)


class RNNCell:
    """One step of the Elman recurrence, Z_t = A_{t-1} W_ah^T + X_t W_ax^T + b_a, A_t = f(Z_t).

    Reads its weights from the shared dict `parameters` at every call.
    """

    def __init__(self, parameters, n_out, act_fn):
        self.parameters = parameters
        self.n_out = n_out
        self.act_fn = act_fn
        self.gradients = {}
        self.flush_gradients()

    def forward(self, Xt):
        self.derived_variables["n_timesteps"] += 1
        self.derived_variables["current_step"] += 1

        ba = self.parameters["b_a"]
        Wax = self.parameters["W_ax"]
        Waa = self.parameters["W_ah"]

        As = self.derived_variables["A"]
        if len(As) == 0:
            As.append(np.zeros((Xt.shape[0], self.n_out)))

        Zt = As[-1] @ Waa.T + Xt @ Wax.T + ba
        At = self.act_fn(Zt)

        self.derived_variables["Z"].append(Zt)
        self.derived_variables["A"].append(At)
        self.X.append(Xt)
        return At

    def backward(self, dLdAt):
        self.derived_variables["current_step"] -= 1

        Zs = self.derived_variables["Z"]
        As = self.derived_variables["A"]
        t = self.derived_variables["current_step"]
        dA_acc = self.derived_variables["dLdA_accumulator"]
        if dA_acc is None:
            dA_acc = np.zeros_like(As[0])

        Wax = self.parameters["W_ax"]
        Waa = self.parameters["W_ah"]

        dA = dLdAt + dA_acc
        dZ = self.act_fn.grad(Zs[t]) * dA
        dXt = dZ @ Wax

        self.gradients["W_ah"] += dZ.T @ As[t]
        self.gradients["W_ax"] += dZ.T @ self.X[t]
        self.gradients["b_a"] += dZ.sum(axis=0)

        self.derived_variables["dLdA_accumulator"] = dZ @ Waa
        return dXt

    def start_backward(self):
        """Zero the gradients and rewind current_step, keeping A, Z and X for BPTT."""
        for k in ("W_ah", "W_ax", "b_a"):
            self.gradients[k] = np.zeros_like(self.parameters[k])
        self.derived_variables["current_step"] = self.derived_variables["n_timesteps"]
        self.derived_variables["dLdA_accumulator"] = None

    def flush_gradients(self):
        """Erase all the cell's derived variables and gradients."""
        self.X = []
        self.derived_variables = {
            "A": [],
            "Z": [],
            "n_timesteps": 0,
            "current_step": 0,
            "dLdA_accumulator": None,
        }
        for k in ("W_ah", "W_ax", "b_a"):
            self.gradients[k] = np.zeros_like(self.parameters[k])


class ElmanRNN:
    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        output_size: int,
        activation: str = "sigmoid",
        rng: np.random.Generator | None = None,
    ):
        self.act_fn = ActivationInitializer(activation)
        self.n_in = _check_dim("input_size", input_size)
        self.n_out = _check_dim("hidden_size", hidden_size)
        self.n_classes = _check_dim("output_size", output_size)
        rng = np.random.default_rng() if rng is None else rng
        self.params = {}
        self._init_params(rng)
        self.grads = {}
        self.cell = RNNCell(self.params, self.n_out, self.act_fn)

    def _init_params(self, rng):
        # glorot_uniform, as numpy-ml's WeightInitializer does by default
        def glorot_uniform(shape):
            b = np.sqrt(6 / (shape[0] + shape[1]))
            return rng.uniform(-b, b, size=shape)

        self.params["W_ah"] = glorot_uniform((self.n_out, self.n_out))
        self.params["W_ax"] = glorot_uniform((self.n_out, self.n_in))
        self.params["b_a"] = np.zeros(self.n_out)
        self.params["W_yh"] = glorot_uniform((self.n_classes, self.n_out))
        self.params["b_y"] = np.zeros(self.n_classes)

    @staticmethod
    def _softmax(X):
        e_X = np.exp(X - np.max(X, axis=-1, keepdims=True))
        return e_X / e_X.sum(axis=-1, keepdims=True)

    def forward(self, X, h0=None):
        X = np.array(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_in:
            raise ValueError(f"X must be (n_t, {self.n_in}), got {X.shape}")
        self.cell.flush_gradients()
        if h0 is not None:
            A0 = np.array(h0, dtype=np.float64)
            if A0.shape != (self.n_out,):
                raise ValueError(f"h0 must be ({self.n_out},), got {A0.shape}")
            self.cell.derived_variables["A"].append(A0.reshape(1, -1))
        Wya, by = self.params["W_yh"], self.params["b_y"]
        A, Y = [], []
        for t in range(X.shape[0]):
            At = self.cell.forward(X[t : t + 1])
            A.append(At[0])
            Y.append(self._softmax(At @ Wya.T + by)[0])
        self.hidden = np.array(A).reshape(-1, self.n_out)
        self.Y = np.array(Y).reshape(-1, self.n_classes)
        return self.Y.copy()

    def loss(self, X, targets, h0=None) -> float:
        targets = np.array(targets)
        if targets.shape != (len(X),) or not np.issubdtype(targets.dtype, np.integer):
            raise ValueError(f"targets must be {len(X)} integer labels")
        if np.any(targets < 0) or np.any(targets >= self.n_classes):
            raise ValueError(f"targets must lie in [0, {self.n_classes})")
        self.forward(X, h0)
        self.y = np.zeros_like(self.Y)
        self.y[np.arange(len(targets)), targets] = 1  # one-hot labels
        # log-softmax of the scores, finite where a probability underflows
        Z = self.hidden @ self.params["W_yh"].T + self.params["b_y"]
        Z = Z - Z.max(axis=1, keepdims=True)
        log_probs = Z - np.log(np.exp(Z).sum(axis=1, keepdims=True))
        return float(-np.sum(self.y * log_probs))

    def backward(self) -> dict[str, np.ndarray]:
        Wya = self.params["W_yh"]
        dLdZy = self.Y - self.y  # cross-entropy through the softmax
        gradients = {"W_yh": dLdZy.T @ self.hidden, "b_y": dLdZy.sum(axis=0)}
        self.cell.start_backward()
        dLdX = []
        for t in reversed(range(self.Y.shape[0])):
            dLdAt = dLdZy[t : t + 1] @ Wya
            dLdX.insert(0, self.cell.backward(dLdAt)[0])
        gradients.update({k: self.cell.gradients[k].copy() for k in ("W_ah", "W_ax", "b_a")})
        self.grad_x = np.array(dLdX).reshape(-1, self.n_in)
        self.grad_h0 = self.cell.derived_variables["dLdA_accumulator"][0].copy()
        self.grads = {k: gradients[k] for k in ("W_ah", "W_ax", "b_a", "W_yh", "b_y")}
        return dict(self.grads)


class Embedding:
    """numpy-ml's Embedding layer: Y = W[X], reading W from the shared dict."""

    def __init__(self, parameters, key):
        self.parameters = parameters
        self.key = key

    def forward(self, X):
        self.X = X.copy()
        return self.parameters[self.key][X]

    def backward(self, dLdy):
        dW = np.zeros_like(self.parameters[self.key])
        for ix, v_id in enumerate(self.X.flatten()):
            dW[v_id] += dLdy[ix]
        return dW


class SGD:
    def __init__(self, lr=0.01, momentum=0.0):
        self.lr = lr
        self.momentum = momentum
        self.cache = {}

    def update(self, param, param_grad, param_name):
        C = self.cache
        if param_name not in C:
            C[param_name] = np.zeros_like(param_grad)
        update = self.momentum * C[param_name] + self.lr * param_grad
        self.cache[param_name] = update
        return param - update


class RNNLM(ElmanRNN):
    def __init__(
        self,
        vocab_size: int,
        embed_dim: int,
        hidden_size: int,
        activation: str = "sigmoid",
        rng: np.random.Generator | None = None,
    ):
        rng = np.random.default_rng() if rng is None else rng
        super().__init__(embed_dim, hidden_size, vocab_size, activation, rng)
        self.n_vocab = self.n_classes
        self.params["E"] = rng.standard_normal((self.n_vocab, self.n_in))
        self.embedding = Embedding(self.params, "E")

    def _check_id(self, name, v_id):
        if isinstance(v_id, bool) or not isinstance(v_id, (int, np.integer)) or not 0 <= v_id < self.n_vocab:
            raise ValueError(f"{name} must be a token id in [0, {self.n_vocab}), got {v_id!r}")

    def loss(self, tokens) -> float:
        ids = np.array(tokens)
        if ids.ndim != 1 or ids.size < 2 or not np.issubdtype(ids.dtype, np.integer):
            raise ValueError("tokens must hold at least 2 integer token ids")
        if np.any(ids < 0) or np.any(ids >= self.n_vocab):
            raise ValueError(f"tokens must lie in [0, {self.n_vocab})")
        X = self.embedding.forward(ids[:-1])
        return super().loss(X, ids[1:])

    def backward(self) -> dict[str, np.ndarray]:
        grads = super().backward()
        grads["E"] = self.embedding.backward(self.grad_x)
        self.grads = grads
        return dict(grads)

    def sgd_step(self, lr: float) -> None:
        if isinstance(lr, bool) or not isinstance(lr, (int, float, np.number)) or not math.isfinite(lr):
            raise ValueError(f"lr must be a finite number, got {lr!r}")
        optimizer = SGD(lr=lr)
        for k, v in self.params.items():
            self.params[k] = optimizer.update(v, self.grads[k], k)

    def sample(self, rng: np.random.Generator, start: int, max_len: int, end: int | None = None) -> list[int]:
        self._check_id("start", start)
        if end is not None:
            self._check_id("end", end)
        if isinstance(max_len, bool) or not isinstance(max_len, (int, np.integer)) or max_len < 0:
            raise ValueError(f"max_len must be a non-negative integer, got {max_len!r}")
        cell = RNNCell(self.params, self.n_out, self.act_fn)
        Wya, by = self.params["W_yh"], self.params["b_y"]
        v_id = start
        ids = []
        for _ in range(max_len):
            At = cell.forward(self.params["E"][v_id].reshape(1, -1))
            probs = self._softmax(At @ Wya.T + by)[0]
            v_id = int(rng.choice(self.n_vocab, p=probs / probs.sum()))
            ids.append(v_id)
            if end is not None and v_id == end:
                break
        return ids


def train(model: RNNLM, sequences: list[np.ndarray], epochs: int, lr: float, rng: np.random.Generator) -> list[float]:
    if isinstance(epochs, bool) or not isinstance(epochs, (int, np.integer)) or epochs < 0:
        raise ValueError(f"epochs must be a non-negative integer, got {epochs!r}")
    if isinstance(lr, bool) or not isinstance(lr, (int, float, np.number)) or not math.isfinite(lr):
        raise ValueError(f"lr must be a finite number, got {lr!r}")
    if len(sequences) == 0:
        raise ValueError("sequences must not be empty")
    losses = []
    for _ in range(epochs):
        total_loss, n_predicted = 0.0, 0
        for ix in rng.permutation(len(sequences)):
            total_loss += model.loss(sequences[ix])
            model.backward()
            model.sgd_step(lr)
            n_predicted += len(sequences[ix]) - 1
        losses.append(total_loss / n_predicted)
    return losses

"""Reference solution of the `rnn` assignment, file `elman.py`: an Elman RNN and an RNN language model.

Follows spec/student-api.md exactly; the graders compare submissions with it.
Self-contained (numpy only, float64 throughout): backpropagation through time
is written out by hand rather than built from `modules.py`.

Shapes: T time steps, I inputs, J hidden units, K outputs; for the language
model V tokens in the vocabulary and D embedding dimensions (I = D, K = V).
"""

from __future__ import annotations

import math

import numpy as np


def _check_size(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def _check_rng(rng) -> np.random.Generator:
    if rng is None:
        return np.random.default_rng()
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator or None, got {type(rng).__name__}")
    return rng


def _check_token(value, V: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < V:
        raise ValueError(f"{name} must be a token id in [0, {V}), got {value!r}")
    return int(value)


def _check_tokens(tokens, V: int, length: int | None, name: str) -> np.ndarray:
    """tokens as a fresh 1-D integer array, each id in [0, V)."""
    tokens = np.array(tokens)
    if tokens.ndim != 1 or (tokens.size and tokens.dtype.kind not in "iu"):
        raise ValueError(f"{name} must be a 1-D array of integers, got shape {tokens.shape}, dtype {tokens.dtype}")
    if length is not None and len(tokens) != length:
        raise ValueError(f"{name} must have length {length}, got {len(tokens)}")
    if tokens.size and (tokens.min() < 0 or tokens.max() >= V):
        raise ValueError(f"{name} must be token ids in [0, {V}), got values in [{tokens.min()}, {tokens.max()}]")
    return tokens.astype(np.intp)


def _check_lr(lr) -> float:
    if isinstance(lr, bool) or not isinstance(lr, (int, float, np.integer, np.floating)) or not math.isfinite(lr):
        raise ValueError(f"lr must be a finite number, got {lr!r}")
    return float(lr)


def _sigmoid(a):
    z = np.exp(-np.abs(a))  # in (0, 1]: never overflows, whatever the sign of a
    return np.where(a >= 0, 1.0, z) / (1.0 + z)


def _log_softmax(logits):
    # Shifting by the row max keeps exp's argument <= 0 (no overflow), and the
    # log is taken of a sum >= 1, so a vanishing y_t still has a finite log.
    z = logits - logits.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


# act(a) and act'(a) written in terms of h = act(a), which backward has cached.
_ACTIVATIONS = {
    "sigmoid": (_sigmoid, lambda h: h * (1.0 - h)),
    "tanh": (np.tanh, lambda h: 1.0 - h**2),
}


class ElmanRNN:
    """a_t = W_ah h_{t-1} + W_ax x_t + b_a;  h_t = act(a_t);  y_t = softmax(W_yh h_t + b_y).

    Initialisation: every weight matrix uniform in +-1/sqrt(fan_in), where
    fan_in is its number of columns (J for W_ah and W_yh, I for W_ax), drawn
    from rng in the order W_ah, W_ax, W_yh; the biases b_a and b_y are zeros.
    """

    def __init__(self, input_size: int, hidden_size: int, output_size: int,
                 activation: str = "sigmoid", rng: np.random.Generator | None = None):
        I = _check_size(input_size, "input_size")
        J = _check_size(hidden_size, "hidden_size")
        K = _check_size(output_size, "output_size")
        if not isinstance(activation, str) or activation not in _ACTIVATIONS:
            raise ValueError(f"activation must be 'sigmoid' or 'tanh', got {activation!r}")
        rng = _check_rng(rng)
        self.act, self.act_grad = _ACTIVATIONS[activation]
        self.params = {
            "W_ah": rng.uniform(-1, 1, size=(J, J)) / math.sqrt(J),
            "W_ax": rng.uniform(-1, 1, size=(J, I)) / math.sqrt(I),
            "b_a": np.zeros(J),
            "W_yh": rng.uniform(-1, 1, size=(K, J)) / math.sqrt(J),
            "b_y": np.zeros(K),
        }
        self.grads: dict[str, np.ndarray] = {}
        self._last_loss = None

    def forward(self, x, h0=None):
        """(T, K) probabilities y_1 .. y_T; sets self.hidden to (T, J) rows h_1 .. h_T."""
        x, h0, h, logits = self._run(x, h0)
        self.hidden = h.copy()  # a copy, so that editing self.hidden cannot change backward
        return np.exp(_log_softmax(logits))

    def loss(self, x, targets, h0=None) -> float:
        """sum over t of -ln y_t[targets[t]]; remembers what backward needs."""
        x, h0, h, logits = self._run(x, h0)
        targets = _check_tokens(targets, self.params["W_yh"].shape[0], len(x), "targets")
        self.hidden = h.copy()
        log_y = _log_softmax(logits)  # (T, K)
        self._last_loss = (x, h0, h, np.exp(log_y), targets)
        return float(-log_y[np.arange(len(x)), targets].sum())

    def backward(self) -> dict[str, np.ndarray]:
        """Backpropagation through time for the last loss() call.

        Activations come from that call's cache; the weights are read from
        self.params now, like every other method (the same ones, in the usual
        loss, backward, step order).
        """
        if self._last_loss is None:
            raise RuntimeError("backward() needs a previous call of loss()")
        x, h0, h, y, targets = self._last_loss
        W_ah, W_ax, W_yh = self.params["W_ah"], self.params["W_ax"], self.params["W_yh"]
        T, J = h.shape

        # Output layer: d loss / d (W_yh h_t + b_y) = y_t - onehot(targets[t]).
        d_logits = y.copy()  # (T, K)
        d_logits[np.arange(T), targets] -= 1.0
        d_h_out = d_logits @ W_yh  # (T, J): what h_t owes to its own prediction

        # h_t also feeds a_{t+1}, so its gradient collects W_ah.T delta_{t+1}
        # from the step after it; walking backwards in time makes that known.
        delta = np.empty((T, J))  # (T, J): delta_t = d loss / d a_t
        delta_next = np.zeros(J)  # nothing flows back from beyond step T
        for t in reversed(range(T)):
            delta[t] = (d_h_out[t] + W_ah.T @ delta_next) * self.act_grad(h[t])
            delta_next = delta[t]

        h_prev = np.vstack([h0, h[:-1]])  # (T, J): h_{t-1} for t = 1 .. T
        self.grads = {
            "W_ah": delta.T @ h_prev,  # (J, J)
            "W_ax": delta.T @ x,  # (J, I)
            "b_a": delta.sum(axis=0),  # (J,)
            "W_yh": d_logits.T @ h,  # (K, J)
            "b_y": d_logits.sum(axis=0),  # (K,)
        }
        self.grad_h0 = W_ah.T @ delta[0]  # (J,)
        self.grad_x = delta @ W_ax  # (T, I): what an embedding layer below needs
        return dict(self.grads)

    def _run(self, x, h0):
        """Checked copies of x and h0, the hidden states (T, J) and the logits (T, K)."""
        W_ah, W_ax, b_a = self.params["W_ah"], self.params["W_ax"], self.params["b_a"]
        W_yh, b_y = self.params["W_yh"], self.params["b_y"]
        J, I = W_ax.shape
        x = np.array(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != I or len(x) < 1:
            raise ValueError(f"x must have shape (T, {I}) with T >= 1, got {x.shape}")
        h0 = np.zeros(J) if h0 is None else np.array(h0, dtype=np.float64)
        if h0.shape != (J,):
            raise ValueError(f"h0 must have shape ({J},), got {h0.shape}")

        # The input's share of a_t does not depend on the recurrence: all t at once.
        a_in = x @ W_ax.T + b_a  # (T, J)
        h = np.empty((len(x), J))  # (T, J)
        h_t = h0
        for t in range(len(x)):
            h_t = h[t] = self.act(W_ah @ h_t + a_in[t])
        return x, h0, h, h @ W_yh.T + b_y


class RNNLM(ElmanRNN):
    """An ElmanRNN over embeddings x_t = E[tokens[t]] that predicts tokens[t + 1].

    Initialisation: E (V, D) standard normal, drawn from rng after the
    ElmanRNN weights (see ElmanRNN for those).
    """

    def __init__(self, vocab_size: int, embed_dim: int, hidden_size: int,
                 activation: str = "sigmoid", rng: np.random.Generator | None = None):
        V = _check_size(vocab_size, "vocab_size")
        D = _check_size(embed_dim, "embed_dim")
        rng = _check_rng(rng)
        super().__init__(D, hidden_size, V, activation, rng)
        self.params = {"E": rng.standard_normal((V, D)), **self.params}
        self._tokens = None

    @property
    def vocab_size(self) -> int:
        return self.params["E"].shape[0]

    def loss(self, tokens) -> float:
        """Summed cross-entropy of predicting tokens[1:] from tokens[:-1]."""
        tokens = self._check_sequence(tokens)
        loss = super().loss(self.params["E"][tokens[:-1]], tokens[1:])
        self._tokens = tokens
        return loss

    def backward(self) -> dict[str, np.ndarray]:
        if self._tokens is None:
            raise RuntimeError("backward() needs a previous call of loss()")
        grads = super().backward()
        # A token that occurs several times gets the sum of its rows' gradients:
        # np.add.at accumulates, where grad_E[tokens] += ... would keep only one.
        grad_E = np.zeros_like(self.params["E"])  # (V, D)
        np.add.at(grad_E, self._tokens[:-1], self.grad_x)
        self.grads = {"E": grad_E, **grads}
        return dict(self.grads)

    def sgd_step(self, lr: float) -> None:
        """p <- p - lr * grad for every parameter."""
        lr = _check_lr(lr)
        if set(self.grads) != set(self.params):
            raise RuntimeError("sgd_step() needs a previous call of backward()")
        # New arrays rather than -=: the arrays in params may be someone else's.
        self.params.update({k: self.params[k] - lr * self.grads[k] for k in self.params})

    def sample(self, rng: np.random.Generator, start: int, max_len: int, end: int | None = None) -> list[int]:
        """Draw up to max_len tokens after `start`; a drawn `end` is included and stops it."""
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        V = self.vocab_size
        token = _check_token(start, V, "start")
        if end is not None:
            end = _check_token(end, V, "end")
        if isinstance(max_len, bool) or not isinstance(max_len, (int, np.integer)) or max_len < 0:
            raise ValueError(f"max_len must be an integer >= 0, got {max_len!r}")

        E, W_ah, W_ax, b_a = (self.params[k] for k in ("E", "W_ah", "W_ax", "b_a"))
        W_yh, b_y = self.params["W_yh"], self.params["b_y"]
        h_t = np.zeros(W_ah.shape[0])  # (J,)
        out: list[int] = []
        while len(out) < max_len:
            h_t = self.act(W_ah @ h_t + W_ax @ E[token] + b_a)
            y_t = np.exp(_log_softmax(W_yh @ h_t + b_y))  # (V,)
            # Renormalised: rounding can leave sum(y_t) further from 1 than
            # rng.choice tolerates.
            token = int(rng.choice(V, p=y_t / y_t.sum()))
            out.append(token)
            if token == end:
                break
        return out

    def _check_sequence(self, tokens) -> np.ndarray:
        tokens = _check_tokens(tokens, self.vocab_size, None, "tokens")
        if len(tokens) < 2:
            raise ValueError(f"tokens must hold at least 2 tokens (one to read, one to predict), got {len(tokens)}")
        return tokens


def train(model: RNNLM, sequences: list[np.ndarray], epochs: int, lr: float,
          rng: np.random.Generator) -> list[float]:
    """Plain SGD, one sequence at a time; per epoch, the mean loss per predicted token."""
    if not isinstance(model, RNNLM):
        raise ValueError(f"model must be an RNNLM, got {type(model).__name__}")
    if isinstance(epochs, bool) or not isinstance(epochs, (int, np.integer)) or epochs < 0:
        raise ValueError(f"epochs must be an integer >= 0, got {epochs!r}")
    lr = _check_lr(lr)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    if len(sequences) == 0:
        raise ValueError("sequences must not be empty")
    # Checked before the first step, so that a bad sequence leaves the model untouched.
    sequences = [model._check_sequence(s) for s in sequences]
    n_predicted = sum(len(s) - 1 for s in sequences)

    losses = []
    for _ in range(epochs):
        total = 0.0
        for i in rng.permutation(len(sequences)):
            total += model.loss(sequences[i])
            model.backward()
            model.sgd_step(lr)
        losses.append(total / n_predicted)
    return losses

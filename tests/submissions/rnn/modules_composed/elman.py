import copy

import numpy as np
from modules import CrossEntropy, Linear, Sigmoid, Softmax, Tanh

_ACTIVATIONS = {"sigmoid": Sigmoid, "tanh": Tanh}
_RNN_KEYS = ("W_ah", "W_ax", "b_a", "W_yh", "b_y")


def _count(value, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError("%s must be a positive int, got %r" % (name, value))
    return int(value)


def _with_params(template, W, b):
    """A fresh Linear sharing nothing cached with the template."""
    layer = copy.copy(template)
    layer.params = {"W": W, "b": b}
    layer.grads = {}
    return layer


class _Trace:
    """Everything one forward pass needs for backpropagation through time."""

    def __init__(self):
        self.input_layer = None
        self.steps = []          # (recurrent Linear, activation) per time step
        self.output_layer = None
        self.softmax = None
        self.criterion = None
        self.h0 = None
        self.T = 0


class ElmanRNN:
    def __init__(self, input_size, hidden_size, output_size, activation="sigmoid", rng=None):
        I = _count(input_size, "input_size")
        J = _count(hidden_size, "hidden_size")
        K = _count(output_size, "output_size")
        if activation not in _ACTIVATIONS:
            raise ValueError("activation must be one of %s, got %r" % (sorted(_ACTIVATIONS), activation))
        if rng is None:
            rng = np.random.default_rng()
        self.activation = activation
        self._recurrent = Linear(J, J, rng)
        self._input = Linear(I, J, rng)
        self._output = Linear(J, K, rng)
        self.params = {
            "W_ah": self._recurrent.params["W"],
            "W_ax": self._input.params["W"],
            "b_a": self._input.params["b"],
            "W_yh": self._output.params["W"],
            "b_y": self._output.params["b"],
        }
        self.grads = {}
        self.hidden = None
        self.grad_h0 = None
        self._trace = None

    def _run(self, x, h0):
        P = self.params
        J = P["W_ah"].shape[0]
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != P["W_ax"].shape[1]:
            raise ValueError("x must have shape (T, %d), got %s" % (P["W_ax"].shape[1], x.shape))
        if h0 is None:
            h = np.zeros(J)
        else:
            h = np.asarray(h0, dtype=np.float64)
            if h.shape != (J,):
                raise ValueError("h0 must have shape (%d,), got %s" % (J, h.shape))
        trace = _Trace()
        trace.h0 = h
        trace.T = x.shape[0]
        trace.input_layer = _with_params(self._input, P["W_ax"], P["b_a"])
        projected = trace.input_layer(x)
        zero_bias = np.zeros(J)
        states = []
        for t in range(x.shape[0]):
            rec = _with_params(self._recurrent, P["W_ah"], zero_bias)
            act = _ACTIVATIONS[self.activation]()
            h = act(rec(h[None, :]) + projected[t][None, :])[0]
            trace.steps.append((rec, act))
            states.append(h)
        hidden = np.array(states) if states else np.zeros((0, J))
        trace.output_layer = _with_params(self._output, P["W_yh"], P["b_y"])
        trace.softmax = Softmax()
        probs = trace.softmax(trace.output_layer(hidden))
        self.hidden = hidden
        return probs, trace

    def forward(self, x, h0=None):
        probs, _ = self._run(x, h0)
        return probs

    def loss(self, x, targets, h0=None):
        probs, trace = self._run(x, h0)
        trace.criterion = CrossEntropy()
        value = trace.criterion(probs, targets)
        self._trace = trace
        return value

    def _backprop(self):
        trace = self._trace
        if trace is None:
            raise RuntimeError("call loss() before backward()")
        d_probs = trace.criterion.backward(1.0)
        d_logits = trace.softmax.backward(d_probs)
        d_hidden = trace.output_layer.backward(d_logits)
        grads = {
            "W_yh": trace.output_layer.grads["W"],
            "b_y": trace.output_layer.grads["b"],
            "W_ah": np.zeros_like(self.params["W_ah"]),
        }
        J = self.params["W_ah"].shape[0]
        d_pre = np.zeros((trace.T, J))
        carry = np.zeros(J)
        for t in reversed(range(trace.T)):
            rec, act = trace.steps[t]
            da = act.backward((d_hidden[t] + carry)[None, :])
            carry = rec.backward(da)[0]
            grads["W_ah"] = grads["W_ah"] + rec.grads["W"]
            d_pre[t] = da[0]
        d_x = trace.input_layer.backward(d_pre)
        grads["W_ax"] = trace.input_layer.grads["W"]
        grads["b_a"] = trace.input_layer.grads["b"]
        ordered = {k: grads[k] for k in _RNN_KEYS}
        return ordered, carry, d_x

    def backward(self):
        grads, grad_h0, _ = self._backprop()
        self.grads = grads
        self.grad_h0 = grad_h0
        return dict(grads)


class RNNLM:
    def __init__(self, vocab_size, embed_dim, hidden_size, activation="sigmoid", rng=None):
        V = _count(vocab_size, "vocab_size")
        D = _count(embed_dim, "embed_dim")
        J = _count(hidden_size, "hidden_size")
        if activation not in _ACTIVATIONS:
            raise ValueError("activation must be 'sigmoid' or 'tanh', got %r" % (activation,))
        if rng is None:
            rng = np.random.default_rng()
        self.rnn = ElmanRNN(D, J, V, activation=activation, rng=rng)
        self.params = {"E": rng.standard_normal((V, D)) * 0.1}
        self.params.update(self.rnn.params)
        self.rnn.params = self.params
        self.grads = {}
        self._inputs = None

    def _validate(self, tokens):
        tokens = np.asarray(tokens)
        V = self.params["E"].shape[0]
        if tokens.ndim != 1 or tokens.shape[0] < 2:
            raise ValueError("tokens must be a 1-D integer array with at least 2 entries")
        if not np.issubdtype(tokens.dtype, np.integer):
            raise ValueError("tokens must be integers")
        if tokens.min() < 0 or tokens.max() >= V:
            raise ValueError("tokens must lie in [0, %d)" % V)
        return tokens.astype(np.intp)

    def loss(self, tokens):
        tokens = self._validate(tokens)
        self.rnn.params = self.params
        inputs = tokens[:-1]
        value = self.rnn.loss(self.params["E"][inputs], tokens[1:])
        self._inputs = inputs
        return value

    def backward(self):
        if self._inputs is None:
            raise RuntimeError("call loss() before backward()")
        rnn_grads, _, d_x = self.rnn._backprop()
        d_E = np.zeros_like(self.params["E"])
        np.add.at(d_E, self._inputs, d_x)
        self.grads = {"E": d_E}
        self.grads.update(rnn_grads)
        self.rnn.grads = rnn_grads
        return dict(self.grads)

    def sgd_step(self, lr):
        if isinstance(lr, (bool, np.bool_)) or not isinstance(lr, (int, float, np.integer, np.floating)):
            raise ValueError("lr must be a real number, got %r" % (lr,))
        if not np.isfinite(lr) or lr < 0:
            raise ValueError("lr must be finite and >= 0, got %r" % (lr,))
        if not self.grads:
            raise RuntimeError("call backward() before sgd_step()")
        for key, grad in self.grads.items():
            self.params[key] = self.params[key] - lr * grad
        self.rnn.params = self.params

    def sample(self, rng, start, max_len, end=None):
        V = self.params["E"].shape[0]
        if isinstance(start, (bool, np.bool_)) or not isinstance(start, (int, np.integer)) or not 0 <= start < V:
            raise ValueError("start must be a token id in [0, %d), got %r" % (V, start))
        if end is not None and (isinstance(end, (bool, np.bool_))
                                or not isinstance(end, (int, np.integer)) or not 0 <= end < V):
            raise ValueError("end must be None or a token id in [0, %d), got %r" % (V, end))
        if isinstance(max_len, (bool, np.bool_)) or not isinstance(max_len, (int, np.integer)) or max_len < 0:
            raise ValueError("max_len must be a non-negative int, got %r" % (max_len,))
        self.rnn.params = self.params
        saved_hidden = self.rnn.hidden
        h = None
        current = int(start)
        out = []
        for _ in range(max_len):
            probs = self.rnn.forward(self.params["E"][[current]], h)[0]
            h = self.rnn.hidden[0]
            current = int(rng.choice(V, p=probs))
            out.append(current)
            if end is not None and current == end:
                break
        self.rnn.hidden = saved_hidden
        return out


def train(model, sequences, epochs, lr, rng):
    if isinstance(epochs, (bool, np.bool_)) or not isinstance(epochs, (int, np.integer)) or epochs < 0:
        raise ValueError("epochs must be a non-negative int, got %r" % (epochs,))
    if len(sequences) == 0:
        raise ValueError("need at least one sequence")
    losses = []
    for _ in range(int(epochs)):
        epoch_loss, predicted = 0.0, 0
        for idx in rng.permutation(len(sequences)):
            seq = sequences[idx]
            epoch_loss += model.loss(seq)
            model.backward()
            model.sgd_step(lr)
            predicted += len(seq) - 1
        losses.append(epoch_loss / predicted)
    return losses

"""Gated RNNs in the node-per-timestep style of nicodjimenez/lstm (lstm.py).

A *Param object holds the weights and their diffs, a *State object one
timestep's activations, and a *Node joins the two: bottom_data_is runs the
timestep forward and top_diff_is runs it backward, leaving bottom_diff_h,
bottom_diff_s and bottom_diff_x for the node below. Everything is one
vector at a time, with np.outer for the weight diffs.
"""

from __future__ import annotations

import numpy as np


def sigmoid(x):
    return 1.0 / (1 + np.exp(-x))


def sigmoid_derivative(values):
    return values * (1.0 - values)


def tanh_derivative(values):
    return 1.0 - values**2


def _check_sizes(x_dim, mem_cell_ct):
    if int(x_dim) < 1 or int(mem_cell_ct) < 1:
        raise ValueError(f"input_size and hidden_size must be >= 1, got {x_dim} and {mem_cell_ct}")


def _random_weights(rng, mem_cell_ct, concat_len):
    bound = 1.0 / np.sqrt(mem_cell_ct)
    return rng.uniform(-bound, bound, size=(mem_cell_ct, concat_len))


# ---------------------------------------------------------------------------
# LSTM


class LstmParam:
    """The weights (read from the params dict when built) and their diffs."""

    def __init__(self, params, mem_cell_ct, x_dim):
        self.mem_cell_ct = mem_cell_ct
        self.x_dim = x_dim
        self.wg, self.wi, self.wf, self.wo = params["W_C"], params["W_i"], params["W_f"], params["W_o"]
        self.bg, self.bi, self.bf, self.bo = params["b_C"], params["b_i"], params["b_f"], params["b_o"]
        self.wg_diff = np.zeros_like(self.wg)
        self.wi_diff = np.zeros_like(self.wi)
        self.wf_diff = np.zeros_like(self.wf)
        self.wo_diff = np.zeros_like(self.wo)
        self.bg_diff = np.zeros_like(self.bg)
        self.bi_diff = np.zeros_like(self.bi)
        self.bf_diff = np.zeros_like(self.bf)
        self.bo_diff = np.zeros_like(self.bo)

    def reset_diffs(self):
        self.wg_diff = np.zeros_like(self.wg)
        self.wi_diff = np.zeros_like(self.wi)
        self.wf_diff = np.zeros_like(self.wf)
        self.wo_diff = np.zeros_like(self.wo)
        self.bg_diff = np.zeros_like(self.bg)
        self.bi_diff = np.zeros_like(self.bi)
        self.bf_diff = np.zeros_like(self.bf)
        self.bo_diff = np.zeros_like(self.bo)

    def diffs(self):
        return {
            "W_f": self.wf_diff,
            "W_i": self.wi_diff,
            "W_C": self.wg_diff,
            "W_o": self.wo_diff,
            "b_f": self.bf_diff,
            "b_i": self.bi_diff,
            "b_C": self.bg_diff,
            "b_o": self.bo_diff,
        }


class LstmState:
    def __init__(self, mem_cell_ct, x_dim):
        self.g = np.zeros(mem_cell_ct)
        self.i = np.zeros(mem_cell_ct)
        self.f = np.zeros(mem_cell_ct)
        self.o = np.zeros(mem_cell_ct)
        self.s = np.zeros(mem_cell_ct)
        self.h = np.zeros(mem_cell_ct)
        self.bottom_diff_h = np.zeros_like(self.h)
        self.bottom_diff_s = np.zeros_like(self.s)
        self.bottom_diff_x = np.zeros(x_dim)


class LstmNode:
    def __init__(self, lstm_param, lstm_state):
        self.state = lstm_state
        self.param = lstm_param
        self.xc = None

    def bottom_data_is(self, x, s_prev, h_prev):
        self.s_prev = s_prev
        self.h_prev = h_prev
        # concatenate h(t-1) and x(t)
        xc = np.hstack((h_prev, x))
        self.state.g = np.tanh(np.dot(self.param.wg, xc) + self.param.bg)
        self.state.i = sigmoid(np.dot(self.param.wi, xc) + self.param.bi)
        self.state.f = sigmoid(np.dot(self.param.wf, xc) + self.param.bf)
        self.state.o = sigmoid(np.dot(self.param.wo, xc) + self.param.bo)
        self.state.s = self.state.g * self.state.i + s_prev * self.state.f
        self.state.h = np.tanh(self.state.s) * self.state.o
        self.xc = xc

    def top_diff_is(self, top_diff_h, top_diff_s):
        # top_diff_s is carried along the constant error carousel
        tanh_s = np.tanh(self.state.s)
        ds = self.state.o * tanh_derivative(tanh_s) * top_diff_h + top_diff_s
        do = tanh_s * top_diff_h
        di = self.state.g * ds
        dg = self.state.i * ds
        df = self.s_prev * ds

        # diffs w.r.t. the vector inside the sigmoid / tanh
        di_input = sigmoid_derivative(self.state.i) * di
        df_input = sigmoid_derivative(self.state.f) * df
        do_input = sigmoid_derivative(self.state.o) * do
        dg_input = tanh_derivative(self.state.g) * dg

        self.param.wi_diff += np.outer(di_input, self.xc)
        self.param.wf_diff += np.outer(df_input, self.xc)
        self.param.wo_diff += np.outer(do_input, self.xc)
        self.param.wg_diff += np.outer(dg_input, self.xc)
        self.param.bi_diff += di_input
        self.param.bf_diff += df_input
        self.param.bo_diff += do_input
        self.param.bg_diff += dg_input

        # bottom diff
        dxc = np.zeros_like(self.xc)
        dxc += np.dot(self.param.wi.T, di_input)
        dxc += np.dot(self.param.wf.T, df_input)
        dxc += np.dot(self.param.wo.T, do_input)
        dxc += np.dot(self.param.wg.T, dg_input)

        self.state.bottom_diff_s = ds * self.state.f
        self.state.bottom_diff_h = dxc[: self.param.mem_cell_ct]
        self.state.bottom_diff_x = dxc[self.param.mem_cell_ct :]


class LSTM:
    """The network of nodes: forward is x_list_add for every row, backward the y_list_is loop."""

    def __init__(self, input_size: int, hidden_size: int, rng: np.random.Generator | None = None):
        _check_sizes(input_size, hidden_size)
        rng = np.random.default_rng() if rng is None else rng
        self.x_dim = int(input_size)
        self.mem_cell_ct = int(hidden_size)
        concat_len = self.mem_cell_ct + self.x_dim
        self.params = {}
        for name in ("W_f", "W_i", "W_C", "W_o"):
            self.params[name] = _random_weights(rng, self.mem_cell_ct, concat_len)
        self.params["b_f"] = np.ones(self.mem_cell_ct)
        for name in ("b_i", "b_C", "b_o"):
            self.params[name] = np.zeros(self.mem_cell_ct)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def x_list_clear(self):
        self.lstm_param = LstmParam(self.params, self.mem_cell_ct, self.x_dim)
        self.lstm_node_list = []

    def x_list_add(self, x, s_prev, h_prev):
        lstm_state = LstmState(self.mem_cell_ct, self.x_dim)
        node = LstmNode(self.lstm_param, lstm_state)
        node.bottom_data_is(x, s_prev, h_prev)
        self.lstm_node_list.append(node)

    def forward(self, x, h0=None, C0=None):
        x = np.asarray(x, dtype=np.float64)
        h_prev = np.zeros(self.mem_cell_ct) if h0 is None else np.asarray(h0, dtype=np.float64)
        s_prev = np.zeros(self.mem_cell_ct) if C0 is None else np.asarray(C0, dtype=np.float64)
        self.x_list_clear()
        for x_t in x:
            self.x_list_add(x_t, s_prev, h_prev)
            s_prev = self.lstm_node_list[-1].state.s
            h_prev = self.lstm_node_list[-1].state.h
        self.cell = np.array([node.state.s for node in self.lstm_node_list]).reshape(len(x), self.mem_cell_ct)
        return np.array([node.state.h for node in self.lstm_node_list]).reshape(len(x), self.mem_cell_ct)

    def backward(self, grad_h):
        grad_h = np.asarray(grad_h, dtype=np.float64)
        self.lstm_param.reset_diffs()
        diff_h = np.zeros(self.mem_cell_ct)
        diff_s = np.zeros(self.mem_cell_ct)
        dx = np.zeros((len(self.lstm_node_list), self.x_dim))
        for idx in reversed(range(len(self.lstm_node_list))):
            node = self.lstm_node_list[idx]
            node.top_diff_is(grad_h[idx] + diff_h, diff_s)
            diff_h = node.state.bottom_diff_h
            diff_s = node.state.bottom_diff_s
            dx[idx] = node.state.bottom_diff_x
        self.grads = self.lstm_param.diffs()
        self.grad_h0 = diff_h
        self.grad_C0 = diff_s
        return dx


# ---------------------------------------------------------------------------
# GRU, built the same way: GruParam, GruState, GruNode.


class GruParam:
    def __init__(self, params, mem_cell_ct, x_dim):
        self.mem_cell_ct = mem_cell_ct
        self.x_dim = x_dim
        self.wr, self.wu, self.wn = params["W_r"], params["W_u"], params["W_n"]
        self.br, self.bu, self.bn = params["b_r"], params["b_u"], params["b_n"]
        self.wr_diff = np.zeros_like(self.wr)
        self.wu_diff = np.zeros_like(self.wu)
        self.wn_diff = np.zeros_like(self.wn)
        self.br_diff = np.zeros_like(self.br)
        self.bu_diff = np.zeros_like(self.bu)
        self.bn_diff = np.zeros_like(self.bn)

    def reset_diffs(self):
        self.wr_diff = np.zeros_like(self.wr)
        self.wu_diff = np.zeros_like(self.wu)
        self.wn_diff = np.zeros_like(self.wn)
        self.br_diff = np.zeros_like(self.br)
        self.bu_diff = np.zeros_like(self.bu)
        self.bn_diff = np.zeros_like(self.bn)

    def diffs(self):
        return {
            "W_r": self.wr_diff,
            "W_u": self.wu_diff,
            "W_n": self.wn_diff,
            "b_r": self.br_diff,
            "b_u": self.bu_diff,
            "b_n": self.bn_diff,
        }


class GruState:
    def __init__(self, mem_cell_ct, x_dim):
        self.r = np.zeros(mem_cell_ct)
        self.u = np.zeros(mem_cell_ct)
        self.n = np.zeros(mem_cell_ct)
        self.h = np.zeros(mem_cell_ct)
        self.bottom_diff_h = np.zeros(mem_cell_ct)
        self.bottom_diff_x = np.zeros(x_dim)


class GruNode:
    def __init__(self, gru_param, gru_state):
        self.state = gru_state
        self.param = gru_param

    def bottom_data_is(self, x, h_prev):
        self.h_prev = h_prev
        xc = np.hstack((h_prev, x))
        self.state.r = sigmoid(np.dot(self.param.wr, xc) + self.param.br)
        self.state.u = sigmoid(np.dot(self.param.wu, xc) + self.param.bu)
        # the reset gate scales h(t-1) before the product with wn
        xc_reset = np.hstack((self.state.r * h_prev, x))
        self.state.n = np.tanh(np.dot(self.param.wn, xc_reset) + self.param.bn)
        self.state.h = (1.0 - self.state.u) * h_prev + self.state.u * self.state.n
        self.xc = xc
        self.xc_reset = xc_reset

    def top_diff_is(self, top_diff_h):
        J = self.param.mem_cell_ct
        dn = self.state.u * top_diff_h
        du = (self.state.n - self.h_prev) * top_diff_h
        dh_prev = (1.0 - self.state.u) * top_diff_h

        dn_input = tanh_derivative(self.state.n) * dn
        self.param.wn_diff += np.outer(dn_input, self.xc_reset)
        self.param.bn_diff += dn_input
        dxc_reset = np.dot(self.param.wn.T, dn_input)
        dh_prev += self.state.r * dxc_reset[:J]
        dr = self.h_prev * dxc_reset[:J]

        dr_input = sigmoid_derivative(self.state.r) * dr
        du_input = sigmoid_derivative(self.state.u) * du
        self.param.wr_diff += np.outer(dr_input, self.xc)
        self.param.wu_diff += np.outer(du_input, self.xc)
        self.param.br_diff += dr_input
        self.param.bu_diff += du_input

        dxc = np.dot(self.param.wr.T, dr_input) + np.dot(self.param.wu.T, du_input)
        self.state.bottom_diff_h = dh_prev + dxc[:J]
        self.state.bottom_diff_x = dxc[J:] + dxc_reset[J:]


class GRU:
    def __init__(self, input_size: int, hidden_size: int, rng: np.random.Generator | None = None):
        _check_sizes(input_size, hidden_size)
        rng = np.random.default_rng() if rng is None else rng
        self.x_dim = int(input_size)
        self.mem_cell_ct = int(hidden_size)
        concat_len = self.mem_cell_ct + self.x_dim
        self.params = {}
        for name in ("W_r", "W_u", "W_n"):
            self.params[name] = _random_weights(rng, self.mem_cell_ct, concat_len)
        for name in ("b_r", "b_u", "b_n"):
            self.params[name] = np.zeros(self.mem_cell_ct)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def forward(self, x, h0=None):
        x = np.asarray(x, dtype=np.float64)
        h_prev = np.zeros(self.mem_cell_ct) if h0 is None else np.asarray(h0, dtype=np.float64)
        self.gru_param = GruParam(self.params, self.mem_cell_ct, self.x_dim)
        self.gru_node_list = []
        for x_t in x:
            node = GruNode(self.gru_param, GruState(self.mem_cell_ct, self.x_dim))
            node.bottom_data_is(x_t, h_prev)
            self.gru_node_list.append(node)
            h_prev = node.state.h
        return np.array([node.state.h for node in self.gru_node_list]).reshape(len(x), self.mem_cell_ct)

    def backward(self, grad_h):
        grad_h = np.asarray(grad_h, dtype=np.float64)
        self.gru_param.reset_diffs()
        diff_h = np.zeros(self.mem_cell_ct)
        dx = np.zeros((len(self.gru_node_list), self.x_dim))
        for idx in reversed(range(len(self.gru_node_list))):
            node = self.gru_node_list[idx]
            node.top_diff_is(grad_h[idx] + diff_h)
            diff_h = node.state.bottom_diff_h
            dx[idx] = node.state.bottom_diff_x
        self.grads = self.gru_param.diffs()
        self.grad_h0 = diff_h
        return dx


# ---------------------------------------------------------------------------
# Deep and bidirectional networks of nodes.


def _make_cell(cell, x_dim, mem_cell_ct, rng):
    if cell == "lstm":
        return LSTM(x_dim, mem_cell_ct, rng)
    if cell == "gru":
        return GRU(x_dim, mem_cell_ct, rng)
    raise ValueError(f"cell must be 'lstm' or 'gru', got {cell!r}")


class StackedRNN:
    def __init__(self, cell: str, input_size: int, hidden_size: int, num_layers: int, rng=None):
        if cell not in ("lstm", "gru"):
            raise ValueError(f"cell must be 'lstm' or 'gru', got {cell!r}")
        if int(num_layers) < 1:
            raise ValueError(f"num_layers must be >= 1, got {num_layers}")
        _check_sizes(input_size, hidden_size)
        rng = np.random.default_rng() if rng is None else rng
        self.layers = []
        for layer_idx in range(int(num_layers)):
            x_dim = input_size if layer_idx == 0 else hidden_size
            self.layers.append(_make_cell(cell, x_dim, hidden_size, rng))

    def forward(self, x):
        h = x
        for layer in self.layers:
            h = layer.forward(h)
        return h

    def backward(self, grad_h):
        top_diff = grad_h
        for layer in reversed(self.layers):
            top_diff = layer.backward(top_diff)
        return top_diff


class BiRNN:
    def __init__(self, cell: str, input_size: int, hidden_size: int, rng=None):
        if cell not in ("lstm", "gru"):
            raise ValueError(f"cell must be 'lstm' or 'gru', got {cell!r}")
        _check_sizes(input_size, hidden_size)
        rng = np.random.default_rng() if rng is None else rng
        self.fwd = _make_cell(cell, input_size, hidden_size, rng)
        self.bwd = _make_cell(cell, input_size, hidden_size, rng)

    def forward(self, x):
        x = np.asarray(x, dtype=np.float64)
        h_fwd = self.fwd.forward(x)
        h_bwd = np.flipud(self.bwd.forward(np.flipud(x)))
        return np.hstack((h_fwd, h_bwd))

    def backward(self, grad_y):
        grad_y = np.asarray(grad_y, dtype=np.float64)
        J = self.fwd.mem_cell_ct
        bottom_diff_fwd = self.fwd.backward(grad_y[:, :J])
        bottom_diff_bwd = np.flipud(self.bwd.backward(np.flipud(grad_y[:, J:])))
        return bottom_diff_fwd + bottom_diff_bwd


def clip_grad_norm(grads, max_norm):
    if max_norm <= 0:
        raise ValueError(f"max_norm must be > 0, got {max_norm}")
    total = 0.0
    for diff in grads.values():
        total += float(np.sum(np.square(diff)))
    total = float(np.sqrt(total))
    scale = max_norm / total if total > max_norm else 1.0
    return {name: diff * scale for name, diff in grads.items()}, total


# ---------------------------------------------------------------------------
# The language model: test.py's loss-layer idiom (loss and bottom_diff as class methods).


class SoftmaxLossLayer:
    """Cross-entropy of softmax(pred) against an integer label."""

    @classmethod
    def log_softmax(cls, pred):
        shifted = pred - np.max(pred)
        return shifted - np.log(np.sum(np.exp(shifted)))

    @classmethod
    def loss(cls, pred, label):
        return -cls.log_softmax(pred)[label]

    @classmethod
    def bottom_diff(cls, pred, label):
        diff = np.exp(cls.log_softmax(pred))
        diff[label] -= 1.0
        return diff


class LSTMLM:
    def __init__(self, vocab_size: int, embed_dim: int, hidden_size: int, num_layers: int = 1, rng=None):
        if int(vocab_size) < 1 or int(embed_dim) < 1 or int(hidden_size) < 1:
            raise ValueError("vocab_size, embed_dim and hidden_size must be >= 1")
        if int(num_layers) < 1:
            raise ValueError(f"num_layers must be >= 1, got {num_layers}")
        rng = np.random.default_rng() if rng is None else rng
        self.params = {
            "E": rng.standard_normal((vocab_size, embed_dim)) * 0.1,
            "W_y": rng.uniform(-1.0 / np.sqrt(hidden_size), 1.0 / np.sqrt(hidden_size), size=(vocab_size, hidden_size)),
            "b_y": np.zeros(vocab_size),
        }
        self.rnn = StackedRNN("lstm", embed_dim, hidden_size, num_layers, rng)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def loss(self, tokens) -> float:
        tokens = np.asarray(tokens)
        self.x_list = tokens[:-1]
        self.y_list = tokens[1:]
        h = self.rnn.forward(self.params["E"][self.x_list])
        self.h_list = h
        self.pred_list = h @ self.params["W_y"].T + self.params["b_y"]
        loss = 0.0
        for pred, label in zip(self.pred_list, self.y_list):
            loss += SoftmaxLossLayer.loss(pred, label)
        return float(loss)

    def backward(self) -> None:
        W_y = self.params["W_y"]
        wy_diff = np.zeros_like(W_y)
        by_diff = np.zeros_like(self.params["b_y"])
        diff_h = np.zeros_like(self.h_list)
        for idx, (pred, label) in enumerate(zip(self.pred_list, self.y_list)):
            dpred = SoftmaxLossLayer.bottom_diff(pred, label)
            wy_diff += np.outer(dpred, self.h_list[idx])
            by_diff += dpred
            diff_h[idx] = np.dot(W_y.T, dpred)
        diff_x = self.rnn.backward(diff_h)
        e_diff = np.zeros_like(self.params["E"])
        for idx, token in enumerate(self.x_list):
            e_diff[token] += diff_x[idx]
        self.grads = {"E": e_diff, "W_y": wy_diff, "b_y": by_diff}

    def named_grads(self) -> dict[str, np.ndarray]:
        grads = dict(self.grads)
        for layer_idx, layer in enumerate(self.rnn.layers):
            for key, diff in layer.grads.items():
                grads[f"rnn.{layer_idx}.{key}"] = diff
        return grads

    def apply_diff(self, diffs, lr):
        for key in self.params:
            self.params[key] = self.params[key] - lr * diffs[key]
        for layer_idx, layer in enumerate(self.rnn.layers):
            for key in layer.params:
                layer.params[key] = layer.params[key] - lr * diffs[f"rnn.{layer_idx}.{key}"]

    def step(self, lr: float, max_norm: float | None = None) -> float:
        diffs = self.named_grads()
        total = float(np.sqrt(sum(float(np.sum(np.square(d))) for d in diffs.values())))
        if max_norm is not None:
            diffs, total = clip_grad_norm(diffs, max_norm)
        self.apply_diff(diffs, lr)
        return total


def train(model, sequences, epochs, lr, rng, max_norm=None):
    epoch_losses = []
    for _ in range(epochs):
        loss = 0.0
        count = 0
        for idx in rng.permutation(len(sequences)):
            loss += model.loss(sequences[idx])
            model.backward()
            model.step(lr, max_norm)
            count += len(sequences[idx]) - 1
        epoch_losses.append(loss / count)
    return epoch_losses

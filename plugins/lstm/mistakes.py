"""Known lstm mistakes, each made as an edit of a copy of the reference.

The oracle runs a check's scenario on the flawed copy; a submission whose
every answer matches it is told the mistake by name. Each edit is what a
student would have written in the reference's place (a forward mistake
comes with the backward that goes with it, so both halves agree).
"""

from __future__ import annotations

from lmgrade import Mistake

R = "recurrent.py"

GATE_ORDER = Mistake(
    "gate_order",
    "the forget and input gates are swapped: f_t must use W_f and b_f, i_t W_i and b_i "
    "(torch.nn.LSTM stacks its gates as i, f, g, o; the contract keeps one matrix per gate)",
    edits=(
        (
            R,
            'f[t] = sigmoid(p["W_f"] @ z[t] + p["b_f"])\n            i[t] = sigmoid(p["W_i"] @ z[t] + p["b_i"])',
            'f[t] = sigmoid(p["W_i"] @ z[t] + p["b_i"])\n            i[t] = sigmoid(p["W_f"] @ z[t] + p["b_f"])',
        ),
        (R, 'p["W_f"].T @ d_f[t] + p["W_i"].T @ d_i[t]', 'p["W_i"].T @ d_f[t] + p["W_f"].T @ d_i[t]'),
        (R, '"W_f": d_f.T @ z, "W_i": d_i.T @ z', '"W_f": d_i.T @ z, "W_i": d_f.T @ z'),
        (R, '"b_f": d_f.sum(axis=0), "b_i": d_i.sum(axis=0)', '"b_f": d_i.sum(axis=0), "b_i": d_f.sum(axis=0)'),
    ),
)

_LSTM_Z = "z[t] = np.concatenate([h_t, x[t]])\n            f[t]"
HX_ORDER = Mistake(
    "hx_order",
    "z_t is built as [x_t; h_{t-1}]; the contract's is [h_{t-1}; x_t], h first: a gate's first J "
    "columns act on h_{t-1}, the last I on x_t",
    edits=(
        (R, _LSTM_Z, "z[t] = np.concatenate([x[t], h_t])\n            f[t]"),
        (R, "dh_next, dC_next = d_z[t, :J], dC * f[t]", "dh_next, dC_next = d_z[t, -J:], dC * f[t]"),
        (R, "return d_z[:, J:]  # (T, I)", "return d_z[:, :-J]  # (T, I)"),
    ),
)

GRU_HX_ORDER = Mistake(
    "gru_hx_order",
    "z_t is built as [x_t; h_{t-1}] (and [x_t; r_t * h_{t-1}]); the contract's is h first: a "
    "gate's first J columns act on h_{t-1}, the last I on x_t",
    edits=(
        (
            R,
            "z[t] = np.concatenate([h_t, x[t]])\n            r[t]",
            "z[t] = np.concatenate([x[t], h_t])\n            r[t]",
        ),
        (R, "zr[t] = np.concatenate([r[t] * h_t, x[t]])", "zr[t] = np.concatenate([x[t], r[t] * h_t])"),
        (R, "d_r[t] = d_zr[:J] * h_prev[t]", "d_r[t] = d_zr[-J:] * h_prev[t]"),
        (R, "dx[t] = d_zr[J:] + d_z[J:]", "dx[t] = d_zr[:-J] + d_z[:-J]"),
        (
            R,
            "dh_next = dh * (1.0 - u[t]) + d_zr[:J] * r[t] + d_z[:J]",
            "dh_next = dh * (1.0 - u[t]) + d_zr[-J:] * r[t] + d_z[-J:]",
        ),
    ),
)

FORGET_BIAS_ZERO = Mistake(
    "forget_bias_zero",
    "the forget-gate bias b_f starts at zeros; the contract starts it at ones, so that C_t "
    "is carried through time from the first step of training",
    edits=((R, '"b_f": np.ones(J)', '"b_f": np.zeros(J)'),),
)

CELL_ORDER = Mistake(
    "h_from_old_cell",
    "h_t is computed from C_{t-1}: update the cell state first, C_t = f_t * C_{t-1} + i_t * g_t, "
    "then h_t = o_t * tanh(C_t) with the new C_t",
    edits=(
        (
            R,
            "C_t = C[t] = f[t] * C_t + i[t] * g[t]\n            h_t = h[t] = o[t] * np.tanh(C_t)",
            "h_t = h[t] = o[t] * np.tanh(C_t)\n            C_t = C[t] = f[t] * C_t + i[t] * g[t]",
        ),
    ),
)

NO_TANH_C = Mistake(
    "no_tanh_on_cell",
    "h_t = o_t * C_t: the tanh of the cell state is missing (h_t = o_t * tanh(C_t))",
    edits=(
        (R, "h_t = h[t] = o[t] * np.tanh(C_t)", "h_t = h[t] = o[t] * C_t"),
        (R, "tanh_C = np.tanh(C)", "tanh_C = C"),
        (R, "dC = dC_next + dh * o[t] * (1.0 - tanh_C[t] ** 2)", "dC = dC_next + dh * o[t]"),
    ),
)

H0_IGNORED = Mistake(
    "h0_ignored",
    "the h0 argument is ignored: the recurrence starts from h = 0 whatever h0 is given",
    edits=(
        (
            R,
            "h_t = np.zeros(J) if h0 is None else np.asarray(h0, dtype=np.float64)\n        C_t",
            "h_t = np.zeros(J)\n        C_t",
        ),
    ),
)

C0_IGNORED = Mistake(
    "C0_ignored",
    "the C0 argument is ignored: the cell state starts from 0 whatever C0 is given",
    edits=((R, "C_t = np.zeros(J) if C0 is None else np.asarray(C0, dtype=np.float64)", "C_t = np.zeros(J)"),),
)

CELL_GRAD_NOT_CARRIED = Mistake(
    "cell_gradient_not_carried",
    "BPTT does not carry the cell state's gradient back in time: dL/dC_{t-1} must "
    "collect f_t * dL/dC_t, not only what reaches C_{t-1} through h_{t-1}",
    edits=((R, "dh_next, dC_next = d_z[t, :J], dC * f[t]", "dh_next, dC_next = d_z[t, :J], np.zeros(J)"),),
)

CELL_GRAD_NO_FORGET = Mistake(
    "cell_gradient_not_through_forget_gate",
    "BPTT passes dL/dC_t back to C_{t-1} unchanged: C_t = f_t * C_{t-1} + i_t * g_t, so "
    "dL/dC_{t-1} collects f_t * dL/dC_t (and grad_C0 is f_1 * dL/dC_1)",
    edits=((R, "dh_next, dC_next = d_z[t, :J], dC * f[t]", "dh_next, dC_next = d_z[t, :J], dC"),),
)

MISSING_TANH_PRIME = Mistake(
    "cell_gradient_without_tanh_derivative",
    "dL/dC_t takes dL/dh_t * o_t without tanh's derivative: h_t = o_t * tanh(C_t), so C_t "
    "receives dL/dh_t * o_t * (1 - tanh(C_t)^2)",
    edits=((R, "dC = dC_next + dh * o[t] * (1.0 - tanh_C[t] ** 2)", "dC = dC_next + dh * o[t]"),),
)

_LSTM_GRADS = """            "W_f": d_f.T @ z, "W_i": d_i.T @ z, "W_C": d_g.T @ z, "W_o": d_o.T @ z,  # (J, J + I)
            "b_f": d_f.sum(axis=0), "b_i": d_i.sum(axis=0), "b_C": d_g.sum(axis=0), "b_o": d_o.sum(axis=0),"""


def _first_step_only(grads: str) -> str:
    """The gradients as a loop over t from T down to 1 leaves them when it assigns (=) at each step: step 1's."""
    for d in ("d_f", "d_i", "d_g", "d_o"):
        grads = grads.replace(f"{d}.T @ z", f"np.outer({d}[0], z[0])").replace(f"{d}.sum(axis=0)", f"{d}[0].copy()")
    return grads


GRADS_OVERWRITTEN = Mistake(
    "gradients_overwritten",
    "the weight and bias gradients keep one time step's contribution only, as if assigned (=) at each "
    "step: each is a sum over t, so start them at zeros and accumulate (+=) every step's",
    edits=((R, _LSTM_GRADS, _first_step_only(_LSTM_GRADS)),),
)

# lstm_backward knows more mistakes than are paired automatically (lmgrade pairs at most 7), so the
# pair published code makes (nicodjimenez's lstm.py) is named as one, worded as lmgrade words a pair.
HX_ORDER_AND_NO_TANH = Mistake(
    f"{HX_ORDER.name}+{NO_TANH_C.name}",
    f"two known mistakes together: {HX_ORDER.explanation}; and {NO_TANH_C.explanation}",
    edits=HX_ORDER.edits + NO_TANH_C.edits,
)

GRU_UPDATE_SWAPPED = Mistake(
    "gru_update_roles_swapped",
    "the update gate's roles are swapped: h_t = u_t * h_{t-1} + (1 - u_t) * n_t is "
    "PyTorch's convention; the contract's is h_t = (1 - u_t) * h_{t-1} + u_t * n_t",
    edits=(
        (R, "h_t = h[t] = (1.0 - u[t]) * h_t + u[t] * n[t]", "h_t = h[t] = u[t] * h_t + (1.0 - u[t]) * n[t]"),
        (R, "d_u[t] = dh * (n[t] - h_prev[t])", "d_u[t] = dh * (h_prev[t] - n[t])"),
        (R, "d_n[t] = dh * u[t] * (1.0 - n[t] ** 2)", "d_n[t] = dh * (1.0 - u[t]) * (1.0 - n[t] ** 2)"),
        (R, "dh_next = dh * (1.0 - u[t]) +", "dh_next = dh * u[t] +"),
    ),
)

GRU_RESET_AFTER = Mistake(
    "gru_reset_after_product",
    "the reset gate multiplies W_n's h-part after the product, "
    "r_t * (W_nh h_{t-1}) (PyTorch's convention); the contract applies it to h before: W_n [r_t * h_{t-1}; x_t]",
    edits=(
        (
            R,
            'n[t] = np.tanh(p["W_n"] @ zr[t] + p["b_n"])',
            'n[t] = np.tanh(p["W_n"][:, J:] @ x[t] + r[t] * (p["W_n"][:, :J] @ h_t) + p["b_n"])',
        ),
    ),
)

BI_NOT_REVERSED = Mistake(
    "backward_half_not_reversed",
    "the backward half reads x in the forward order: h<-_t must have read "
    "x_T .. x_t, so run the second cell on x reversed in time and reverse its states back",
    edits=(
        (R, "h_bwd = self.bwd.forward(x[::-1])[::-1]", "h_bwd = self.bwd.forward(x)"),
        (R, "dx_bwd = self.bwd.backward(grad_y[::-1, J:])[::-1]", "dx_bwd = self.bwd.backward(grad_y[:, J:])"),
    ),
)

_CLIP = "    return {k: g * scale for k, g in grads.items()}, total"

CLIP_PER_ARRAY = Mistake(
    "clip_per_array",
    "each array is clipped by its own norm; the contract clips by one global norm over every "
    "array, so that the update keeps its direction",
    edits=(
        (
            R,
            _CLIP,
            "    return {k: g * min(1.0, max_norm / max(np.sqrt(np.sum(g ** 2)), 1e-300)) "
            "for k, g in grads.items()}, total",
        ),
    ),
)

CLIP_MUTATES = Mistake(
    "clip_mutates_input",
    "clip_grad_norm scales the arrays it was given in place; the contract returns new "
    "arrays and leaves its input unchanged",
    edits=((R, _CLIP, "    for g in grads.values():\n        g *= scale\n    return grads, total"),),
)

CLIP_PER_ENTRY = Mistake(
    "clip_per_entry",
    "each entry is clipped to [-max_norm, max_norm] on its own (np.clip, as min-char-rnn does), which "
    "changes the gradient's direction; the contract scales every array by max_norm / total, total being "
    "one norm over every entry of every array, when total > max_norm",
    edits=((R, _CLIP, "    return {k: np.clip(g, -max_norm, max_norm) for k, g in grads.items()}, total"),),
)

_SCALE = "scale = max_norm / total if total > max_norm else 1.0"

CLIP_EPSILON = Mistake(
    "clip_epsilon",
    "the arrays are scaled by min(1, max_norm / (total + 1e-6)) (torch's clip_grad_norm_), which scales "
    "them at total == max_norm too and leaves the clipped norm a little below max_norm; the contract "
    "scales by max_norm / total exactly, and only when total > max_norm",
    edits=((R, _SCALE, "scale = min(1.0, max_norm / (total + 1e-6))"),),
)

CLIP_EPSILON_ABOVE = Mistake(
    "clip_epsilon_above",
    "above max_norm the arrays are scaled by max_norm / (total + 1e-6), so the clipped norm is a little "
    "below max_norm; the contract scales by max_norm / total exactly",
    edits=((R, _SCALE, "scale = max_norm / (total + 1e-6) if total > max_norm else 1.0"),),
)

CLIP_AFTER_STEP = Mistake(
    "clip_after_step",
    "step updates the parameters with the gradients before clipping (clipped after the "
    "update, or the clipped copy unused): clip first, then p -= lr * clipped g",
    edits=((R, "grads, total = clip_grad_norm(grads, max_norm)", "total = clip_grad_norm(grads, max_norm)[1]"),),
)

STEP_RETURNS_CLIPPED_NORM = Mistake(
    "step_returns_clipped_norm",
    "step returns the norm after clipping; the contract returns the total norm "
    "before clipping (what tells you how often clipping acts)",
    edits=(
        (
            R,
            "        return total\n\n\ndef train",
            "        return total if max_norm is None else min(total, max_norm)\n\n\ndef train",
        ),
    ),
)

LOSS_MEAN = Mistake(
    "loss_mean",
    "the loss is a mean over time steps; the contract asks for the sum over t",
    edits=(
        (
            R,
            "return float(-log_y[np.arange(len(h)), tokens[1:]].sum())",
            "return float(-log_y[np.arange(len(h)), tokens[1:]].mean())",
        ),
        (
            R,
            "d_logits[np.arange(len(h)), tokens[1:]] -= 1.0",
            "d_logits[np.arange(len(h)), tokens[1:]] -= 1.0\n        d_logits /= len(h)",
        ),
    ),
)

GRAD_E_NOT_ACCUMULATED = Mistake(
    "embedding_gradient_not_accumulated",
    "E's gradient keeps one row per repeated token: grad_E[tokens] += dx "
    "writes each row once; np.add.at(grad_E, tokens, dx) sums them",
    edits=((R, "np.add.at(grad_E, tokens[:-1], dx)", "grad_E[tokens[:-1]] += dx"),),
)

NO_SHUFFLE = Mistake(
    "train_no_shuffle",
    "train visits the sequences in their given order; the contract visits them in "
    "rng.permutation(len(sequences)) order, drawn again each epoch",
    edits=((R, "for k in rng.permutation(len(sequences)):", "for k in range(len(sequences)):"),),
)

TRAIN_DIV_LEN = Mistake(
    "train_divides_by_tokens",
    "train divides the epoch's loss by the number of tokens, sum(len(s)); a sequence of len(s) tokens "
    "makes len(s) - 1 predictions, so divide by sum(len(s) - 1)",
    edits=((R, "n_predicted = sum(len(s) - 1 for s in sequences)", "n_predicted = sum(len(s) for s in sequences)"),),
)

_DC = "dC = dC_next + dh * o[t] * (1.0 - tanh_C[t] ** 2)"

CELL_CARRY_DROPPED = Mistake(
    "cell_gradient_carry_dropped",
    "dL/dC_t takes only what reaches it through h_t: it must also add the gradient carried back from "
    "C_{t+1} = f_{t+1} * C_t + ..., so dC_t = dC_next + dh_t * o_t * (1 - tanh(C_t)^2)",
    edits=((R, _DC, "dC = dh * o[t] * (1.0 - tanh_C[t] ** 2)"),),
)

TANH_PRIME_OF_C = Mistake(
    "tanh_derivative_of_C",
    "tanh's derivative is taken as 1 - C_t^2; h_t = o_t * tanh(C_t), so it is 1 - tanh(C_t)^2",
    edits=((R, _DC, "dC = dC_next + dh * o[t] * (1.0 - C[t] ** 2)"),),
)

C0_GRAD_NO_FORGET = Mistake(
    "grad_C0_without_forget_gate",
    "grad_C0 is dL/dC_1 itself; C_1 = f_1 * C_0 + i_1 * g_1, so grad_C0 = f_1 * dL/dC_1",
    edits=((R, "self.grad_h0, self.grad_C0 = dh_next, dC_next", "self.grad_h0, self.grad_C0 = dh_next, dC"),),
)

CELL_ROWS_SHIFTED = Mistake(
    "cell_rows_shifted",
    "self.cell holds C_0 .. C_{T-1}, the state each step started from; the contract's rows are C_1 .. C_T, "
    "the state each step ends with",
    edits=((R, "self.cell = C.copy()", "self.cell = np.vstack([C0, C[:-1]])"),),
)

GRU_RESET_TO_H_MISSING = Mistake(
    "gru_reset_path_to_h_missing",
    "BPTT forgets that h_{t-1} also reaches n_t through r_t * h_{t-1}: dL/dh_{t-1} must add "
    "r_t * (the h-part of W_n^T dn_t)",
    edits=((R, "dh_next = dh * (1.0 - u[t]) + d_zr[:J] * r[t] + d_z[:J]", "dh_next = dh * (1.0 - u[t]) + d_z[:J]"),),
)

_BI_BACKWARD = "dx_bwd = self.bwd.backward(grad_y[::-1, J:])[::-1]"

BI_GRAD_NOT_REVERSED = Mistake(
    "backward_half_gradient_not_reversed",
    "the backward cell's gradient is passed in x's order; that cell read x reversed, so give it "
    "grad_y[::-1, J:] and reverse its dx back",
    edits=((R, _BI_BACKWARD, "dx_bwd = self.bwd.backward(grad_y[:, J:])[::-1]"),),
)

BI_STATES_NOT_REVERSED_BACK = Mistake(
    "backward_half_states_not_reversed_back",
    "the backward cell's states are left in the order it read them: row t must hold h<-_t, the state "
    "after reading x_T .. x_t, so reverse its output back to x's order",
    edits=(
        (R, "h_bwd = self.bwd.forward(x[::-1])[::-1]", "h_bwd = self.bwd.forward(x[::-1])"),
        (R, _BI_BACKWARD, "dx_bwd = self.bwd.backward(grad_y[:, J:])[::-1]"),
    ),
)

_STEP_CLIP = "            grads, total = clip_grad_norm(grads, max_norm)"

STEP_CLIPS_PER_MODULE = Mistake(
    "step_clips_per_module",
    "step clips the head (E, W_y, b_y) and each layer on its own norm; the contract clips every "
    "gradient jointly, one clip_grad_norm over named_grads()",
    edits=(
        (
            R,
            _STEP_CLIP,
            "            total = math.sqrt(sum(float(np.sum(np.square(g))) for g in grads.values()))\n"
            "            head, _ = clip_grad_norm({k: grads[k] for k in self.params}, max_norm)\n"
            "            grads.update(head)\n"
            "            for l, layer in enumerate(self.rnn.layers):\n"
            "                part = {f'rnn.{l}.{k}': grads[f'rnn.{l}.{k}'] for k in layer.params}\n"
            "                grads.update(clip_grad_norm(part, max_norm)[0])",
        ),
    ),
)

_SIGMOID = (
    "    z = np.exp(-np.abs(x))  # in (0, 1]: never overflows, whatever the sign of x\n"
    "    return np.where(x >= 0, 1.0, z) / (1.0 + z)"
)

SIGMOID_NAIVE = Mistake(
    "sigmoid_naive",
    "sigmoid is 1 / (1 + np.exp(-x)) as written, whose exp(-x) overflows for x far below 0: compute it "
    "from z = exp(-|x|), which is in (0, 1], as 1 / (1 + z) for x >= 0 and z / (1 + z) below",
    edits=((R, _SIGMOID, "    return 1.0 / (1.0 + np.exp(-x))"),),
)

SIGMOID_TANH_WITHOUT_HALF = Mistake(
    "sigmoid_tanh_without_half",
    "sigmoid is 0.5 * (1 + tanh(x)): the identity is sigmoid(x) = 0.5 * (1 + tanh(x / 2)), the x / 2 is missing",
    edits=((R, _SIGMOID, "    return 0.5 * (1.0 + np.tanh(x))"),),
)

STACKED_ALL_LAYERS_READ_X = Mistake(
    "stacked_all_layers_read_x",
    "every layer is built with input_size inputs; layer 0 reads x (input_size), each layer above reads "
    "the hidden states below it (hidden_size)",
    edits=((R, "Cell(input_size if l == 0 else hidden_size, hidden_size, rng)", "Cell(input_size, hidden_size, rng)"),),
)

STACKED_BACKWARD_BOTTOM_UP = Mistake(
    "stacked_backward_bottom_up",
    "StackedRNN.backward runs the layers bottom-up; the gradient enters at the top layer, so run them "
    "top-down (reversed(self.layers)), each passing its dx to the layer below",
    edits=((R, "for layer in reversed(self.layers):", "for layer in self.layers:"),),
)

NAMED_GRADS_KEYS = Mistake(
    "named_grads_keys",
    "layer l's gradients are named 'rnn{l}.key'; the contract's keys are 'rnn.{l}.key', with a dot after rnn",
    edits=(
        (
            R,
            'named.update({f"rnn.{l}.{k}": layer.grads[k] for k in layer.params})',
            'named.update({f"rnn{l}.{k}": layer.grads[k] for k in layer.params})',
        ),
        (R, 'grads[f"rnn.{l}.{k}"]', 'grads[f"rnn{l}.{k}"]'),
    ),
)

STEP_SKIPS_LAYERS = Mistake(
    "step_skips_layers",
    "step updates E, W_y and b_y only: every layer's params in rnn.layers must take p -= lr * g too",
    edits=(
        (
            R,
            "        for l, layer in enumerate(self.rnn.layers):\n            for k in layer.params:\n"
            '                layer.params[k] = layer.params[k] - lr * grads[f"rnn.{l}.{k}"]\n',
            "",
        ),
    ),
)

TRAIN_DIV_SEQUENCES = Mistake(
    "train_divides_by_sequences",
    "train divides each epoch's loss by the number of sequences; the contract's is a loss per predicted "
    "token, divided by sum(len(s) - 1)",
    edits=((R, "losses.append(total / n_predicted)", "losses.append(total / len(sequences))"),),
)

TRAIN_FORGETS_MAX_NORM = Mistake(
    "train_forgets_max_norm",
    "train calls step(lr) without max_norm, so its gradients are never clipped: pass max_norm on, step(lr, max_norm)",
    edits=((R, "model.step(lr, max_norm)", "model.step(lr)"),),
)

W_Y_GRAD_TRANSPOSED = Mistake(
    "W_y_gradient_transposed",
    "W_y's gradient is h.T @ d_logits, of shape (J, V); logits = h @ W_y.T, so it is d_logits.T @ h, "
    "of W_y's shape (V, J)",
    edits=((R, '"W_y": d_logits.T @ h', '"W_y": h.T @ d_logits'),),
)

UNKNOWN_CELL_IS_LSTM = Mistake(
    "unknown_cell_is_lstm",
    "a cell other than 'lstm' or 'gru' silently means an LSTM: the contract asks for a ValueError",
    edits=(
        (
            R,
            "    if cell not in _CELLS:\n        raise ValueError(f\"cell must be 'lstm' or 'gru', got {cell!r}\")\n"
            "    return _CELLS[cell]",
            "    return _CELLS.get(cell, LSTM)",
        ),
    ),
)

BACKWARD_MUTATES_GRAD_H = Mistake(
    "lstm_backward_mutates_grad_h",
    "LSTM.backward adds the gradient carried from t + 1 into grad_h in place (grad_h[t] += dh_next), "
    "which changes the caller's array: add into a new one, dh = grad_h[t] + dh_next",
    edits=(
        (
            R,
            "            dh = grad_h[t] + dh_next\n            # C_t",
            "            grad_h[t] += dh_next\n            dh = grad_h[t]\n            # C_t",
        ),
    ),
)

BI_HALVES_SWAPPED = Mistake(
    "birnn_halves_swapped",
    "the halves are concatenated as [h<-_t ; h->_t]; the contract's row t is [h->_t ; h<-_t], the forward "
    "half first (and grad_y[:, :J] goes to the forward cell)",
    edits=(
        (R, "return np.concatenate([h_fwd, h_bwd], axis=1)", "return np.concatenate([h_bwd, h_fwd], axis=1)"),
        (R, "dx_fwd = self.fwd.backward(grad_y[:, :J])", "dx_fwd = self.fwd.backward(grad_y[:, J:])"),
        (R, _BI_BACKWARD, "dx_bwd = self.bwd.backward(grad_y[::-1, :J])[::-1]"),
    ),
)

LOG_OF_PROBS = Mistake(
    "log_of_probabilities",
    "the loss takes np.log of the softmax's probabilities (as CS231n's temporal_softmax_loss does), which is "
    "-inf once a target's probability underflows to 0; the contract's loss stays finite for logits far apart: "
    "a log-softmax, the logits shifted by their maximum and the log of the summed exponentials subtracted",
    edits=(
        (
            R,
            "return float(-log_y[np.arange(len(h)), tokens[1:]].sum())",
            "return float(-np.log(np.exp(log_y)[np.arange(len(h)), tokens[1:]]).sum())",
        ),
    ),
)

"""Known rnn mistakes, each made as an edit of a copy of the reference.

The oracle runs a check's scenario on the flawed copy; a submission whose
every answer matches it is told the mistake by name. Each edit is what a
student would have written in the reference's place.
"""

from __future__ import annotations

from lmgrade import Mistake

M, E = "modules.py", "elman.py"

BPTT_NO_CARRY = Mistake(
    "bptt_no_carry",
    "BPTT leaves out the gradient carried back from step t+1: "
    "delta_t must include W_ah^T delta_{t+1}, not only what y_t sends back",
    edits=(
        (
            E,
            "delta[t] = (d_h_out[t] + W_ah.T @ delta_next) * self.act_grad(h[t])",
            "delta[t] = d_h_out[t] * self.act_grad(h[t])",
        ),
    ),
)

GRADS_OVERWRITTEN = Mistake(
    "grads_overwritten",
    "the parameter gradients are overwritten at each time step instead of summed "
    "over time (only the first step's contribution is left)",
    edits=(
        (
            E,
            """            "W_ah": delta.T @ h_prev,  # (J, J)
            "W_ax": delta.T @ x,  # (J, I)
            "b_a": delta.sum(axis=0),  # (J,)
            "W_yh": d_logits.T @ h,  # (K, J)
            "b_y": d_logits.sum(axis=0),  # (K,)""",
            """            "W_ah": np.outer(delta[0], h_prev[0]),
            "W_ax": np.outer(delta[0], x[0]),
            "b_a": delta[0].copy(),
            "W_yh": np.outer(d_logits[0], h[0]),
            "b_y": d_logits[0].copy(),""",
        ),
    ),
)

DERIVATIVE_AT_PREACTIVATION = Mistake(
    "derivative_at_preactivation",
    "the activation's derivative is applied to the pre-activation a_t as if it "
    "were h_t (sigmoid: h_t (1 - h_t) with h_t the output, not a_t (1 - a_t))",
    edits=(
        (
            E,
            "        delta = np.empty((T, J))",
            '        a = np.vstack([h0, h[:-1]]) @ W_ah.T + x @ W_ax.T + self.params["b_a"]\n'
            "        delta = np.empty((T, J))",
        ),
        (E, "* self.act_grad(h[t])", "* self.act_grad(a[t])"),
    ),
)

TRANSPOSED_W_AH = Mistake(
    "transposed_w_ah_gradient",
    "a weight gradient is transposed: dW_ah is the sum over t of "
    "delta_t h_{t-1}^T, shape (J, J) like W_ah, not h_{t-1} delta_t^T",
    edits=((E, '"W_ah": delta.T @ h_prev,', '"W_ah": h_prev.T @ delta,'),),
)

TRANSPOSED_LINEAR = Mistake(
    "transposed_linear_gradient",
    "Linear's weight gradient is transposed: grads['W'] = g.T @ x has W's shape (out, in); x.T @ g is (in, out)",
    edits=((M, 'self.grads["W"] = g.T @ self.x', 'self.grads["W"] = self.x.T @ g'),),
)

H0_IGNORED = Mistake(
    "h0_ignored",
    "the h0 argument is ignored: the recurrence starts from zeros whatever h0 is given",
    edits=((E, "h0 = np.zeros(J) if h0 is None else np.array(h0, dtype=np.float64)", "h0 = np.zeros(J)"),),
)

SOFTMAX_AXIS = Mistake(
    "softmax_axis",
    "softmax is taken over the wrong axis (down the columns instead of along each row)",
    edits=(
        (M, "e = np.exp(x - x.max(axis=-1, keepdims=True))", "e = np.exp(x - x.max(axis=0, keepdims=True))"),
        (M, "self.y = e / e.sum(axis=-1, keepdims=True)", "self.y = e / e.sum(axis=0, keepdims=True)"),
        (
            M,
            "return y * (g - (g * y).sum(axis=-1, keepdims=True))",
            "return y * (g - (g * y).sum(axis=0, keepdims=True))",
        ),
    ),
)

ELMAN_SOFTMAX_AXIS = Mistake(
    "output_softmax_axis",
    "the output softmax is taken over time steps (axis 0) instead of over the K outputs of each step",
    edits=(
        (E, "z = logits - logits.max(axis=-1, keepdims=True)", "z = logits - logits.max(axis=0, keepdims=True)"),
        (
            E,
            "return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))",
            "return z - np.log(np.exp(z).sum(axis=0, keepdims=True))",
        ),
    ),
)

SOFTMAX_NO_SHIFT = Mistake(
    "softmax_no_shift",
    "softmax does not subtract each row's maximum before exp, so large inputs overflow (inf / inf gives NaN)",
    edits=((M, "e = np.exp(x - x.max(axis=-1, keepdims=True))", "e = np.exp(x)"),),
)

CE_MEAN = Mistake(
    "cross_entropy_mean",
    "the cross-entropy is a mean over rows; the contract asks for a sum",
    edits=(
        (
            M,
            "return float(-np.log(probs[self.rows, self.targets]).sum())",
            "return float(-np.log(probs[self.rows, self.targets]).mean())",
        ),
        (
            M,
            "-float(g) / self.probs[self.rows, self.targets]",
            "-float(g) / len(self.rows) / self.probs[self.rows, self.targets]",
        ),
    ),
)

LOSS_MEAN = Mistake(
    "loss_mean",
    "the loss is a mean over time steps; the contract asks for the sum over t",
    edits=(
        (
            E,
            "return float(-log_y[np.arange(len(x)), targets].sum())",
            "return float(-log_y[np.arange(len(x)), targets].mean())",
        ),
        (E, "d_logits[np.arange(T), targets] -= 1.0", "d_logits[np.arange(T), targets] -= 1.0\n        d_logits /= T"),
    ),
)

CE_EPS_IN_LOG = Mistake(
    "ce_eps_in_log",
    "an epsilon (1e-8) is added inside the log, -ln(probs + 1e-8), which moves every value "
    "and gradient; the contract's loss is -sum ln probs[i, targets[i]] (a log of 0 is the caller's business)",
    edits=(
        (
            M,
            "return float(-np.log(probs[self.rows, self.targets]).sum())",
            "return float(-np.log(probs[self.rows, self.targets] + 1e-8).sum())",
        ),
        (
            M,
            "-float(g) / self.probs[self.rows, self.targets]",
            "-float(g) / (self.probs[self.rows, self.targets] + 1e-8)",
        ),
    ),
)

TANH_BACKWARD_FROM_INPUT = Mistake(
    "tanh_backward_from_input",
    "Tanh's backward takes 1 - x^2 of its input; tanh'(x) = 1 - tanh(x)^2, so it is 1 - y^2 of the output it kept",
    edits=(
        (
            M,
            "        self.y = np.tanh(np.asarray(x, dtype=np.float64))\n        return self.y",
            "        self.x = np.asarray(x, dtype=np.float64)\n        self.y = np.tanh(self.x)\n        return self.y",
        ),
        (
            M,
            "return np.asarray(g, dtype=np.float64) * (1.0 - self.y**2)",
            "return np.asarray(g, dtype=np.float64) * (1.0 - self.x**2)",
        ),
    ),
)

GRAD_H0_WITHOUT_W_AH = Mistake(
    "grad_h0_without_w_ah",
    "grad_h0 is delta_1 itself; h_0 reaches the loss through W_ah h_0, so grad_h0 = W_ah^T delta_1",
    edits=((E, "self.grad_h0 = W_ah.T @ delta[0]", "self.grad_h0 = delta[0].copy()"),),
)

EMBEDDING_GRAD_NOT_ACCUMULATED = Mistake(
    "embedding_gradient_not_accumulated",
    "E's gradient keeps one row per repeated token: grad_E[tokens] += dx writes each row once; "
    "np.add.at(grad_E, tokens, dx) sums them",
    edits=((E, "np.add.at(grad_E, self._tokens[:-1], self.grad_x)", "grad_E[self._tokens[:-1]] += self.grad_x"),),
)

SGD_ASCENDS = Mistake(
    "sgd_step_ascends",
    "sgd_step adds the gradient, p + lr * grad, which climbs the loss; the step is p - lr * grad",
    edits=((E, "self.params[k] - lr * self.grads[k]", "self.params[k] + lr * self.grads[k]"),),
)

SIGMOID_NAIVE = Mistake(
    "sigmoid_naive",
    "Sigmoid is 1 / (1 + exp(-x)) as written, and exp(-x) overflows for x far below 0: "
    "exp(-|x|) never overflows (x >= 0: 1 / (1 + exp(-x)); x < 0: exp(x) / (1 + exp(x)))",
    edits=(
        (
            M,
            "        z = np.exp(-np.abs(x))\n        self.y = np.where(x >= 0, 1.0, z) / (1.0 + z)",
            "        self.y = 1.0 / (1.0 + np.exp(-x))",
        ),
    ),
)

SOFTMAX_SHIFTS_IN_PLACE = Mistake(
    "softmax_shifts_in_place",
    "Softmax subtracts the row maximum in place (x -= x.max(...)), which changes the caller's array: "
    "subtract it into a new array (x - x.max(...)) and take np.exp of that",
    edits=(
        (
            M,
            "e = np.exp(x - x.max(axis=-1, keepdims=True))",
            "x -= x.max(axis=-1, keepdims=True)\n        e = np.exp(x)",
        ),
    ),
)

UNKNOWN_ACTIVATION_IS_SIGMOID = Mistake(
    "unknown_activation_is_sigmoid",
    "an activation other than 'sigmoid' and 'tanh' is not refused (it falls back to sigmoid): "
    "the contract asks for a ValueError",
    edits=(
        (
            E,
            "        if not isinstance(activation, str) or activation not in _ACTIVATIONS:\n"
            "            raise ValueError(f\"activation must be 'sigmoid' or 'tanh', got {activation!r}\")\n",
            "",
        ),
        (
            E,
            "self.act, self.act_grad = _ACTIVATIONS[activation]",
            'self.act, self.act_grad = _ACTIVATIONS.get(activation, _ACTIVATIONS["sigmoid"])',
        ),
    ),
)

TRAIN_IN_GIVEN_ORDER = Mistake(
    "train_in_given_order",
    "train visits the sequences in the order given (range(len(sequences))) in every epoch: "
    "the contract's order is rng.permutation(len(sequences)), drawn anew each epoch",
    edits=((E, "for i in rng.permutation(len(sequences)):", "for i in range(len(sequences)):"),),
)

# Samplers' mistakes: named where the submission's draws are exactly those the mistaken reference draws from the
# same rng, on every case. Never tried in pairs: each one's draws are as long to make as a pair's.
_DRAW = "token = int(rng.choice(V, p=y_t / y_t.sum()))"
SAMPLE_GREEDY = Mistake(
    "sample_greedy",
    "sample takes the likeliest token of y_t at every step (an argmax) instead of drawing one with rng.choice",
    edits=((E, _DRAW, "token = int(np.argmax(y_t))"),),
    paired=False,
)
SAMPLE_IGNORES_END = Mistake(
    "sample_ignores_end",
    "sample goes on after drawing the end token: a drawn end is kept and stops the sample",
    edits=((E, "            if token == end:\n                break\n", ""),),
    paired=False,
)

# Conventions of public code a student ports (tests/submissions/ports/rnn/bugs/), each as that code shapes it.

SIGMOID_WITH_TANH_DERIVATIVE = Mistake(
    "sigmoid_with_tanh_derivative",
    "backpropagation uses tanh's derivative 1 - h_t^2 (as min-char-rnn writes it into its BPTT loop) for a "
    "sigmoid network, whose derivative is h_t (1 - h_t)",
    edits=((E, '"sigmoid": (_sigmoid, lambda h: h * (1.0 - h)),', '"sigmoid": (_sigmoid, lambda h: 1.0 - h**2),'),),
    paired=False,  # elman_backward's other seven are tried in pairs (at most MAX_PAIRED are)
)

CE_LOGITS_GRADIENT = Mistake(
    "cross_entropy_logits_gradient",
    "CrossEntropy.backward returns g (probs - onehot(targets)), the gradient with respect to the softmax's input "
    "(as code that fuses the softmax into its loss returns it); the contract's backward is the gradient with "
    "respect to probs: -g / probs[i, targets[i]] at each target, 0 elsewhere",
    edits=(
        (
            M,
            "        grad = np.zeros_like(self.probs)  # (N, K)\n"
            '        with np.errstate(divide="ignore"):\n'
            "            grad[self.rows, self.targets] = -float(g) / self.probs[self.rows, self.targets]\n"
            "        return grad\n",
            "        grad = self.probs.copy()  # (N, K)\n"
            "        grad[self.rows, self.targets] -= 1.0\n"
            "        return float(g) * grad\n",
        ),
    ),
)

SGD_ADAGRAD = Mistake(
    "sgd_step_adagrad",
    "sgd_step divides each step by the root of the squared gradients summed so far (Adagrad, as min-char-rnn "
    "updates its parameters); the contract's step is plain p - lr * grad",
    edits=(
        (
            E,
            "self.params.update({k: self.params[k] - lr * self.grads[k] for k in self.params})",
            'if not hasattr(self, "mem"):\n'
            "            self.mem = {k: np.zeros_like(p) for k, p in self.params.items()}\n"
            "        for k in self.params:\n"
            "            self.mem[k] = self.mem[k] + self.grads[k] * self.grads[k]\n"
            "            self.params[k] = self.params[k] - lr * self.grads[k] / np.sqrt(self.mem[k] + 1e-8)",
        ),
    ),
)

SAMPLE_GLOBAL_RNG = Mistake(
    "sample_global_rng",
    "sample draws with numpy's global generator (np.random.choice, as min-char-rnn samples) instead of the rng "
    "it is given: the same rng does not give the same sample",
    edits=((E, _DRAW, "token = int(np.random.choice(V, p=y_t / y_t.sum()))"),),
    paired=False,
)
SAMPLER = (SAMPLE_GREEDY, SAMPLE_IGNORES_END, SAMPLE_GLOBAL_RNG)

GRADS_ACCUMULATE = Mistake(
    "grads_accumulate_over_backward_calls",
    "backward adds the recurrent cell's gradients (W_ah, W_ax, b_a) to those of the backward before it, and "
    "only a new loss() starts them from zero (numpy-ml's RNN cell keeps them until flush_gradients): a second "
    "backward after one loss doubles them",
    edits=(
        (
            E,
            "        self.grad_h0 = W_ah.T @ delta[0]  # (J,)\n",
            '        for k in ("W_ah", "W_ax", "b_a"):\n'
            "            self._summed[k] = self._summed.get(k, 0) + self.grads[k]\n"
            "        self.grads.update(self._summed)\n"
            "        self.grad_h0 = W_ah.T @ delta[0]  # (J,)\n",
        ),
        (
            E,
            "        self._last_loss = (x, h0, h, np.exp(log_y), targets)\n",
            "        self._last_loss = (x, h0, h, np.exp(log_y), targets)\n        self._summed = {}\n",
        ),
    ),
)

"""The catalogue of realistic rnn bugs: one each, as edits of the reference.

`loses` names the checks that must lose points and words their feedback must
contain (the known mistake named, where the grader knows it). Tests prove the
graders with every bug; the demo grades a submission with the `demo` ones.
A bug that is a known mistake's edit is declared from the mistake
(`Bug.from_mistake`): the edit is written once, in `mistakes.py`.
"""

from __future__ import annotations

from lmgrade import Bug

from . import mistakes

M, E = "modules.py", "elman.py"
GRADS = """            "W_ah": delta.T @ h_prev,  # (J, J)
            "W_ax": delta.T @ x,  # (J, I)
            "b_a": delta.sum(axis=0),  # (J,)
            "W_yh": d_logits.T @ h,  # (K, J)
            "b_y": d_logits.sum(axis=0),  # (K,)"""

BUGS = {
    "bptt_no_carry": Bug.from_mistake(
        mistakes.BPTT_NO_CARRY,
        {
            "elman_backward": "carried back from step t+1",
            "bptt_hidden": "carried back",
        },
        "BPTT forgets the gradient that h_t receives from a_{t+1}.",
        demo=True,
    ),
    "grads_overwritten": Bug(
        "the parameter gradients keep only one time step's contribution.",
        E,
        (
            (
                GRADS,
                GRADS.replace("delta.T @ h_prev", "np.outer(delta[0], h_prev[0])")
                .replace("delta.T @ x", "np.outer(delta[0], x[0])")
                .replace("delta.sum(axis=0)", "delta[0].copy()")
                .replace("d_logits.T @ h", "np.outer(d_logits[0], h[0])")
                .replace("d_logits.sum(axis=0)", "d_logits[0].copy()"),
            ),
        ),
        {
            "bptt_hidden": "",
            "elman_backward": "overwritten at each time step",
        },
    ),
    "derivative_at_preactivation": Bug(
        "the activation's derivative is applied to a_t, not expressed through h_t.",
        E,
        (
            (
                "        delta = np.empty((T, J))",
                '        a = np.vstack([h0, h[:-1]]) @ W_ah.T + x @ W_ax.T + self.params["b_a"]\n'
                "        delta = np.empty((T, J))",
            ),
            ("* self.act_grad(h[t])", "* self.act_grad(a[t])"),
        ),
        {
            "bptt_hidden": "",
            "elman_backward": "pre-activation",
        },
    ),
    "transposed_w_ah_gradient": Bug.from_mistake(
        mistakes.TRANSPOSED_W_AH,
        {
            "bptt_hidden": "",
            "elman_backward": "dW_ah is the sum over t",
        },
        "dW_ah is computed as h_prev.T @ delta.",
    ),
    "h0_ignored": Bug(
        "the h0 argument is ignored.",
        E,
        (("h0 = np.zeros(J) if h0 is None else np.array(h0, dtype=np.float64)", "h0 = np.zeros(J)"),),
        {
            "elman_forward": "h0 argument is ignored",
        },
    ),
    "grad_h0_missing_w_ah": Bug.from_mistake(
        mistakes.GRAD_H0_WITHOUT_W_AH,
        {"bptt_hidden": "", "elman_backward": "grad_h0 = W_ah^T delta_1"},
        "grad_h0 is delta_1 itself, without W_ah^T.",
    ),
    "loss_mean": Bug(
        "the loss is averaged over time steps.",
        E,
        (
            (
                "return float(-log_y[np.arange(len(x)), targets].sum())",
                "return float(-log_y[np.arange(len(x)), targets].mean())",
            ),
            ("d_logits[np.arange(T), targets] -= 1.0", "d_logits[np.arange(T), targets] -= 1.0\n        d_logits /= T"),
        ),
        {
            "elman_loss": "mean over time steps",
        },
    ),
    "output_softmax_over_time": Bug(
        "the output softmax normalises over time steps.",
        E,
        (
            ("z = logits - logits.max(axis=-1, keepdims=True)", "z = logits - logits.max(axis=0, keepdims=True)"),
            (
                "return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))",
                "return z - np.log(np.exp(z).sum(axis=0, keepdims=True))",
            ),
        ),
        {
            # The checks running ElmanRNN's forward give exactly this mistake's answers: paid, naming it.
            "elman_forward": "over time steps",
        },
    ),
    "embedding_grad_not_accumulated": Bug.from_mistake(
        mistakes.EMBEDDING_GRAD_NOT_ACCUMULATED,
        {"rnnlm": "np.add.at"},
        "E's gradient is written with fancy-index assignment, so a repeated token keeps one row only.",
    ),
    "sgd_adds_gradient": Bug.from_mistake(
        mistakes.SGD_ASCENDS, {"sgd_step": "the step is p - lr * grad"}, "sgd_step climbs the gradient: p + lr * grad."
    ),
    "sample_argmax": Bug(
        "sample always takes the most likely token.",
        E,
        (("token = int(rng.choice(V, p=y_t / y_t.sum()))", "rng.random()\n            token = int(np.argmax(y_t))"),),
        {"sample": "likeliest token"},
    ),
    "sample_ignores_end": Bug.from_mistake(
        mistakes.SAMPLE_IGNORES_END,
        {"sample": "goes on after drawing the end token"},
        "sample does not stop at the end token.",
    ),
    "train_no_shuffle": Bug.from_mistake(
        mistakes.TRAIN_IN_GIVEN_ORDER,
        {"train": "rng.permutation(len(sequences))"},
        "train visits the sequences in their given order, not rng.permutation's.",
    ),
    "linear_transposed_gradient": Bug(
        "Linear's weight gradient is x.T @ g.",
        M,
        (('self.grads["W"] = g.T @ self.x', 'self.grads["W"] = self.x.T @ g'),),
        {"linear": "Linear's weight gradient is transposed"},
    ),
    "softmax_no_shift": Bug(
        "Softmax exponentiates without subtracting the row maximum.",
        M,
        (("e = np.exp(x - x.max(axis=-1, keepdims=True))", "e = np.exp(x)"),),
        {"softmax": "does not subtract each row's maximum"},
        demo=True,
    ),
    "sigmoid_naive": Bug.from_mistake(
        mistakes.SIGMOID_NAIVE,
        {"activations": "exp(-|x|) never overflows"},
        "Sigmoid is 1 / (1 + exp(-x)) as written, which overflows for x far below 0.",
    ),
    "cross_entropy_mean": Bug(
        "CrossEntropy averages over rows.",
        M,
        (
            (
                "return float(-np.log(probs[self.rows, self.targets]).sum())",
                "return float(-np.log(probs[self.rows, self.targets]).mean())",
            ),
            (
                "-float(g) / self.probs[self.rows, self.targets]",
                "-float(g) / len(self.rows) / self.probs[self.rows, self.targets]",
            ),
        ),
        {"cross_entropy": "mean over rows"},
    ),
    "tanh_backward_uses_input": Bug.from_mistake(
        mistakes.TANH_BACKWARD_FROM_INPUT,
        {"activations": "1 - y^2 of the output it kept"},
        "Tanh's backward recomputes 1 - x**2 from the input, not 1 - y**2.",
    ),
    "softmax_mutates_input": Bug(
        "Softmax shifts its input in place.",
        M,
        (
            (
                "        x = np.asarray(x, dtype=np.float64)\n        if x.ndim < 1:",
                "        x = np.asarray(x)\n        if x.ndim < 1:",
            ),
            (
                "e = np.exp(x - x.max(axis=-1, keepdims=True))",
                "x -= x.max(axis=-1, keepdims=True)\n        e = np.exp(x)",
            ),
        ),
        {"no_mutation": "subtracts the row maximum in place"},
    ),
    "no_activation_check": Bug.from_mistake(
        mistakes.UNKNOWN_ACTIVATION_IS_SIGMOID,
        {"bad_arguments": "falls back to sigmoid"},
        "any unknown activation silently means sigmoid.",
    ),
    "cross_entropy_eps_in_log": Bug(
        "CrossEntropy adds 1e-8 inside the log, to avoid log(0).",
        M,
        (
            (
                "return float(-np.log(probs[self.rows, self.targets]).sum())",
                "return float(-np.log(probs[self.rows, self.targets] + 1e-8).sum())",
            ),
            (
                "-float(g) / self.probs[self.rows, self.targets]",
                "-float(g) / (self.probs[self.rows, self.targets] + 1e-8)",
            ),
        ),
        {"cross_entropy": "epsilon (1e-8) is added inside the log"},
    ),
    # Conventions of public code (tests/submissions/ports/rnn/bugs/), each its known mistake.
    "sigmoid_with_tanh_derivative": Bug.from_mistake(
        mistakes.SIGMOID_WITH_TANH_DERIVATIVE,
        {
            "elman_backward": "tanh's derivative",
            "bptt_hidden": "tanh's derivative",
        },
        "BPTT keeps min-char-rnn's tanh derivative, 1 - h^2, in a sigmoid network.",
    ),
    "cross_entropy_logits_gradient": Bug.from_mistake(
        mistakes.CE_LOGITS_GRADIENT,
        {"cross_entropy": "the softmax's input"},
        "CrossEntropy.backward returns g (probs - onehot), the gradient a fused softmax-and-loss gives.",
    ),
    "sgd_step_adagrad": Bug.from_mistake(
        mistakes.SGD_ADAGRAD, {"sgd_step": "Adagrad"}, "sgd_step keeps min-char-rnn's Adagrad update."
    ),
    "sample_global_rng": Bug.from_mistake(
        mistakes.SAMPLE_GLOBAL_RNG,
        {"sample": "global generator"},
        "sample draws with np.random.choice, numpy's global generator, instead of rng.",
    ),
    "grads_accumulate_over_backward_calls": Bug.from_mistake(
        mistakes.GRADS_ACCUMULATE,
        {"repeatable_backward": "flush_gradients"},
        "backward adds the cell's gradients to the last backward's until the next loss().",
    ),
}

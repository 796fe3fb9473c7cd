"""Correct submissions that differ from the reference only in what the contract leaves free.

Each is the reference with edits a correct student might make: `grads`
filled with zero arrays before the first backward, extra attributes, caches
and buffers, numpy scalars where the contract says float, in-place updates
where it is silent. Every one must get full marks in every variant
(tests/test_free_state.py). Kept as edits of the reference, like the
catalogue of bugs, so they follow it.
"""

from __future__ import annotations

from lmgrade.declare.flawed import Bug

FREE = {
    "rnn": [
        Bug(
            "Linear fills grads with zero arrays in __init__ and keeps extra attributes.",
            "modules.py",
            (
                (
                    '        self.params["b"] = np.zeros(out_features)\n',
                    '        self.params["b"] = np.zeros(out_features)\n'
                    '        self.grads = {"W": np.zeros_like(self.params["W"]), "b": np.zeros(out_features)}\n'
                    "        self.in_features, self.out_features, self.x = in_features, out_features, None\n",
                ),
            ),
        ),
        Bug(
            "CrossEntropy returns a numpy scalar, not a float.",
            "modules.py",
            (
                (
                    "return float(-np.log(probs[self.rows, self.targets]).sum())",
                    "return np.float64(-np.log(probs[self.rows, self.targets]).sum())",
                ),
            ),
        ),
        Bug(
            "ElmanRNN fills grads with zeros before any backward, returns a numpy scalar loss, and sgd_step "
            "updates the arrays in place.",
            "elman.py",
            (
                (
                    "        self.grads: dict[str, np.ndarray] = {}\n",
                    "        self.grads: dict[str, np.ndarray] = {k: np.zeros_like(v) for k, v in self.params.items()}\n"
                    "        self.cache = {}\n",
                ),
                (
                    "return float(-log_y[np.arange(len(x)), targets].sum())",
                    "return np.float64(-log_y[np.arange(len(x)), targets].sum())",
                ),
                (
                    "        self.params.update({k: self.params[k] - lr * self.grads[k] for k in self.params})",
                    "        for k in self.params:\n            self.params[k] -= lr * self.grads[k]",
                ),
            ),
        ),
    ],
    "ngram": [
        Bug(
            "prob, logprob and perplexity return numpy scalars; the model keeps an extra cache.",
            "ngram.py",
            (
                (
                    "            return c_ctx_w / c_ctx if c_ctx else 0.0\n"
                    "        return (c_ctx_w + self.k) / (c_ctx + self.k * len(self.vocab))",
                    "            return numpy.float64(c_ctx_w / c_ctx if c_ctx else 0.0)\n"
                    "        return numpy.float64((c_ctx_w + self.k) / (c_ctx + self.k * len(self.vocab)))",
                ),
                (
                    "            total += math.log(p)\n        return total",
                    "            total += math.log(p)\n        return numpy.float64(total)",
                ),
                (
                    "        return math.exp(-log_likelihood / sum(len(s) + 1 for s in corpus))",
                    "        return numpy.float64(math.exp(-log_likelihood / sum(len(s) + 1 for s in corpus)))",
                ),
            ),
        ),
    ],
    "lstm": [
        Bug(
            "LSTM and GRU fill grads with zero arrays in __init__ and keep helper attributes; LSTMLM.loss "
            "returns a numpy scalar.",
            "recurrent.py",
            (
                (
                    """            "b_f": np.ones(J), "b_i": np.zeros(J), "b_C": np.zeros(J), "b_o": np.zeros(J),
        }
        self.grads: dict[str, np.ndarray] = {}
""",
                    """            "b_f": np.ones(J), "b_i": np.zeros(J), "b_C": np.zeros(J), "b_o": np.zeros(J),
        }
        self.grads: dict[str, np.ndarray] = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.input_size, self.hidden_size, self.last_x = input_size, hidden_size, None
""",
                ),
                (
                    """            "b_r": np.zeros(J), "b_u": np.zeros(J), "b_n": np.zeros(J),
        }
        self.grads: dict[str, np.ndarray] = {}
""",
                    """            "b_r": np.zeros(J), "b_u": np.zeros(J), "b_n": np.zeros(J),
        }
        self.grads: dict[str, np.ndarray] = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.cache = {}
""",
                ),
                (
                    "return float(-log_y[np.arange(len(h)), tokens[1:]].sum())",
                    "return np.float64(-log_y[np.arange(len(h)), tokens[1:]].sum())",
                ),
            ),
        ),
    ],
    "transformer": [
        Bug(
            "CausalSelfAttention keeps its causal mask in a buffer and an extra attribute.",
            "layers.py",
            (
                (
                    "        self.d_head = d_model // n_heads\n",
                    "        self.d_head = d_model // n_heads\n"
                    '        self.register_buffer("future", torch.ones(1024, 1024, dtype=torch.bool).triu(diagonal=1))\n'
                    "        self.last_attention = None\n",
                ),
                (
                    "future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(diagonal=1)",
                    "future = self.future[:T, :T].to(x.device)",
                ),
            ),
        ),
        Bug(
            "evaluate_perplexity returns a numpy scalar.",
            "train.py",
            (
                (
                    "        return math.exp(total_nll / n_predicted)",
                    "        import numpy\n        return numpy.float64(math.exp(total_nll / n_predicted))",
                ),
            ),
        ),
    ],
}

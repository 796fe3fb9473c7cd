"""The catalogue of realistic lstm bugs: one each, as edits of the reference.

`loses` names the checks that must lose points and words their feedback must
contain (the known mistake named, where the grader knows it). Tests prove the
graders with every bug; the demo grades a submission with the `demo` ones.
A bug in one component loses on its own checks only: a check that composes
it is paid where its run with the grader's stand-in for the component passes
(`lmgrade.grading.stand_in`), and otherwise earns what its own cases earn.
"""

from __future__ import annotations

from lmgrade import Bug

from . import mistakes as M

R = "recurrent.py"


def _bug(mistake, what, loses, demo=False) -> Bug:
    """A bug that is exactly a known mistake: the same edits (`Bug.from_mistake`, in this file's argument order)."""
    return Bug.from_mistake(mistake, loses, what, demo=demo)


BUGS = {
    "gate_order": _bug(
        M.GATE_ORDER,
        "the forget gate uses W_i and b_i, the input gate W_f and b_f.",
        {
            "lstm_forward": "forget and input gates are swapped",
            "lstm_backward": "forget and input gates are swapped",
        },
    ),
    "hx_order": _bug(
        M.HX_ORDER,
        "the LSTM concatenates z_t = [x_t; h_{t-1}].",
        {"lstm_forward": "[h_{t-1}; x_t], h first", "lstm_backward": "h first"},
        demo=True,
    ),
    "gru_hx_order": _bug(
        M.GRU_HX_ORDER,
        "the GRU concatenates z_t = [x_t; h_{t-1}].",
        {
            "gru_forward": "h first",
            "gru_backward": "h first",
        },
    ),
    "forget_bias_zero": _bug(M.FORGET_BIAS_ZERO, "b_f starts at zeros.", {"lstm_forward": "b_f starts at zeros"}),
    "h_from_old_cell": _bug(
        M.CELL_ORDER,
        "h_t is computed before C_t is updated.",
        {"lstm_forward": "update the cell state first", "lstm_backward": "update the cell state first"},
    ),
    # nicodjimenez's lstm.py: [x; h] and no tanh on the cell at once, named as the pair.
    "hx_order_and_no_tanh": Bug(
        "the LSTM concatenates z_t = [x_t; h_{t-1}] and takes h_t = o_t * C_t.",
        R,
        tuple((old, new) for _, old, new in M.HX_ORDER.edits + M.NO_TANH_C.edits),
        {
            "lstm_forward": "two known mistakes together",
            "lstm_backward": "two known mistakes together",
        },
    ),
    "no_tanh_on_cell": _bug(
        M.NO_TANH_C,
        "h_t = o_t * C_t.",
        {
            "lstm_forward": "tanh of the cell state is missing",
            "lstm_backward": "tanh of the cell state is missing",
        },
    ),
    "h0_ignored": _bug(
        M.H0_IGNORED,
        "LSTM.forward ignores h0.",
        {
            "lstm_forward": "h0 argument is ignored",
            "lstm_backward": "h0 argument is ignored",
        },
    ),
    "C0_ignored": _bug(
        M.C0_IGNORED,
        "LSTM.forward ignores C0.",
        {
            "lstm_forward": "C0 argument is ignored",
            "lstm_backward": "C0 argument is ignored",
        },
    ),
    "cell_gradient_not_carried": _bug(
        M.CELL_GRAD_NOT_CARRIED,
        "BPTT drops the gradient that C_t passes to C_{t-1}.",
        {
            # long_sequence and bptt_hidden give exactly this mistake's answers: paid, naming it.
            "lstm_backward": "cell state's gradient back in time",
        },
    ),
    "cell_gradient_not_through_forget_gate": Bug.from_mistake(
        M.CELL_GRAD_NO_FORGET,
        {
            "lstm_backward": "collects f_t * dL/dC_t",
        },
        "BPTT passes dC_t to C_{t-1} without multiplying it by f_t.",
    ),
    "cell_gradient_without_tanh_derivative": Bug.from_mistake(
        M.MISSING_TANH_PRIME,
        {
            "lstm_backward": "without tanh's derivative",
        },
        "dC_t = dC_{t+1} f_{t+1} + dh_t * o_t, without the factor 1 - tanh(C_t)^2.",
    ),
    "gradients_overwritten": Bug.from_mistake(
        M.GRADS_OVERWRITTEN,
        {"lstm_backward": "one time step's contribution only"},
        "the weight and bias gradients are assigned (=) at each step of BPTT, so step 1's alone remains.",
    ),
    "gru_update_roles_swapped": _bug(
        M.GRU_UPDATE_SWAPPED,
        "the GRU keeps u_t * h_{t-1} (PyTorch's convention).",
        {
            "gru_forward": "PyTorch's convention",
            "gru_backward": "PyTorch's convention",
        },
    ),
    "gru_reset_after_product": _bug(
        M.GRU_RESET_AFTER,
        "the reset gate multiplies W_nh h_{t-1} (PyTorch's way).",
        {
            "gru_forward": "after the product",
            "gru_backward": "after the product",
        },
    ),
    "backward_half_not_reversed": _bug(
        M.BI_NOT_REVERSED,
        "BiRNN's bwd cell reads x in the forward order.",
        {
            "birnn": "reads x in the forward order",
            "depth_direction": "backward half, of the output changed when x_1 changed",
        },
    ),
    "clip_per_array": _bug(
        M.CLIP_PER_ARRAY,
        "clip_grad_norm clips each array by its own norm.",
        {"clip_grad_norm": "one global norm"},
        demo=True,
    ),
    "clip_per_entry": _bug(
        M.CLIP_PER_ENTRY,
        "clip_grad_norm clips each entry to [-max_norm, max_norm] with np.clip.",
        {"clip_grad_norm": "min-char-rnn"},
    ),
    "clip_epsilon": _bug(
        M.CLIP_EPSILON,
        "clip_grad_norm scales by min(1, max_norm / (total + 1e-6)), as torch does.",
        {"clip_grad_norm": "torch's clip_grad_norm_"},
    ),
    "clip_mutates_input": _bug(
        M.CLIP_MUTATES,
        "clip_grad_norm scales its input arrays in place.",
        {"clip_grad_norm": "leaves its input unchanged"},
    ),
    "clip_after_step": _bug(
        M.CLIP_AFTER_STEP,
        "step updates with the unclipped gradients.",
        {"step": "before clipping"},
    ),
    "step_returns_clipped_norm": _bug(
        M.STEP_RETURNS_CLIPPED_NORM, "step returns the norm after clipping.", {"step": "norm after clipping"}
    ),
    "loss_mean": _bug(
        M.LOSS_MEAN,
        "LSTMLM.loss averages over time steps.",
        {"lstmlm": "mean over time steps"},
    ),
    "embedding_gradient_not_accumulated": _bug(
        M.GRAD_E_NOT_ACCUMULATED,
        "E's gradient uses grad_E[tokens] += dx.",
        {"lstmlm": "np.add.at"},
    ),
    "train_no_shuffle": _bug(M.NO_SHUFFLE, "train ignores rng.permutation.", {"train": "given order"}),
    "sigmoid_naive": _bug(
        M.SIGMOID_NAIVE,
        "sigmoid is 1 / (1 + exp(-x)) as written, which overflows for x far below 0.",
        {"sigmoid": "exp(-x) overflows"},
    ),
    # Every cell calls sigmoid: the cells' checks and what builds on them are paid through the grader's.
    "sigmoid_tanh_without_half": _bug(
        M.SIGMOID_TANH_WITHOUT_HALF,
        "sigmoid is 0.5 * (1 + tanh(x)), the identity without its x / 2.",
        {"sigmoid": "the x / 2 is missing"},
    ),
    "gru_reset_gradient_to_h_missing": Bug.from_mistake(
        M.GRU_RESET_TO_H_MISSING,
        {
            "gru_backward": "through r_t * h_{t-1}",
        },
        "GRU's backward forgets that h_{t-1} also reaches n_t through r_t * h_{t-1}.",
    ),
    "lstm_grad_C0_is_dC1": Bug.from_mistake(
        M.C0_GRAD_NO_FORGET,
        {"lstm_backward": "grad_C0 = f_1 * dL/dC_1"},
        "grad_C0 is dL/dC_1 itself, without the forget gate f_1.",
    ),
    "cell_gradient_carry_dropped": Bug.from_mistake(
        M.CELL_CARRY_DROPPED,
        {
            "lstm_backward": "carried back from C_{t+1}",
        },
        "dC_t = dh_t * o_t * (1 - tanh(C_t)^2), without the gradient from C_{t+1}.",
    ),
    "tanh_derivative_of_C": Bug.from_mistake(
        M.TANH_PRIME_OF_C,
        {
            "lstm_backward": "1 - C_t^2",
        },
        "tanh's derivative in dC_t is 1 - C_t^2.",
    ),
    "cell_rows_shifted": Bug.from_mistake(
        M.CELL_ROWS_SHIFTED, {"lstm_forward": "C_1 .. C_T"}, "self.cell holds C_0 .. C_{T-1}."
    ),
    "backward_half_gradient_not_reversed": Bug.from_mistake(
        M.BI_GRAD_NOT_REVERSED,
        {"birnn": "grad_y[::-1, J:]"},
        "BiRNN.backward gives the backward cell grad_y[:, J:] in x's order.",
    ),
    "backward_half_states_not_reversed_back": Bug.from_mistake(
        M.BI_STATES_NOT_REVERSED_BACK,
        {"birnn": "reverse its output back", "depth_direction": "reverse its output back"},
        "BiRNN leaves the backward cell's states in the order it read x.",
    ),
    "step_clips_per_module": Bug.from_mistake(
        M.STEP_CLIPS_PER_MODULE,
        {"step": "clips every gradient jointly"},
        "step clips the head and each layer on its own norm.",
    ),
    "stacked_all_layers_read_x": _bug(
        M.STACKED_ALL_LAYERS_READ_X,
        "every layer of the StackedRNN is built with input_size inputs.",
        {"stacked": "each layer above reads"},
    ),
    "stacked_backward_bottom_up": _bug(
        M.STACKED_BACKWARD_BOTTOM_UP,
        "StackedRNN.backward runs the layers bottom-up.",
        {"stacked": "run them top-down"},
    ),
    "birnn_halves_swapped": _bug(
        M.BI_HALVES_SWAPPED,
        "BiRNN concatenates [h<-_t ; h->_t].",
        {"birnn": "the forward half first", "depth_direction": "the forward half first"},
    ),
    "named_grads_keys": _bug(
        M.NAMED_GRADS_KEYS,
        "named_grads (and step, consistently) names layer l's gradients 'rnn{l}.key'.",
        {"named_grads": "with a dot after rnn"},
    ),
    "step_skips_layers": _bug(
        M.STEP_SKIPS_LAYERS,
        "step updates E, W_y and b_y only.",
        {"step": "every layer's params"},
    ),
    "train_divides_by_sequences": _bug(
        M.TRAIN_DIV_SEQUENCES,
        "train divides each epoch's loss by the number of sequences.",
        {"train": "by the number of sequences"},
    ),
    "train_divides_by_tokens": Bug.from_mistake(
        M.TRAIN_DIV_LEN,
        {"train": "divide by sum(len(s) - 1)"},
        "train divides the epoch's loss by sum(len(s)) rather than by the number of predictions.",
    ),
    "train_forgets_max_norm": _bug(
        M.TRAIN_FORGETS_MAX_NORM,
        "train calls step(lr) without max_norm.",
        {"train": "step(lr, max_norm)"},
    ),
    "W_y_gradient_transposed": _bug(
        M.W_Y_GRAD_TRANSPOSED,
        "W_y's gradient is h.T @ d_logits, (J, V).",
        {"lstmlm": "so it is d_logits.T @ h"},
    ),
    "unknown_cell_is_lstm": _bug(
        M.UNKNOWN_CELL_IS_LSTM,
        "any unknown cell silently means an LSTM.",
        {"bad_arguments": "silently means an LSTM"},
    ),
    "lstm_backward_mutates_grad_h": _bug(
        M.BACKWARD_MUTATES_GRAD_H,
        "LSTM.backward adds the carried gradient into grad_h in place.",
        {"no_mutation": "grad_h[t] += dh_next"},
    ),
    "log_of_probabilities": _bug(
        M.LOG_OF_PROBS,
        "LSTMLM.loss takes np.log of the softmax's probabilities (CS231n's temporal_softmax_loss).",
        {"lstmlm": "np.log of the softmax's probabilities"},
    ),
}

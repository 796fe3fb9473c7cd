"""The reference solution of the `rnn` assignment: one module per submitted file, loaded as a submission is."""

"""The reference solution of the `seq2seq` assignment: one module per submitted file, loaded as a submission is."""

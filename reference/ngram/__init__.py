"""The reference solution of the `ngram` assignment: one module per submitted file, loaded as a submission is."""

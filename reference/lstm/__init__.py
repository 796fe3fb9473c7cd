"""The reference solution of the `lstm` assignment: one module per submitted file, loaded as a submission is."""

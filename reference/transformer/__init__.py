"""The reference solution of the `transformer` assignment: one module per submitted file, loaded as a submission is."""

"""The reference solution of `tiny`: one module per submitted file, loaded as a submission is."""

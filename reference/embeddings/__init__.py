"""The reference solution of the `embeddings` assignment: one module per submitted file, loaded as a submission is."""

"""What a student bundle of `tiny` carries: the scenarios its public checks name."""

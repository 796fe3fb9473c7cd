"""The catalogue of realistic embeddings bugs: one each, as edits of the reference."""

from __future__ import annotations

from autograder.flawed import Bug

BUGS: dict[str, Bug] = {}

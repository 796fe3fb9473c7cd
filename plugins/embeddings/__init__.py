"""The built-in `embeddings` assignment (BPE, word2vec and a feed-forward LM): where its parts are, for the harness."""

from lmgrade import AssignmentPlugin

plugin = AssignmentPlugin(
    "embeddings",
    package=__name__,
    folder="lmgrade.assignments.embeddings",
    reference="lmgrade.reference.embeddings",
    checks=".checks:embeddings_checks",
    bugs=".bugs:BUGS",
)

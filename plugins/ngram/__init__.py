"""The built-in `ngram` assignment (the n-gram language model): where its parts are, for the harness."""

from lmgrade import AssignmentPlugin

plugin = AssignmentPlugin(
    "ngram",
    package=__name__,
    folder="lmgrade.assignments.ngram",
    reference="lmgrade.reference.ngram",
    checks=".checks:ngram_checks",
    bugs=".bugs:BUGS",
)

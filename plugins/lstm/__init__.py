"""The built-in `lstm` assignment (the LSTM): where its parts are, for the harness."""

from lmgrade import AssignmentPlugin

plugin = AssignmentPlugin(
    "lstm",
    package=__name__,
    folder="lmgrade.assignments.lstm",
    reference="lmgrade.reference.lstm",
    checks=".checks:lstm_checks",
    bugs=".bugs:BUGS",
)

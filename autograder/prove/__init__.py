"""How an assignment is proved: selftest, mutants and mutation, the author's errors, degenerate
submissions.

May import: boundary, core, submissions, sandbox, declare, reports, grading.
"""

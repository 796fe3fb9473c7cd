"""Course tools: regrade a class, the Gradescope zip, the student bundle.

May import: boundary, core, submissions, sandbox, declare, reports, grading, prove.
"""

"""What crosses from a sandboxed child into the grading process, and its schema: plain data without
pickle, the frames' schema, the processes' protocol, calls as snapshots, the sources a grader may
parse, forbidden APIs found by reading them.

May import: nothing else of lmgrade.
"""

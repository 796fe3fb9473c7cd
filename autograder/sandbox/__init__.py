"""Where a submission runs: the fork server, its children, their privileges and limits.

May import: boundary, core, submissions.
"""

"""What an assignment declares: plugins and their hooks, assignment.toml, checks, the catalogue and its
bugs, templates, handouts, the package scaffold.

May import: boundary, core, submissions, sandbox.
"""

"""A submission: its folder, zip or notebook, its limits, its files imported as one group.

May import: boundary, core.
"""

"""A realistic bug of `tiny`, as an edit of the reference: each check it names must lose points."""

from lmgrade import Bug

BUGS = {
    "off_by_one": Bug("mean divides by len(values) - 1.", "stats.py",
                      (("/ len(values)", "/ (len(values) - 1)"),),
                      {"mean": "off_by_one", "mean_hidden": ""}, demo=True),
}

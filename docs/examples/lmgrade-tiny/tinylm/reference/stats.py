"""Reference solution of `tiny`, file `stats.py`."""


def mean(values):
    return sum(values) / len(values)

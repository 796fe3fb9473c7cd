"""lmgrade: the autograder harness of a language-modeling course."""

from .hookspecs import hookimpl

__all__ = ["hookimpl"]
__version__ = "0.1.0"

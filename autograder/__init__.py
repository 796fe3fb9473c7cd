"""lmgrade: the autograder harness of a language-modeling course.

What a plugin needs is importable from here::

    from lmgrade import hookimpl, Check, Case, CaseContext, Mistake, Tolerance, Limits
"""

from .checks import Case, CaseContext, CaseVerdict, Check, Mistake, property_result, raised
from .compare import Tolerance
from .hookspecs import hookimpl
from .sandbox.limits import Limits

__all__ = ["Case", "CaseContext", "CaseVerdict", "Check", "Limits", "Mistake", "Tolerance", "hookimpl",
           "property_result", "raised"]
__version__ = "0.1.0"

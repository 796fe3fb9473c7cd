"""How a scenario is called with a case's arguments.

A scenario takes the submission's modules, then the case's arguments by name::

    def pad(modules, sentence, n):
        return modules["ngram"].pad(sentence, n)

with ``Case(label, {"sentence": [...], "n": 3})``: each key of the case's dict
is a parameter, and a parameter with a default is an argument a case may leave
out. The older form, ``scenario(modules, args)`` with the whole dict (or any
other plain value) as its second argument, is still called as it was: a
scenario whose parameters are exactly ``(modules, args)``, one marked with
`takes_args_whole`, or one of exactly two parameters ``(modules, case)`` whose
case's arguments are not a dict holding its second parameter's name.

Every place that runs a scenario (the sandboxed child, the reference in the
grading process, a stand-in's record and replay, a timing check's setup,
`check --case`'s script) calls it through `call_scenario`, so that both forms
mean the same everywhere, and `binding_error` lets the grading process refuse
a case that does not fit its scenario before any child runs it (where the
mismatch would read as the student's TypeError).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

WHOLE = "__lmgrade_args_whole__"
BESIDE = "beside"  # a case's second input (`checks.asked_beside`)
BESIDE_OF = "__lmgrade_beside_of__"  # on `asked_beside`'s wrapper: the scenario it asks twice
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def takes_args_whole(scenario: Callable) -> Callable:
    """Marks `scenario` as taking the case's arguments as one value, `scenario(modules, args)`, whatever
    its second parameter is called (a wrapper that passes the arguments on, say)."""
    setattr(scenario, WHOLE, True)
    return scenario


@functools.cache
def _signature(scenario: Callable) -> inspect.Signature | None:
    try:
        return inspect.signature(scenario, follow_wrapped=False)
    except (TypeError, ValueError):  # a builtin without a signature
        return None


_ANY = object()  # no case's arguments known: the scenario's form from its signature alone


def _whole(scenario: Callable, args: Any = _ANY) -> bool:
    if getattr(scenario, WHOLE, False):
        return True
    signature = _signature(scenario)
    if signature is None:  # the older form is all it can be
        return True
    parameters = list(signature.parameters.values())
    if len(parameters) != 2 or parameters[1].kind not in _POSITIONAL:
        return False
    second = parameters[1]
    if second.name == "args":  # the older form as documented
        return True
    # `(modules, x)`: by name where the case's arguments are that one name (or none, x having a default);
    # an older scenario whose second parameter has another name (`(modules, case)`) gets them whole.
    if args is _ANY:
        return False
    if args is None or args == {}:
        return second.default is inspect.Parameter.empty
    return not (_named(args) and second.name in args)


def takes_args_by_name(scenario: Callable, args: Any = _ANY) -> bool:
    """Whether `scenario` takes a case's arguments (`args`, where known) as named parameters, else as one
    value: `(modules, args)`, a scenario marked `takes_args_whole`, or one of exactly two parameters
    `(modules, x)` whose case's arguments are not a dict holding "x"."""
    return not _whole(scenario, args)


def call_scenario(scenario: Callable, modules: Any, args: Any) -> Any:
    """`scenario(modules, **args)`, or `scenario(modules, args)` for a scenario of the older form
    (`takes_args_by_name`). A case of no arguments (None) calls `scenario(modules)`."""
    if _whole(scenario, args):
        return scenario(modules, args)
    if args is None:
        return scenario(modules)
    if not _named(args):
        raise TypeError(
            f"{_name(scenario)} takes its case's arguments by name: a case's args must be a dict of str keys, "
            f"not {type(args).__name__}"
        )
    return scenario(modules, **args)


def binding_error(scenario: Callable, args: Any) -> str | None:
    """Why `args` cannot be passed to `scenario` (an unknown name, a required one missing), or None where it
    can: checked in the grading process when the cases are drawn, so that a plugin's mistake is said as its
    own, never as an error of the student's code."""
    inner = getattr(scenario, BESIDE_OF, None)
    if inner is not None:  # asked_beside: the scenario is asked both inputs
        first = without_beside(args)
        if isinstance(args, dict) and args.get(BESIDE):
            return binding_error(inner, first) or binding_error(inner, {**first, **args[BESIDE]})
        return binding_error(inner, first)
    if _whole(scenario, args):
        return None
    if args is not None and not _named(args):
        return f"its args must be a dict of str keys (the scenario takes them by name), not {type(args).__name__}"
    try:
        _signature(scenario).bind(None, **(args or {}))
    except TypeError as exc:
        return f"its args do not fit {_name(scenario)}: {exc}"
    return None


def without_beside(args: Any) -> Any:
    """A case's arguments without its second input (`checks.asked_beside`)."""
    return {k: v for k, v in args.items() if k != BESIDE} if isinstance(args, dict) else args


def _named(args: Any) -> bool:
    return isinstance(args, dict) and all(isinstance(k, str) for k in args)


def _name(scenario: Callable) -> str:
    return getattr(scenario, "__qualname__", None) or repr(scenario)

"""Forbidden APIs stopped at torch's dispatcher, whatever Python path reaches them.

The name guards (`guards.py`) replace ``torch.nn.functional.layer_norm`` and
its other names, but the work behind a forbidden API is done by operators of
torch's dispatcher (``aten::layer_norm``, which decomposes into
``aten::native_layer_norm``), and Python reaches those by other paths:
``torch.ops.aten``, ``torch._C._VariableFunctions``, the private kernels of a
fused operator (``aten::_scaled_dot_product_flash_attention_for_cpu``),
``torch.vmap``, TorchScript, ``torch.compile``. assignment.toml names the
operators of each forbidden API (``[forbidden.operators]``); `block` puts, in
the place of every kernel each overload of them has (every backend, autograd,
the composite decompositions, vmap's rules), one that reports the call and
raises. Whatever calls the operator, the dispatcher then runs that one.

Other ways to the same computation are closed alongside: torch's Python
versions of the blocked operators (its decompositions and reference
implementations, plain functions that compute without the operator) get the
same reporting code in place of theirs; an operator only TorchScript has
(``prim::MKLDNNLayerNorm``, outside the dispatcher) is withheld from
``torch.ops``, assignment.toml blocking the dispatcher's operator that makes
its inputs; and the static runtime, which calls kernels without the
dispatcher, is removed.

The other operators keep their kernels: what is not forbidden costs nothing
(a dispatch mode would add a Python call to every operator). Run in the fork
server only, so each child inherits the blocks and the grading process, which
computes with the reference, never has them.
"""

from __future__ import annotations

import ctypes
import fnmatch
import functools
import re
import sys
import types
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

_KEY_LINE = re.compile(r"^(\w+)(?:\[alias\])?: registered", re.MULTILINE)
# Runtimes that run kernels without the dispatcher: removed from the child's torch.
_DISPATCHER_BYPASSES = ("_jit_to_static_module", "_fuse_to_static_module")
# Modules that hold torch's Python versions of operators, under names of their own.
_PYTHON_VERSIONS = ("torch._refs", "torch._decomp", "torch._prims", "torch._meta_registrations")
_PLACEHOLDER = "lmgrade: the call that stops"
_VERSION_OF = "a Python version of"

Stop = Callable[[str, str], Any]  # (api, what reached it) -> raises


def operator_names(patterns: Iterable[str]) -> list[str]:
    """The registered operators ("ns::name" or "ns::name.overload") whose "ns::name" matches a pattern.

    A pattern is "namespace::name", `*` and `?` matching within the name.
    Operators of the dispatcher, and where a pattern matches none of those,
    TorchScript's own (which run outside the dispatcher).
    """
    import torch

    dispatched = _by_name(torch._C._dispatch_get_all_op_names())
    jit_only = _by_name(_jit_only_names(torch, dispatched))
    return sorted(
        name for pattern in patterns for name in _matching(dispatched, pattern) or _matching(jit_only, pattern)
    )


def _by_name(names: Iterable[str]) -> dict[str, list[str]]:
    """{"ns::name": its overloads as the registry lists them}."""
    by_name: dict[str, list[str]] = {}
    for qualified in names:
        by_name.setdefault(qualified.partition(".")[0], []).append(qualified)
    return by_name


def _matching(by_name: Mapping[str, list[str]], pattern: str) -> list[str]:
    if not set(pattern) & set("*?["):
        return list(by_name.get(pattern, ()))
    matches = re.compile(fnmatch.translate(pattern)).match
    return [qualified for name, overloads in by_name.items() if matches(name) for qualified in overloads]


def _jit_only_names(torch, dispatched: Mapping[str, list[str]]) -> list[str]:
    """TorchScript's operators that the dispatcher does not have (prim::MKLDNNLayerNorm)."""
    return sorted({s.name for s in torch._C._jit_get_all_schemas()} - set(dispatched))


def block(operators: Mapping[str, Iterable[str]], stop: Stop) -> list[str]:
    """Make every operator of `operators` ({api: operator patterns}) call `stop(api, operator)` instead.

    Returns the operators blocked and the Python versions stopped, for the record of defences.
    """
    if not operators:
        return []
    import torch

    done, overloads = [], {}
    dispatched = _by_name(torch._C._dispatch_get_all_op_names())
    jit_only: dict[str, list[str]] | None = None
    with warnings.catch_warnings():
        # torch warns of each kernel replaced: here that is the point.
        warnings.simplefilter("ignore")
        for api, patterns in operators.items():
            for pattern in patterns:
                found = _matching(dispatched, pattern)
                for qualified in found:
                    if _block_one(torch, qualified, api, stop):
                        done.append(qualified)
                        overload = _overload(torch, qualified)
                        if overload is not None:
                            overloads[overload] = (api, qualified)
                if not found and not set(pattern) & set("*?["):
                    if torch._C._jit_get_schemas_for_operator(pattern):
                        done += [pattern] if _withhold_jit_only(torch, pattern, api, stop) else []
                elif not found:
                    # Listed only for a pattern: TorchScript's registry is slow to list whole.
                    jit_only = _by_name(_jit_only_names(torch, dispatched)) if jit_only is None else jit_only
                    done += [q for q in _matching(jit_only, pattern) if _withhold_jit_only(torch, q, api, stop)]
    done += _stop_python_versions(overloads, stop)
    for name in _DISPATCHER_BYPASSES:
        if hasattr(torch._C, name):
            delattr(torch._C, name)
    return done


def _withhold_jit_only(torch, qualified: str, api: str, stop: Stop) -> bool:
    """Put a stop where `torch.ops` gives an operator that only TorchScript has.

    No kernel of it can be replaced. Its inputs come from the dispatcher
    (prim::MKLDNNLayerNorm takes MKLDNN tensors, which only aten::to_mkldnn
    makes from data): assignment.toml blocks that operator alongside.
    """
    namespace_name, _, name = qualified.partition("::")
    namespace = getattr(torch.ops, namespace_name)
    try:
        getattr(namespace, name)  # resolved once, so that what torch.ops caches is the stop
    except (AttributeError, RuntimeError):
        return False

    def withheld(*args, **kwargs):
        stop(api, qualified)

    setattr(namespace, name, withheld)
    return True


def _block_one(torch, qualified: str, api: str, stop: Stop) -> bool:
    keys = _kernel_keys(torch, qualified)
    namespace, _, name = qualified.partition("::")
    shown = qualified.removesuffix(".default")

    def blocked(*args, **kwargs):
        stop(api, shown)

    library = torch._C._dispatch_library("IMPL", namespace, "", __file__, 0)
    registered = False
    for key in keys:
        try:
            library.impl(name, key, blocked, False)
            registered = True
        except RuntimeError:
            continue  # a key this torch does not let Python register: the others still stop the call
    # A registration lasts as long as the object that made it. This one is kept by a
    # reference no Python object holds: student code that found it could otherwise
    # free it, and the operator would have its kernels back.
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(library))
    return registered


def _kernel_keys(torch, qualified: str) -> list[str]:
    """The dispatch keys (aliases included) with an active kernel for the operator."""
    members = torch._C.DispatchKey.__members__
    return [
        key
        for key in _KEY_LINE.findall(torch._C._dispatch_dump(qualified))
        if key in members and not key.startswith(("StartOf", "EndOf"))
    ]


def _overload(torch, qualified: str):
    namespace, _, rest = qualified.partition("::")
    name, _, overload = rest.partition(".")
    try:
        return getattr(getattr(getattr(torch.ops, namespace), name), overload or "default")
    except (AttributeError, RuntimeError):
        return None


def _stop_python_versions(overloads: Mapping[Any, tuple[str, str]], stop: Stop) -> list[str]:
    """Make torch's Python versions of the blocked operators call `stop` instead.

    Their code is replaced in the function object itself, so that every
    reference to it (a decomposition table, an operator's Python kernels, a
    wrapper's closure, a module's name for it) runs the stop. What a table
    holds that is no plain function, or that an allowed operator shares, is
    replaced in the blocked operator's entry only.
    """
    decomp = sys.modules.get("torch._decomp")
    tables = list(decomp.global_decomposition_table.values()) if decomp is not None else []
    inductor = sys.modules.get("torch._inductor.decomposition")
    if inductor is not None:
        tables.append(inductor.decompositions)
    found: dict[int, tuple[Any, str, str]] = {}
    entries = []  # (the dict, the key) of every place that holds a blocked operator's Python version
    for op, (api, operator) in overloads.items():
        entries += [(table, op, api, operator) for table in tables if op in table]
        entries += [(op.py_kernels, key, api, operator) for key in op.py_kernels]
    for holder, key, api, operator in entries:
        for f in _unwrapped(holder[key]):
            found.setdefault(id(f), (f, api, operator))
    # The wrappers modules export (torch._refs.native_layer_norm wraps the table's function).
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(_PYTHON_VERSIONS):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, types.FunctionType) and "__wrapped__" in value.__dict__ and id(value) not in found:
                chain = _unwrapped(value)
                hit = next((found[id(f)] for f in chain if id(f) in found), None)
                if hit is not None:
                    found.update((id(f), (f, hit[1], hit[2])) for f in chain if id(f) not in found)
    # What an allowed operator runs is never touched, even where a forbidden one shares it.
    allowed = {id(f) for table in tables for op, fn in table.items() if op not in overloads for f in _unwrapped(fn)}
    stopped: dict[int, str] = {}
    for key, (fn, api, operator) in found.items():
        if key in allowed or not isinstance(fn, types.FunctionType):
            continue
        where = f"{fn.__module__}.{fn.__qualname__}"
        code = _stopping_code(
            fn.__code__.co_freevars,
            functools.partial(stop, api, f"{where}, {_VERSION_OF} {operator.partition('.')[0]}"),
        )
        if code is not None:
            fn.__code__ = code
            stopped[key] = where
    for holder, key, api, operator in entries:
        if id(holder[key]) not in stopped:
            holder[key] = functools.partial(_stop_any, stop, api, f"torch's {_VERSION_OF} {operator.partition('.')[0]}")
    for op in overloads:
        getattr(op, "_dispatch_cache", {}).clear()
    return sorted(set(stopped.values()))


def _stop_any(stop: Stop, api: str, through: str, *args, **kwargs) -> Any:
    return stop(api, through)


def _unwrapped(fn: Any) -> list[Any]:
    """`fn` and what it wraps (a partial's function, `__wrapped__` as functools.wraps records it), outermost first.

    Read from the objects' own dictionaries: no attribute hook runs.
    """
    chain = [fn]
    while len(chain) < 16:
        last = chain[-1]
        if isinstance(last, functools.partial):
            inner = last.func
        elif isinstance(last, types.FunctionType):
            inner = last.__dict__.get("__wrapped__")
        else:
            break
        if inner is None or any(inner is f for f in chain):
            break
        chain.append(inner)
    return chain


@functools.cache
def _template(freevars: tuple[str, ...]) -> types.CodeType | None:
    """Code that calls what stands at `_PLACEHOLDER` among its constants, with exactly these free variables.

    A function's code can only be replaced by code with the same free
    variables: they are named after the return, where they never run.
    """
    cells = "".join(f"    {name} = None\n" for name in freevars)
    uses = "".join(f"        {name}\n" for name in freevars)
    source = (
        f"def outer():\n{cells}"
        "    def stopped(*args, **kwargs):\n"
        f"        stop = {_PLACEHOLDER!r}\n"
        "        return stop()\n"
        f"{uses}"
        "    return stopped\n"
    )
    namespace: dict[str, Any] = {}
    try:
        exec(compile(source, "<lmgrade forbidden>", "exec"), namespace)
    except SyntaxError:
        return None
    code = namespace["outer"]().__code__
    return code if code.co_freevars == freevars else None


def _stopping_code(freevars: tuple[str, ...], call: Callable[[], Any]) -> types.CodeType | None:
    template = _template(freevars)
    if template is None:
        return None
    return template.replace(co_consts=tuple(call if c == _PLACEHOLDER else c for c in template.co_consts))

"""Static detection of forbidden library APIs in a submission's Python files.

An assignment may forbid the library versions of what its students write
(`torch.nn.LayerNorm`, `torch.nn.functional.cross_entropy`, ...). `scan`
reads the submitted sources, with `ast` only (a submission is never imported
or run here), and reports every place that reaches a forbidden API: through
imports and their aliases, attribute chains, assignments, `getattr` with a
constant or constant-folded name, `importlib`, `__import__`, `sys.modules`
and `vars` / `__dict__`. A string constant that spells a forbidden API is
reported too, since a string can reach an API in ways no reading follows.

A name counts by what it resolves to, never by its spelling: students define
their own `LayerNorm` and `cross_entropy`, and those are not the library's.

Each finding names the top-level definition it is in, so that `relevant` can
fail only the checks that run that code: `reached` follows references
between top-level definitions, across the submission's files. Resolution is
flow-insensitive and best effort; code it cannot follow is left to the
runtime guard.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import itertools
import re
import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from types import ModuleType

_MISSING = object()
_BUILTINS = frozenset(dir(builtins))
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_ASSIGNS = (ast.Assign, ast.AnnAssign, ast.AugAssign)
# Module-level statements whose bodies still define module-level names.
_BLOCKS = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.ExceptHandler,
    ast.Match,
    ast.match_case,
    *((ast.TryStar,) if hasattr(ast, "TryStar") else ()),
)
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_PERCENT_S_ONLY = re.compile(r"(?:[^%]|%[s%])*", re.DOTALL)
# Folding is for names, which are short; the caps keep absurd inputs cheap.
_MAX_VALUES = 32
_MAX_LEN = 256


@dataclass(frozen=True)
class Finding:
    file: str
    line: int
    api: str  # as named in the forbidden list
    code: str  # the offending source line, stripped
    scope: str | None  # the top-level def, class or assigned name it is in; None for other module-level code


class Uses:
    """A submission's files read once: where they use forbidden APIs, and what each piece of code reaches.

    The grading process makes one per submission and asks `relevant` once per
    check; the files are parsed and the reach graph built only here.
    """

    def __init__(self, sources: dict[str, str], forbidden: Sequence[str], also: Mapping[str, Sequence[str]] = {}):
        self.modules = _parse_all(sources)
        self.findings = _findings(self.modules, list(sources), _Rules(forbidden, also))
        self.graph = _reach_graph(self.modules)

    def reached(self, roots: Iterable[str]) -> set[tuple[str, str]]:
        """The (file, top-level name) pairs that the code of `roots` ("layers.CausalSelfAttention") can run.

        A top-level definition reaches the top-level names its code mentions, in
        its own file or, through an import, in another file of the submission.
        """
        todo = []
        for root in roots:
            stem, _, name = root.rpartition(".")
            if stem in self.modules:
                todo.extend(_refs(self.modules, self.modules[stem], name))
        seen: set[tuple[str, str]] = set()
        while todo:
            key = todo.pop()
            if key in self.graph and key not in seen:
                seen.add(key)
                todo.extend(self.graph[key])
        return seen

    def relevant(
        self, roots: Iterable[str], files: Iterable[str], findings: Iterable[Finding] | None = None
    ) -> list[Finding]:
        """The findings that a check running `roots`, with `files` loaded, is responsible for.

        Those in code the roots reach, and module-level ones of a loaded file
        (that code runs on import). With no roots, every finding in `files`.
        """
        findings = self.findings if findings is None else findings
        loaded, roots = set(files), list(roots)
        if not roots:
            return [f for f in findings if f.file in loaded]
        hit = self.reached(roots)
        return [f for f in findings if (f.file, f.scope) in hit or (f.scope is None and f.file in loaded)]


def scan(sources: dict[str, str], forbidden: Sequence[str], also: Mapping[str, Sequence[str]] = {}) -> list[Finding]:
    """Every use of a forbidden API in `sources` ({file name: text}), once per (file, line, api).

    `forbidden` holds dotted paths, a trailing `*` being a wildcard on the
    last component; `also` gives, for a forbidden path, other paths that
    reach the same thing. A file that does not parse has no findings: it
    fails when it is imported.
    """
    return _findings(_parse_all(sources), list(sources), _Rules(forbidden, also))


def reached(sources: dict[str, str], roots: Iterable[str]) -> set[tuple[str, str]]:
    """`Uses.reached` for sources that use nothing forbidden."""
    return Uses(sources, ()).reached(roots)


def relevant(
    findings: Iterable[Finding], sources: dict[str, str], roots: Iterable[str], files: Iterable[str]
) -> list[Finding]:
    """`Uses.relevant` for findings made elsewhere."""
    return Uses(sources, ()).relevant(roots, files, findings)


def _findings(modules: dict[str, _Module], files: list[str], rules: _Rules) -> list[Finding]:
    defined = {name for m in modules.values() for name in m.defined}
    resolver = _Resolver(modules)
    order = {file: i for i, file in enumerate(files)}
    found: dict[tuple[str, int, str], Finding] = {}
    for mod in modules.values():
        try:
            hits = list(_scan_module(mod, resolver, rules, defined))
        except RecursionError:
            continue  # nesting too deep to follow; the runtime guard still applies
        for f in hits:
            found.setdefault((f.file, f.line, f.api), f)
    return sorted(found.values(), key=lambda f: (order[f.file], f.line, f.api))


def _reach_graph(modules: dict[str, _Module]) -> dict[tuple[str, str], set[tuple[str, str]]]:
    """(file, top-level name) -> the top-level definitions its code mentions."""
    graph: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    for mod in modules.values():
        for scope, unit in mod.units:
            if scope is not None:
                graph[(mod.file, scope)] |= _mentions(modules, mod, unit)
    return graph


class _Rules:
    """The forbidden list, indexed to match dotted paths and strings."""

    def __init__(self, forbidden: Sequence[str], also: Mapping[str, Sequence[str]]):
        self.exact: dict[str, set[str]] = defaultdict(set)
        self.wild: list[tuple[str, str, str]] = []  # (parent path, name prefix, api)
        for api in forbidden:
            if api.endswith("*"):
                parent, _, prefix = api[:-1].rpartition(".")
                self.wild.append((parent, prefix, api))
            else:
                self.exact[api].add(api)
        for api, paths in also.items():
            for path in paths:
                self.exact[path].add(api)
        self.roots = {p.split(".")[0] for p in self.exact} | {w[0].split(".")[0] for w in self.wild}
        self.last: dict[str, set[str]] = defaultdict(set)
        self.suffix: dict[str, set[str]] = defaultdict(set)
        for path, apis in self.exact.items():
            parts = path.split(".")
            self.last[parts[-1]] |= apis
            for i in range(1, len(parts) - 1):
                self.suffix[".".join(parts[i:])] |= apis
        self._objects: list[tuple[object, str]] | None = None

    def path_apis(self, path: str) -> set[str]:
        """The apis a dotted path reaches, by name or, in an imported package, by identity."""
        apis = set(self.exact.get(path, ()))
        parent, _, name = path.rpartition(".")
        # Inside the forbidden package the same object is often exported under
        # several paths (torch.nn.modules.normalization.LayerNorm, torch.ops.aten.layer_norm).
        in_package = bool(parent) and path.split(".")[0] in self.roots
        for wild_parent, prefix, api in self.wild:
            if name.startswith(prefix) and (parent == wild_parent or in_package):
                apis.add(api)
        if in_package:
            apis |= self.last.get(name, set())
            apis |= self._same_object(path)
        return apis

    def string_apis(self, text: str, defined: set[str]) -> set[str]:
        """The apis a string constant spells: a path, the end of one, or a distinctive name."""
        apis = set(self.suffix.get(text, ()))
        if _DOTTED.fullmatch(text):
            apis |= self.path_apis(text)
        # A plain word like "cross_entropy" only counts when the submission
        # does not define that name itself.
        if text not in defined and ("_" in text or sum(c.isupper() for c in text) >= 2):
            apis |= self.last.get(text, set())
        return apis

    def _same_object(self, path: str) -> set[str]:
        obj = _lookup(path)
        if obj is _MISSING:
            return set()
        if self._objects is None:
            self._objects = []
            for forbidden_path, apis in self.exact.items():
                target = _lookup(forbidden_path)
                if target is not _MISSING and callable(target):
                    self._objects += [(target, api) for api in apis]
        return {api for o, api in self._objects if o is obj}


def _lookup(path: str) -> object:
    """The object at `path` in an already imported package, or _MISSING.

    Nothing is imported and no attribute hook runs: a path from a submission
    must not make the grader load or execute anything. (The grading process
    imports torch only when it computes a value: the names, and the other
    names assignment.toml lists, are matched everywhere; the sandbox's guard
    stops a forbidden object whatever it is called.)
    """
    parts = path.split(".")
    obj = sys.modules.get(parts[0], _MISSING)
    for i, name in enumerate(parts[1:], start=2):
        if obj is _MISSING:
            break
        if isinstance(obj, ModuleType):
            obj = vars(obj).get(name, sys.modules.get(".".join(parts[:i]), _MISSING))
        else:
            obj = inspect.getattr_static(obj, name, _MISSING)
    return obj


@dataclass
class _Module:
    file: str
    lines: list[str]
    bindings: dict[str, list[str | ast.expr]]  # name -> paths it was imported as, expressions assigned to it
    stars: list[str]  # modules imported with `*`
    bound: set[str]  # every name bound anywhere in the file
    units: list[tuple[str | None, ast.AST]]  # module-level code with its scope
    defined: set[str]  # names assigned or defined at module level


def _parse_all(sources: dict[str, str]) -> dict[str, _Module]:
    """The files that parse, by module name (file stem)."""
    modules = {}
    for file, source in sources.items():
        try:
            tree = ast.parse(source, filename=file)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        modules[PurePath(file).stem] = _module(file, source, tree)
    return modules


def _module(file: str, source: str, tree: ast.Module) -> _Module:
    bindings: dict[str, list[str | ast.expr]] = defaultdict(list)
    stars: list[str] = []
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                root = alias.name.split(".")[0]
                bindings[alias.asname or root].append(alias.name if alias.asname else root)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                path = f"{node.module}.{alias.name}" if node.module else alias.name
                if alias.name == "*":
                    stars.append(node.module or "")
                else:
                    bindings[alias.asname or alias.name].append(path)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                _bind(bindings, target, node.value)
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (*_DEFS, ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    bound |= bindings.keys()
    units = list(_units(tree))
    defined = {node.name for _, node in units if isinstance(node, _DEFS)}
    defined |= {name for _, node in units if isinstance(node, _ASSIGNS) for name in _assigned(node)}
    return _Module(file, re.split(r"\r\n?|\n", source), dict(bindings), stars, bound, units, defined)


def _bind(bindings: dict[str, list[str | ast.expr]], target: ast.expr, value: ast.expr) -> None:
    if isinstance(target, ast.Name):
        bindings[target.id].append(value)
    elif (
        isinstance(target, (ast.Tuple, ast.List))
        and isinstance(value, (ast.Tuple, ast.List))
        and len(target.elts) == len(value.elts)
    ):
        for t, v in zip(target.elts, value.elts):
            _bind(bindings, t, v)


def _units(node: ast.AST) -> Iterator[tuple[str | None, ast.AST]]:
    """Module-level code in pieces, each with the top-level name it belongs to (None if none)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _DEFS):
            yield child.name, child
        elif isinstance(child, _ASSIGNS):
            names = _assigned(child)
            yield (names[0] if len(names) == 1 else None), child
        elif isinstance(child, _BLOCKS):
            yield from _units(child)
        else:
            yield None, child


def _assigned(stmt: ast.stmt) -> list[str]:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]


def _scan_module(mod: _Module, resolver: _Resolver, rules: _Rules, defined: set[str]) -> Iterator[Finding]:
    for scope, unit in mod.units:
        # Children before parents, so that the memo keeps the recursion shallow.
        for node in reversed(list(ast.walk(unit))):
            apis: set[str] = set()
            if isinstance(node, ast.Call) or (
                isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)) and isinstance(node.ctx, ast.Load)
            ):
                for path in resolver.resolve(mod, node):
                    apis |= rules.path_apis(path)
            if isinstance(node, (ast.Constant, ast.JoinedStr, ast.BinOp, ast.Call)):
                for text in resolver.fold(mod, node):
                    apis |= rules.string_apis(text, defined)
            line = getattr(node, "lineno", 0)
            code = mod.lines[line - 1].strip() if 0 < line <= len(mod.lines) else ""
            for api in apis:
                yield Finding(mod.file, line, api, code, scope)


class _Resolver:
    """What expressions of the submission's files refer to (dotted paths) or evaluate to (strings).

    Results are memoised per node and per (file, name). Inside a cycle of
    aliases (`a = b`, `b = a`) a name may miss what the cycle reaches; such
    code is left to the runtime guard.
    """

    def __init__(self, modules: dict[str, _Module]):
        self.modules = modules
        self.memo: dict[tuple[str, int], set[str]] = {}
        self.names: dict[tuple[str, str, str], set[str]] = {}
        self.active: set[tuple[str, str, str]] = set()

    def resolve(self, mod: _Module, node: ast.AST | None) -> set[str]:
        if node is None:
            return set()
        key = ("path", id(node))
        if key not in self.memo:
            self.memo[key] = self._resolve(mod, node)
        return self.memo[key]

    def fold(self, mod: _Module, node: ast.AST | None) -> set[str]:
        if node is None:
            return set()
        key = ("text", id(node))
        if key not in self.memo:
            self.memo[key] = self._fold(mod, node)
        return self.memo[key]

    def name(self, mod: _Module, name: str, kind: str) -> set[str]:
        """The paths (kind "path") or strings (kind "text") that `name` may hold in `mod`."""
        key = (kind, mod.file, name)
        if key in self.names:
            return self.names[key]
        if key in self.active:
            return set()
        self.active.add(key)
        try:
            out: set[str] = set()
            for value in mod.bindings.get(name, ()):
                if isinstance(value, str):
                    out |= self._expand({value}) if kind == "path" else set()
                else:
                    out |= self.resolve(mod, value) if kind == "path" else self.fold(mod, value)
            if kind == "path" and name not in mod.bound:
                # A name the file never binds comes from a star import or builtins;
                # the submission's own star-imported module wins over a library.
                own = [
                    s
                    for s in mod.stars
                    if s in self.modules and (name in self.modules[s].defined or name in self.modules[s].bindings)
                ]
                out |= self._expand({f"{star}.{name}" for star in own or mod.stars})
                if name in _BUILTINS:
                    out.add(f"builtins.{name}")
        finally:
            self.active.discard(key)
        self.names[key] = out
        return out

    def _expand(self, paths: set[str]) -> set[str]:
        """`paths` plus what paths into another file of the submission refer to there."""
        out = set(paths)
        for path in paths:
            stem, _, rest = path.partition(".")
            if stem in self.modules and rest:
                name, _, tail = rest.partition(".")
                out |= {f"{p}.{tail}" if tail else p for p in self.name(self.modules[stem], name, "path")}
        return out

    def _resolve(self, mod: _Module, node: ast.AST) -> set[str]:
        if isinstance(node, ast.Name):
            return self.name(mod, node.id, "path")
        if isinstance(node, ast.Attribute):
            return self._expand({f"{p}.{node.attr}" for p in self.resolve(mod, node.value)})
        if isinstance(node, ast.Subscript):
            return self._keyed(self.resolve(mod, node.value), self.fold(mod, node.slice))
        if isinstance(node, ast.Call):
            return self._expand(self._call(mod, node))
        if isinstance(node, ast.IfExp):
            return self.resolve(mod, node.body) | self.resolve(mod, node.orelse)
        if isinstance(node, ast.BoolOp):
            return set().union(*(self.resolve(mod, v) for v in node.values))
        if isinstance(node, ast.NamedExpr):
            return self.resolve(mod, node.value)
        return set()

    @staticmethod
    def _keyed(mappings: set[str], keys: set[str]) -> set[str]:
        """Paths for `mapping[key]` where the mapping holds modules or a namespace's members."""
        out = set()
        for path in mappings:
            prefix = "" if path == "sys.modules" else path[: -len("__dict__")] if path.endswith(".__dict__") else None
            if prefix is not None:
                out |= {prefix + key for key in keys}
        return out

    def _call(self, mod: _Module, node: ast.Call) -> set[str]:
        funcs = self.resolve(mod, node.func)
        if not funcs:
            return set()
        args = node.args
        keywords = {k.arg: k.value for k in node.keywords if k.arg}

        def arg(i: int, name: str) -> ast.expr | None:
            return args[i] if len(args) > i else keywords.get(name)

        out = set()
        if "builtins.getattr" in funcs:
            out |= {f"{p}.{n}" for p in self.resolve(mod, arg(0, "")) for n in self.fold(mod, arg(1, ""))}
        if "builtins.vars" in funcs:
            out |= {f"{p}.__dict__" for p in self.resolve(mod, arg(0, ""))}
        if "importlib.import_module" in funcs:
            packages = self.fold(mod, arg(1, "package"))
            out |= {_absolute(n, p) for n in self.fold(mod, arg(0, "name")) for p in packages or {""}}
        if funcs & {"builtins.__import__", "importlib.__import__"}:
            # Without a fromlist, __import__("a.b") returns the package a.
            whole = _nonempty(arg(3, "fromlist"))
            out |= {n if whole else n.split(".")[0] for n in self.fold(mod, arg(0, "name"))}
        out |= self._keyed({f[:-4] for f in funcs if f.endswith(".get")}, self.fold(mod, arg(0, "")))
        out.discard("")
        return out

    def _fold(self, mod: _Module, node: ast.AST) -> set[str]:
        if isinstance(node, ast.Constant):
            return {node.value} if isinstance(node.value, str) else set()
        if isinstance(node, ast.Name):
            return self.name(mod, node.id, "text")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return _combine("".join, [self.fold(mod, node.left), self.fold(mod, node.right)])
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            items = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
            formats = {f for f in self.fold(mod, node.left) if _PERCENT_S_ONLY.fullmatch(f)}
            return _combine(lambda v: v[0] % tuple(v[1:]), [formats, *(self.fold(mod, i) for i in items)])
        if isinstance(node, ast.JoinedStr):
            return _combine("".join, [self.fold(mod, v) for v in node.values])
        if isinstance(node, ast.FormattedValue) and node.format_spec is None and node.conversion in (-1, ord("s")):
            return self.fold(mod, node.value)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and not node.keywords
            and not any(isinstance(a, ast.Starred) for a in node.args)
        ):
            method, owner = node.func.attr, self.fold(mod, node.func.value)
            if method == "join" and len(node.args) == 1 and isinstance(node.args[0], (ast.List, ast.Tuple)):
                items = [self.fold(mod, e) for e in node.args[0].elts]
                return _combine(lambda v: v[0].join(v[1:]), [owner, *items])
            if method == "format":
                # Only `{}` / `{0}` fields: a format spec could ask for a huge string.
                formats = {f for f in owner if not re.search(r"[{}]", re.sub(r"\{\{|\}\}|\{\d*\}", "", f))}
                return _combine(lambda v: v[0].format(*v[1:]), [formats, *(self.fold(mod, a) for a in node.args)])
        return set()


def _combine(join, choices: list[set[str]]) -> set[str]:
    """`join` applied to each combination of one string from each set, within the caps."""
    out = set()
    for combo in itertools.islice(itertools.product(*choices), _MAX_VALUES):
        try:
            text = join(combo)
        except (TypeError, ValueError, IndexError, KeyError):
            continue
        if len(text) <= _MAX_LEN:
            out.add(text)
    return out


def _nonempty(node: ast.expr | None) -> bool:
    """Whether an argument, as written, may be a non-empty list."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return bool(node.elts)
    return node is not None and not (isinstance(node, ast.Constant) and not node.value)


def _absolute(name: str, package: str) -> str:
    """The module `importlib.import_module(name, package)` imports."""
    level = len(name) - len(name.lstrip("."))
    if not level:
        return name
    base = package.rsplit(".", level - 1)[0] if level > 1 else package
    return f"{base}.{name[level:]}" if base and name[level:] else base or name[level:]


def _refs(
    modules: dict[str, _Module], mod: _Module, name: str, seen: frozenset[tuple[str, str]] = frozenset()
) -> set[tuple[str, str]]:
    """The top-level definitions `name` may denote in `mod`: its own, or one imported from another file."""
    if (mod.file, name) in seen:
        return set()
    seen |= {(mod.file, name)}
    out = {(mod.file, name)} if name in mod.defined else set()
    for value in mod.bindings.get(name, ()):
        if isinstance(value, str):
            stem, _, rest = value.partition(".")
            if stem in modules and rest and "." not in rest:
                out |= _refs(modules, modules[stem], rest, seen)
    for stem in mod.stars:
        if stem in modules:
            out |= _refs(modules, modules[stem], name, seen)
    return out


def _mentions(modules: dict[str, _Module], mod: _Module, unit: ast.AST) -> set[tuple[str, str]]:
    """The top-level definitions that `unit` refers to by name or as `module.name`."""
    out = set()
    for node in ast.walk(unit):
        if isinstance(node, ast.Name):
            out |= _refs(modules, mod, node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            for value in mod.bindings.get(node.value.id, ()):
                if isinstance(value, str) and value in modules:
                    out |= _refs(modules, modules[value], node.attr)
    return out

"""Disguises a copier applies to a correct submission, written from docs/class-report.md alone.

Each disguise is a function from a module's source to a new source that behaves the same (the copy must
still earn what the original earns): renamed locals, reordered definitions, `pass` and docstrings added,
`*()` and `**{}` in every call, literals spelt another way, every expression wrapped in parentheses, lines
split, and all of them at once.

    python tests/cheats/surfaces/near_duplicates/disguise.py SOURCE.py OUT   # every disguise as OUT/<name>/
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
from pathlib import Path


def _check(source: str) -> str:
    compile(source, "<disguised>", "exec")
    return source


# Renaming


class _Renamer(ast.NodeTransformer):
    """Renames every name a function binds that is not one of its parameters (so keyword calls still work),
    and every module-level name that begins with an underscore (the contract names none of those)."""

    def __init__(self, private: dict[str, str]):
        self.private = private
        self.scopes: list[dict[str, str]] = []
        self.counter = 0

    def _fresh(self, name: str) -> str:
        self.counter += 1
        return f"q{self.counter}_{len(name)}x"

    def _lookup(self, name: str) -> str:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return self.private.get(name, name)

    def visit_FunctionDef(self, node):
        if node.name in self.private and not self.scopes:
            node.name = self.private[node.name]
        params = {a.arg for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs}
        for extra in (node.args.vararg, node.args.kwarg):
            if extra is not None:
                params.add(extra.arg)
        bound = {}
        for inner in ast.walk(node):
            if inner is node:
                continue
            if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store) and inner.id not in params:
                bound.setdefault(inner.id, self._fresh(inner.id))
            elif isinstance(inner, ast.comprehension):
                for target in ast.walk(inner.target):
                    if isinstance(target, ast.Name):
                        bound.setdefault(target.id, self._fresh(target.id))
        declared = {n for inner in ast.walk(node) if isinstance(inner, (ast.Global, ast.Nonlocal)) for n in inner.names}
        for name in declared:
            bound.pop(name, None)
        self.scopes.append(bound)
        self.generic_visit(node)
        self.scopes.pop()
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Name(self, node):
        node.id = self._lookup(node.id)
        return node


def rename(source: str) -> str:
    tree = ast.parse(source)
    private = {}
    for node in tree.body:
        names = []
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        for name in names:
            if name.startswith("_") and not name.startswith("__"):
                private[name] = f"_h{len(private)}_{len(name)}"
    return _check(ast.unparse(_Renamer(private).visit(tree)))


# Reordering


def reorder(source: str) -> str:
    """Top-level functions and classes in reverse order after everything else, and each class's methods in
    reverse order (names are looked up when called, so the module behaves the same)."""
    tree = ast.parse(source)
    definitions = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    others = [n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    for node in definitions:
        if isinstance(node, ast.ClassDef):
            methods = [n for n in node.body if isinstance(n, ast.FunctionDef)]
            rest = [n for n in node.body if not isinstance(n, ast.FunctionDef)]
            node.body = rest + methods[::-1] or [ast.Pass()]
    tree.body = others + definitions[::-1]
    return _check(ast.unparse(tree))


# Padding


class _Padder(ast.NodeTransformer):
    def _pad(self, body: list) -> list:
        padded = []
        for statement in body:
            padded += [statement, ast.Pass(), ast.Expr(ast.Constant(Ellipsis))]
        return padded

    def generic_visit(self, node):
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                block = self._pad(block)
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and field == "body":
                    block.insert(0, ast.Expr(ast.Constant(f"Written by me for {getattr(node, 'name', '')}.")))
                setattr(node, field, block)
        return node


def pad(source: str) -> str:
    """`pass`, `...` after every statement and a docstring of its own at the top of every function and class."""
    return _check(ast.unparse(_Padder().visit(ast.parse(source))))


# Starred arguments


class _Starrer(ast.NodeTransformer):
    def visit_Call(self, node):
        self.generic_visit(node)
        node.args = [ast.Starred(ast.Tuple([], ast.Load()), ast.Load()), *node.args]
        node.args.append(ast.Starred(ast.List([], ast.Load()), ast.Load()))
        node.keywords.append(ast.keyword(None, ast.Dict([], [])))
        return node


def star(source: str) -> str:
    """`*()` first, `*[]` last and `**{}` after the keywords of every call."""
    return _check(ast.unparse(_Starrer().visit(ast.parse(source))))


# Literals


def _respell_number(text: str) -> str:
    plain = text.replace("_", "")
    if plain.lower().startswith(("0x", "0o", "0b")) or plain.endswith(("j", "J")):
        return text
    if plain.isdigit():
        return hex(int(plain)) if int(plain) > 1 else text
    if plain.endswith(".0"):
        return plain[:-1]  # 1.0 -> 1.
    if plain.startswith("0."):
        return plain[1:]  # 0.5 -> .5
    if "e" in plain.lower():
        mantissa, exponent = plain.lower().split("e")
        return f"{mantissa}0E{int(exponent) - 1}" if "." in mantissa else f"{mantissa}.0E{exponent}"
    return plain + "0" if "." in plain else text


def _respell_string(text: str) -> str:
    prefix = ""
    while text[0] not in "'\"":
        prefix, text = prefix + text[0], text[1:]
    if any(c in prefix.lower() for c in "fb") or text.startswith(("'''", '"""')):
        return prefix + text
    body = text[1:-1]
    if len(body) < 2 or "\\" in body:
        return prefix + text
    half = len(body) // 2
    quote = "'" if '"' in body else '"'
    if quote in body:
        return prefix + text
    return f"{prefix}{quote}{body[:half]}{quote} {prefix}{quote}{body[half:]}{quote}"


def literals(source: str) -> str:
    """Numbers in another spelling (1.0 as 1., 0.5 as .5, 10 as 0xa) and every string split in two halves
    in the other quotes (implicit concatenation)."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    lines = source.splitlines(keepends=True)
    edits = []
    for token in tokens:
        if token.type == tokenize.NUMBER:
            edits.append((token.start, token.end, _respell_number(token.string)))
        elif token.type == tokenize.STRING and token.start[0] == token.end[0]:
            edits.append((token.start, token.end, _respell_string(token.string)))
    for (row, start), (_, end), text in reversed(edits):
        line = lines[row - 1]
        lines[row - 1] = line[:start] + text + line[end:]
    return _check("".join(lines))


# Parentheses


def parenthesise(source: str) -> str:
    """Every expression of the module wrapped in its own parentheses: `return (((a) + (b)))`."""
    source = ast.unparse(ast.parse(source))  # one statement a line, no f-string of several lines
    tree = ast.parse(source)
    lines = [line.encode("utf-8") for line in source.splitlines(keepends=True)]
    inside_fstrings = {id(n) for f in ast.walk(tree) if isinstance(f, ast.JoinedStr) for n in ast.walk(f) if n is not f}
    inserts: dict[tuple[int, int], list[bytes]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.expr) or id(node) in inside_fstrings:
            continue
        if isinstance(node, (ast.Starred, ast.Slice)) or node.lineno != node.end_lineno:
            continue
        if isinstance(node, ast.Tuple) and any(isinstance(e, ast.Starred) for e in node.elts):
            continue
        inserts.setdefault((node.lineno, node.col_offset), []).append(b"(")
        inserts.setdefault((node.end_lineno, node.end_col_offset), []).append(b")")
    for row, col in sorted(inserts, reverse=True):
        line = lines[row - 1]
        lines[row - 1] = line[:col] + b"".join(inserts[(row, col)]) + line[col:]
    return _check(b"".join(lines).decode("utf-8"))


# Splitting lines


def split_lines(source: str) -> str:
    """A line break after every opening bracket and comma inside brackets, and a backslash continuation after
    every `=` of an assignment and every `return`."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    lines = source.splitlines(keepends=True)
    depth = 0
    inserts = []
    for index, token in enumerate(tokens):
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        if token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
        if following is None or following.start[0] != token.end[0]:
            continue
        if following.type in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT):
            continue
        if token.type == tokenize.OP and (token.string in "([{" or (token.string == "," and depth > 0)):
            inserts.append((token.end, "\n"))
        elif depth == 0 and (
            (token.type == tokenize.OP and token.string == "=")
            or (token.type == tokenize.NAME and token.string == "return")
        ):
            inserts.append((token.end, " \\\n"))
    for (row, col), text in reversed(inserts):
        line = lines[row - 1]
        lines[row - 1] = line[:col] + text + line[col:]
    return _check("".join(lines))


class _PackedStarrer(ast.NodeTransformer):
    def visit_Call(self, node):
        self.generic_visit(node)
        if node.args and not any(isinstance(a, ast.Starred) for a in node.args):
            node.args = [ast.Starred(ast.Tuple(node.args, ast.Load()), ast.Load())]
        return node


def star_packed(source: str) -> str:
    """The positional arguments of every call packed into one starred tuple: `f(*(a, b))`."""
    return _check(ast.unparse(_PackedStarrer().visit(ast.parse(source))))


class _KeywordPacker(ast.NodeTransformer):
    def visit_Call(self, node):
        self.generic_visit(node)
        named = [k for k in node.keywords if k.arg is not None]
        if named:
            packed = ast.Dict([ast.Constant(k.arg) for k in named], [k.value for k in named])
            node.keywords = [k for k in node.keywords if k.arg is None] + [ast.keyword(None, packed)]
        return node


def keywords_packed(source: str) -> str:
    """The keyword arguments of every call packed into one mapping: `f(a, **{"k": v})` (the docs name only
    empty mappings among what is undone)."""
    return _check(ast.unparse(_KeywordPacker().visit(ast.parse(source))))


class _NameNoops(ast.NodeTransformer):
    def generic_visit(self, node):
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                padded = []
                for statement in block:
                    padded += [statement, ast.Expr(ast.Name("__name__", ast.Load())), ast.Expr(ast.Constant(0))]
                setattr(node, field, padded)
        return node


def bare_names(source: str) -> str:
    """A bare name (`__name__`) and a bare number after every statement: statements that do nothing."""
    return _check(ast.unparse(_NameNoops().visit(ast.parse(source))))


def semicolons(source: str) -> str:
    """Every block's simple statements joined on one line with `;`."""
    tree = ast.parse(source)
    text = ast.unparse(tree)
    out = []
    for line in text.splitlines():
        stripped = line.strip()
        simple = stripped and not stripped.endswith(":") and not stripped.startswith(("@", "#", "'", '"'))
        previous = out[-1] if out else ""
        same_indent = previous and len(previous) - len(previous.lstrip()) == len(line) - len(line.lstrip())
        if simple and same_indent and previous.strip() and not previous.rstrip().endswith(":") and '"' not in previous:
            out[-1] = previous + "; " + stripped
        else:
            out.append(line)
    return _check("\n".join(out) + "\n")


class _Annotator(ast.NodeTransformer):
    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        for argument in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
            if argument.annotation is None and argument.arg != "self":
                argument.annotation = ast.Name("object", ast.Load())
        if node.returns is None:
            node.returns = ast.Name("object", ast.Load())
        return node

    def visit_Assign(self, node):
        self.generic_visit(node)
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            return ast.AnnAssign(node.targets[0], ast.Name("object", ast.Load()), node.value, simple=1)
        return node


def annotate(source: str) -> str:
    """`object` annotations on every parameter, return and single-name assignment."""
    return _check(ast.unparse(ast.fix_missing_locations(_Annotator().visit(ast.parse(source)))))


class _Expander(ast.NodeTransformer):
    def visit_AugAssign(self, node):
        self.generic_visit(node)
        if isinstance(node.target, ast.Name):
            value = ast.BinOp(ast.Name(node.target.id, ast.Load()), node.op, node.value)
            return ast.Assign([node.target], value)
        return node

    def visit_If(self, node):
        self.generic_visit(node)
        node.test = ast.UnaryOp(ast.Not(), ast.UnaryOp(ast.Not(), node.test))
        return node

    visit_While = visit_If


def expand(source: str) -> str:
    """`x += y` as `x = x + y`, and every `if`/`while` condition as `not not (condition)`."""
    return _check(ast.unparse(ast.fix_missing_locations(_Expander().visit(ast.parse(source)))))


class _Getattrs(ast.NodeTransformer):
    def visit_Attribute(self, node):
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return ast.Call(ast.Name("getattr", ast.Load()), [node.value, ast.Constant(node.attr)], [])
        return node


def getattrs(source: str) -> str:
    """Every read of `self.name` as `getattr(self, "name")`."""
    return _check(ast.unparse(ast.fix_missing_locations(_Getattrs().visit(ast.parse(source)))))


class _IfTrue(ast.NodeTransformer):
    def generic_visit(self, node):
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(node, field, [self._wrapped(statement) for statement in block])
        return node

    @staticmethod
    def _wrapped(statement):
        kept = (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
        docstring = isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
        return statement if isinstance(statement, kept) or docstring else ast.If(ast.Constant(True), [statement], [])


def if_true(source: str) -> str:
    """Every statement but definitions and imports inside an `if True:` of its own: a block that does nothing."""
    return _check(ast.unparse(ast.fix_missing_locations(_IfTrue().visit(ast.parse(source)))))


class _Assigner(ast.NodeTransformer):
    def generic_visit(self, node):
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(node, field, [s for statement in block for s in (statement, ast.parse("_ = 0").body[0])])
        return node


def assign_after_each(source: str) -> str:
    """`_ = 0` after every statement: a line of its own (docs/class-report.md says this is not found)."""
    return _check(ast.unparse(ast.fix_missing_locations(_Assigner().visit(ast.parse(source)))))


def everything(source: str) -> str:
    """Every disguise above, one after the other."""
    for disguise in (rename, reorder, pad, star, parenthesise, literals, split_lines):
        source = disguise(source)
    return source


DISGUISES = {
    "rename": (rename, "every local and private name renamed"),
    "reorder": (reorder, "functions, classes and methods in reverse order"),
    "pad": (pad, "`pass`, `...` after every statement, a docstring in every function and class"),
    "star": (star, "`*()`, `*[]` and `**{}` in every call"),
    "literals": (literals, "1.0 as 1., 0.5 as .5, 10 as 0xa, every string split in two"),
    "parenthesise": (parenthesise, "every expression wrapped in parentheses"),
    "split_lines": (split_lines, "a line break after every bracket and comma, backslashes after `=`"),
    "star_packed": (star_packed, "positional arguments packed into one starred tuple, `f(*(a, b))`"),
    "keywords_packed": (keywords_packed, "keyword arguments packed into one mapping, `f(**{'k': v})`"),
    "bare_names": (bare_names, "a bare `__name__` and a bare `0` after every statement"),
    "semicolons": (semicolons, "simple statements of a block joined with `;`"),
    "annotate": (annotate, "`object` annotations on every parameter, return and assignment"),
    "expand": (expand, "`x += y` as `x = x + y`, every condition as `not not (...)`"),
    "getattrs": (getattrs, 'every `self.name` read as `getattr(self, "name")`'),
    "if_true": (if_true, "every statement inside an `if True:` of its own"),
    "assign_after_each": (assign_after_each, "`_ = 0` after every statement (a documented miss)"),
    "everything": (everything, "all of the above at once"),
}


def main(source_path: Path, out: Path) -> None:
    source = source_path.read_text(encoding="utf-8")
    for name, (disguise, _) in DISGUISES.items():
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / source_path.name).write_text(disguise(source), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))

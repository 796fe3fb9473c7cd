"""Copies of a submission disguised as a student hiding a copy would: names changed, reformatted, reordered,
padded with lines of its own, or only part of it taken.

Each disguise keeps what the contract fixes (the names and parameters the
stub defines, the attributes it mentions, any keyword a call passes), so a
disguised copy of a working submission still works. Used by the
near-duplicate tests and benchmarks/near_duplicates.py.
"""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize


def contract_names(stub: str) -> set[str]:
    """Every word of the stub's text: its functions, classes, parameters, constants and the attributes its
    docstrings name (self.vocab), which a disguise must leave as they are."""
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", stub))


def _bound_names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """(names the code binds, attributes it assigns or defines as methods), imports left out: what a renaming
    can change. A name a call passes as a keyword, or that a string spells (`setdefault("_cache")`), is kept."""
    names, attributes = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            attributes.add(node.attr)
        if isinstance(node, ast.ClassDef):
            attributes |= {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    kept = {k.arg for node in ast.walk(tree) if isinstance(node, ast.Call) for k in node.keywords if k.arg}
    kept |= {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return names - kept, attributes - kept


def renamed(source: str, stub: str, prefix: str = "q") -> str:
    """`source` with every name and attribute it binds, and the contract does not fix, renamed consistently."""
    keep = contract_names(stub) | {"self", "cls"}
    names, attributes = _bound_names(ast.parse(source))
    new = {name: f"{prefix}{i}_{name[::-1].strip('_')}" for i, name in enumerate(sorted((names | attributes) - keep))}
    out = []
    previous = None
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        text = token.string
        if token.type == tokenize.NAME and text in new:
            after_dot = previous is not None and previous.string == "."
            if (after_dot and text in attributes) or (not after_dot and text in names):
                token = token._replace(string=new[text])
        out.append(token)
        if token.type not in (tokenize.NL, tokenize.COMMENT):
            previous = token
    return tokenize.untokenize(out)


def reformatted(source: str, line_length: int = 48) -> str:
    """`source` re-laid out: comments and blank lines gone, quotes and parentheses as `ast.unparse` writes
    them, then formatted again with two-space indents and short lines (arguments one per line)."""
    plain = ast.unparse(ast.parse(source))
    out = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--isolated", f"--line-length={line_length}"]
        + ["--config", "indent-width=2", "--stdin-filename", "copy.py", "-"],
        input=plain,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout


def reordered(source: str) -> str:
    """`source` with its top-level functions and classes in reverse order (imports and constants first)."""
    tree = ast.parse(source)
    defined = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    rest = [n for n in tree.body if n not in defined]
    tree.body = rest + defined[::-1]
    for node in defined:
        if isinstance(node, ast.ClassDef):
            node.body = [n for n in node.body if not isinstance(n, ast.FunctionDef)] + [
                n for n in node.body if isinstance(n, ast.FunctionDef)
            ][::-1]
    return ast.unparse(tree) + "\n"


def padded(source: str, every: int = 3) -> str:
    """`source` with a debugging line of its own after every `every` statements of each function body."""
    tree = ast.parse(source)
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = []
            for statement in node.body:
                body.append(statement)
                count += 1
                if count % every == 0 and not isinstance(statement, (ast.Return, ast.Raise)):
                    body.append(ast.parse(f"debug_{count} = {count}  # checking").body[0])
            node.body = body
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def part_of(source: str, stub: str, keep: int = 2) -> str:
    """The stub, with the bodies of its first `keep` top-level functions (and of the first `keep` methods of
    its classes) taken from `source`: a copy of part of the work, the rest left undone."""
    mine = {node.name: node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.FunctionDef)}
    tree = ast.parse(stub)
    for scope in [tree, *(n for n in tree.body if isinstance(n, ast.ClassDef))]:
        taken = 0
        for i, node in enumerate(scope.body):
            if isinstance(node, ast.FunctionDef) and node.name in mine and taken < keep:
                scope.body[i] = mine[node.name]
                taken += 1
    # The copy's imports, constants and private helpers first (the stub's own are the same or fewer).
    theirs = ast.parse(source).body
    preamble = [n for n in theirs if not isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    helpers = [n for n in theirs if isinstance(n, ast.FunctionDef) and n.name.startswith("_")]
    tree.body = [*preamble, *helpers, *(n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)))]
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def starred(source: str) -> str:
    """`source` with an empty starred argument, `*()`, added to every call: `f(a, b)` becomes `f(a, b, *())`."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            node.args.append(ast.Starred(ast.Tuple([], ast.Load()), ast.Load()))
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def no_ops(source: str) -> str:
    """`source` with `; pass` after every simple statement inside a block (a block's header left as it is; the
    module's own statements too, where a `from __future__` import must come first)."""
    out = []
    previous = first = None  # the last token, and the first of the statement
    depth = 0
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        depth += {tokenize.INDENT: 1, tokenize.DEDENT: -1}.get(token.type, 0)
        simple = previous is not None and previous.string != ":" and first is not None and first.string != "@"
        if token.type == tokenize.NEWLINE and depth and simple:
            out += [(tokenize.OP, ";"), (tokenize.NAME, "pass")]
        out.append((token.type, token.string))
        if token.type == tokenize.NEWLINE:
            first = None
        elif token.type not in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
            first = first or token
        if token.type not in (tokenize.NL, tokenize.COMMENT, tokenize.NEWLINE):
            previous = token
    return tokenize.untokenize(out)

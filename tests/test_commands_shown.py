"""Every command a handout, a bundle's CHECKING.md or a help text shows parses as printed.

A command is parsed by the command line itself (click, as `lmgrade` would
parse it: an unknown option or a missing argument fails), and its `--set`
settings are resolved by the assignment: in a handout they must choose the
very variant the handout was rendered for.
"""

from __future__ import annotations

import re
import shlex

import click
import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt

from helpers import ROOT, variant_params
from lmgrade.cli.app import main
from lmgrade.core.selection import Selection
from lmgrade.course.bundle import texts
from lmgrade.declare import catalog, templates

_SHOWN = re.compile(r"^\s*(?:\$\s+)?(lmgrade\s.*?)\s*(?:#.*)?$")
_QUOTED = re.compile(r"`(lmgrade [^`]+)`")


def commands_in(text: str) -> list[str]:
    """The `lmgrade ...` commands of a text: its command lines, and those quoted in backticks."""
    found = [m.group(1) for line in text.splitlines() if (m := _SHOWN.match(line))]
    return found + _QUOTED.findall(text)


def parse(command: str) -> tuple[click.Command, dict]:
    """The command `lmgrade` would run and its parameters, or a click error."""
    words = shlex.split(command)
    assert words[0] == "lmgrade", command
    with click.Context(main, info_name="lmgrade") as ctx:
        sub = main.get_command(ctx, words[1])
        if sub is None:
            raise click.UsageError(f"no command {words[1]!r}: {command}")
        with sub.make_context(words[1], words[2:], parent=ctx) as sub_ctx:
            return sub, sub_ctx.params


def settings_of(params: dict) -> dict[str, str]:
    return dict(pair.split("=", 1) for pair in params.get("settings", ()))


@pytest.mark.parametrize("name, settings", variant_params())
def test_the_handouts_commands_parse_and_check_its_own_variant(name, settings):
    assignment, variant = catalog.load(Selection.parse(name, settings))
    handout = templates.render(assignment, variant)["README.md"]
    shown = commands_in(handout)
    assert any(c.startswith(f"lmgrade check {name}") for c in shown), shown
    for command in shown:
        _, params = parse(command)
        assert params["assignment"] == name, command
        assert catalog.load(Selection(name, settings_of(params)))[1] == variant, command


@pytest.mark.parametrize("name, settings", variant_params())
def test_checking_md_commands_parse(name, settings):
    assignment, variant = catalog.load(Selection.parse(name, settings))
    torch = texts.TorchSupport("torch>=2.1,<2.14", "2.1", "2.13", "2.13.0", "")
    guide = texts.guide(assignment, variant, "checker.whl", torch)
    shown = commands_in(guide)
    assert f"lmgrade check {name}" in shown and "pytest" in guide
    for command in shown:
        _, params = parse(command)
        assert params["assignment"] == name and not settings_of(params), command  # a bundle needs no --set


def help_texts() -> dict[str, str]:
    runner = CliRunner()
    texts_ = {"lmgrade --help": runner.invoke(main, ["--help"], terminal_width=200).output}
    for name in main.commands:
        texts_[f"lmgrade {name} --help"] = runner.invoke(main, [name, "--help"], terminal_width=200).output
    return texts_


def test_every_help_text_renders_and_its_commands_parse():
    shown = help_texts()
    assert all(text.startswith("Usage: ") for text in shown.values()), shown
    for _where, text in shown.items():
        for command in commands_in(" ".join(text.split())):
            parse(command)
    # --set says which commands take a variant, and that bundles and zips keep theirs.
    said = " ".join(shown["lmgrade grade --help"].split())
    assert "student-bundle" in said and "gradescope" in said and "no --set" in said


def test_dev_py_help_says_what_torch_it_installs():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, str(ROOT / "dev.py"), "--help"], capture_output=True, text=True)
    said = " ".join(out.stdout.split())
    assert out.returncode == 0 and "pinned CPU build by default" not in said
    assert 'default "torch==2.13.0" from the index pip is configured to use' in said and "CPU-only" in said


def test_a_command_that_does_not_parse_is_caught():
    with pytest.raises(click.UsageError):
        parse("lmgrade check rnn --sett activation=tanh")
    with pytest.raises(click.UsageError):
        parse("lmgrade grade rnn")
    assert commands_in("    lmgrade check rnn --set a=b path   # comment\nsee `lmgrade list`") == [
        "lmgrade check rnn --set a=b path",
        "lmgrade list",
    ]


# The documentation: README.md and every page of the site, but for the fixed contract docs/spec/, whose
# synopses are the forms the command line must keep (tests/test_cli.py holds it to them).
DOC_PAGES = [ROOT / "README.md"] + sorted(
    p for p in (ROOT / "docs").rglob("*.md") if "spec" not in p.relative_to(ROOT / "docs").parts[:1]
)
_DOC_LINE = re.compile(r"^\s*(?:\$\s+)?(?:[A-Z][A-Z0-9_]*=\S+\s+)*(lmgrade\s.*?)\s*(?:#.*)?$")
# A synopsis's placeholders that must be numbers to parse, and the number each stands for.
_NUMBERS = {"N": "2", "S": "0"}


def doc_commands(text: str) -> tuple[list[str], list[str]]:
    """The `lmgrade ...` commands of a Markdown page: the lines of its code blocks that run one (after any
    VAR=value), and its inline code that names one."""
    blocks, inline = [], []
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    for token in tokens:
        if token.type in ("fence", "code_block"):
            blocks += [m.group(1) for line in token.content.splitlines() if (m := _DOC_LINE.match(line))]
        for child in token.children or ():
            if child.type == "code_inline" and child.content.startswith("lmgrade "):
                inline.append(" ".join(child.content.split()))
    return blocks, inline


def concrete(synopsis: str) -> str:
    """A synopsis as the fullest command it allows: every [optional part] given, the first of a|b|c chosen,
    a repetition (...) once, and the numeric placeholders as numbers."""
    words = []
    for word in shlex.split(synopsis.replace("[", " ").replace("]", " ")):
        if word in ("...", "…"):
            continue
        word = word.split("|")[0] if "|" in word and "://" not in word else word
        words.append(_NUMBERS.get(word, word))
    return shlex.join(words)


def parse_shown(command: str) -> None:
    """`parse`; for `--help` (or `lmgrade --version`), that the command and the option exist."""
    words = shlex.split(command)
    asked = [word for word in words[1:] if word.startswith("-")]
    if asked and set(asked) <= {"--help", "-h", "--version"}:
        named = [word for word in words[1:] if not word.startswith("-")]
        if named and main.get_command(click.Context(main), named[0]) is None:
            raise click.UsageError(f"no command {named[0]!r}: {command}")
        if "--version" in asked and named:
            raise click.UsageError(f"--version is lmgrade's own option: {command}")
        return
    parse(command)


@pytest.mark.parametrize("page", DOC_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_the_docs_show_parses(page):
    """A command line of a code block parses whole; inline code may name a command with only the arguments
    its sentence needs (`lmgrade mutants`), but every option it gives must be the command's, with a valid
    value."""
    blocks, inline = doc_commands(page.read_text(encoding="utf-8"))
    for command, whole in [(c, True) for c in blocks] + [(c, False) for c in inline]:
        try:
            parse_shown(concrete(command))
        except click.MissingParameter:
            if whole:
                raise AssertionError(f"{page.relative_to(ROOT)} shows `{command}` without an argument") from None
        except click.ClickException as exc:
            raise AssertionError(f"{page.relative_to(ROOT)} shows `{command}`: {exc.format_message()}") from None


def test_the_docs_show_every_command_run_somewhere():
    shown = {
        concrete(command).split()[1]
        for page in DOC_PAGES
        for command in doc_commands(page.read_text(encoding="utf-8"))[0]
    }
    assert set(main.commands) <= shown, f"no page shows a run of {sorted(set(main.commands) - shown)}"


def test_a_synopsis_is_parsed_in_its_fullest_form():
    command = concrete("lmgrade grade ngram sub/ [--jobs N] [--set KEY=VALUE]... [--device auto|cpu|cuda]")
    sub, params = parse(command)
    assert sub.name == "grade" and params["jobs"] == 2 and params["device"] == "auto"
    assert params["settings"] == ("KEY=VALUE",)
    with pytest.raises(click.UsageError):
        parse(concrete("lmgrade grade ngram sub/ [--jobz N]"))
    parse_shown("lmgrade --help")
    with pytest.raises(click.UsageError):
        parse_shown("lmgrade --helpp")
    page = "```\nLMGRADE_SECRET=... lmgrade regrade rnn export/ -o s.csv   # note\n```\n\nsee `lmgrade\nlist`;\nlmgrade"
    assert doc_commands(page) == (["lmgrade regrade rnn export/ -o s.csv"], ["lmgrade list"])

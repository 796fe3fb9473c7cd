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

from helpers import ROOT, variant_params
from lmgrade import catalog, templates
from lmgrade.bundle import texts
from lmgrade.cli import main
from lmgrade.selection import Selection

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

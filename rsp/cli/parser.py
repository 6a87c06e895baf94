"""The argument parser of ``rsp`` and its commands: an :class:`argparse.ArgumentParser` whose errors
show the usage of the command that was given (``rsp run: error: …`` under ``usage: rsp run …``) and
suggest the closest names (``did you mean --stream?``) for an unknown command, option or choice."""

from __future__ import annotations

import argparse
import ast
import difflib
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

_INVALID_CHOICE = re.compile(
    r"invalid choice: (?P<value>'[^']*'|\"[^\"]*\"|\S+) \(choose from (?P<choices>.*)\)"
)


def close_matches(word: str, candidates: Sequence[str]) -> list[str]:
    """The candidates closest to ``word`` (difflib), best first, at most three.

    >>> close_matches("--strem", ["--stream", "--format", "--output"])
    ['--stream']
    """
    return difflib.get_close_matches(word, list(candidates), n=3, cutoff=0.75)


def did_you_mean(word: str, candidates: Sequence[str]) -> str:
    """`` (did you mean X?)`` or `` (did you mean X or Y?)`` for a misspelt ``word``, or ``""``.

    >>> did_you_mean("rn", ["lars", "run", "mtl"]), did_you_mean("zzz", ["run"])
    (' (did you mean run?)', '')
    """
    found = close_matches(word, candidates)
    if not found:
        return ""
    return f" (did you mean {' or '.join(found)}?)"


def _unquote(text: str) -> str:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text.strip("'\"")
    return value if isinstance(value, str) else text


class Parser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` that keeps its arguments (:attr:`arguments`, read by the tests that
    every option has a help text) and adds a "did you mean" to its errors. Subparsers made with
    ``add_subparsers().add_parser`` are parsers of this class too (argparse's default)."""

    def __init__(self, *args, **kwargs) -> None:
        self.arguments: list[argparse.Action] = []
        self.commands: dict[str, Parser] = {}
        self.given: list[str] = []
        super().__init__(*args, **kwargs)

    def add_argument(self, *args, **kwargs) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        self.arguments.append(action)
        return action

    def add_subparsers(self, **kwargs):
        sub = super().add_subparsers(**kwargs)
        self.commands = sub.choices  # name -> the command's parser, filled by sub.add_parser
        return sub

    def option_names(self) -> list[str]:
        """Every option string of this parser (``--stream``, ``-o``, …)."""
        return [name for action in self.arguments for name in action.option_strings]

    def parse_known_args(self, args: Sequence[str] | None = None, namespace=None):
        self.given = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def parse_args(self, args: Sequence[str] | None = None, namespace=None) -> argparse.Namespace:
        """As argparse's, but unknown arguments are reported by the command they were given to, with
        its usage and the options closest to each unknown one."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            command = self.commands.get(getattr(parsed, "command", None) or "", self)
            command.unrecognized(extras)
        return parsed

    def unrecognized(self, extras: Sequence[str]) -> NoReturn:
        """Stop with the error for arguments no option of this parser takes."""
        self.error(f"unrecognized arguments: {' '.join(extras)}{self.option_hints(extras)}")

    def option_hints(self, words: Sequence[str]) -> str:
        """`` (--strem: did you mean --stream?)`` for the words that look like options this parser
        does not have (nor abbreviates), or ``""``."""
        names = self.option_names()
        hints = []
        for word in words:
            name = word.partition("=")[0]
            if name.startswith("--") and len(name) > 2 and not any(n.startswith(name) for n in names):
                found = close_matches(name, names)
                hints.append(f"{name}: did you mean {' or '.join(found)}?" if found else f"no option {name}")
        return f" ({'; '.join(hints)})" if hints else ""

    def error(self, message: str) -> NoReturn:
        match = _INVALID_CHOICE.search(message)
        if match:
            choices = [_unquote(c.strip()) for c in match.group("choices").split(",")]
            message += did_you_mean(_unquote(match.group("value")), choices)
        elif message.startswith("the following arguments are required"):
            message += self.option_hints(self.given)  # a misspelt option is often why
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")

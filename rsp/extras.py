"""The distribution's name on PyPI and its extras: what a user installs when a feature needs a package the
core does not bring, and the one error that says so (:func:`require`).

The command and the import package are ``rsp``; the distribution is ``rsp-reasoner`` (``rsp`` on PyPI is
another project), so every hint names it: ``pip install 'rsp-reasoner[serve]'``.

>>> install_hint("serve")
"pip install 'rsp-reasoner[serve]'"
"""

from __future__ import annotations

import importlib
from types import ModuleType

from rsp.errors import RspError

DISTRIBUTION = "rsp-reasoner"
"""The project's name on PyPI (``[project] name`` in pyproject.toml)."""


class MissingExtraError(RspError, ImportError):
    """A feature whose package is not installed: the message names the extra that brings it. An
    ``ImportError`` too, so code that guards an optional import keeps working."""


def install_hint(extra: str) -> str:
    """The command that installs rsp with ``extra``."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def require(module: str, extra: str, feature: str) -> ModuleType:
    """``module`` imported, or :class:`MissingExtraError` saying that ``feature`` needs it and which
    ``extra`` to install.

    >>> require("json", "serve", "x").__name__
    'json'
    >>> try:
    ...     require("no_such_module", "pandas", "to_pandas()")
    ... except MissingExtraError as err:
    ...     print(err)
    to_pandas() needs no_such_module, which is not installed: pip install 'rsp-reasoner[pandas]'
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise missing(err, extra, feature) from None


def missing(err: ImportError, extra: str, feature: str) -> ImportError:
    """The error to raise for ``err``, met while importing what ``feature`` needs: a
    :class:`MissingExtraError` naming the absent package and ``extra``, or ``err`` itself when what failed
    to import is part of rsp (a bug to see as it is, not a package to install)."""
    name = (err.name or "").split(".")[0]
    if not name or name == "rsp":
        return err
    if isinstance(err, ModuleNotFoundError):
        return MissingExtraError(f"{feature} needs {name}, which is not installed: {install_hint(extra)}")
    return MissingExtraError(f"{feature} needs another version of {name} ({err}): {install_hint(extra)}")

"""Names a package exports but imports only when first asked for (PEP 562 module ``__getattr__``), so
that importing the package, or one of its modules, does not import what those names need (the query
machinery for ``rsp lars``, PySpark for the engine hosts, rdflib for a query without ontology)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable

from rsp.extras import missing


def lazy_exports(
    package: str, names: dict[str, str], extra: str | None = None
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` for ``names`` (each name: the module it comes
    from). A name's value is imported at its first use and kept in the package's namespace. With
    ``extra``, a name whose module needs a package that is not installed raises
    :class:`~rsp.extras.MissingExtraError` saying to install that extra.

    >>> getattr_, dir_ = lazy_exports("rsp", {"Engine": "rsp.runtime"})
    >>> getattr_("Engine").__name__, "Engine" in dir_()
    ('Engine', True)
    """

    def __getattr__(name: str) -> object:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        try:
            imported = importlib.import_module(module)
        except ImportError as err:
            if extra is None:
                raise
            raise missing(err, extra, f"{package}.{name}") from None
        value = getattr(imported, name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return __getattr__, __dir__

"""The private names of third-party libraries that Sunrise still relies on, one module
per library, and nowhere else.

Each module names its ``LIBRARY`` and the ``VERIFIED_VERSION`` its code was read and
tested against. A private name carries no promise across releases, so when the
installed version differs, ``tests/shared/test_vendor_canary.py`` fails: read the
module against the new release, then raise its ``VERIFIED_VERSION``.
"""
from __future__ import annotations

import importlib
import importlib.metadata
import pkgutil

__all__ = ["drifted"]


def verified_versions() -> dict[str, str]:
    """``{distribution name: the version its vendor module was verified against}``."""
    versions = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        versions[module.LIBRARY] = module.VERIFIED_VERSION
    return versions


def drifted() -> list[tuple[str, str, str]]:
    """``(library, verified, installed)`` for each library whose installed version is not
    the one its vendor module was verified against; empty when all match."""
    return [(library, verified, installed)
            for library, verified in sorted(verified_versions().items())
            if (installed := importlib.metadata.version(library)) != verified]


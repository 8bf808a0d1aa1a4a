"""The private names of libraries live in shared/vendor/ alone, each module verified
against one version of its library: a new release fails here until someone has read
that module against it (and raised its VERIFIED_VERSION)."""
from __future__ import annotations

import ast
import importlib.metadata
import sys
from pathlib import Path

from shared.vendor import drifted, verified_versions

ROOT = Path(__file__).resolve().parents[2]
OWN_PACKAGES = {"api", "shared", "worker", "sunrise", "bench", "tests"}


def test_every_vendor_module_names_an_installed_library_and_a_version():
    versions = verified_versions()
    assert {"anthropic", "kombu", "redis"} <= set(versions)
    for library in versions:
        assert importlib.metadata.version(library)


def test_the_installed_libraries_are_the_versions_the_vendor_modules_were_verified_against():
    assert drifted() == [], "read shared/vendor/<library>.py against the new release"


def _private_imports(path: Path) -> list[str]:
    """``from lib._x import ...`` / ``import lib._x`` of a third-party library in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = ([node.module] if isinstance(node, ast.ImportFrom) and node.module and
                 not node.level else [a.name for a in node.names]
                 if isinstance(node, ast.Import) else [])
        for name in names:
            parts = name.split(".")
            if parts[0] not in OWN_PACKAGES and parts[0] not in sys.stdlib_module_names \
                    and any(part.startswith("_") for part in parts):
                found.append(f"{path.relative_to(ROOT)}: {name}")
    return found


def test_no_module_outside_the_vendor_folder_imports_a_private_module_of_a_library():
    modules = [path for package in ("api", "shared", "worker", "sunrise")
               for path in (ROOT / package).rglob("*.py")
               if ROOT / "shared" / "vendor" not in path.parents]
    assert [found for path in modules for found in _private_imports(path)] == []

"""Which installed distribution ships a module: the attribution of a declaration.

A module's file belongs to a distribution when the distribution's ``RECORD`` lists it (a regular
install: pip writes every file it installs there), or when the distribution is an editable install
whose source directory holds it (``direct_url.json`` with ``dir_info.editable``). Candidates come
from ``importlib.metadata.packages_distributions()`` (top-level package → distributions); only when
that has no answer are all distributions searched. A file no distribution ships is the app's own.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from functools import cached_property
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

from .._core.contracts.external import normalize_distribution
from .._core.records import record


@record
class Shipper:
    """An installed distribution, by normalized name and version."""

    name: str
    version: str
    editable: bool = False  # an editable install: the module is in its source tree, not in RECORD


def _real(path: str | os.PathLike[str]) -> str:
    return os.path.normcase(os.path.realpath(path))


def _editable_root(dist: metadata.Distribution) -> str | None:
    try:
        text = dist.read_text("direct_url.json")
        info = json.loads(text) if text else None
    except (OSError, ValueError):
        return None
    if not isinstance(info, dict) or not (info.get("dir_info") or {}).get("editable"):
        return None
    url = urlparse(str(info.get("url", "")))
    return _real(unquote(url.path)) if url.scheme == "file" else None


def _recorded(dist: metadata.Distribution, real_file: str) -> bool:
    """Whether ``dist``'s RECORD lists ``real_file`` (pip installed it)."""
    basename = os.path.basename(real_file)
    return any(
        entry.name == basename and _real(str(dist.locate_file(entry))) == real_file
        for entry in dist.files or ()
    )


def _editable_holds(dist: metadata.Distribution, real_file: str) -> str | None:
    """The editable source tree of ``dist`` that holds ``real_file``, if any."""
    root = _editable_root(dist)
    if root is not None and real_file.startswith(root.rstrip(os.sep) + os.sep):
        return root
    return None


class DistributionIndex:
    """Attributes module files to installed distributions (one index per compile)."""

    def __init__(self) -> None:
        self._cache: dict[str, Shipper | None] = {}

    @cached_property
    def _by_package(self) -> Mapping[str, list[str]]:
        return metadata.packages_distributions()

    @cached_property
    def _all(self) -> list[metadata.Distribution]:
        return list(metadata.distributions())

    def _candidates(self, top_package: str) -> list[metadata.Distribution]:
        found: list[metadata.Distribution] = []
        for name in self._by_package.get(top_package, ()):
            try:
                found.append(metadata.distribution(name))
            except metadata.PackageNotFoundError:
                continue
        return found

    def shipper(self, module: str, file: str | None) -> Shipper | None:
        """The distribution that ships ``module`` (loaded from ``file``), or None if none does."""
        if not file:
            return None
        real_file = _real(file)
        if real_file in self._cache:
            return self._cache[real_file]
        top = module.split(".", 1)[0]
        found = self._search(self._candidates(top), real_file)
        if found is None:
            found = self._search(self._all, real_file)
        self._cache[real_file] = found
        return found

    def _search(self, dists: list[metadata.Distribution], real_file: str) -> Shipper | None:
        # A regular install (RECORD) beats an editable one; among editable installs whose source
        # trees hold the file, the most specific tree wins (a checkout inside another's tree).
        editable: tuple[int, Shipper] | None = None
        for dist in dists:
            name = normalize_distribution(dist.metadata["Name"] or "unknown")
            if _recorded(dist, real_file):
                return Shipper(name, dist.version)
            root = _editable_holds(dist, real_file)
            if root is not None and (editable is None or len(root) > editable[0]):
                editable = (len(root), Shipper(name, dist.version, editable=True))
        return None if editable is None else editable[1]


def is_within(path: Path, root: Path) -> bool:
    try:
        Path(_real(path)).relative_to(_real(root))
    except ValueError:
        return False
    return True

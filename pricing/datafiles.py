"""The shipped data files: reading their rows, and the source and date every row carries."""

from __future__ import annotations

import csv
from datetime import date
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict

__all__ = ["Sourced", "data_path", "data_rows"]


class Sourced(BaseModel):
    """Every row says where it came from and when."""

    # Built on first validation: instance rows are built without it (see _construct), so
    # a plan never pays for their validator.
    model_config = ConfigDict(frozen=True, defer_build=True)

    source: str
    as_of: date
    notes: str = ""


def data_path(name: str = "", package: str = "pricing.data") -> Path:
    """Where a shipped data file (or, with no name, the data folder) lies: what a derived figure is keyed on."""
    return Path(str(resources.files(package).joinpath(name) if name else resources.files(package)))


def data_rows(name: str, package: str = "pricing.data") -> list[dict[str, str]]:
    """The rows of a shipped CSV data file; lines starting with '#' are comments."""
    text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
    return list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))

"""A gpuhunt catalog bucket on 127.0.0.1: ``{base}/{provider}/version`` and ``{base}/{provider}/{version}/catalog.zip``
holding ``{provider}.csv`` in gpuhunt's v2 columns, as the real bucket lays them out (gpuhunt ``_internal/catalog.py``).

Items are given as gpuhunt's ``CatalogItem`` fields and written as its ``storage.item_to_row`` writes them: flags
space-separated, provider_data as JSON, booleans and numbers by ``str``."""

from __future__ import annotations

import csv
import io
import json
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

FIELDS = ["instance_name", "location", "price", "cpu", "memory", "gpu_count", "gpu_name", "gpu_memory", "spot",
          "disk_size", "gpu_vendor", "flags", "cpu_arch", "provider_data"]


def write_bucket(root: Path, catalogs: dict[str, list[dict[str, object]]], version: str = "20261201") -> None:
    for provider, items in catalogs.items():
        folder = root / provider / version
        folder.mkdir(parents=True, exist_ok=True)
        (root / provider / "version").write_text(version, encoding="utf-8")
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=FIELDS)
        w.writeheader()
        for it in items:
            w.writerow({"disk_size": "", "gpu_vendor": "nvidia", "flags": "", "cpu_arch": "x86",
                        "provider_data": "{}", **{k: _cell(v) for k, v in it.items()}})
        with zipfile.ZipFile(folder / "catalog.zip", "w") as z:
            z.writestr(f"{provider}.csv", buf.getvalue())


def _cell(value: object) -> str:
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value)
    return "" if value is None else str(value)


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def serve(root: Path) -> Iterator[str]:
    """The bucket's base URL while it is served."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()

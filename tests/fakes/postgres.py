"""A throwaway PostgreSQL server for the tests: initdb in a temporary folder, 127.0.0.1 on a free port.

Not a mock: the real server of the machine (Debian's postgresql, found on PATH or under
/usr/lib/postgresql/*/bin). As root, the server runs as the ``postgres`` user, since PostgreSQL
refuses to run as root. Password logins (scram-sha-256) for the user ``gpuplan``, so a wrong
password is refused as it would be on a team's server.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

USER, PASSWORD = "gpuplan", "gpuplan-test-only-password"


def bin_dir() -> Path | None:
    """Where initdb and pg_ctl are, or None on a machine without PostgreSQL."""
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(versions[-1]).parent if versions else None


@dataclass
class Server:
    port: int
    root: Path

    def url(self, database: str = "postgres", password: str = PASSWORD) -> str:
        return f"postgresql://{USER}:{password}@127.0.0.1:{self.port}/{database}"

    def new_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def postgres_server() -> Iterator[Server]:
    found = bin_dir()
    if found is None:
        raise RuntimeError("no PostgreSQL server binaries (initdb) on this machine")
    root = Path(tempfile.mkdtemp(prefix="gpuplan-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    data, port = root / "data", _free_port()
    pwfile = root / "pw"
    pwfile.write_text(PASSWORD + "\n")
    if as_user:
        shutil.chown(pwfile, "postgres")

    def run(*cmd: str) -> None:
        subprocess.run([*as_user, *cmd], check=True, capture_output=True, timeout=120)

    run(str(found / "initdb"), "-D", str(data), "-U", USER, f"--pwfile={pwfile}", "--auth=scram-sha-256",
        "-E", "UTF8", "--no-sync")
    run(str(found / "pg_ctl"), "-D", str(data), "-l", str(root / "log"), "-w", "-t", "60", "-o",
        f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100", "start")
    try:
        yield Server(port=port, root=root)
    finally:
        subprocess.run([*as_user, str(found / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True, timeout=60)
        time.sleep(0.1)
        shutil.rmtree(root, ignore_errors=True)

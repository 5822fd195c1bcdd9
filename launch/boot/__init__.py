"""What a launched machine does by itself: the user data that readies it, runs the job and ends it.

The user data is a short bash script that unpacks one gzipped tar (base64) into
``/var/lib/gpuplan`` and starts ``boot.sh`` in the background: the GPU driver (checked, or
installed with Ubuntu's ``ubuntu-drivers``), the user's ``--setup``, the ``--run``, and the
teardown asked for (``--down-when done``, ``--idle``). The scripts are static files of this
package; every value a launch gives them is written into ``config.env`` as shell-quoted
assignments, and the user's scripts travel as files, so no flag value is ever part of a
command line on the machine. Logs go to ``/var/log/gpuplan`` (``gpuplan logs`` reads them).
"""

from __future__ import annotations

import base64
import gzip
import io
import re
import shlex
import tarfile
from dataclasses import dataclass
from enum import StrEnum
from importlib import resources

from pricing.errors import InputError
from providers.capabilities import SelfEnd
from providers.ssh_keys import LOGIN_USER

__all__ = ["BOOT_DIR", "LOG_DIR", "LOG_FILES", "BootConfig", "BootSpec", "Driver", "boot_steps", "config_env",
           "read_script", "user_data"]

BOOT_DIR = "/var/lib/gpuplan"
LOG_DIR = "/var/log/gpuplan"
LOG_FILES = ("run", "setup", "state", "driver", "idle", "end", "boot")
BUSY_PERCENT = 5  # a GPU above this utilization is busy (a policy, not a measurement)
_STATIC = ("boot.sh", "idle.sh", "end.sh")
_ROLE = re.compile(r"[A-Za-z0-9_+=,.@-]{1,128}")  # CAM role names (Tencent CAM CreateRole: RoleName)


class Driver(StrEnum):
    """What the boot script does about the NVIDIA driver."""

    CHECK = "check"  # the image has it: say which driver and CUDA, or that it is missing
    INSTALL = "install"  # install it with ubuntu-drivers when nvidia-smi finds none
    SKIP = "skip"


@dataclass(frozen=True, slots=True)
class BootSpec:
    """What the user asked each machine to do at boot (``launch --setup/--run/--down-when/--idle``)."""

    setup: str | None = None  # shell script text
    run: str | None = None
    down_when_done: bool = False
    idle_seconds: int | None = None
    driver: Driver | None = None  # None: the provider's default for the image
    cam_role: str | None = None  # Tencent: the CAM role the machine terminates itself with

    def __post_init__(self) -> None:
        if self.down_when_done and self.run is None:
            raise InputError("--down-when done needs --run: it ends the machine when the run command exits",
                             "add --run FILE or --run 'command', or use --idle 30m")
        if self.idle_seconds is not None and self.idle_seconds < 1:
            raise InputError("--idle must be a positive duration", "e.g. --idle 30m")
        if self.cam_role is not None and not _ROLE.fullmatch(self.cam_role):
            raise InputError(f"--cam-role {self.cam_role!r} is not a CAM role name",
                             "letters, digits and + = , . @ _ - only, at most 128")

    @property
    def ends_itself(self) -> bool:
        return self.down_when_done or self.idle_seconds is not None

    @property
    def policy(self) -> str:
        """The teardown policy in words, as the ledger keeps it and `ls` shows it ('' for none)."""
        parts = (["when the run exits"] if self.down_when_done else []) + (
            [f"after {_duration(self.idle_seconds)} idle"] if self.idle_seconds is not None else [])
        return " or ".join(parts)


@dataclass(frozen=True, slots=True)
class BootConfig:
    """Everything ``config.env`` says, for one launch."""

    launch_id: str
    region: str
    nodes: int
    driver: Driver
    end: SelfEnd | None
    ttl_minutes: int | None = None  # an OS shutdown at the TTL (where that ends the billing)
    user: str = LOGIN_USER  # the login user the set-up and run execute as ('' : whoever runs boot.sh)
    cam_role: str | None = None
    idle_poll_seconds: int = 60
    rendezvous_wait_seconds: int = 1800  # several nodes: how long the run waits for its cluster.env
    metadata_url: str | None = None  # tests: a fake metadata service instead of Tencent's
    tencent_api: str | None = None  # tests: the fake CVM endpoint instead of cvm.tencentcloudapi.com


def boot_steps(spec: BootSpec) -> str:
    """What the boot script does, in order, for the launch's confirmation."""
    driver = {Driver.CHECK: "check the GPU driver", Driver.INSTALL: "install the GPU driver if missing",
              Driver.SKIP: None, None: "the GPU driver (checked, or installed where the image lacks it)"}[spec.driver]
    steps = [driver, "the set-up" if spec.setup else None, "the run" if spec.run else None]
    watch = (f" (from the end of the set-up, an idle watcher: {_duration(spec.idle_seconds)})"
             if spec.idle_seconds else "")
    return ", then ".join(s for s in steps if s) + watch + f"; logs in {LOG_DIR} (`gpuplan logs ID`)"


def _duration(seconds: int) -> str:
    if seconds % 3600 == 0:
        return f"{seconds // 3600}h"
    return f"{seconds // 60}m" if seconds % 60 == 0 else f"{seconds}s"


def config_env(spec: BootSpec, cfg: BootConfig) -> str:
    values: dict[str, str | int | None] = {
        "GPUPLAN_LAUNCH": cfg.launch_id, "GPUPLAN_REGION": cfg.region, "GPUPLAN_NODES": cfg.nodes,
        "GPUPLAN_DRIVER": cfg.driver.value, "GPUPLAN_END": cfg.end.value if cfg.end else "",
        "GPUPLAN_USER": cfg.user, "GPUPLAN_TTL_MINUTES": cfg.ttl_minutes,
        "GPUPLAN_DOWN_WHEN": "done" if spec.down_when_done else "",
        "GPUPLAN_IDLE_SECONDS": spec.idle_seconds, "GPUPLAN_IDLE_BUSY_PERCENT": BUSY_PERCENT,
        "GPUPLAN_IDLE_POLL_SECONDS": cfg.idle_poll_seconds, "GPUPLAN_CAM_ROLE": cfg.cam_role,
        "GPUPLAN_RENDEZVOUS_WAIT": cfg.rendezvous_wait_seconds if cfg.nodes > 1 else None,
        "GPUPLAN_METADATA_URL": cfg.metadata_url, "GPUPLAN_TENCENT_API": cfg.tencent_api,
    }
    lines = [f"{k}={shlex.quote(str(v))}" for k, v in values.items() if v is not None and v != ""]
    # end_tencent.py reads its values from the environment
    exported = [k for k, v in values.items() if v is not None and v != ""]
    return "\n".join([*lines, f"export {' '.join(exported)}", ""])


def bundle(spec: BootSpec, cfg: BootConfig) -> dict[str, bytes]:
    """The files unpacked into the boot folder, by name."""
    here = resources.files(__package__)
    files = {name: here.joinpath(name).read_bytes() for name in _STATIC}
    if cfg.end is SelfEnd.TENCENT_ROLE:
        files["end_tencent.py"] = here.joinpath("end_tencent.py").read_bytes()
    files["config.env"] = config_env(spec, cfg).encode("utf-8")
    if spec.setup is not None:
        files["setup.sh"] = spec.setup.encode("utf-8")
    if spec.run is not None:
        files["run.sh"] = spec.run.encode("utf-8")
    return files


def _tar_gz(files: dict[str, bytes]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o700, 0
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), compresslevel=9, mtime=0)


def user_data(spec: BootSpec, cfg: BootConfig, *, boot_dir: str = BOOT_DIR, log_dir: str = LOG_DIR) -> str:
    """The user data script: unpack the bundle, start boot.sh in the background, return at once."""
    blob = base64.b64encode(_tar_gz(bundle(spec, cfg))).decode("ascii")
    d, log = shlex.quote(boot_dir), shlex.quote(log_dir)
    what = spec.policy and f"; ends itself {spec.policy}"
    return (
        "#!/bin/bash\n"
        f"# gpuplan launch {cfg.launch_id}: driver, set-up and run{what}. Logs: {log_dir}\n"
        "set -eu\n"
        f"umask 077\nmkdir -p {d} {log}\n"
        f"printf %s '{blob}' | base64 -d | tar -xz -C {d}\n"
        f"GPUPLAN_DIR={d} GPUPLAN_LOG={log} nohup setsid bash {d}/boot.sh >>{log}/boot.log 2>&1 </dev/null &\n"
    )


def read_script(value: str, flag: str) -> str:
    """``--setup``/``--run``: a file's text when the value names a file, else the value as one command."""
    from pathlib import Path

    try:
        is_file = Path(value).expanduser().is_file()
    except (OSError, ValueError, RuntimeError):  # a command too long to be a file name ("File name too long")
        is_file = False
    path = Path(value).expanduser() if is_file else Path()
    if is_file:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read {flag} {value}: {exc}", "give a readable UTF-8 shell script") from None
    else:
        if "\n" not in value and ("/" in value or value.endswith(".sh")) and " " not in value:
            raise InputError(f"{flag} {value}: no such file", "give an existing script, or a command in quotes")
        text = value
    if not text.strip():
        raise InputError(f"{flag} is empty", "give a script or a command")
    if "\x00" in text:
        raise InputError(f"{flag} holds a NUL byte", "give a text shell script")
    return text if text.endswith("\n") else text + "\n"

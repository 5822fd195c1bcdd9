"""A sandboxed machine for the boot scripts: fake nvidia-smi, shutdown, apt and ubuntu-drivers on its PATH.

The commands record what they were asked in ``calls``; files in the sandbox steer them: ``driver``
(nvidia-smi finds a driver), ``util`` (what utilization.gpu reads), ``installed`` (ubuntu-drivers ran).
"""

from __future__ import annotations

import base64
import io
import os
import re
import signal
import subprocess
import tarfile
import time
from collections.abc import Callable
from pathlib import Path

from launch.boot import BootConfig, BootSpec, user_data

FAKE_NVIDIA_SMI = (r"""#!/bin/bash
[ -f "$SANDBOX/driver" ] || { echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA """
                   r"""driver."; exit 9; }
case "$*" in
  -L) printf 'GPU 0: Tesla V100-SXM2-32GB (UUID: GPU-a)\nGPU 1: Tesla V100-SXM2-32GB (UUID: GPU-b)\n' ;;
  *driver_version*) printf '535.183.01\n535.183.01\n' ;;
  *utilization.gpu*) cat "$SANDBOX/util" ;;
  *) echo "| NVIDIA-SMI 535.183.01    Driver Version: 535.183.01    CUDA Version: 12.2 |" ;;
esac
""")
RECORDER = '#!/bin/bash\necho "$(basename "$0") $*" >> "$SANDBOX/calls"\n'
# the driver install path: ubuntu-drivers "installs", modprobe loads it (nvidia-smi then answers)
FAKE_DPKG_QUERY = '#!/bin/bash\n[ -f "$SANDBOX/installed" ] && echo nvidia-driver-535-server\n'
FAKE_UBUNTU_DRIVERS = '#!/bin/bash\necho "ubuntu-drivers $*" >> "$SANDBOX/calls"\ntouch "$SANDBOX/installed"\n'
FAKE_MODPROBE = ('#!/bin/bash\necho "modprobe $*" >> "$SANDBOX/calls"\n'
                 '[ -f "$SANDBOX/installed" ] && touch "$SANDBOX/driver"\n')


class Machine:
    """A sandboxed 'machine': its boot and log folders, and what its fake commands were asked."""

    def __init__(self, root: Path, *, driver: bool = True, util: str = "0\n0\n") -> None:
        self.root = root
        self.bin, self.boot, self.log, self.home = (root / n for n in ("bin", "boot", "log", "home"))
        for d in (self.bin, self.boot, self.log, self.home):
            d.mkdir(parents=True)
        tools = {"nvidia-smi": FAKE_NVIDIA_SMI, "shutdown": RECORDER, "apt-get": RECORDER,
                 "dpkg-query": FAKE_DPKG_QUERY, "ubuntu-drivers": FAKE_UBUNTU_DRIVERS, "modprobe": FAKE_MODPROBE}
        for name, text in tools.items():
            (self.bin / name).write_text(text)
            (self.bin / name).chmod(0o755)
        if driver:
            (root / "driver").touch()
        self.util(util)

    def util(self, text: str) -> None:
        (self.root / "util").write_text(text)

    def boot_with(self, spec: BootSpec, cfg: BootConfig, **env_extra: str) -> None:
        """Run the user data a launch would send, as the machine's first boot does."""
        self.run_user_data(user_data(spec, cfg, boot_dir=str(self.boot), log_dir=str(self.log)), **env_extra)

    def run_user_data(self, script: str, **env_extra: str) -> None:
        """Run user data as sent to a cloud, its folders moved into the sandbox."""
        from launch.boot import BOOT_DIR, LOG_DIR

        script = script.replace(BOOT_DIR, str(self.boot)).replace(LOG_DIR, str(self.log))
        env = {"PATH": f"{self.bin}:{os.environ['PATH']}", "SANDBOX": str(self.root), "HOME": str(self.home),
               **env_extra}
        _ROOTS.append(self.root)  # what the boot leaves running ends with the test (stop_all)
        done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr

    @property
    def calls(self) -> list[str]:
        f = self.root / "calls"
        return f.read_text().splitlines() if f.exists() else []

    def state(self) -> str:
        f = self.log / "state"
        return f.read_text() if f.exists() else ""

    def wait_for(self, what: Callable[[], bool], timeout: float = 20) -> None:
        end = time.monotonic() + timeout
        while not what():
            if time.monotonic() > end:
                raise AssertionError(f"timed out; state:\n{self.state()}\ncalls: {self.calls}")
            time.sleep(0.05)


_ROOTS: list[Path] = []  # every sandbox a boot ran in


def stop_all() -> None:
    """End what sandboxed boots left running, as a real machine's processes end with it (tests/conftest.py
    calls it after each test): the boot detaches itself (setsid, as cloud-init runs it) and its idle watcher
    sleeps for minutes, so they are found by the sandbox path in their command lines."""
    roots = [str(r) for r in _ROOTS]
    _ROOTS.clear()
    if not roots or not os.path.isdir("/proc"):
        return
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue  # ended meanwhile, or not ours to read
        if any(root in cmdline for root in roots):
            try:
                os.kill(int(entry), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def unpack_user_data(user_data_b64: str) -> dict[str, str]:
    """The files gpuplan's user data unpacks on the machine, by name."""
    script = base64.b64decode(user_data_b64).decode()
    (blob,) = re.findall(r"printf %s '([A-Za-z0-9+/=]+)' \| base64 -d \| tar -xz", script)
    with tarfile.open(fileobj=io.BytesIO(base64.b64decode(blob)), mode="r:gz") as tar:
        return {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers()}  # type: ignore[union-attr]

"""The boot scripts, run for real in a sandbox: fake nvidia-smi, shutdown and apt, the fake CVM as the cloud.

Each test renders the user data a launch sends and runs it with bash, with the boot and log
folders in a temporary directory; the fake commands record what the machine would have done.
"""

from __future__ import annotations

import shlex
import subprocess
import time
from pathlib import Path

import pytest

from launch.boot import BootConfig, BootSpec, Driver, config_env, read_script, user_data
from pricing.errors import InputError
from providers.capabilities import SelfEnd
from tests.fakes.machine import Machine


def cfg(**kw: object) -> BootConfig:
    base: dict[str, object] = {"launch_id": "gp-0123456789", "region": "ap-guangzhou", "nodes": 1,
                               "driver": Driver.CHECK, "end": SelfEnd.SHUTDOWN, "user": "", "idle_poll_seconds": 1}
    return BootConfig(**{**base, **kw})  # type: ignore[arg-type]


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    return Machine(tmp_path / "m")


def test_the_run_executes_after_the_setup_and_the_machine_ends_when_it_exits(machine: Machine) -> None:
    spec = BootSpec(setup="echo set-up ran > setup-marker\n",
                    run='echo "rank of $GPUPLAN_NODES, $GPUPLAN_GPUS GPUs"; pwd\n',
                    down_when_done=True)
    machine.boot_with(spec, cfg())
    machine.wait_for(lambda: "shutdown -h now" in machine.calls)
    state = machine.state()
    assert "driver: NVIDIA driver 535.183.01, CUDA 12.2 (the newest the driver runs), 2 GPU(s)" in state
    assert state.index("setup: exited 0") < state.index("run: started") < state.index("run: exited 0")
    assert "ending: the run exited 0" in state
    assert (machine.home / "setup-marker").read_text() == "set-up ran\n"  # in the login user's home
    assert (machine.log / "run.log").read_text().splitlines() == ["rank of 1, 2 GPUs", str(machine.home)]


def test_without_down_when_done_the_machine_keeps_running_after_the_run(machine: Machine) -> None:
    machine.boot_with(BootSpec(run="exit 3\n"), cfg())
    machine.wait_for(lambda: "run: exited 3" in machine.state())
    time.sleep(0.3)
    assert not any(c.startswith("shutdown") for c in machine.calls)


def test_a_failing_run_still_ends_the_machine_and_says_its_exit_code(machine: Machine) -> None:
    machine.boot_with(BootSpec(run="echo oops >&2; exit 3\n", down_when_done=True), cfg())
    machine.wait_for(lambda: "shutdown -h now" in machine.calls)
    assert "ending: the run exited 3" in machine.state()
    assert (machine.log / "run.log").read_text() == "oops\n"


def test_a_failed_setup_skips_the_run_and_ends_a_done_launch(machine: Machine) -> None:
    machine.boot_with(BootSpec(setup="exit 7\n", run="touch ran\n", down_when_done=True), cfg())
    machine.wait_for(lambda: "shutdown -h now" in machine.calls)
    state = machine.state()
    assert "run: not started: the set-up exited 7" in state
    assert not (machine.home / "ran").exists()


def test_the_ttl_backstop_is_a_timed_shutdown_where_the_cloud_wants_one(machine: Machine) -> None:
    machine.boot_with(BootSpec(run="true\n"), cfg(ttl_minutes=360))
    machine.wait_for(lambda: "run: exited 0" in machine.state())
    assert "shutdown -h +360" in machine.calls


def test_the_idle_watcher_ends_a_machine_whose_gpus_sit_idle(machine: Machine) -> None:
    machine.util("0\n3\n")  # at or under 5%: idle
    machine.boot_with(BootSpec(idle_seconds=2), cfg())
    machine.wait_for(lambda: "shutdown -h now" in machine.calls)
    assert "ending: the GPUs were idle for 2s" in machine.state()


def test_the_idle_watcher_leaves_busy_gpus_alone_and_fires_once_they_go_idle(machine: Machine) -> None:
    machine.util("0\n87\n")  # one GPU busy is enough
    machine.boot_with(BootSpec(idle_seconds=2), cfg())
    machine.wait_for(lambda: "idle watcher" in machine.state())
    time.sleep(4)
    assert not any(c.startswith("shutdown") for c in machine.calls)
    machine.util("0\n0\n")
    machine.wait_for(lambda: "shutdown -h now" in machine.calls)


def test_a_missing_driver_is_said_and_the_run_does_not_start(tmp_path: Path) -> None:
    m = Machine(tmp_path / "m", driver=False)
    m.boot_with(BootSpec(run="touch ran\n"), cfg())
    m.wait_for(lambda: "run: not started" in m.state())
    assert "driver: nvidia-smi finds no NVIDIA driver in this image" in m.state()
    assert not (m.home / "ran").exists()


def test_driver_install_uses_ubuntu_drivers_then_runs(tmp_path: Path) -> None:
    m = Machine(tmp_path / "m", driver=False)
    m.boot_with(BootSpec(run="echo trained\n"), cfg(driver=Driver.INSTALL))
    m.wait_for(lambda: "run: exited 0" in m.state())
    assert "ubuntu-drivers install --gpgpu" in m.calls
    assert any(c.startswith("apt-get install -y -q nvidia-utils-535-server") for c in m.calls)
    assert "driver: installed: NVIDIA driver 535.183.01" in m.state()


def test_a_machine_with_no_way_to_end_itself_says_so_and_stays(machine: Machine) -> None:
    machine.boot_with(BootSpec(run="true\n", down_when_done=True), cfg(end=None))
    machine.wait_for(lambda: "has no way to end itself" in machine.state())
    assert not any(c.startswith("shutdown") for c in machine.calls)


@pytest.mark.parametrize("hostile", ["x'; touch pwned; '", "$(touch pwned)", "`touch pwned`", "a\nb; touch pwned",
                                     "--help; touch pwned #"])
def test_no_value_reaches_a_shell_as_code(tmp_path: Path, hostile: str) -> None:
    """Every value lands in config.env as data: sourcing it runs nothing and gives the value back."""
    text = config_env(BootSpec(), cfg(launch_id=hostile, region=hostile, user=hostile))
    env_file = tmp_path / "config.env"
    env_file.write_text(text)
    out = subprocess.run(["bash", "-c", f". {shlex.quote(str(env_file))}; printf %s \"$GPUPLAN_REGION\""],
                         cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout == hostile
    assert not (tmp_path / "pwned").exists()


def test_the_user_scripts_travel_as_files_not_as_text_of_the_user_data() -> None:
    script = user_data(BootSpec(run="echo $(whoami) 'quoted' \"double\"\n"), cfg())
    assert "whoami" not in script and "quoted" not in script
    assert len(script.encode()) < 8 * 1024  # with room for the user's scripts in a 16 KB limit


def test_down_when_done_needs_a_run() -> None:
    with pytest.raises(InputError, match="--down-when done needs --run"):
        BootSpec(down_when_done=True)


def test_a_run_value_is_a_file_when_one_exists_else_a_command(tmp_path: Path) -> None:
    f = tmp_path / "train.sh"
    f.write_text("torchrun train.py")
    assert read_script(str(f), "--run") == "torchrun train.py\n"
    assert read_script("python train.py --epochs 3", "--run") == "python train.py --epochs 3\n"
    with pytest.raises(InputError, match="no such file"):
        read_script(str(tmp_path / "missing.sh"), "--run")

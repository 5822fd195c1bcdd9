"""`--offload` through the CLI: fit's JSON and text, help on the three workload commands, and bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from gpuplan.cli import app

runner = CliRunner()


def test_fit_offload_cpu_json_and_text() -> None:
    args = ["fit", "--model", "llama-2-7b", "--gpu", "rtx-4090", "--offload", "cpu"]
    r = runner.invoke(app, [*args, "--json"])
    assert r.exit_code == 0, r.output
    e = json.loads(r.stdout)["gpus"][0]
    # 6.738e9 params x (12 B optimizer + 4 B fp32 gradient) = 100.41 GiB on the host; 5e8 x 2 B bucket on the GPU
    assert e["fits"] and e["layout"]["offload"] is True
    assert e["memory_gb"]["host_offloaded"] == pytest.approx(100.41, abs=0.01)
    assert e["memory_gb"]["optimizer"] == 0 and e["memory_gb"]["gradients"] == pytest.approx(0.931, abs=1e-3)
    assert "100.4 GiB of host RAM" in e["offload_note"]
    text = runner.invoke(app, [*args, "--wide"])
    assert text.exit_code == 0, text.output
    flat = " ".join(text.stdout.split())
    assert "needs 100.4 GiB of host RAM" in flat and "CPU offload" in flat


def test_fit_offload_none_says_it_does_not_fit() -> None:
    r = runner.invoke(app, ["fit", "--model", "llama-2-7b", "--gpu", "rtx-4090", "--offload", "none", "--json"])
    assert r.exit_code == 0, r.output
    e = json.loads(r.stdout)["gpus"][0]
    assert not e["fits"] and e["memory_gb"]["host_offloaded"] == 0


@pytest.mark.parametrize("command", ["fit", "estimate", "plan"])
def test_help_names_offload(command: str) -> None:
    r = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert "--offload" in r.stdout


def test_bad_offload_is_one_clear_error() -> None:
    code = "import sys; from gpuplan.cli import main; sys.argv = ['gpuplan', *sys.argv[1:]]; main()"
    for args, words in ((["fit", "--model", "llama-2-7b", "--offload", "foo"], "auto, none, cpu"),
                        (["fit", "--model", "llama-2-7b", "--method", "lora", "--offload", "cpu"], "LoRA")):
        r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)
        # exit code 2, as for other bad enum values (--optimizer lion in test_workload.py)
        assert r.returncode == 2, r.stderr
        assert "Traceback" not in r.stderr + r.stdout and "error:" in r.stderr and words in r.stderr


def test_one_gpu_offload_is_described_as_one_gpu() -> None:
    # a 7B full fine-tune on one RTX 4090 runs with the optimizer on the CPU: its note speaks of the CPU step, not of
    # scaling inside and across nodes that one GPU does not have
    r = runner.invoke(app, ["estimate", "--model", "llama-2-7b", "--gpu", "rtx-4090", "--tokens", "1e9", "--json"])
    assert r.exit_code == 0, r.output
    note = next(n for n in json.loads(r.stdout)["notes"] if "optimizer on the CPU" in n)
    assert note.startswith("one GPU with the optimizer on the CPU") and "across nodes" not in note

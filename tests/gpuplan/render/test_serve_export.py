"""`plan --serve --export`: services that SkyPilot's and dstack's own code accept, running the plan's layout."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
import yaml

from tests.gpuplan.render.test_export import Run, dstack_parse, sky_validate

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::PendingDeprecationWarning"),
              pytest.mark.filterwarnings("ignore::UserWarning")]
SERVE = ("plan", "--serve", "llama-3-70b", "--rate", "20", "--prompt-tokens", "1000", "--output-tokens", "300",
         "--ttft", "1s", "--precision", "fp8", "--kv-precision", "fp8")


def _plan(gpuplan: Run, *extra: str) -> dict:
    code, out, err = gpuplan(*SERVE, *extra, "--json")
    assert code == 0, err
    return json.loads(out)


def _first_cloud(plan: dict) -> dict:
    from providers.registry import engine_runs

    return next(o for o in plan["options"]
                if o["provider"] != "local" and engine_runs("skypilot", o["provider"])
                and o["billing"] in ("hourly", "spot"))


def test_skypilot_service_loads_in_skyserve_with_the_plans_fleet_and_layout(gpuplan: Run, tmp_path: Path) -> None:
    from sky.serve.service_spec import SkyServiceSpec

    path = tmp_path / "service.yaml"
    code, _, err = gpuplan(*SERVE, "--export", "skypilot", str(path))
    assert code == 0, err
    task = sky_validate(path)
    spec = SkyServiceSpec.from_yaml_config(task["service"])
    win = _first_cloud(_plan(gpuplan))
    assert spec.min_replicas == win["instances"]
    assert (spec.max_replicas or spec.min_replicas) == win["instances_if_slow"]
    assert task["resources"]["instance_type"] == win["offer"] and task["resources"]["use_spot"] is False
    run = shlex.split(task["run"])
    lay = win["layout"]
    assert run[run.index("--tensor-parallel-size") + 1] == str(lay["tensor_parallel"])
    assert run[run.index("--max-num-seqs") + 1] == str(lay["batch_per_replica"])
    assert "--quantization" in run and "--kv-cache-dtype" in run
    plan = _plan(gpuplan)
    rank = plan["options"].index(win) + 1
    first = plan["options"][0]
    assert rank > 1 and f"The plan's #1 ({first['provider']} {first['offer']} {first['billing']})" in path.read_text()
    assert f"this is its #{rank}." in path.read_text()


def test_skypilot_task_with_the_service_passes_skypilots_task_checks(gpuplan: Run, tmp_path: Path) -> None:
    import sky

    path = tmp_path / "service.yaml"
    assert gpuplan(*SERVE, "--export", "skypilot", str(path))[0] == 0
    task = sky.Task.from_yaml_config(yaml.safe_load(path.read_text(encoding="utf-8")))
    assert task.service is not None and task.name.startswith("llama-3-70b-serve")


def test_dstack_service_parses_in_dstack_with_replicas_and_autoscaling(gpuplan: Run, tmp_path: Path) -> None:
    path = tmp_path / ".dstack.yml"
    code, _, err = gpuplan(*SERVE, "--export", "dstack", str(path))
    assert code == 0, err
    conf = dstack_parse(path)
    win = _first_cloud(_plan(gpuplan))
    assert conf.type == "service" and conf.port.container_port == 8000
    assert conf.replicas.min == win["instances"] and conf.replicas.max == win["instances_if_slow"]
    per_instance_rps = win["capacity_output_tokens_per_s"] / win["instances"] / 300
    assert conf.scaling.target == pytest.approx(per_instance_rps, abs=0.01)
    assert conf.model.name == "meta-llama/Meta-Llama-3-70B-Instruct"


def test_a_plan_with_no_fleet_the_engine_runs_writes_nothing(gpuplan: Run, tmp_path: Path) -> None:
    path = tmp_path / "service.yaml"
    code, _, err = gpuplan(*SERVE, "--provider", "tencent,local", "--export", "skypilot", str(path))
    assert code == 2 and "nothing was written" in err and not path.exists()


def test_both_services_get_a_disk_that_holds_the_checkpoint_and_the_gated_models_token(
        gpuplan: Run, tmp_path: Path) -> None:
    """A 70B checkpoint is 141 GB in bf16 (fp8 is quantised on load from it): dstack's default 100 GB disk
    cannot hold it, and Meta's repositories are gated, so the server needs HF_TOKEN."""
    import sky

    sky_path, dstack_path = tmp_path / "service.yaml", tmp_path / ".dstack.yml"
    assert gpuplan(*SERVE, "--export", "skypilot", str(sky_path))[0] == 0
    assert gpuplan(*SERVE, "--export", "dstack", str(dstack_path))[0] == 0
    checkpoint_gb = 70.55e9 * 2 / 1e9
    task = sky.Task.from_yaml_config(sky_validate(sky_path), secrets_overrides=[("HF_TOKEN", "hf_test")])
    (resources,) = task.resources
    assert resources.disk_size > checkpoint_gb + 20
    assert "HF_TOKEN" in task.secrets
    conf = dstack_parse(dstack_path)
    assert conf.resources.disk.size.min > checkpoint_gb + 20
    assert "HF_TOKEN" in conf.env


def test_an_ungated_model_asks_for_no_token_and_a_small_one_for_a_small_disk(gpuplan: Run, tmp_path: Path) -> None:
    sky_path, dstack_path = tmp_path / "service.yaml", tmp_path / ".dstack.yml"
    args = ("plan", "--serve", "gpt-j-6b", "--rate", "2", "--provider", "aws")
    assert gpuplan(*args, "--export", "skypilot", str(sky_path))[0] == 0
    assert gpuplan(*args, "--export", "dstack", str(dstack_path))[0] == 0
    task = sky_validate(sky_path)
    assert "secrets" not in task and task["resources"]["disk_size"] < 100
    assert "HF_TOKEN" not in dstack_parse(dstack_path).env


@pytest.mark.parametrize(("engine", "server", "tp_flag", "batch_flag", "kv"), [
    ("vllm", ["vllm", "serve"], "--tensor-parallel-size", "--max-num-seqs", ["--kv-cache-dtype", "fp8"]),
    ("sglang", ["python", "-m", "sglang.launch_server"], "--tp-size", "--max-running-requests",
     ["--kv-cache-dtype", "fp8_e4m3"]),
    ("trtllm", ["trtllm-serve", "serve"], "--tp_size", "--max_batch_size", ["--extra_llm_api_options"]),
])
def test_the_service_runs_the_engine_the_plan_assumed_with_its_layout(
        gpuplan: Run, tmp_path: Path, engine: str, server: list[str], tp_flag: str, batch_flag: str,
        kv: list[str]) -> None:
    sky_path, dstack_path = tmp_path / "service.yaml", tmp_path / ".dstack.yml"
    assert gpuplan(*SERVE, "--engine", engine, "--export", "skypilot", str(sky_path))[0] == 0
    assert gpuplan(*SERVE, "--engine", engine, "--export", "dstack", str(dstack_path))[0] == 0
    plan = _plan(gpuplan, "--engine", engine)
    assert plan["workload"]["engine"] == engine
    lay = _first_cloud(plan)["layout"]
    task = sky_validate(sky_path)
    run = shlex.split(task["run"].split("&&")[-1])
    assert run[:len(server)] == server and engine.replace("trtllm", "tensorrt") in task["setup"].replace("_", "")
    assert run[run.index(tp_flag) + 1] == str(lay["tensor_parallel"])
    assert run[run.index(batch_flag) + 1] == str(lay["batch_per_replica"])
    assert all(k in run for k in kv)
    commands = dstack_parse(dstack_path).commands
    assert commands[-1].split("&&")[-1].strip().startswith(" ".join(server))


def test_an_engine_with_no_published_results_says_whose_speeds_it_borrows(gpuplan: Run) -> None:
    plan = _plan(gpuplan, "--engine", "sglang")
    assert any("no published SGLang result" in n and "vLLM" in n for n in plan["notes"])
    trt, vllm = _plan(gpuplan, "--engine", "trtllm"), _plan(gpuplan, "--engine", "vllm")
    assert trt["options"][0]["capacity_output_tokens_per_s"] != vllm["options"][0]["capacity_output_tokens_per_s"]

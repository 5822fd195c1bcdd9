"""Exported SkyPilot and dstack tasks, checked by the engines' own code (installed as test extras).

Not a schema copied into this project: SkyPilot's task schema (sky.utils.schemas) through
its validator, and dstack's own run-configuration parser.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.conftest import CliResult

Run = Callable[..., CliResult]
# SkyPilot's and dstack's own imports warn about their dependencies (SQLAlchemy 2.0 moves,
# pydantic); the project turns warnings into errors, but those are not ours to fix.
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::PendingDeprecationWarning"),
              pytest.mark.filterwarnings("ignore::UserWarning")]
SEVENTY_B = ("plan", "--model", "llama-2-70b", "--tokens", "2e11", "--deadline", "30d")
# the cluster exports below check an AWS winner (p5.48xlarge); since issue 41's overlap slowdown GCP's a3 can win the
# open market, so they ask AWS's offers alone
SEVENTY_B_AWS = (*SEVENTY_B, "--provider", "aws")


def sky_validate(path: Path) -> dict:  # type: ignore[type-arg]
    from sky.utils import common_utils, schemas

    task = yaml.safe_load(path.read_text(encoding="utf-8"))
    common_utils.validate_schema(task, schemas.get_task_schema(), "Invalid task YAML: ")
    return task  # type: ignore[no-any-return]


def dstack_parse(path: Path):  # type: ignore[no-untyped-def]
    from dstack._internal.core.models.configurations import parse_run_configuration

    return parse_run_configuration(yaml.safe_load(path.read_text(encoding="utf-8")))


def sky_launchable(path: Path, catalog: Path, monkeypatch: pytest.MonkeyPatch, win: dict,  # type: ignore[type-arg]
                   zone_names: dict[str, str]) -> list:  # type: ignore[type-arg]
    """The task through SkyPilot's own ``Task.validate()`` (name, then each ``Resources.validate()``), offline.

    SkyPilot's catalog is seeded in ``catalog``: an ``aws/vms.csv`` offering the plan winner's instance type in
    its region's zones (by zone ID, as SkyPilot's hosted catalog has them) and the zone mapping ``zone_names``
    of a made-up account, so SkyPilot itself maps the zone IDs to that account's zone names, as it does once
    it knows the account.
    """
    from gpuplan.render.export import SKY_ACCELERATORS

    import sky
    from sky.catalog import aws_catalog, common
    from sky.clouds import aws
    from sky.utils import accelerator_registry

    identity = "arn:aws:iam::123456789012:user/gpuplan-test"
    account = hashlib.md5(identity.encode(), usedforsecurity=False).hexdigest()[:8]  # SkyPilot's mapping file key
    acc, count = SKY_ACCELERATORS[win["gpu"]], win["gpu_count"]
    (catalog / "aws").mkdir(parents=True)
    (catalog / "common").mkdir()
    (catalog / "aws" / "vms.csv").write_text(
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,"
        "AvailabilityZone,Arch\n"
        + "".join(f"{win['offer']},{acc},{count:g},192,2048,,98.32,30.0,{win['region']},{zid},x86_64\n"
                  for zid in zone_names), encoding="utf-8")
    (catalog / "aws" / f"az_mappings-{account}.csv").write_text(
        "AvailabilityZone,AvailabilityZoneName\n" + "".join(f"{i},{n}\n" for i, n in zone_names.items()),
        encoding="utf-8")
    (catalog / "common" / "accelerators.csv").write_text(f"AcceleratorName,Clouds\n{acc},\"['AWS']\"\n",
                                                          encoding="utf-8")
    monkeypatch.setattr(common, "_ABSOLUTE_VERSIONED_CATALOG_DIR", str(catalog))
    monkeypatch.setattr(aws_catalog, "_default_df", common.read_catalog("aws/vms.csv"))
    monkeypatch.setattr(aws_catalog, "_user_df", None)
    monkeypatch.setattr(accelerator_registry, "_accelerator_df", common.read_catalog("common/accelerators.csv"))
    monkeypatch.setattr(aws.AWS, "get_active_user_identity", classmethod(lambda cls: [identity, "123456789012"]))
    task = sky.Task.from_yaml(str(path))
    task.validate(skip_file_mounts=True, skip_workdir=True)
    return list(task.resources)


def sky_validated(path: Path, catalog: Path, monkeypatch: pytest.MonkeyPatch, cloud: str, vms: str,
                  accelerators: tuple[str, ...]) -> list:  # type: ignore[type-arg]
    """The task through SkyPilot's own ``Task.validate()`` over its catalog of ``cloud`` ("gcp", "azure") seeded in
    ``catalog`` with ``vms`` (lines in SkyPilot's vms.csv shape) and the accelerator names SkyPilot must know."""
    import importlib

    import sky
    from sky.catalog import common
    from sky.utils import accelerator_registry

    (catalog / cloud).mkdir(parents=True)
    (catalog / "common").mkdir()
    (catalog / cloud / "vms.csv").write_text(vms, encoding="utf-8")
    label = {"gcp": "GCP", "azure": "Azure"}[cloud]
    (catalog / "common" / "accelerators.csv").write_text(
        "AcceleratorName,Clouds\n" + "".join(f"{n},\"['{label}']\"\n" for n in accelerators), encoding="utf-8")
    monkeypatch.setattr(common, "_ABSOLUTE_VERSIONED_CATALOG_DIR", str(catalog))
    monkeypatch.setattr(importlib.import_module(f"sky.catalog.{cloud}_catalog"), "_df",
                        common.read_catalog(f"{cloud}/vms.csv"))
    monkeypatch.setattr(accelerator_registry, "_accelerator_df", common.read_catalog("common/accelerators.csv"))
    task = sky.Task.from_yaml(str(path))
    task.validate(skip_file_mounts=True, skip_workdir=True)
    return list(task.resources)


def dstack_name_ok(name: str) -> None:
    """dstack's own run-name check (what ``dstack apply`` refuses: ^[a-z][a-z0-9-]{1,40}$)."""
    from dstack._internal.core.services import validate_dstack_resource_name

    validate_dstack_resource_name(name)


def test_the_70b_case_is_a_cluster_with_a_scaling_note(gpuplan: Run) -> None:
    code, out, err = gpuplan(*SEVENTY_B, "--json")
    assert code == 0, err
    win = json.loads(out)["cheapest"]
    assert win["nodes"] > 1 and win["gpus_total"] == win["nodes"] * win["gpu_count"]
    assert any("scaling over" in n and "Gbps" in n for n in win["notes"])
    assert any("deadline needs" in n for n in win["notes"])


def test_skypilot_export_of_a_cluster_loads_in_skypilot(gpuplan: Run, tmp_path: Path) -> None:
    path = tmp_path / "task.yaml"
    code, out, err = gpuplan(*SEVENTY_B_AWS, "--export", "skypilot", str(path), "--json")
    assert code == 0, err
    win = json.loads(out)["cheapest"]
    task = sky_validate(path)
    assert task["num_nodes"] == win["nodes"]
    assert task["resources"]["instance_type"] == win["offer"] and task["resources"]["cloud"] == "aws"
    assert task["resources"]["use_spot"] is (win["billing"] == "spot")
    assert "$SKYPILOT_NODE_RANK" in task["run"] and "torchrun" in task["run"]
    assert "Estimated cost" in path.read_text(encoding="utf-8").splitlines()[1]


def test_skypilot_export_passes_skypilots_resource_validation_for_an_account(
        gpuplan: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "task.yaml"
    code, out, err = gpuplan(*SEVENTY_B_AWS, "--export", "skypilot", str(path), "--json")
    assert code == 0, err
    win = json.loads(out)["cheapest"]
    assert win["zone"], "the spot winner is priced per zone: the case this test is about"
    region = win["region"]
    # An account whose zone names do not follow the zone IDs' order (as AWS assigns them).
    ids = sorted({win["zone"], f"{win['zone'][:-1]}1", f"{win['zone'][:-1]}3", f"{win['zone'][:-1]}4"})
    names = dict(zip(ids, [f"{region}{c}" for c in "dbac"], strict=False))
    [res] = sky_launchable(path, tmp_path / "sky-catalog", monkeypatch, win, names)
    assert (res.region, res.instance_type, res.use_spot) == (region, win["offer"], win["billing"] == "spot")
    assert res.zone is None  # zone names are per account: gpuplan cannot name the priced zone
    assert res.get_cost(3600) > 0  # the seeded catalog prices the instance in that region
    # The seeded catalog is the account's: it takes the priced zone by this account's name, not by its ID.
    import sky

    pinned = sky.Resources(infra=f"aws/{region}/{names[win['zone']]}", instance_type=win["offer"])
    pinned.validate()
    assert pinned.zone == names[win["zone"]]
    with pytest.raises(ValueError, match="Invalid zone"):
        sky.Resources(infra=f"aws/{region}/{win['zone']}", instance_type=win["offer"]).validate()
    text = path.read_text(encoding="utf-8")
    assert win["zone"] in text and f"--zone-ids {win['zone']}" in text  # the comment says which zone was priced


def test_export_names_pass_dstacks_own_check(gpuplan: Run, tmp_path: Path) -> None:
    examples = Path(__file__).resolve().parents[3] / "examples"
    plans = {
        "gpu-hours": ("plan", "--gpu-hours", "200"),
        "70b": SEVENTY_B,
        "qlora": ("plan", "--workload", str(examples / "llama2-13b-qlora.toml")),
        "moe": ("plan", "--workload", str(examples / "mixtral-pretrain.toml")),
        "image": ("plan", "--workload", str(examples / "resnet50-imagenet.toml")),
        "long": ("plan", "--model", "llama-4-maverick", "--tokens", "1.234e12", "--method", "qlora",
                 "--lora-rank", "128", "--precision", "fp8"),
    }
    names = {}
    for key, args in plans.items():
        dst, sky = tmp_path / f"{key}.yml", tmp_path / f"{key}.yaml"
        code, _, err = gpuplan(*args, "--provider", "aws", "--export", "dstack", str(dst))
        assert code == 0, err
        assert gpuplan(*args, "--provider", "aws", "--export", "skypilot", str(sky))[0] == 0
        name = dstack_parse(dst).name
        assert name == sky_validate(sky)["name"]
        dstack_name_ok(name)
        names[key] = name
    assert len(set(names.values())) == len(names)
    assert names["70b"].startswith("llama-2-70b-") and names["70b"].endswith("-bf16")
    assert "qlora-r64" in names["qlora"] and names["qlora"].startswith("llama-2-13b-")
    assert names["long"].startswith("llama-4-maverick-qlora-r128")
    assert "200-gpu-hours" in names["gpu-hours"] and names["image"].startswith("resnet50-")


def test_dstack_export_of_a_cluster_loads_in_dstack(gpuplan: Run, tmp_path: Path) -> None:
    path = tmp_path / ".dstack.yml"
    code, out, err = gpuplan(*SEVENTY_B_AWS, "--export", "dstack", str(path), "--json")
    assert code == 0, err
    win = json.loads(out)["cheapest"]
    conf = dstack_parse(path)
    assert conf.nodes == win["nodes"]
    assert conf.resources.gpu.count.min == win["gpu_count"]
    assert [b.value for b in conf.backends] == ["aws"] and conf.regions == [win["region"]]
    assert conf.spot_policy.value == ("spot" if win["billing"] == "spot" else "on-demand")


def test_a_single_node_export_loads_too(gpuplan: Run, tmp_path: Path) -> None:
    sky, dst = tmp_path / "a.yaml", tmp_path / "b.yml"
    assert gpuplan("plan", "--gpu-hours", "200", "--export", "skypilot", str(sky))[0] == 0
    assert gpuplan("plan", "--gpu-hours", "200", "--export", "dstack", str(dst))[0] == 0
    assert sky_validate(sky)["num_nodes"] == 1
    assert dstack_parse(dst).nodes == 1


@pytest.mark.parametrize(("args", "words"), [
    (("--nodes", "0"), "--nodes must be between 1"),
    (("--max-nodes", "-1"), "--max-nodes must be between 1"),
    (("--export", "nosuchengine", "x.yaml"), "unknown --export engine"),
    (("--export", "skypilot", "/nonexistent-folder/x.yaml"), "does not exist"),
    (("--provider", "tencent", "--export", "skypilot", "PLACEHOLDER"), "skypilot does not support tencent"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(gpuplan: Run, tmp_path: Path, args: tuple[str, ...],
                                                         words: str) -> None:
    args = tuple(str(tmp_path / "t.yaml") if a == "PLACEHOLDER" else a for a in args)
    code, out, err = gpuplan("plan", "--gpu-hours", "200", *args)
    assert code == 2, err
    assert words in err and "Traceback" not in err
    assert not (tmp_path / "t.yaml").exists()
    if "tencent" in words:
        assert "gpuplan launch --from-plan --count 1" in err


def test_pinned_nodes_plan_that_many(gpuplan: Run) -> None:
    code, out, err = gpuplan("plan", "--gpu-hours", "2000", "--provider", "aws", "--gpu", "h100", "--nodes", "2",
                             "--json")
    assert code == 0, err
    assert {o["nodes"] for o in json.loads(out)["options"]} == {2}


@pytest.mark.parametrize("facts", [
    ("llama-2-70b", "200b-tokens", "bf16"),
    ("a" * 60, "qlora-r64", "1t-tokens", "bf16"),  # a first fact too long on its own
    ("My Very Long Custom Model Name (v2.1)", "lora-r16", "300b-tokens", "fp8"),
    ("7b-model", "1b-tokens", "bf16"),  # would start with a digit
    ("x",), ("",), ("--", "***"),
])
def test_task_names_fit_dstacks_rule_whatever_the_facts(facts: tuple[str, ...]) -> None:
    from sky import task as sky_task

    from gpuplan.render.export import task_name

    name = task_name(facts)
    dstack_name_ok(name)
    assert sky_task._is_valid_name(name)  # SkyPilot's own task-name rule takes it too
    assert task_name(facts) == name  # the same plan, the same name


def test_a_shortened_name_keeps_the_model_and_a_fingerprint_of_what_it_dropped() -> None:
    from gpuplan.render.export import task_name

    a = task_name(("llama-4-maverick", "qlora-r128", "1p23t-tokens", "fp8"))
    b = task_name(("llama-4-maverick", "qlora-r128", "2t-tokens", "fp8"))
    assert a.startswith("llama-4-maverick-qlora-r128-") and a != b
    assert task_name(("llama-2-70b", "200b-tokens", "bf16")) == "llama-2-70b-200b-tokens-bf16"  # fits: as is


def test_the_exports_ask_for_the_disk_the_plan_priced(gpuplan: Run, tmp_path: Path) -> None:
    sky, dst = tmp_path / "a.yaml", tmp_path / "b.yml"
    for engine, path in (("skypilot", sky), ("dstack", dst)):
        code, _, err = gpuplan("plan", "--gpu-hours", "200", "--provider", "aws", "--disk-gb", "500",
                               "--export", engine, str(path))
        assert code == 0, err
    assert yaml.safe_load(sky.read_text())["resources"]["disk_size"] == 500
    assert yaml.safe_load(dst.read_text())["resources"]["disk"] == "500GB.."
    code, _, _ = gpuplan("plan", "--gpu-hours", "200", "--provider", "aws", "--export", "skypilot", str(sky))
    assert code == 0 and yaml.safe_load(sky.read_text())["resources"]["disk_size"] == 256  # the shared default


@pytest.mark.parametrize("billing", ["spot", "hourly"])
def test_a_spot_export_recovers_from_preemption_in_each_engine(gpuplan: Run, tmp_path: Path, billing: str) -> None:
    """The plan's spot cost assumes the run restarts after a preemption: SkyPilot's file is a managed job with a
    recovery strategy (as SkyPilot's own Task reads it), dstack's retries on no capacity and interruption (as
    dstack's own parser reads it). An on-demand export carries neither."""
    import sky

    args = ("plan", "--gpu-hours", "200", "--provider", "aws", "--billing", billing)
    sky_file, dstack_file = tmp_path / "task.yaml", tmp_path / "task.dstack.yml"
    code, _, said = gpuplan(*args, "--export", "skypilot", str(sky_file))
    told = f"run it: sky {'jobs launch' if billing == 'spot' else 'launch'} {sky_file}"
    assert code == 0 and "".join(told.split()) in "".join(said.split()), said  # the console wraps long lines
    assert gpuplan(*args, "--export", "dstack", str(dstack_file))[0] == 0
    sky_validate(sky_file)
    (res,) = sky.Task.from_yaml(str(sky_file)).resources
    conf = dstack_parse(dstack_file)
    text = sky_file.read_text(encoding="utf-8")
    if billing == "spot":
        assert res.use_spot and res.job_recovery == {"strategy": "FAILOVER", "max_restarts_on_errors": 0}
        assert "run it with `sky jobs launch FILE`" in text
        assert {e.value for e in conf.retry.on_events} == {"no-capacity", "interruption"}
        assert conf.spot_policy.value == "spot"
    else:
        assert not res.use_spot and res.job_recovery is None and "sky jobs launch" not in text
        assert conf.retry is None


def test_an_export_in_the_plans_own_currency_states_the_cost_once(gpuplan: Run, tmp_path: Path) -> None:
    path = tmp_path / "task.yaml"
    assert gpuplan("plan", "--gpu-hours", "200", "--provider", "aws", "--export", "skypilot", str(path))[0] == 0
    line = path.read_text(encoding="utf-8").splitlines()[1]
    assert line.startswith("# Estimated cost ") and line.count("USD") == 1, line

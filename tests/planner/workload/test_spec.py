"""Workload descriptions: presets with sources, TOML files, forgiving names, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.workload.spec import ImageWorkload, InferenceWorkload, Precision, TrainingWorkload
from planner.workload.inputs import arch_for, load_workload
from planner.workload.presets import ModelKind, preset, presets
from pricing.errors import InputError, UnknownNameError

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
REQUIRED = ["resnet50", "resnet152", "inception-v3", "vgg16", "bert-base", "bert-large", "gpt2", "llama-2-7b",
            "llama-2-13b", "llama-2-70b", "llama-3-8b", "llama-3-70b", "mistral-7b"]


def test_required_presets_have_architecture_and_source() -> None:
    for name in REQUIRED:
        p = preset(name)
        assert p.source and p.as_of and p.params > 0
        if p.kind is ModelKind.TRANSFORMER:
            assert p.layers and p.hidden and p.heads and p.vocab
        else:
            assert p.gmacs and p.benchmark_model


def test_preset_names_are_forgiving_and_unknown_names_suggest() -> None:
    assert preset("Llama 2 7B").name == "llama-2-7b"
    assert preset("LLAMA-3-70B").name == "llama-3-70b"
    with pytest.raises(UnknownNameError) as exc:
        preset("llama-2-8b")
    assert "llama-2-7b" in exc.value.suggestions


def test_llama2_7b_preset_matches_published_parameter_count() -> None:
    assert presets()["llama-2-7b"].params == 6_738_415_616


def test_flags_override_preset_shape() -> None:
    a = arch_for("llama-2-7b", 7e9, layers=30)
    assert a.params == 7e9 and a.layers == 30 and a.hidden == 4096
    with pytest.raises(InputError):
        arch_for(None, None)
    with pytest.raises(InputError):
        arch_for("resnet50", None)


def test_precision_aliases() -> None:
    assert Precision.parse("mixed") is Precision.BF16
    assert Precision.parse("FP32") is Precision.FP32
    with pytest.raises(InputError):
        Precision.parse("int3")


@pytest.mark.parametrize("name,cls", [("llama2-7b-finetune.toml", TrainingWorkload),
                                      ("resnet50-imagenet.toml", ImageWorkload),
                                      ("llama2-70b-inference.toml", InferenceWorkload),
                                      ("llama2-13b-qlora.toml", TrainingWorkload),
                                      ("mixtral-pretrain.toml", TrainingWorkload)])
def test_example_files_load(name: str, cls: type) -> None:
    assert isinstance(load_workload(EXAMPLES / name), cls)


def test_example_files_carry_the_new_fields() -> None:
    q = load_workload(EXAMPLES / "llama2-13b-qlora.toml")
    assert isinstance(q, TrainingWorkload) and q.method.value == "qlora" and q.lora_rank == 64
    m = load_workload(EXAMPLES / "mixtral-pretrain.toml")
    assert isinstance(m, TrainingWorkload) and m.arch.moe and m.arch.experts == 8 and not m.arch.shape_inferred


def test_moe_presets_carry_sourced_total_and_active_counts() -> None:
    """Mixtral (Mistral AI: 46.7B/12.9B), DeepSeek-V3 (README: 671B/37B), Llama 4 Scout and Maverick
    (model card: 109B and 400B total, 17B active)."""
    expected = {"mixtral-8x7b": (46.7e9, 12.9e9), "deepseek-v3": (671e9, 37e9), "llama-4-scout": (109e9, 17e9),
                "llama-4-maverick": (400e9, 17e9)}
    for name, (total, active) in expected.items():
        p = preset(name)
        assert p.params == pytest.approx(total, rel=0.002) and p.active_params == pytest.approx(active, rel=0.002)
        assert p.experts and p.experts_per_token and p.source and p.as_of


def test_bad_toml_is_an_input_error(tmp_path: Path) -> None:
    bad = tmp_path / "w.toml"
    bad.write_text('[workload]\nkind = "train"\nmodel = "llama-2-7b"\nseq_len = -1\n')
    with pytest.raises(InputError, match="seq_len"):
        load_workload(bad)
    bad.write_text("not toml [")
    with pytest.raises(InputError):
        load_workload(bad)
    with pytest.raises(InputError, match="not found"):
        load_workload(tmp_path / "missing.toml")

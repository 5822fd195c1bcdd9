"""Alibaba Cloud's credential chain: found where the official SDKs find them, missing ones named, secrets kept out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pricing.errors import CredentialsError
from providers.alibaba.credentials import find
from providers.session import SECRETS

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def clean(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("ALIBABA_CLOUD_"):
            monkeypatch.delenv(name)


def test_the_environment_pair_comes_first(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", "LTAIenvkeyid")
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", "env-secret-value-1234")
    found = find(tmp_path)
    assert (found.access_key_id, found.access_key_secret) == ("LTAIenvkeyid", "env-secret-value-1234")
    assert "env-secret-value-1234" not in repr(found) and "env-secret-value-1234" not in found.source
    assert SECRETS.scrub("x env-secret-value-1234 y") == "x *** y"


def test_half_a_pair_names_the_missing_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", "LTAIenvkeyid")
    with pytest.raises(CredentialsError, match="ALIBABA_CLOUD_ACCESS_KEY_SECRET is not set"):
        find(tmp_path)


def test_the_cli_config_profile_is_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / ".aliyun").mkdir()
    (tmp_path / ".aliyun" / "config.json").write_text(json.dumps({"current": "work", "profiles": [
        {"name": "default", "mode": "AK", "access_key_id": "", "access_key_secret": ""},
        {"name": "work", "mode": "AK", "access_key_id": "LTAIfilekey", "access_key_secret": "file-secret-5678"}]}))
    found = find(tmp_path)
    assert found.access_key_id == "LTAIfilekey" and "profile work (AK)" in found.source
    monkeypatch.setenv("ALIBABA_CLOUD_PROFILE", "default")
    with pytest.raises(CredentialsError, match="profile default .* has no access_key_id"):
        find(tmp_path)


def test_an_ecs_ram_role_is_a_source(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ALIBABA_CLOUD_ECS_METADATA", "gpuplan-role")
    assert find(tmp_path).role == "gpuplan-role"


def test_none_found_names_both_variables(tmp_path: Path) -> None:
    with pytest.raises(CredentialsError) as err:
        find(tmp_path)
    text = f"{err.value.message} {err.value.hint}"
    assert "ALIBABA_CLOUD_ACCESS_KEY_ID" in text and "ALIBABA_CLOUD_ACCESS_KEY_SECRET" in text
    assert err.value.exit_code == 3


def test_launch_without_credentials_exits_3_naming_the_variables(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ALIBABA_CLOUD_", "GPUPLAN_"))}
    env.update({"HOME": str(tmp_path), "GPUPLAN_HOME": str(tmp_path / "g"), "PYTHONPATH": str(ROOT)})
    for args in ((), ("--instance-type", "ecs.gn7i-c8g1.2xlarge", "--region", "cn-shanghai", "--yes")):
        r = subprocess.run([sys.executable, "-m", "gpuplan", "launch", "--provider", "alibaba", *args], env=env,
                           capture_output=True, text=True, timeout=60, cwd=ROOT, check=False)
        assert r.returncode == 3, r.stderr
        assert "ALIBABA_CLOUD_ACCESS_KEY_ID" in r.stderr and "ALIBABA_CLOUD_ACCESS_KEY_SECRET" in r.stderr
        assert "Traceback" not in r.stderr

"""The smoke set run at the dependency floors (.ci/floors): each command must exit 0 and answer what it answers.

plan --json, fit, estimate and tco on the shipped data, and launch --dry-run against the fake CVM on 127.0.0.1
(providers.testing.fake_cvm; nothing is started, nothing leaves this machine). Each answer is checked for its
shape, not only its exit code: a CLI that printed its version and exited 0 once passed for a plan.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import Any

from providers.testing.fake_cvm import TEST_SECRET_ID, TEST_SECRET_KEY, FakeCvm


def gpuplan(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "gpuplan", *args], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    if done.returncode != 0:
        raise SystemExit(f"FAILED: gpuplan {' '.join(args)} exited {done.returncode}\n{done.stdout[-2000:]}"
                         f"\n{done.stderr[-2000:]}")
    print(f"ok: gpuplan {' '.join(args)}")
    return done.stdout


def as_json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        raise SystemExit(f"FAILED: not JSON: {text[:300]!r}") from None


def main() -> None:
    home = tempfile.mkdtemp(prefix="gpuplan-floors-")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUPLAN_", "TENCENTCLOUD_", "AWS_"))}
    env.update(GPUPLAN_HOME=home, COLUMNS="160", NO_PROXY="127.0.0.1,localhost")
    plan = as_json(gpuplan(env, "plan", "--gpu-hours", "200", "--json"))
    assert plan["options"] and plan["cheapest"], "a plan with no options"
    assert "GPUs" in gpuplan(env, "plan", "--gpu-hours", "200")  # the table, through rich
    fit = as_json(gpuplan(env, "fit", "--model", "llama-2-7b", "--json"))
    assert fit["gpus"], "fit names no GPU"
    assert "llama" in gpuplan(env, "fit", "--model", "llama-2-7b").lower()
    est = as_json(gpuplan(env, "estimate", "--gpu", "A100-80GB", "--gpus", "8", "--model", "llama-2-7b",
                          "--tokens", "2e10", "--json"))
    assert est, "an empty estimate"
    tco = as_json(gpuplan(env, "tco", "--usage", "300", "--months", "36", "--buy", "8xRTX-4090", "--json"))
    assert tco, "an empty tco"
    with FakeCvm() as fake:
        cloud = {**env, "TENCENTCLOUD_SECRET_ID": TEST_SECRET_ID, "TENCENTCLOUD_SECRET_KEY": TEST_SECRET_KEY,
                 "GPUPLAN_TENCENT_ENDPOINT": fake.endpoint, "GPUPLAN_TENCENT_INSTANCE_ROLE": "0"}
        dry = as_json(gpuplan(cloud, "launch", "--provider", "tencent", "--instance-type", "GN10Xp.2XLARGE40",
                              "--zone", "ap-guangzhou-3", "--image", "img-ubu22new", "--ttl", "6h", "--yes",
                              "--dry-run", "--json"))
        assert dry["dry_run"] is True and fake.instances == {}, "a dry run that started something"
    print("floors: every smoke command passed")


if __name__ == "__main__":
    main()

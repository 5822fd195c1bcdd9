#!/usr/bin/env bash
# "Cheapest way to train for 200 GPU-hours": the whole catalog, then narrowed down.
set -euo pipefail
gpuplan plan --gpu-hours 200 --limit 10
# Must finish within 3 days, on cards with at least 24 GB, renting only, shown in CNY:
gpuplan plan --gpu-hours 200 --deadline 3d --min-vram 24 --provider tencent --provider aws --currency CNY --limit 10
# Machine-readable, for scripts:
gpuplan plan --gpu-hours 200 --json > /dev/null

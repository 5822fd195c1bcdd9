#!/bin/bash
# gpuplan's idle watcher: ends the machine once no GPU has been busy for GPUPLAN_IDLE_SECONDS.
# nvidia-smi's utilization.gpu is the share of the last sample period in which a kernel ran; one busy
# sample resets the count, so a job with short pauses (data loading, checkpoints) is never ended.
set -u
D="${GPUPLAN_DIR:-/var/lib/gpuplan}"
# shellcheck source=/dev/null
. "$D/config.env"
poll="${GPUPLAN_IDLE_POLL_SECONDS:-60}"
idle=0
while sleep "$poll"; do
    top=$(nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits 2>/dev/null | tr -dc '0-9\n' | sort -n | tail -n1)
    # No reading (no driver, no GPU) counts as idle: nothing can be using the GPUs then.
    if [ -n "$top" ] && [ "$top" -gt "$GPUPLAN_IDLE_BUSY_PERCENT" ]; then
        idle=0
    else
        idle=$((idle + poll))
    fi
    if [ "$idle" -ge "$GPUPLAN_IDLE_SECONDS" ]; then
        exec bash "$D/end.sh" "the GPUs were idle for ${idle}s"
    fi
done

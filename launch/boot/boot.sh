#!/bin/bash
# gpuplan's boot script: runs once, in the background, from the machine's user data.
# The driver, then the set-up, then the run, each logged under $GPUPLAN_LOG; then the teardown the
# launch asked for. Every value it reads comes from config.env, written by gpuplan as shell-quoted
# assignments: no flag value is ever pasted into this script's text.
set -u
D="${GPUPLAN_DIR:-/var/lib/gpuplan}"
# shellcheck source=/dev/null
. "$D/config.env"
LOG="${GPUPLAN_LOG:-/var/log/gpuplan}"
mkdir -p "$LOG"

state() {  # one line per step in $LOG/state: what `gpuplan logs ID --file state` shows
    printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" >>"$LOG/state"
}

gpus() { nvidia-smi -L 2>/dev/null | grep -c '^GPU'; }

driver_line() {
    local v c
    v=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n1)
    c=$(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -n1)
    echo "NVIDIA driver ${v:-?}, CUDA ${c:-?} (the newest the driver runs), $(gpus) GPU(s)"
}

install_driver() {
    # Ubuntu's own way to the NVIDIA server driver (Ubuntu Server docs, "NVIDIA drivers installation"):
    # ubuntu-drivers picks the recommended version; nvidia-smi comes in the matching utils package.
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q && apt-get install -y -q ubuntu-drivers-common && ubuntu-drivers install --gpgpu || return 1
    local v
    v=$(dpkg-query -W -f='${Package}\n' 'nvidia-driver-*' 2>/dev/null | sed -n 's/^nvidia-driver-\([0-9][0-9]*\).*/\1/p' | head -n1)
    if [ -n "$v" ]; then
        apt-get install -y -q "nvidia-utils-$v-server" || apt-get install -y -q "nvidia-utils-$v"
    fi
    modprobe nvidia
}

driver() {
    if [ "$GPUPLAN_DRIVER" = skip ]; then
        state "driver: not checked (--driver skip)"
        return 0
    fi
    if nvidia-smi -L >/dev/null 2>&1; then
        state "driver: $(driver_line)"
        return 0
    fi
    if [ "$GPUPLAN_DRIVER" = install ]; then
        state "driver: none in the image; installing with ubuntu-drivers (log: $LOG/driver.log)"
        install_driver >>"$LOG/driver.log" 2>&1
        if nvidia-smi -L >/dev/null 2>&1; then
            state "driver: installed: $(driver_line)"
            return 0
        fi
        state "driver: the install did not give a working nvidia-smi (see $LOG/driver.log)"
        return 1
    fi
    state "driver: nvidia-smi finds no NVIDIA driver in this image"
    return 1
}

as_user() {  # run the script $1 as the login user in their home (root where there is none), logging to $2
    local home
    if [ -n "${GPUPLAN_USER:-}" ] && [ "$(id -u)" = 0 ] && id -u "$GPUPLAN_USER" >/dev/null 2>&1; then
        home=$(getent passwd "$GPUPLAN_USER" | cut -d: -f6)
        (cd "$home" && runuser -u "$GPUPLAN_USER" -- env HOME="$home" USER="$GPUPLAN_USER" bash "$1") >>"$2" 2>&1
    else
        (cd "${HOME:-/}" && bash "$1") >>"$2" 2>&1
    fi
}

export GPUPLAN_LAUNCH GPUPLAN_NODES
GPUPLAN_GPUS=$(gpus || true)
export GPUPLAN_GPUS

state "boot: launch $GPUPLAN_LAUNCH, $GPUPLAN_NODES node(s)"
if [ -n "${GPUPLAN_TTL_MINUTES:-}" ]; then
    # The TTL backstop where an OS shutdown ends the billing (AWS: shutdown behaviour terminate).
    shutdown -h "+$GPUPLAN_TTL_MINUTES" >/dev/null 2>&1 && state "ttl: shutdown in $GPUPLAN_TTL_MINUTES min"
fi

why=""
if ! driver; then
    why="no working GPU driver"
elif [ -f "$D/setup.sh" ]; then
    state "setup: started (log: $LOG/setup.log)"
    as_user "$D/setup.sh" "$LOG/setup.log"
    rc=$?
    state "setup: exited $rc"
    [ "$rc" = 0 ] || why="the set-up exited $rc"
fi
GPUPLAN_GPUS=$(gpus || true)

if [ -n "${GPUPLAN_IDLE_SECONDS:-}" ]; then
    # Idle time counts from here: a driver install or a long set-up is not idleness.
    nohup bash "$D/idle.sh" >>"$LOG/idle.log" 2>&1 </dev/null &
    state "idle watcher: ends the machine after ${GPUPLAN_IDLE_SECONDS}s with no GPU above ${GPUPLAN_IDLE_BUSY_PERCENT}%"
fi

rendezvous() {  # several nodes: wait for the launcher to hand this node its rank (launch.rendezvous)
    local waited=0
    [ "${GPUPLAN_NODES:-1}" -gt 1 ] || return 0
    state "rendezvous: waiting for this node's rank (gpuplan launch hands it over SSH once all nodes run)"
    while [ ! -s "$D/cluster.env" ]; do
        if [ "$waited" -ge "${GPUPLAN_RENDEZVOUS_WAIT:-1800}" ]; then
            state "rendezvous: no rank after ${waited}s"
            return 1
        fi
        sleep 2
        waited=$((waited + 2))
    done
    # shellcheck source=/dev/null
    . "$D/cluster.env"
    # torchrun reads each option from PET_<OPTION>: a plain `torchrun train.py` joins the job
    export NODE_RANK NNODES MASTER_ADDR MASTER_PORT PET_NODE_RANK="$NODE_RANK" PET_NNODES="$NNODES" \
        PET_MASTER_ADDR="$MASTER_ADDR" PET_MASTER_PORT="$MASTER_PORT" PET_NPROC_PER_NODE="$GPUPLAN_GPUS"
    state "rendezvous: node $NODE_RANK of $NNODES, master $MASTER_ADDR:$MASTER_PORT"
}

if [ -z "$why" ] && [ -f "$D/run.sh" ] && ! rendezvous; then
    why="no rendezvous (the node's rank never arrived)"
fi
if [ -z "$why" ] && [ -f "$D/run.sh" ]; then
    state "run: started (log: $LOG/run.log)"
    as_user "$D/run.sh" "$LOG/run.log"
    rc=$?
    echo "$rc" >"$D/run.exit"
    state "run: exited $rc"
    why="the run exited $rc"
elif [ -n "$why" ]; then
    state "run: not started: $why"
fi

if [ "${GPUPLAN_DOWN_WHEN:-}" = done ] && [ -n "$why" ]; then
    bash "$D/end.sh" "$why"
fi

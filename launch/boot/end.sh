#!/bin/bash
# gpuplan's teardown from inside the machine; $1 says why. Runs once, whoever calls it first.
set -u
D="${GPUPLAN_DIR:-/var/lib/gpuplan}"
# shellcheck source=/dev/null
. "$D/config.env"
LOG="${GPUPLAN_LOG:-/var/log/gpuplan}"
mkdir "$D/ending" 2>/dev/null || exit 0
say() { printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" >>"$LOG/state"; }
say "ending: $1"
case "${GPUPLAN_END:-}" in
shutdown)
    # The launch set shutdown behaviour 'terminate': this ends the instance and its billing.
    sync
    shutdown -h now
    ;;
tencent-role)
    # An OS shutdown would only stop a CVM and keep billing it: the machine terminates itself through
    # the CVM API with its CAM role's temporary credentials, read from the metadata service.
    for try in 1 2 3 4 5; do
        if python3 "$D/end_tencent.py" >>"$LOG/end.log" 2>&1; then
            say "ending: TerminateInstances accepted"
            exit 0
        fi
        say "ending: TerminateInstances failed (try $try of 5, see $LOG/end.log)"
        sleep "${GPUPLAN_END_RETRY_SECONDS:-30}"
    done
    say "ending: gave up; the TTL or \`gpuplan down $GPUPLAN_LAUNCH\` ends it"
    rmdir "$D/ending"
    ;;
*)
    say "ending: this machine has no way to end itself; \`gpuplan down $GPUPLAN_LAUNCH\` ends it"
    ;;
esac

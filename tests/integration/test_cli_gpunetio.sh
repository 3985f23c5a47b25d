#!/usr/bin/env bash
# `softdpu ladder gpunetio` and `softdpu rollback gpunetio` end to end on the devices the tool
# declares itself (docs/ladders.md "GPUNetIO ladder", docs/gpunetio.md "Rollback"). Runs where
# there is no GPU (CI): the CPU stand-in must be green, with every GPU rung skipped and the reason
# recorded; where a GPU is usable the same checks hold on the GPU data path.
#  - ladder green (--json: one document, result pass, every rung pass or skip; --evidence file);
#  - a rung made to fail on purpose: --ring-slots 64 for a burst of 1000 -> rung 2 fails with
#    layer queue, trigger ring-too-small, 936 overwritten; --dev softdpu0 (no Ethernet port) ->
#    rung 1 fails with layer device, DOCA_ERROR_NOT_SUPPORTED; later rungs not-run;
#  - --compare: the failing evidence against a green re-run is "resolved"; the same failure
#    twice is "unchanged" (escalate); two greens are "unchanged" and green;
#  - rollback: every step done or skipped, the re-verify within the tolerance; --break-parent
#    (the parent stops taking packets after the baseline): the re-verify fails twice, the
#    residual gap is reported (1.0), exit 1, layer queue;
#  - bad usage answers 2.
#   test_cli_gpunetio.sh <softdpu>
# SPDX-License-Identifier: BSD-3-Clause
set -u
cli=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sdp-cli-gpunetio.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export SOFTDPU_DEVICE_CONFIG=
fails=0
fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}
schema=$(dirname "$0")/../../docs/schemas/ladder-evidence.schema.json
checker=$(dirname "$0")/../tools/check_schema.py
# valid <file>: the ladder document satisfies docs/schemas/ladder-evidence.schema.json
valid() {
	python3 "$checker" "$schema" "$1" >/dev/null || fail "$1: not a valid ladder evidence document"
}
# check <file> <python expression over doc d>: the file holds one JSON document that satisfies it
check() {
	python3 - "$1" "$2" <<'EOF' || fail "$1: $2"
import json, sys
with open(sys.argv[1]) as f:
    text = f.read()
lines = [l for l in text.splitlines() if l.strip()]
assert len(lines) == 1, "not exactly one line: %d" % len(lines)
d = json.loads(lines[0])
ok = eval(sys.argv[2], {"d": d})
if not ok:
    print(json.dumps(d, indent=1)[:3000], file=sys.stderr)
sys.exit(0 if ok else 1)
EOF
}

# 1: green (CPU stand-in without a GPU)
"$cli" ladder gpunetio --json --evidence "$tmp/green.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 0 ] || { fail "ladder: exit $rc"; cat "$tmp/err" >&2; }
check "$tmp/out" 'd["schema"] == "softdpu-ladder-evidence/1" and d["ladder"] == "gpunetio" and d["result"] == "pass" and [r["name"] for r in d["rungs"]] == ["single-packet", "burst", "tx", "each-gpu", "negative"] and all(r["result"] in ("pass", "skip") for r in d["rungs"])'
check "$tmp/out" '(d["snapshot"]["material"]["data_path"] == "gpu") or (d["rungs"][3]["result"] == "skip" and d["rungs"][3]["reason"] == d["snapshot"]["material"]["gpu_skip_reason"] != "")'
check "$tmp/out" 'd["rungs"][0]["material"]["packets"] == 1 and d["rungs"][1]["material"]["packets"] == 1000 and d["rungs"][1]["material"]["overwrites"] == 0 and d["rungs"][2]["material"]["intact"] is True'
check "$tmp/out" 'd["rungs"][4]["material"]["device_axis_rx"] == "DOCA_ERROR_NOT_SUPPORTED" and d["rungs"][4]["material"]["device_axis_tx"] == "DOCA_ERROR_NOT_SUPPORTED"'
grep -q '"softdpu-ladder-evidence/1"' "$tmp/green.json" || fail "--evidence: no evidence file"
valid "$tmp/out"
valid "$tmp/green.json"
grep -q '^\[5/5\] negative: pass' "$tmp/err" || fail "ladder: no progress line for rung 5"

# 2: a ring too small for the burst -> layer queue
"$cli" ladder gpunetio --json --ring-slots 64 --evidence "$tmp/ring.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 1 ] || fail "ladder --ring-slots 64: exit $rc, 1 expected"
check "$tmp/out" 'd["result"] == "fail" and d["trigger"]["rung"] == 2 and d["trigger"]["layer"] == "queue" and d["trigger"]["trigger"] == "ring-too-small" and d["rungs"][1]["material"]["packets"] == 64 and d["rungs"][1]["material"]["overwrites"] == 936 and [r["result"] for r in d["rungs"][2:]] == ["not-run"] * 3'
# the same failure again: unchanged (escalate)
"$cli" ladder gpunetio --json --ring-slots 64 --compare "$tmp/ring.json" >"$tmp/out" 2>"$tmp/err"
valid "$tmp/out"
check "$tmp/out" 'd["compare"]["outcome"] == "unchanged" and d["compare"]["escalate"] is True'
grep -q 'escalate with this evidence' "$tmp/err" || fail "--compare unchanged: no escalation message"
# fixed: resolved
"$cli" ladder gpunetio --json --compare "$tmp/ring.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 0 ] || fail "ladder --compare after the fix: exit $rc"
check "$tmp/out" 'd["result"] == "pass" and d["compare"]["outcome"] == "resolved" and d["compare"]["escalate"] is False'
# two greens: unchanged, nothing to fix
"$cli" ladder gpunetio --json --compare "$tmp/green.json" >"$tmp/out" 2>"$tmp/err"
check "$tmp/out" 'd["compare"]["outcome"] == "unchanged" and d["compare"]["escalate"] is False'
grep -q 'nothing to fix' "$tmp/err" || fail "--compare two greens: not reported as green"

# 3: a device without the capability -> layer device
"$cli" ladder gpunetio --json --dev softdpu0 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 1 ] || fail "ladder --dev softdpu0: exit $rc, 1 expected"
check "$tmp/out" 'd["trigger"]["rung"] == 1 and d["trigger"]["layer"] == "device" and d["trigger"]["trigger"] == "device-not-capable" and d["trigger"]["error"] == "DOCA_ERROR_NOT_SUPPORTED"'
"$cli" ladder gpunetio --json --dev no-such-device >"$tmp/out" 2>"$tmp/err"
check "$tmp/out" 'd["trigger"]["layer"] == "device" and d["trigger"]["trigger"] == "device-not-found"'
grep -q 'FAIL' "$tmp/err" || fail "--dev no-such-device: no FAIL line on stderr"

# 4: rollback, green, and with a parent that stops receiving
"$cli" rollback gpunetio --json --window-ms 300 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 0 ] || { fail "rollback: exit $rc"; cat "$tmp/err" >&2; }
check "$tmp/out" 'd["ok"] is True and [s["name"] for s in d["steps"]] == ["configure", "baseline", "attach", "kernel", "stop-flag", "drain", "stop-contexts", "unregister", "free-memory", "destroy-gpu", "reverify"] and all(s["state"] in ("done", "skipped") for s in d["steps"]) and d["steps"][-1]["state"] == "done"'
check "$tmp/out" 'd["baseline_pps"] > 10000 and len(d["reverify_pps"]) >= 1 and d["reverify_pps"][-1] >= d["baseline_pps"] * 0.8'
"$cli" rollback gpunetio --json --window-ms 300 --break-parent >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 1 ] || fail "rollback --break-parent: exit $rc, 1 expected"
check "$tmp/out" 'd["ok"] is False and d["error"] == "DOCA_ERROR_UNEXPECTED" and d["layer"] == "queue" and len(d["reverify_pps"]) == 2 and d["residual_gap"] == 1.0 and d["steps"][-1]["state"] == "failed"'
grep -q 'residual gap' "$tmp/err" || fail "rollback --break-parent: the log names no residual gap"
"$cli" rollback gpunetio --dev softdpu0 >"$tmp/out" 2>&1
[ $? = 1 ] || fail "rollback --dev softdpu0: not a failure"
grep -q '^configure *failed *DOCA_ERROR_NOT_SUPPORTED' "$tmp/out" || fail "rollback --dev softdpu0: configure not failed"

# 5: usage
for args in "ladder gpunetio --ring-slots 3" "ladder gpunetio --burst 0" "ladder gpunetio extra" \
	"rollback gpunetio --deadline-ms 0" "rollback gpunetio --tolerance 1" "rollback urom"; do
	# shellcheck disable=SC2086
	"$cli" $args >/dev/null 2>&1
	rc=$?
	[ "$rc" = 2 ] || fail "softdpu $args: exit $rc, 2 expected"
done
"$cli" ladder gpunetio --help | grep -q -- '--ring-slots' || fail "ladder --help"
"$cli" rollback gpunetio --help | grep -q -- '--deadline-ms' || fail "rollback --help"

[ "$fails" = 0 ] && echo "PASS" || echo "$fails failure(s)"
exit $((fails > 0))

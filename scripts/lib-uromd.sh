# Sourced by bench/mpi_overlap.sh and tests/mpi/run.sh: a private softdpu-uromd of a build tree
# (kernel-picked loopback port, run dir and secret under $tmp) whose plugin path holds the given
# plugins alone.
#   sdp_uromd_start <build dir> <tmp dir> <plugin.so...> [-- daemon options]
# sets sdp_uromd_pid and sdp_uromd_port (returns 1, the daemon's log on stderr, when it wrote no
# port within 10 s); sdp_uromd_stop stops it (TERM, then KILL after 10 s). Call sdp_uromd_stop
# from the caller's EXIT trap.
# SPDX-License-Identifier: BSD-3-Clause
sdp_uromd_pid=
sdp_uromd_port=

sdp_uromd_start() {
	local build=$1 tmp=$2 p dargs
	shift 2
	mkdir -p "$tmp/plugins"
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		p=$1
		ln -s "$p" "$tmp/plugins/$(basename "$p")"
		shift
	done
	[ $# -eq 0 ] || shift
	dargs=(--foreground --listen 127.0.0.1:0 --run-dir "$tmp/run" --secret-file "$tmp/secret" "$@")
	SOFTDPU_UROM_WORKER_BIN=$build/src/urom/worker/softdpu-urom-worker \
		UROM_PLUGIN_PATH=$tmp/plugins "$build/src/urom/service/softdpu-uromd" "${dargs[@]}" \
		>"$tmp/uromd.log" 2>&1 &
	sdp_uromd_pid=$!
	for _ in $(seq 200); do
		[ -s "$tmp/run/uromd.port" ] && break
		kill -0 "$sdp_uromd_pid" 2>/dev/null || break
		sleep 0.05
	done
	if [ ! -s "$tmp/run/uromd.port" ]; then
		echo "softdpu-uromd wrote no port; its log:" >&2
		cat "$tmp/uromd.log" >&2
		return 1
	fi
	sdp_uromd_port=$(cat "$tmp/run/uromd.port")
}

sdp_uromd_stop() {
	[ -n "$sdp_uromd_pid" ] || return 0
	kill -TERM "$sdp_uromd_pid" 2>/dev/null || true
	for _ in $(seq 100); do kill -0 "$sdp_uromd_pid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$sdp_uromd_pid" 2>/dev/null || true
	sdp_uromd_pid=
	return 0
}

# shellcheck shell=bash
# Sourced by softdpu's scripts: where nvcc is, found as meson's build expects it.
#
#   . scripts/find-nvcc.sh
#   sdp_find_nvcc        prints nvcc's path (PATH, then $CUDA_HOME/bin, then /usr/local/cuda/bin);
#                        status 1 and nothing printed when there is none
#   sdp_nvcc_on_path     puts the directory of the nvcc found on PATH (meson takes nvcc only
#                        from PATH or a native file); nothing changes when there is none
# SPDX-License-Identifier: BSD-3-Clause

sdp_find_nvcc() {
	local c
	if c=$(command -v nvcc 2>/dev/null) && [ -x "$c" ]; then
		echo "$c"
		return 0
	fi
	for c in ${CUDA_HOME:+"$CUDA_HOME/bin/nvcc"} /usr/local/cuda/bin/nvcc; do
		if [ -x "$c" ]; then
			echo "$c"
			return 0
		fi
	done
	return 1
}

sdp_nvcc_on_path() {
	local n
	n=$(sdp_find_nvcc) || return 0
	case ":$PATH:" in
	*":${n%/*}:"*) ;;
	*) export PATH="${n%/*}:$PATH" ;;
	esac
}

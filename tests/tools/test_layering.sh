#!/bin/bash
# The layering rule (docs/architecture.md): a layer never includes the internals of one above it.
# libdoca_common (src/common) is the bottom layer, so every quoted #include of src/common must
# name a header of src/common itself, a public header (include/), or the build facts
# (sdp_build_config.h); nothing of src/eth, src/urom, src/providers, ... may appear there.
# Usage: test_layering.sh <source root>
# SPDX-License-Identifier: BSD-3-Clause
set -u
root=${1:?usage: test_layering.sh <source root>}
bad=0
for f in "$root"/src/common/*.c "$root"/src/common/*.h; do
	while IFS= read -r line; do
		name=${line#*\"}
		name=${name%%\"*}
		[ "$name" = sdp_build_config.h ] && continue
		[ -f "$root/src/common/$name" ] && continue
		[ -f "$root/include/$name" ] && continue
		echo "FAIL ${f#"$root"/}: includes \"$name\", which is not in src/common or include/" >&2
		bad=1
	done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
done
[ "$bad" = 0 ] && echo "src/common includes only src/common, include/ and sdp_build_config.h"
exit "$bad"

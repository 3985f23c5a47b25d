/*
 * worker_dprobe: a test plugin that answers the four domain lookups from inside a worker, so
 * integration tests can check what softdpu-urom-worker's domain table holds. Not installed.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DPROBE_H_
#define DPROBE_H_

#include <stdint.h>

enum dprobe_op {
	DPROBE_OWN_ADDR = 0, /* the address this plugin's addr op returned */
	DPROBE_ADDR,	     /* doca_urom_worker_domain_addr_lookup(id) */
	DPROBE_SEG,	     /* doca_urom_worker_domain_seg_lookup(id, va) */
	DPROBE_MEMH,	     /* doca_urom_worker_domain_memh_lookup(id, seg) */
	DPROBE_MKEY,	     /* doca_urom_worker_domain_mkey_lookup(id, seg) */
};

struct dprobe_cmd {
	uint64_t op;
	uint64_t id;
	uint64_t va;
	int64_t seg;
};

/* Followed by len bytes (the address, memh or mkey). */
struct dprobe_notify {
	uint64_t op;
	int64_t status; /* the lookup's doca_error_t */
	int64_t seg;
	uint64_t len;
};

#define DPROBE_ADDR_LEN 24 /* "dprobe-" + 16 hex digits + NUL */

#endif /* DPROBE_H_ */

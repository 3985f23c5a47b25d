/*
 * softdpu-urom-worker: the domain table behind the plugins' domain lookups.
 *
 * A host process starting a doca_urom_domain pushes every member's record (W_DOMAIN_MEMBER:
 * domain id, plugin addresses by plugin name, memory segments) and then W_DOMAIN_COMMIT with
 * the member count. Records are staged per (owner dest id, domain key) and become the worker's
 * table only when the commit's count matches the distinct members received, so a plugin never
 * sees half a domain. A worker serves one domain at a time: another host's records and commit
 * are refused (IN_USE) while a domain is active or being pushed, until its owner clears it
 * (W_DOMAIN_CLEAR, domain stop) or disconnects. A segment whose memh is softdpu's descriptor
 * must lie inside the memh's range, and the lookups hand out that memh narrowed to the
 * segment. Lookups (urom_domain_lookups_iface) answer from the active table only.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef UROM_WDOMAIN_H_
#define UROM_WDOMAIN_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_error.h"
#include "doca_urom_plugin.h"
#include "sdp_urom_proto.h"

struct sdp_urom_wdom_member {
	uint64_t id;
	uint8_t *raw; /* copy of the record; addrs and segs point into it */
	size_t raw_len;
	uint32_t num_addrs;
	struct sdp_urom_dom_addr *addrs;
	uint32_t num_segs;
	struct sdp_urom_dom_seg *segs; /* sorted by va, non-overlapping */
	uint8_t **clamped; /* per segment: its memh narrowed to it (malloc'd), or NULL */
};

struct sdp_urom_wdom {
	int used;
	uint64_t owner; /* dest id of the host that pushed it */
	uint64_t key;
	struct sdp_urom_wdom_member *members; /* sorted by id once committed */
	size_t num, cap;
	size_t staged_bytes; /* record bytes of the members (staging bound) */
};

/* Most bytes of member records one worker stages for a domain before its commit. */
#define SDP_UROM_WDOM_STAGE_MAX (256u << 20)

struct sdp_urom_wdoms {
	struct sdp_urom_wdom active;
	struct sdp_urom_wdom staging;
};

/* Add one member record to the staging domain (owner, key); a new key restarts staging. */
doca_error_t sdp_urom_wdom_add_member(struct sdp_urom_wdoms *d, uint64_t owner, uint64_t key,
				      const void *rec, size_t len, char *why, size_t why_size);

/* Make the staged domain (owner, key) the active one if it has exactly num members. */
doca_error_t sdp_urom_wdom_commit(struct sdp_urom_wdoms *d, uint64_t owner, uint64_t key,
				  uint32_t num, char *why, size_t why_size);

/* Forget domain (owner, key) (active or staged). NOT_FOUND when there is none. */
doca_error_t sdp_urom_wdom_clear(struct sdp_urom_wdoms *d, uint64_t owner, uint64_t key);

/* Forget everything owner pushed (its connection is gone). */
void sdp_urom_wdom_drop_owner(struct sdp_urom_wdoms *d, uint64_t owner);

void sdp_urom_wdom_fini(struct sdp_urom_wdoms *d);

/* The member with domain id `id` of the active domain, or NULL. */
const struct sdp_urom_wdom_member *sdp_urom_wdom_find(const struct sdp_urom_wdoms *d, uint64_t id);

/*
 * Point the lookups of a plugin's context at table d. The plugin's name (the key of its
 * address in each member record) is found through ctx, which must be the ctx of a struct
 * sdp_urom_plugin. One table per process.
 */
void sdp_urom_wdom_bind(struct urom_worker_ctx *ctx, const struct sdp_urom_wdoms *d);

#endif /* UROM_WDOMAIN_H_ */

/*
 * softdpu internal: the "memh" of softdpu, the bytes that stand for host memory a worker may
 * reach. The ONLY packer and parser of these bytes (fuzzed: tests/fuzz/fuzz_urom_memh.c).
 *
 * In DOCA a memh is a UCX exported memory handle (ucp_memh_pack with the EXPORT flag), which
 * only BlueField's cross-GVMI mlx5 path can use. softdpu's memh is a self-contained
 * descriptor instead: where the memory is (va, len), which UCP worker owns its registration
 * (that worker's address, to connect an endpoint to) and the UCX packed remote key of the
 * registration (the same bytes softdpu hands out as the "mkey"). A worker that holds a memh
 * can therefore put and get without any other message (plugins/common/sdp_plugin_mem.h).
 *
 * Layout, little-endian, exactly SDP_UROM_MEMH_HDR_LEN + owner_addr_len + rkey_len bytes (8 more
 * with SDP_UROM_MEMH_FLAG_AM_KEY):
 *
 *   off  0  4 bytes  magic "SDMH"
 *   off  4  u16      version (SDP_UROM_MEMH_VERSION)
 *   off  6  u16      flags (SDP_UROM_MEMH_FLAG_*; unknown bits are refused)
 *   off  8  u64      va: host virtual address of the first byte
 *   off 16  u64      len: bytes, > 0, va + len must not overflow
 *   off 24  u32      owner_addr_len: 1 .. SDP_UROM_MEMH_ADDR_MAX
 *   off 28  u32      rkey_len: 1 .. SDP_UROM_MEMH_RKEY_MAX
 *   off 32  owner_addr_len bytes: UCP worker address of the owner (ucp_worker_get_address)
 *   then    rkey_len bytes: ucp_rkey_pack() of the registration covering [va, va + len)
 *   then    with SDP_UROM_MEMH_FLAG_AM_KEY only: u64 am_key, the region's secret for the
 *           owner's active-message path (sdp_urom_xrma.h)
 *
 * Nothing may follow. Unpack checks every length against what is left, never reads past len,
 * and returns views INTO the caller's buffer (valid as long as it is).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_UROM_MEMH_H_
#define SDP_UROM_MEMH_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_error.h"

#define SDP_UROM_MEMH_MAGIC "SDMH"
#define SDP_UROM_MEMH_VERSION 1
#define SDP_UROM_MEMH_HDR_LEN 32
/* Bounds of the two byte strings (UCX 1.13 addresses and keys are far smaller). */
#define SDP_UROM_MEMH_ADDR_MAX 4096
#define SDP_UROM_MEMH_RKEY_MAX 4096
/* The largest memh there can be. */
#define SDP_UROM_MEMH_MAX_LEN                                                                      \
	(SDP_UROM_MEMH_HDR_LEN + SDP_UROM_MEMH_ADDR_MAX + SDP_UROM_MEMH_RKEY_MAX +                 \
	 SDP_UROM_MEMH_AM_KEY_LEN)

/*
 * The owner progresses its UCP worker from a thread of its own (softdpu's export engine does),
 * so transfers that UCX runs through the owner's worker (RMA over TCP) complete without the
 * owning application's help. Informational: a worker may use a memh without it.
 */
#define SDP_UROM_MEMH_FLAG_OWNER_PROGRESS (1u << 0)
/*
 * The owner also serves puts and gets as softdpu active messages (sdp_urom_xrma.h) naming the
 * region by am_key, a random secret of the owner's; a worker uses that path where UCX would
 * emulate RMA in software (TCP): see plugins/common/sdp_plugin_mem.c. The flag came after
 * version 1 did: a parser from before it refuses memhs that set it (unknown flag), so hosts and
 * workers must come from the same softdpu release; memhs without it parse everywhere.
 */
#define SDP_UROM_MEMH_FLAG_AM_KEY (1u << 1)
#define SDP_UROM_MEMH_FLAGS_KNOWN (SDP_UROM_MEMH_FLAG_OWNER_PROGRESS | SDP_UROM_MEMH_FLAG_AM_KEY)
/* Bytes of the am_key trailer. */
#define SDP_UROM_MEMH_AM_KEY_LEN 8

/* A memh decoded, or to be packed. */
struct sdp_urom_memh {
	uint16_t version; /* unpack: what the bytes say; ignored by pack (it writes its own) */
	uint16_t flags;	  /* SDP_UROM_MEMH_FLAG_* */
	uint64_t va;
	uint64_t len;
	const uint8_t *owner_addr; /* UCP worker address of the owner */
	uint32_t owner_addr_len;
	const uint8_t *rkey; /* packed remote key */
	uint32_t rkey_len;
	uint64_t am_key; /* with SDP_UROM_MEMH_FLAG_AM_KEY; 0 otherwise */
};

/*
 * Size of the packed form of m; 0 when m cannot be packed (a field out of range; not logged).
 */
size_t sdp_urom_memh_packed_size(const struct sdp_urom_memh *m);

/*
 * Pack m into buf (cap bytes). *len_p gets the bytes written, or on DOCA_ERROR_TOO_BIG the
 * size needed (buf may be NULL with cap 0 to ask). DOCA_ERROR_INVALID_VALUE (logged) for NULL
 * arguments or a field out of range: len 0, va + len overflowing, unknown flags, a byte string
 * empty, NULL or longer than its bound.
 */
doca_error_t sdp_urom_memh_pack(const struct sdp_urom_memh *m, void *buf, size_t cap,
				size_t *len_p);

/*
 * Parse a memh. DOCA_SUCCESS (m filled, pointers into buf), DOCA_ERROR_NOT_SUPPORTED for a
 * well-formed header of another version (m->version is set, nothing else), or
 * DOCA_ERROR_INVALID_VALUE for anything malformed. The bytes come from a peer, so nothing is
 * logged here except NULL arguments: the caller logs once, naming the source and the reason
 * that the _why variant wrote into why (why may be NULL). Never reads beyond len; m is
 * untouched on INVALID_VALUE.
 */
doca_error_t sdp_urom_memh_unpack_why(const void *buf, size_t len, struct sdp_urom_memh *m,
				      char *why, size_t why_size);
doca_error_t sdp_urom_memh_unpack(const void *buf, size_t len, struct sdp_urom_memh *m);

#endif /* SDP_UROM_MEMH_H_ */

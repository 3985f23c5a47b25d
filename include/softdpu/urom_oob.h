/*
 * softdpu extension (not part of DOCA): an out-of-band allgather over TCP for UROM domains of
 * programs without MPI (docs/urom-oob.md).
 *
 * doca_urom_domain_set_oob() wants a non-blocking allgather from the program. An
 * sdp_urom_oob is one rank of a group of `size` processes (or threads, or namespaces) that
 * meet at rank 0's TCP listener; sdp_urom_oob_coll() fills a struct doca_urom_domain_oob_coll
 * with it, ready for doca_urom_domain_set_oob(). Data flows through rank 0: it gathers every
 * contribution and sends the concatenation, ordered by rank, back to each rank.
 *
 * Nothing moves in the background (no threads): sockets are progressed only inside the
 * request test callback and the blocking calls below. The test never blocks; the blocking
 * calls sleep in poll() and are bounded by a timeout.
 *
 * Every connection is authenticated both ways with the shared secret (HMAC-SHA256 challenge
 * and response with fresh nonces) before any data is accepted.
 *
 * Failure: a timeout, a rank that dies or leaves, or an allgather whose message length differs
 * between ranks fails the current allgather and every later one, on every rank: rank 0 tells
 * the others why and closes their connections, so they fail at once instead of waiting for
 * their own timeout. Bound: each rank's allgather returns at most timeout_ms after it was
 * posted (the first one also covers connecting); a dead rank is noticed as soon as its socket
 * reports the close. Statuses: DOCA_ERROR_TIME_OUT, DOCA_ERROR_CONNECTION_RESET (a rank died
 * or left), DOCA_ERROR_INVALID_VALUE (message lengths differ, or a peer broke the protocol).
 *
 * An sdp_urom_oob is used by one thread at a time.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SOFTDPU_UROM_OOB_H_
#define SOFTDPU_UROM_OOB_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_urom_domain_oob_coll;
struct sdp_urom_oob;

/* Shortest secret accepted, in bytes. */
#define SDP_UROM_OOB_SECRET_MIN 16
/* Longest SOFTDPU_OOB_SECRET_FILE read, in bytes. */
#define SDP_UROM_OOB_SECRET_FILE_MAX 4096
/* Timeout when timeout_ms <= 0 (and SOFTDPU_OOB_TIMEOUT_MS's default), in milliseconds. */
#define SDP_UROM_OOB_DEFAULT_TIMEOUT_MS 30000
/* Largest group. */
#define SDP_UROM_OOB_MAX_RANKS 16384
/* Largest allgather result (size * msglen), in bytes. */
#define SDP_UROM_OOB_MAX_BYTES (1u << 30)

struct sdp_urom_oob_params {
	/*
	 * Rank 0's listener: "host:port" or "[v6addr]:port" (the host a name or a numeric
	 * address, resolved by sdp_urom_oob_create). Rank 0 binds it and may give port 0 (or no
	 * port) to let the system choose, then tells the others sdp_urom_oob_port(). Unused
	 * (may be NULL) when size is 1.
	 */
	const char *root;
	uint32_t rank; /* this process's place, in [0, size) */
	uint32_t size; /* ranks in the group, 1 ... SDP_UROM_OOB_MAX_RANKS */
	/* The secret every rank shares, at least SDP_UROM_OOB_SECRET_MIN bytes; copied (only a
	 * key derived from it is kept). May be NULL when size is 1. */
	const void *secret;
	size_t secret_len;
	/* Bound in milliseconds on connecting and on each allgather; <= 0: the default. */
	int timeout_ms;
};

/*
 * Create one rank. Does not wait for anybody: rank 0 binds and listens (SO_REUSEADDR) here,
 * the other ranks only resolve the address; connecting, accepting and authenticating happen
 * inside the first allgather (or sdp_urom_oob_wait_ready). DOCA_ERROR_INVALID_VALUE for bad
 * parameters or an address that does not resolve, DOCA_ERROR_IN_USE when rank 0's address is
 * taken, DOCA_ERROR_NO_MEMORY; each logged once.
 */
DOCA_EXPERIMENTAL
doca_error_t sdp_urom_oob_create(const struct sdp_urom_oob_params *params,
				 struct sdp_urom_oob **oob);

/*
 * Create one rank from the environment (docs/environment.md): SOFTDPU_OOB_ROOT,
 * SOFTDPU_OOB_RANK, SOFTDPU_OOB_SIZE, SOFTDPU_OOB_SECRET_FILE (a regular file of this user,
 * not accessible to group or others, SDP_UROM_OOB_SECRET_MIN to SDP_UROM_OOB_SECRET_FILE_MAX
 * bytes, whose whole content is the secret), SOFTDPU_OOB_TIMEOUT_MS. DOCA_ERROR_NOT_FOUND when
 * a required variable is not set or the secret file does not exist, DOCA_ERROR_INVALID_VALUE
 * for a bad value, DOCA_ERROR_NOT_PERMITTED for a secret file others may read; each logged
 * once with the variable's name. ROOT and SECRET_FILE are not needed when SIZE is 1.
 */
DOCA_EXPERIMENTAL
doca_error_t sdp_urom_oob_from_env(struct sdp_urom_oob **oob);

/*
 * Fill all six fields of coll: allgather, req_test, req_free, coll_info (oob), n_oob_indexes
 * (size) and oob_index (rank). The struct can go straight to doca_urom_domain_set_oob(); oob
 * must outlive the domain's use of it. Does nothing when an argument is NULL.
 *
 * The callbacks: allgather(sbuf, rbuf, msglen, oob, &req) starts allgather number k (sbuf is
 * copied at once; rbuf receives size * msglen bytes, ordered by rank, and must stay valid
 * until the request completes); one allgather at a time per rank (DOCA_ERROR_BAD_STATE
 * otherwise). req_test(req) progresses the sockets without blocking: DOCA_SUCCESS when done,
 * DOCA_ERROR_IN_PROGRESS, or the failure. req_free(req) releases a request; freeing one still
 * in progress abandons the group (this rank then fails with DOCA_ERROR_CONNECTION_ABORTED, the
 * others with DOCA_ERROR_CONNECTION_RESET).
 */
DOCA_EXPERIMENTAL
void sdp_urom_oob_coll(struct sdp_urom_oob *oob, struct doca_urom_domain_oob_coll *coll);

/* The port of rank 0's listener (the one the system chose for port 0); 0 when size is 1. */
DOCA_EXPERIMENTAL
uint16_t sdp_urom_oob_port(const struct sdp_urom_oob *oob);

/*
 * Connect (rank 0: accept and authenticate every other rank) without an allgather, sleeping
 * in poll() for at most timeout_ms (<= 0: the oob's timeout). DOCA_SUCCESS once this rank is
 * connected (rank 0: all ranks are); DOCA_ERROR_TIME_OUT when timeout_ms passes first (not a
 * failure of the group unless the oob's own connect bound, counted from the first call that
 * started connecting, passed too); the group's failure status otherwise.
 */
DOCA_EXPERIMENTAL
doca_error_t sdp_urom_oob_wait_ready(struct sdp_urom_oob *oob, int timeout_ms);

/*
 * Blocking allgather of len bytes from every rank into rbuf (size * len bytes, ordered by
 * rank), through the same requests as the callbacks; bounded by the oob's timeout.
 */
DOCA_EXPERIMENTAL
doca_error_t sdp_urom_oob_allgather(struct sdp_urom_oob *oob, const void *sbuf, void *rbuf,
				    size_t len);

/*
 * Close every connection and free oob. DOCA_ERROR_IN_USE (nothing changes) while a request
 * of it has not been freed; DOCA_ERROR_INVALID_VALUE for NULL.
 */
DOCA_EXPERIMENTAL
doca_error_t sdp_urom_oob_destroy(struct sdp_urom_oob *oob);

#ifdef __cplusplus
}
#endif

#endif /* SOFTDPU_UROM_OOB_H_ */

/*
 * softdpu internal: puts and gets to exported host memory as softdpu active messages ("xrma").
 * The ONLY packer and parser of these headers (fuzzed: tests/fuzz/fuzz_urom_xrma.c).
 *
 * Where UCX has no RMA transport between a worker and the owner of a memh (TCP), it emulates
 * puts and gets with active messages of its own that write wherever the bytes say and answer
 * on an endpoint that may have failed, which aborts the owning process (UCX 1.13 and 1.22,
 * integration/urom_netfault). Instead the worker sends these messages to the owner's export
 * worker (src/urom/host/export.c): the owner finds the region by its secret am_key (carried in
 * the memh, SDP_UROM_MEMH_FLAG_AM_KEY), checks the range, copies, and answers; an answer that
 * cannot be sent completes its request with an error instead of aborting.
 *
 * Request: the AM header, exactly SDP_UROM_XRMA_REQ_LEN bytes, little-endian; AM id
 * SDP_UROM_XRMA_REQ_AM_ID on the owner's worker, sent eager with UCP_AM_SEND_FLAG_REPLY.
 *   off  0  4 bytes  magic "SDXR"
 *   off  4  u8       op: SDP_UROM_XRMA_PUT or SDP_UROM_XRMA_GET
 *   off  5  u8       version (SDP_UROM_XRMA_VERSION)
 *   off  6  u16      0
 *   off  8  u64      opid: the worker's, echoed in the reply
 *   off 16  u64      am_key of the region
 *   off 24  u64      va of the first byte
 *   off 32  u64      len: 1 .. SDP_UROM_XRMA_LEN_MAX, va + len must not wrap
 * A PUT's AM data is exactly len bytes; a GET has none.
 *
 * Reply: the AM header, exactly SDP_UROM_XRMA_REP_LEN bytes; AM id SDP_UROM_XRMA_REP_AM_ID on
 * the worker's worker.
 *   off  0  4 bytes  magic "SDXA"
 *   off  4  u8       op: SDP_UROM_XRMA_PUT_ACK or SDP_UROM_XRMA_GET_DATA
 *   off  5  u8       version
 *   off  6  u16      status: a doca_error_t (0 .. 31)
 *   off  8  u64      opid of the request
 *   off 16  u64      va of the request
 *   off 24  u64      len: a GET_DATA with status 0 carries exactly len bytes of AM data (the
 *                    request's len); anything else carries no data and len 0
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_UROM_XRMA_H_
#define SDP_UROM_XRMA_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_error.h"

#define SDP_UROM_XRMA_REQ_MAGIC "SDXR"
#define SDP_UROM_XRMA_REP_MAGIC "SDXA"
#define SDP_UROM_XRMA_VERSION 1
#define SDP_UROM_XRMA_REQ_LEN 40
#define SDP_UROM_XRMA_REP_LEN 32
/* The UCP AM ids (the owner's export worker; a plugin's worker). */
#define SDP_UROM_XRMA_REQ_AM_ID 21
#define SDP_UROM_XRMA_REP_AM_ID 22
/* The most bytes one message moves: longer operations go in several (the worker splits). */
#define SDP_UROM_XRMA_LEN_MAX (1u << 20)

enum sdp_urom_xrma_op {
	SDP_UROM_XRMA_PUT = 1,
	SDP_UROM_XRMA_GET = 2,
	SDP_UROM_XRMA_PUT_ACK = 3,
	SDP_UROM_XRMA_GET_DATA = 4,
};

struct sdp_urom_xrma_req {
	uint8_t op; /* SDP_UROM_XRMA_PUT or _GET */
	uint64_t opid;
	uint64_t am_key;
	uint64_t va;
	uint64_t len;
};

struct sdp_urom_xrma_rep {
	uint8_t op;	 /* SDP_UROM_XRMA_PUT_ACK or _GET_DATA */
	uint16_t status; /* doca_error_t */
	uint64_t opid;
	uint64_t va;
	uint64_t len;
};

/* Pack a request / reply into out (exactly SDP_UROM_XRMA_REQ_LEN / _REP_LEN bytes). */
void sdp_urom_xrma_req_pack(const struct sdp_urom_xrma_req *r, uint8_t *out);
void sdp_urom_xrma_rep_pack(const struct sdp_urom_xrma_rep *r, uint8_t *out);

/*
 * Parse the header of a request (reply) whose AM carries data_len bytes of data.
 * DOCA_SUCCESS (r filled) or DOCA_ERROR_INVALID_VALUE with the reason in why (may be NULL);
 * nothing is logged (the bytes come from a peer: the caller logs once). Never reads past len;
 * r is untouched on error.
 */
doca_error_t sdp_urom_xrma_req_unpack(const void *hdr, size_t len, size_t data_len,
				      struct sdp_urom_xrma_req *r, char *why, size_t why_size);
doca_error_t sdp_urom_xrma_rep_unpack(const void *hdr, size_t len, size_t data_len,
				      struct sdp_urom_xrma_rep *r, char *why, size_t why_size);

#endif /* SDP_UROM_XRMA_H_ */

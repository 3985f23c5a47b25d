/*
 * softdpu's parser and packer of the worker_rdmo data plane (urom_rdmo.h, "operations"): the
 * bytes initiators send the plugin's UCP worker and the responses it sends back. Everything
 * that arrives from the network goes through these functions before it is used: each length
 * and count is checked against the bytes actually received and against the limits below.
 *
 * Used by the worker half (parse requests, pack responses), by initiators such as the
 * urom_rdmo sample (pack requests, parse responses) and by tests/fuzz/fuzz_urom_rdmo.c. No
 * function here logs: a refusal returns DOCA_ERROR_INVALID_VALUE and a static string saying
 * why, for the caller to log once.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_RDMO_WIRE_H_
#define SDP_RDMO_WIRE_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_error.h>

#include "urom_rdmo.h"

/* Largest payload of one operation (APPEND data, SCATTER entries with their data). */
#define SDP_RDMO_DATA_MAX (1u << 20)

/* Most entries one SCATTER may carry. */
#define SDP_RDMO_SCATTER_MAX 1024u

/* Bytes of one packed scatter entry header (struct urom_rdmo_scatter_iov). */
#define SDP_RDMO_SCATTER_IOV_LEN 18u

/* Bytes of a FLUSH response's AM header: urom_rdmo_rsp_hdr + urom_rdmo_flush_rsp_hdr. */
#define SDP_RDMO_FLUSH_RSP_HDR_LEN 12u

/* A parsed operation header. */
struct sdp_rdmo_req {
	struct urom_rdmo_hdr hdr;
	union {
		struct urom_rdmo_flush_hdr flush;
		struct urom_rdmo_append_hdr append;
		struct urom_rdmo_scatter_hdr scatter;
	};
};

/* One entry of a parsed SCATTER payload; data points into the payload given to the parser. */
struct sdp_rdmo_scatter_entry {
	uint64_t addr;
	uint64_t rkey;
	uint16_t len;
	const uint8_t *data;
};

/*
 * softdpu's addition to a FLUSH response, sent as the response's AM data (16 bytes; DOCA's
 * responses carry none): how the operations of this connection since the previous FLUSH
 * response went. status is the doca_error_t of the first one that failed (DOCA_SUCCESS when
 * none did), failed how many failed (refused or not executed). An initiator that ignores the
 * data sees DOCA's response unchanged.
 */
struct sdp_rdmo_flush_status {
	uint32_t status;   /* doca_error_t */
	uint32_t reserved; /* 0 */
	uint64_t failed;
};

/* A parsed response. */
struct sdp_rdmo_rsp {
	struct urom_rdmo_rsp_hdr hdr;
	struct urom_rdmo_flush_rsp_hdr flush;
	int has_status; /* the response carried struct sdp_rdmo_flush_status */
	struct sdp_rdmo_flush_status status;
};

/*
 * Parse the AM header of one operation whose AM data is data_len bytes long. Checks: the
 * header is exactly urom_rdmo_hdr + the operation's header (never more than
 * UROM_RDMO_HDR_LEN_MAX), the operation and flags are known, FLUSH has no data, APPEND has 1 to
 * SDP_RDMO_DATA_MAX bytes, SCATTER has 1 to SDP_RDMO_SCATTER_MAX entries and a payload that
 * could hold them (sdp_rdmo_scatter_parse checks it exactly).
 */
doca_error_t sdp_rdmo_req_parse(const void *header, size_t header_len, size_t data_len,
				struct sdp_rdmo_req *req_p, const char **why_p);

/*
 * Split a SCATTER payload into its count entries (entries has room for count of them): the
 * entries must fill the payload exactly, each with 1 or more data bytes.
 */
doca_error_t sdp_rdmo_scatter_parse(const void *data, size_t data_len, uint64_t count,
				    struct sdp_rdmo_scatter_entry *entries, const char **why_p);

/*
 * Pack the AM header of an operation into buf (cap bytes); returns its length, 0 when the
 * operation is unknown or buf too small.
 */
size_t sdp_rdmo_req_pack(const struct sdp_rdmo_req *req, void *buf, size_t cap);

/*
 * Append one scatter entry (its 18-byte header and len data bytes) at *off_p of buf (cap
 * bytes) and advance *off_p. DOCA_ERROR_INVALID_VALUE when it does not fit or len is 0.
 */
doca_error_t sdp_rdmo_scatter_pack(void *buf, size_t cap, size_t *off_p, uint64_t addr,
				   uint64_t rkey, const void *data, uint16_t len);

/*
 * Parse a response: its AM header and AM data. A FLUSH response has a 12-byte header and
 * either no data or exactly struct sdp_rdmo_flush_status (reserved 0).
 */
doca_error_t sdp_rdmo_rsp_parse(const void *header, size_t header_len, const void *data,
				size_t data_len, struct sdp_rdmo_rsp *rsp_p, const char **why_p);

/* Pack a response's AM header into buf (cap bytes); returns its length, 0 when it cannot. */
size_t sdp_rdmo_rsp_pack(const struct sdp_rdmo_rsp *rsp, void *buf, size_t cap);

#endif /* SDP_RDMO_WIRE_H_ */

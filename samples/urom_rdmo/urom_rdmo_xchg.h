/*
 * urom_rdmo sample: the messages its server and client exchange over their TCP socket before
 * and after the RDMO traffic, and their parser. Each message is a 12-byte header (magic,
 * type, length) and a payload of exactly the length its type allows; host byte order (both
 * ends run on one machine, or on machines of one byte order). Every length is checked before
 * anything is read; tests/fuzz/fuzz_urom_rdmo.c runs these functions on arbitrary bytes.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef UROM_RDMO_XCHG_H_
#define UROM_RDMO_XCHG_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_error.h>

#define SDP_RDMO_XCHG_MAGIC 0x4f4d4452u /* "RDMO" */
#define SDP_RDMO_XCHG_HDR_LEN 12u
#define SDP_RDMO_XCHG_ADDR_MAX 8192u /* longest UCP worker address carried */

enum sdp_rdmo_xchg_type {
	SDP_RDMO_XCHG_HELLO = 1,  /* client -> server: the client's UCP worker address */
	SDP_RDMO_XCHG_INFO = 2,	  /* server -> client: struct sdp_rdmo_xchg_info + plugin address */
	SDP_RDMO_XCHG_DONE = 3,	  /* client -> server: struct sdp_rdmo_xchg_done */
	SDP_RDMO_XCHG_RESULT = 4, /* server -> client: struct sdp_rdmo_xchg_result */
};

struct sdp_rdmo_xchg_hdr {
	uint32_t magic;
	uint16_t type;
	uint16_t reserved; /* 0 */
	uint32_t len;	   /* payload bytes that follow */
};

/* What the client needs to write the server's buffer (then the plugin's address follows). */
struct sdp_rdmo_xchg_info {
	uint64_t client_id; /* urom_rdmo_hdr.id */
	uint64_t ptr_rkey;  /* rkey id covering the append pointer */
	uint64_t data_rkey; /* rkey id covering the append and scatter areas */
	uint64_t ptr_va;    /* the append pointer */
	uint64_t append_va; /* append area */
	uint64_t append_len;
	uint64_t scatter_va; /* scatter area */
	uint64_t scatter_len;
	uint64_t seed; /* the workload's data pattern */
};

/* The client's report: the FLUSH answer it got. */
struct sdp_rdmo_xchg_done {
	uint32_t status; /* doca_error_t of the FLUSH status */
	uint32_t reserved;
	uint64_t failed;
};

/* The server's verdict. */
struct sdp_rdmo_xchg_result {
	uint32_t pass; /* 1: every byte as expected */
	uint32_t reserved;
};

/* Parse a 12-byte header: magic, known type, reserved 0, a length that type allows. */
doca_error_t sdp_rdmo_xchg_hdr_parse(const void *buf, size_t len, struct sdp_rdmo_xchg_hdr *hdr_p);

/* Fill buf (12 bytes) with the header of a message of type and payload length len. */
void sdp_rdmo_xchg_hdr_pack(uint16_t type, uint32_t len, void *buf);

/* INFO payload: the struct and an address of 1 to SDP_RDMO_XCHG_ADDR_MAX bytes (into it). */
doca_error_t sdp_rdmo_xchg_info_parse(const void *buf, size_t len,
				      struct sdp_rdmo_xchg_info *info_p, const void **addr_p,
				      size_t *addr_len_p);

/* DONE payload (reserved 0). */
doca_error_t sdp_rdmo_xchg_done_parse(const void *buf, size_t len,
				      struct sdp_rdmo_xchg_done *done_p);

/* RESULT payload (pass 0 or 1, reserved 0). */
doca_error_t sdp_rdmo_xchg_result_parse(const void *buf, size_t len,
					struct sdp_rdmo_xchg_result *result_p);

#endif /* UROM_RDMO_XCHG_H_ */

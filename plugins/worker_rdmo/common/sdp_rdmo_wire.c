/*
 * worker_rdmo data plane: parsing and packing (see sdp_rdmo_wire.h). Every read is a memcpy
 * from a checked offset, so unaligned input is fine and nothing is read past what was given.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "sdp_rdmo_wire.h"

#include <string.h>

_Static_assert(sizeof(struct urom_rdmo_hdr) == 16, "urom_rdmo_hdr is 16 bytes");
_Static_assert(sizeof(struct urom_rdmo_scatter_iov) == SDP_RDMO_SCATTER_IOV_LEN,
	       "scatter entries are packed to 18 bytes");
_Static_assert(sizeof(struct urom_rdmo_rsp_hdr) + sizeof(struct urom_rdmo_flush_rsp_hdr) ==
		       SDP_RDMO_FLUSH_RSP_HDR_LEN,
	       "a FLUSH response header is 12 bytes");
_Static_assert(sizeof(struct urom_rdmo_hdr) + sizeof(struct urom_rdmo_append_hdr) <=
		       UROM_RDMO_HDR_LEN_MAX,
	       "the longest operation header fits UROM_RDMO_HDR_LEN_MAX");
_Static_assert(sizeof(struct sdp_rdmo_flush_status) == 16, "the flush status is 16 bytes");

/* Length of the operation header that follows urom_rdmo_hdr, 0 for an unknown operation. */
static size_t op_hdr_len(uint32_t op_id)
{
	switch (op_id) {
	case UROM_RDMO_OP_FLUSH:
		return sizeof(struct urom_rdmo_flush_hdr);
	case UROM_RDMO_OP_APPEND:
		return sizeof(struct urom_rdmo_append_hdr);
	case UROM_RDMO_OP_SCATTER:
		return sizeof(struct urom_rdmo_scatter_hdr);
	default:
		return 0;
	}
}

static doca_error_t refuse(const char **why_p, const char *why)
{
	if (why_p != NULL)
		*why_p = why;
	return DOCA_ERROR_INVALID_VALUE;
}

doca_error_t sdp_rdmo_req_parse(const void *header, size_t header_len, size_t data_len,
				struct sdp_rdmo_req *req_p, const char **why_p)
{
	const uint8_t *p = header;
	struct sdp_rdmo_req req;
	size_t body;

	if (header == NULL || req_p == NULL)
		return refuse(why_p, "no header");
	if (header_len < sizeof(req.hdr))
		return refuse(why_p, "header shorter than urom_rdmo_hdr");
	if (header_len > UROM_RDMO_HDR_LEN_MAX)
		return refuse(why_p, "header longer than UROM_RDMO_HDR_LEN_MAX");

	memset(&req, 0, sizeof(req));
	memcpy(&req.hdr, p, sizeof(req.hdr));
	body = op_hdr_len(req.hdr.op_id);
	if (body == 0)
		return refuse(why_p, "unknown operation");
	if ((req.hdr.flags & ~(uint32_t)UROM_RDMO_REQ_FLAG_FENCE) != 0)
		return refuse(why_p, "unknown flags");
	if (header_len != sizeof(req.hdr) + body)
		return refuse(why_p, "header length does not match its operation");
	/* Into the union (each member starts there; append is the largest). */
	memcpy(&req.append, p + sizeof(req.hdr), body);

	switch (req.hdr.op_id) {
	case UROM_RDMO_OP_FLUSH:
		if (data_len != 0)
			return refuse(why_p, "FLUSH with a payload");
		break;
	case UROM_RDMO_OP_APPEND:
		if (data_len == 0)
			return refuse(why_p, "APPEND without data");
		if (data_len > SDP_RDMO_DATA_MAX)
			return refuse(why_p, "APPEND payload longer than SDP_RDMO_DATA_MAX");
		break;
	default: /* UROM_RDMO_OP_SCATTER */
		if (req.scatter.count == 0)
			return refuse(why_p, "SCATTER without entries");
		if (req.scatter.count > SDP_RDMO_SCATTER_MAX)
			return refuse(why_p, "SCATTER with more than SDP_RDMO_SCATTER_MAX entries");
		if (data_len > SDP_RDMO_DATA_MAX)
			return refuse(why_p, "SCATTER payload longer than SDP_RDMO_DATA_MAX");
		/* count <= 1024, so the product cannot overflow. */
		if (data_len < req.scatter.count * (SDP_RDMO_SCATTER_IOV_LEN + 1))
			return refuse(why_p, "SCATTER payload too short for its entries");
		break;
	}

	*req_p = req;
	return DOCA_SUCCESS;
}

doca_error_t sdp_rdmo_scatter_parse(const void *data, size_t data_len, uint64_t count,
				    struct sdp_rdmo_scatter_entry *entries, const char **why_p)
{
	const uint8_t *p = data;
	struct urom_rdmo_scatter_iov iov;
	size_t off = 0;
	uint64_t i;

	if (data == NULL || entries == NULL || count == 0 || count > SDP_RDMO_SCATTER_MAX)
		return refuse(why_p, "no payload or bad entry count");

	for (i = 0; i < count; i++) {
		if (data_len - off < SDP_RDMO_SCATTER_IOV_LEN)
			return refuse(why_p, "SCATTER entry header runs past the payload");
		memcpy(&iov, p + off, SDP_RDMO_SCATTER_IOV_LEN);
		off += SDP_RDMO_SCATTER_IOV_LEN;
		if (iov.len == 0)
			return refuse(why_p, "SCATTER entry without data");
		if (data_len - off < iov.len)
			return refuse(why_p, "SCATTER entry data runs past the payload");
		entries[i].addr = iov.addr;
		entries[i].rkey = iov.rkey;
		entries[i].len = iov.len;
		entries[i].data = p + off;
		off += iov.len;
	}
	if (off != data_len)
		return refuse(why_p, "bytes after the last SCATTER entry");
	return DOCA_SUCCESS;
}

size_t sdp_rdmo_req_pack(const struct sdp_rdmo_req *req, void *buf, size_t cap)
{
	size_t body, len;

	if (req == NULL || buf == NULL)
		return 0;
	body = op_hdr_len(req->hdr.op_id);
	len = sizeof(req->hdr) + body;
	if (body == 0 || cap < len)
		return 0;
	memcpy(buf, &req->hdr, sizeof(req->hdr));
	memcpy((uint8_t *)buf + sizeof(req->hdr), &req->append, body);
	return len;
}

doca_error_t sdp_rdmo_scatter_pack(void *buf, size_t cap, size_t *off_p, uint64_t addr,
				   uint64_t rkey, const void *data, uint16_t len)
{
	struct urom_rdmo_scatter_iov iov;
	size_t off;

	if (buf == NULL || off_p == NULL || data == NULL || len == 0 || *off_p > cap ||
	    cap - *off_p < SDP_RDMO_SCATTER_IOV_LEN + (size_t)len)
		return DOCA_ERROR_INVALID_VALUE;
	off = *off_p;
	iov.addr = addr;
	iov.rkey = rkey;
	iov.len = len;
	memcpy((uint8_t *)buf + off, &iov, SDP_RDMO_SCATTER_IOV_LEN);
	memcpy((uint8_t *)buf + off + SDP_RDMO_SCATTER_IOV_LEN, data, len);
	*off_p = off + SDP_RDMO_SCATTER_IOV_LEN + len;
	return DOCA_SUCCESS;
}

doca_error_t sdp_rdmo_rsp_parse(const void *header, size_t header_len, const void *data,
				size_t data_len, struct sdp_rdmo_rsp *rsp_p, const char **why_p)
{
	const uint8_t *p = header;
	struct sdp_rdmo_rsp rsp;

	if (header == NULL || rsp_p == NULL)
		return refuse(why_p, "no header");
	if (header_len < sizeof(rsp.hdr))
		return refuse(why_p, "header shorter than urom_rdmo_rsp_hdr");

	memset(&rsp, 0, sizeof(rsp));
	memcpy(&rsp.hdr, p, sizeof(rsp.hdr));
	if (rsp.hdr.rsp_id != UROM_RDMO_RSP_FLUSH)
		return refuse(why_p, "unknown response");
	if (header_len != SDP_RDMO_FLUSH_RSP_HDR_LEN)
		return refuse(why_p, "FLUSH response header is not 12 bytes");
	memcpy(&rsp.flush, p + sizeof(rsp.hdr), sizeof(rsp.flush));

	if (data_len == sizeof(rsp.status)) {
		if (data == NULL)
			return refuse(why_p, "no data");
		memcpy(&rsp.status, data, sizeof(rsp.status));
		if (rsp.status.reserved != 0)
			return refuse(why_p, "FLUSH status with reserved bits set");
		rsp.has_status = 1;
	} else if (data_len != 0) {
		return refuse(why_p, "FLUSH response data is neither empty nor a status");
	}

	*rsp_p = rsp;
	return DOCA_SUCCESS;
}

size_t sdp_rdmo_rsp_pack(const struct sdp_rdmo_rsp *rsp, void *buf, size_t cap)
{
	if (rsp == NULL || buf == NULL || rsp->hdr.rsp_id != UROM_RDMO_RSP_FLUSH ||
	    cap < SDP_RDMO_FLUSH_RSP_HDR_LEN)
		return 0;
	memcpy(buf, &rsp->hdr, sizeof(rsp->hdr));
	memcpy((uint8_t *)buf + sizeof(rsp->hdr), &rsp->flush, sizeof(rsp->flush));
	return SDP_RDMO_FLUSH_RSP_HDR_LEN;
}

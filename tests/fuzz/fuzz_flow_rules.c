/*
 * libFuzzer target for DOCA Flow's match setters and rule compiler (issue 15): the bytes of the
 * struct doca_flow_match an application hands doca_flow_pipe_cfg_set_match() (match and mask)
 * and doca_flow_pipe_basic_add_entry(), as the input gives them, through pipe creation
 * (sdp_flow_template_check), entry compilation and the classifier.
 *
 * Setup once: doca_flow in vnf,hws mode on a host-provider device, one port. Per input: a
 * BASIC root pipe whose match (and, when byte 0 says so, mask) template is taken from the input,
 * forwarding to queue 3 and dropping on a miss; one entry whose match is taken from the input;
 * the rest of the input classified as a frame; the pipe destroyed. Checked beyond "no crash"
 * (ASan + UBSan): creation and entry addition answer DOCA_SUCCESS or one of the documented
 * refusals (INVALID_VALUE, NOT_SUPPORTED), the verdict is the pipe's own (forward to queue 3, or
 * drop) or NO_RULES when no pipe was made, the same frame twice gets the same answer, and the
 * port keeps working (a fixed frame classified after every input).
 *
 * SOFTDPU_PROVIDER_PATH must name the host provider's directory. With -DSDP_FUZZ_MAIN this file
 * has its own main() (tests/fuzz/fuzz_main.h): the replay test.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doca_dev.h"
#include "doca_flow.h"
#include "doca_log.h"
#include "sdp_flow.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_QUEUE 3

static struct doca_flow_port *fz_port;

static void fz_die(const char *what, doca_error_t st)
{
	fprintf(stderr, "fuzz_flow_rules: %s (%s)\n", what, doca_error_get_name(st));
	abort();
}

#define FZ_CHECK(call)                                                                             \
	do {                                                                                       \
		doca_error_t fz_st_ = (call);                                                      \
		if (fz_st_ != DOCA_SUCCESS)                                                        \
			fz_die(#call, fz_st_);                                                     \
	} while (0)

static void fz_setup(void)
{
	struct doca_devinfo **list = NULL;
	struct doca_flow_port_cfg *pcfg = NULL;
	struct doca_flow_cfg *cfg = NULL;
	struct doca_dev *dev = NULL;
	char name[64];
	uint32_t n = 0;

	if (doca_devinfo_create_list(&list, &n) != DOCA_SUCCESS)
		fz_die("no device list (SOFTDPU_PROVIDER_PATH: the build's src/providers/host)",
		       DOCA_ERROR_NOT_FOUND);
	for (uint32_t i = 0; i < n && dev == NULL; i++)
		if (doca_devinfo_get_ibdev_name(list[i], name, sizeof(name)) == DOCA_SUCCESS &&
		    strcmp(name, "softdpu0") == 0)
			FZ_CHECK(doca_dev_open(list[i], &dev));
	(void)doca_devinfo_destroy_list(list);
	if (dev == NULL)
		fz_die("no device softdpu0 (SOFTDPU_PROVIDER_PATH)", DOCA_ERROR_NOT_FOUND);
	(void)doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_DISABLE);
	FZ_CHECK(doca_flow_cfg_create(&cfg));
	FZ_CHECK(doca_flow_cfg_set_pipe_queues(cfg, 1));
	FZ_CHECK(doca_flow_cfg_set_mode_args(cfg, "vnf,hws"));
	FZ_CHECK(doca_flow_init(cfg));
	FZ_CHECK(doca_flow_cfg_destroy(cfg));
	FZ_CHECK(doca_flow_port_cfg_create(&pcfg));
	FZ_CHECK(doca_flow_port_cfg_set_port_id(pcfg, 0));
	FZ_CHECK(doca_flow_port_cfg_set_dev(pcfg, dev));
	FZ_CHECK(doca_flow_port_start(pcfg, &fz_port));
	FZ_CHECK(doca_flow_port_cfg_destroy(pcfg));
}

/* A refusal the API documents for an application's bad match. */
static int fz_refusal_ok(doca_error_t st)
{
	return st == DOCA_ERROR_INVALID_VALUE || st == DOCA_ERROR_NOT_SUPPORTED;
}

/* n bytes of the input at *off (zeros past its end). */
static void fz_take(void *dst, size_t n, const uint8_t *data, size_t size, size_t *off)
{
	size_t k = *off < size ? size - *off : 0;

	if (k > n)
		k = n;
	memset(dst, 0, n);
	memcpy(dst, data + *off, k);
	*off += k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t probe[60] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0x08, 0x00, 0x45};
	struct doca_flow_fwd fwd = {.type = DOCA_FLOW_FWD_RSS,
				    .rss_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED};
	struct doca_flow_fwd drop = {.type = DOCA_FLOW_FWD_DROP};
	struct doca_flow_match match, mask, entry;
	struct doca_flow_pipe_cfg *cfg = NULL;
	struct doca_flow_pipe *pipe = NULL;
	struct doca_flow_pipe_entry *e = NULL;
	uint16_t queue = FZ_QUEUE, q1 = 0xffff, q2 = 0xffff;
	size_t off = 1;
	doca_error_t st;
	int v1, v2;

	if (size < 1 || size > 65536)
		return 0;
	if (fz_port == NULL)
		fz_setup();
	fz_take(&match, sizeof(match), data, size, &off);
	if (data[0] & 1)
		fz_take(&mask, sizeof(mask), data, size, &off);
	fz_take(&entry, sizeof(entry), data, size, &off);
	fwd.rss.queues_array = &queue;
	fwd.rss.nr_queues = 1;
	fwd.rss.outer_flags = DOCA_FLOW_RSS_IPV4;

	FZ_CHECK(doca_flow_pipe_cfg_create(&cfg, fz_port));
	FZ_CHECK(doca_flow_pipe_cfg_set_name(cfg, "FUZZ"));
	FZ_CHECK(doca_flow_pipe_cfg_set_type(cfg, DOCA_FLOW_PIPE_BASIC));
	FZ_CHECK(doca_flow_pipe_cfg_set_is_root(cfg, true));
	st = doca_flow_pipe_cfg_set_match(cfg, &match, (data[0] & 1) ? &mask : NULL);
	if (st == DOCA_SUCCESS)
		st = doca_flow_pipe_create(cfg, &fwd, (data[0] & 2) ? &drop : NULL, &pipe);
	if (st != DOCA_SUCCESS && !fz_refusal_ok(st))
		fz_die("a match template refused with an undocumented status", st);
	FZ_CHECK(doca_flow_pipe_cfg_destroy(cfg));
	if (pipe != NULL) {
		st = doca_flow_pipe_basic_add_entry(0, pipe, &entry, 0, NULL, NULL, NULL,
						    DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, NULL, &e);
		if (st != DOCA_SUCCESS && !fz_refusal_ok(st))
			fz_die("an entry refused with an undocumented status", st);
		(void)doca_flow_entries_process(fz_port, 0, 0, 0);
	}
	v1 = sdp_flow_classify(fz_port, data + (off < size ? off : size),
			       (uint32_t)(off < size ? size - off : 0), &q1);
	v2 = sdp_flow_classify(fz_port, data + (off < size ? off : size),
			       (uint32_t)(off < size ? size - off : 0), &q2);
	if (v1 != v2 || (v1 == SDP_FLOW_FORWARD && q1 != q2))
		fz_die("the same frame classified twice got two answers", DOCA_SUCCESS);
	if (pipe == NULL && v1 != SDP_FLOW_NO_RULES)
		fz_die("a verdict without a root pipe", DOCA_SUCCESS);
	if (pipe != NULL && !(v1 == SDP_FLOW_FORWARD && q1 == FZ_QUEUE) && v1 != SDP_FLOW_DROP &&
	    v1 != SDP_FLOW_MISS)
		fz_die("a verdict the pipe cannot give", DOCA_SUCCESS);
	if (pipe != NULL)
		doca_flow_pipe_destroy(pipe);
	/* the port still answers: no root pipe now */
	if (sdp_flow_classify(fz_port, probe, sizeof(probe), &q1) != SDP_FLOW_NO_RULES)
		fz_die("the port kept a destroyed pipe", DOCA_SUCCESS);
	return 0;
}

#ifdef SDP_FUZZ_MAIN
#include "fuzz_main.h"

/* Templates with a few plausible fields set (often all-ones masks), then a frame. */
static size_t fuzz_generate(uint8_t *buf, size_t cap)
{
	struct doca_flow_match m, k, en;
	size_t off = 0, flen = fuzz_rnd() % 120;
	uint8_t flags = (uint8_t)(fuzz_rnd() % 4);

	memset(&m, 0, sizeof(m));
	memset(&k, 0, sizeof(k));
	memset(&en, 0, sizeof(en));
	switch (fuzz_rnd() % 5) {
	case 0:
		m.parser_meta.outer_l3_type = (uint32_t)(fuzz_rnd() % 4);
		m.parser_meta.outer_l4_type = (uint32_t)(fuzz_rnd() % 5);
		break;
	case 1:
		m.outer.l3_type = DOCA_FLOW_L3_TYPE_IP4;
		m.outer.ip4.src_ip = 0xffffffff;
		m.outer.l4_type_ext = (uint32_t)(fuzz_rnd() % 6);
		m.outer.udp.l4_port.dst_port = 0xffff;
		break;
	case 2:
		m.outer.eth.type = 0xffff;
		break;
	case 3:
		for (size_t i = 0; i < sizeof(m); i++)
			((uint8_t *)&m)[i] = fuzz_rnd() % 8 == 0 ? (uint8_t)fuzz_rnd() : 0;
		break;
	default:
		break;
	}
	k = m;
	en = m;
	if (fuzz_rnd() % 2)
		en.outer.ip4.src_ip = (uint32_t)fuzz_rnd();
	if (cap < 1 + 3 * sizeof(m) + flen)
		return 0;
	buf[off++] = flags;
	memcpy(buf + off, &m, sizeof(m));
	off += sizeof(m);
	if (flags & 1) {
		memcpy(buf + off, &k, sizeof(k));
		off += sizeof(k);
	}
	memcpy(buf + off, &en, sizeof(en));
	off += sizeof(en);
	for (size_t i = 0; i < flen; i++)
		buf[off + i] = (uint8_t)fuzz_rnd();
	if (flen >= 14) {
		buf[off + 12] = 0x08;
		buf[off + 13] = 0x00;
	}
	return off + flen;
}
#endif /* SDP_FUZZ_MAIN */

/*
 * libFuzzer target for the command unpackers of every shipped plugin's worker half (issue 15):
 * worker_graph, worker_sandbox, worker_rdmo, worker_rma and worker_coll, each dlopen()ed and
 * opened once in this process as the worker runtime would (its own UCP worker where the plugin
 * makes one), with a domain of one member, itself: member 0's address is the instance's own;
 * every segment, memh and mkey lookup answers NOT_FOUND (no memory is exported, so no command
 * may move a byte).
 *
 * Input: a sequence of commands, each [plugin selector byte][length: 2 bytes, little endian]
 * [that many bytes of plugin command], cut at the end of the input. Each command goes to
 * worker_cmd as the runtime hands it over (a malloc()ed descriptor, the header's len equal to
 * the bytes given), then every plugin is progressed until it stays quiet. Checked beyond "no
 * crash, no leak" (ASan + UBSan): every notification names its plugin, the host connection and a
 * command of this run that was not answered before (no answer twice, none invented), carries a
 * doca_error_t in 0..31, and packs with notif_pack into a buffer of the runtime's message size
 * with a length inside that buffer. Commands that legitimately wait (an active-message receive,
 * a team member that never comes) stay pending; the plugins are closed at exit.
 *
 * UCX's own blobs are the one exception: worker_rdmo's CLIENT_INIT and RQ_CREATE carry a UCP
 * worker address and MR_REG a packed UCP remote key, which the plugin hands to UCX as they are,
 * and UCX 1.13 asserts (aborts the worker) on a malformed one (ucp_address_unpack: "addr
 * version"). They come from the authenticated host's own UCX library (docs/urom-service.md,
 * "Trust boundary"), so here the address is replaced by a real one (the rdmo instance's own) and
 * an MR_REG's rkey length by 0 (refused); the rest of those commands stays fuzzed.
 *
 * The plugins are named by SDP_FUZZ_PLUGINS: a colon-separated list of worker_*.so paths.
 * With -DSDP_FUZZ_MAIN this file has its own main() (tests/fuzz/fuzz_main.h): the replay test.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doca_urom_plugin.h"
#include "urom_rdmo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define MAX_PLUGINS 8
#define HOST_DEST 77
#define MSG_SIZE 65536		 /* the message size the plugins are told (runtime default) */
#define MAX_CMDS_PER_INPUT 64	 /* commands taken from one input */
#define QUIET_ROUNDS 4		 /* progress rounds without a notification that end an input */
#define MAX_ROUNDS 256		 /* progress rounds per input at most */
#define ANSWERED_BITS (1u << 22) /* cookies remembered (answered or not) */

typedef doca_error_t (*get_iface_fn)(struct urom_plugin_iface *iface);

struct fz_plugin {
	char name[64];
	struct urom_plugin_iface iface;
	struct urom_worker_ctx ctx;
	void *addr;
	size_t addr_len;
	uint64_t id; /* the command type the runtime routes by */
	int rdmo;    /* worker_rdmo (see fz_rdmo_fix) */
};

static struct fz_plugin fz_plugins[MAX_PLUGINS];
static int fz_nplugins = -1;
static uint64_t fz_next_cookie = 1;
static uint8_t *fz_answered; /* bit per cookie */
static uint8_t *fz_packbuf;

static void fz_die(const char *what)
{
	fprintf(stderr, "fuzz_plugin_cmd: %s\n", what);
	abort();
}

/* Member 0 is the instance itself; nothing else exists. */
static doca_error_t fz_lookup_addr(struct urom_worker_ctx *ctx, uint64_t domain_id, void **addr)
{
	for (int i = 0; i < fz_nplugins; i++)
		if (&fz_plugins[i].ctx == ctx) {
			if (addr == NULL)
				return DOCA_ERROR_INVALID_VALUE;
			if (domain_id != 0 || fz_plugins[i].addr == NULL)
				return DOCA_ERROR_NOT_FOUND;
			*addr = fz_plugins[i].addr;
			return DOCA_SUCCESS;
		}
	return DOCA_ERROR_NOT_FOUND;
}

static doca_error_t fz_lookup_seg(struct urom_worker_ctx *ctx, uint64_t domain_id, uint64_t va,
				  int *seg)
{
	(void)ctx;
	(void)domain_id;
	(void)va;
	return seg == NULL ? DOCA_ERROR_INVALID_VALUE : DOCA_ERROR_NOT_FOUND;
}

static doca_error_t fz_lookup_key(struct urom_worker_ctx *ctx, uint64_t domain_id, int seg,
				  size_t *len, void **key)
{
	(void)ctx;
	(void)domain_id;
	(void)seg;
	return len == NULL || key == NULL ? DOCA_ERROR_INVALID_VALUE : DOCA_ERROR_NOT_FOUND;
}

static void fz_close_all(void)
{
	for (int i = 0; i < fz_nplugins; i++) {
		fz_plugins[i].iface.close(&fz_plugins[i].ctx);
		free(fz_plugins[i].addr);
	}
	fz_nplugins = 0;
	free(fz_answered);
	free(fz_packbuf);
}

static void fz_open_one(const char *path)
{
	struct fz_plugin *p = &fz_plugins[fz_nplugins];
	void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	get_iface_fn get_iface;
	const char *base = strrchr(path, '/');
	size_t len = 0;

	if (dl == NULL) {
		fprintf(stderr, "fuzz_plugin_cmd: %s\n", dlerror());
		abort();
	}
	get_iface = (get_iface_fn)dlsym(dl, "urom_plugin_get_iface");
	if (get_iface == NULL || get_iface(&p->iface) != DOCA_SUCCESS || p->iface.open == NULL ||
	    p->iface.close == NULL || p->iface.worker_cmd == NULL || p->iface.progress == NULL ||
	    p->iface.notif_pack == NULL)
		fz_die("a plugin without the full iface");
	snprintf(p->name, sizeof(p->name), "%s", base != NULL ? base + 1 : path);
	p->rdmo = strncmp(p->name, "worker_rdmo", 11) == 0;
	p->id = 1ull << fz_nplugins;
	p->ctx.domain_iface.addr_lookup = fz_lookup_addr;
	p->ctx.domain_iface.seg_lookup = fz_lookup_seg;
	p->ctx.domain_iface.memh_lookup = fz_lookup_key;
	p->ctx.domain_iface.mkey_lookup = fz_lookup_key;
	if (p->iface.open(&p->ctx) != DOCA_SUCCESS)
		fz_die("a plugin did not open");
	if (p->iface.addr != NULL &&
	    p->iface.addr(&p->ctx, NULL, &len) == DOCA_ERROR_INVALID_VALUE && len > 0) {
		p->addr = malloc(len);
		p->addr_len = len;
		if (p->addr == NULL ||
		    p->iface.addr(&p->ctx, p->addr, &p->addr_len) != DOCA_SUCCESS) {
			free(p->addr);
			p->addr = NULL;
		}
	}
	fz_nplugins++;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *list = getenv("SDP_FUZZ_PLUGINS");
	char *copy, *save = NULL;

	(void)argc;
	(void)argv;
	if (fz_nplugins >= 0)
		return 0;
	fz_nplugins = 0;
	if (list == NULL || *list == '\0')
		fz_die("SDP_FUZZ_PLUGINS (worker_*.so paths, colon-separated) is not set");
	setenv("SDP_UROM_WORKER_MAX_MSG_SIZE", "65536", 0);
	setenv("UCX_NET_DEVICES", "lo", 0);
	fz_answered = calloc(ANSWERED_BITS / 8, 1);
	fz_packbuf = malloc(MSG_SIZE);
	copy = strdup(list);
	if (fz_answered == NULL || fz_packbuf == NULL || copy == NULL)
		fz_die("out of memory");
	for (char *s = strtok_r(copy, ":", &save); s != NULL && fz_nplugins < MAX_PLUGINS;
	     s = strtok_r(NULL, ":", &save))
		fz_open_one(s);
	free(copy);
	if (fz_nplugins == 0)
		fz_die("no plugin named in SDP_FUZZ_PLUGINS");
	atexit(fz_close_all);
	return 0;
}

static void fz_check_notif(struct fz_plugin *p, struct urom_worker_notif_desc *nd)
{
	struct urom_worker_notify *n = &nd->worker_notif;
	uint64_t c = n->urom_context;
	size_t len = MSG_SIZE;
	doca_error_t st;

	if (nd->dest_id != HOST_DEST)
		fz_die("a notification for another host connection");
	if (n->type != p->id)
		fz_die("a notification with another plugin's id");
	if (c == 0 || c >= fz_next_cookie)
		fz_die("a notification for a command never given");
	if (c < ANSWERED_BITS) {
		if (fz_answered[c / 8] & (1u << (c % 8)))
			fz_die("a command answered twice");
		fz_answered[c / 8] |= (uint8_t)(1u << (c % 8));
	}
	if ((unsigned)n->status > 31u)
		fz_die("a status outside doca_error_t");
	st = p->iface.notif_pack(n, &len, fz_packbuf);
	if (st == DOCA_SUCCESS && (len < sizeof(*n) || len > MSG_SIZE))
		fz_die("notif_pack reported a length outside its buffer");
	if (st != DOCA_SUCCESS && st != DOCA_ERROR_INVALID_VALUE)
		fz_die("notif_pack failed with an unexpected status");
}

/* Progress every plugin until QUIET_ROUNDS rounds pass without a notification. */
static void fz_progress(void)
{
	int quiet = 0;

	for (int round = 0; round < MAX_ROUNDS && quiet < QUIET_ROUNDS; round++) {
		int got = 0;

		for (int i = 0; i < fz_nplugins; i++) {
			struct fz_plugin *p = &fz_plugins[i];
			ucs_list_link_t list;

			ucs_list_head_init(&list);
			(void)p->iface.progress(&p->ctx, &list);
			while (!ucs_list_is_empty(&list)) {
				struct urom_worker_notif_desc *nd = ucs_list_extract_head(
					&list, struct urom_worker_notif_desc, entry);

				fz_check_notif(p, nd);
				free(nd);
				got++;
			}
		}
		quiet = got ? 0 : quiet + 1;
	}
}

/* worker_rdmo: UCX blobs from the host's UCX made real (see the top of this file). */
static void fz_rdmo_fix(const struct fz_plugin *p, struct urom_worker_cmd *cmd)
{
	struct urom_worker_rdmo_cmd rc;

	if (cmd->len < sizeof(rc))
		return;
	memcpy(&rc, cmd->plugin_cmd, sizeof(rc));
	if ((rc.type == UROM_WORKER_CMD_RDMO_CLIENT_INIT ||
	     rc.type == UROM_WORKER_CMD_RDMO_RQ_CREATE) &&
	    p->addr != NULL) {
		rc.client_init.addr_len = p->addr_len; /* the same offset in both commands */
		memcpy(cmd->plugin_cmd, &rc, sizeof(rc));
		memcpy(cmd->plugin_cmd + sizeof(rc), p->addr, p->addr_len);
		cmd->len = sizeof(rc) + p->addr_len;
	} else if (rc.type == UROM_WORKER_CMD_RDMO_MR_REG) {
		rc.mr_reg.packed_rkey_len = 0;
		memcpy(cmd->plugin_cmd, &rc, sizeof(rc));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0;
	int ncmd = 0;

	if (fz_nplugins < 0)
		LLVMFuzzerInitialize(NULL, NULL);
	while (off + 3 <= size && ncmd < MAX_CMDS_PER_INPUT) {
		struct fz_plugin *p = &fz_plugins[data[off] % fz_nplugins];
		size_t len = (size_t)data[off + 1] | (size_t)data[off + 2] << 8;
		struct urom_worker_cmd_desc *cd;
		ucs_list_link_t list;

		off += 3;
		if (len > size - off)
			len = size - off;
		cd = malloc(sizeof(*cd) + len + (p->rdmo ? p->addr_len : 0) + 1);
		if (cd == NULL)
			fz_die("out of memory");
		cd->dest_id = HOST_DEST;
		cd->worker_cmd.type = p->id;
		cd->worker_cmd.urom_context = fz_next_cookie++;
		cd->worker_cmd.len = len;
		memcpy(cd->worker_cmd.plugin_cmd, data + off, len);
		off += len;
		if (p->rdmo)
			fz_rdmo_fix(p, &cd->worker_cmd);
		ncmd++;
		ucs_list_head_init(&list);
		ucs_list_add_tail(&list, &cd->entry);
		(void)p->iface.worker_cmd(&p->ctx, &list);
		if (!ucs_list_is_empty(&list))
			fz_die("worker_cmd left a command in the list it was given");
	}
	fz_progress();
	return 0;
}

#ifdef SDP_FUZZ_MAIN
#include "fuzz_main.h"

/* A small value, a boundary, or noise: what command fields are most often checked against. */
static uint64_t fz_field(void)
{
	static const uint64_t edge[] = {
		0,	    1,		2,	   3,	 4,	7,	    8,
		16,	    63,		64,	   4096, 65536, 1ull << 30, (1ull << 30) + 1,
		UINT32_MAX, UINT64_MAX, 1ull << 63};
	uint64_t r = fuzz_rnd();

	switch (r % 4) {
	case 0:
		return (r >> 8) % 16;
	case 1:
		return edge[(r >> 8) % (sizeof(edge) / sizeof(edge[0]))];
	case 2:
		return 0x10000000ull + ((r >> 8) & 0xffff) * 8;
	default:
		return fuzz_rnd();
	}
}

/* 1..8 commands: a type in 0..15, then fields, sometimes a tail of bytes; lengths vary. */
static size_t fuzz_generate(uint8_t *buf, size_t cap)
{
	size_t off = 0;
	int n = 1 + (int)(fuzz_rnd() % 8);

	for (int k = 0; k < n && off + 3 + 8 <= cap; k++) {
		/* the plugins' command structs are 32..168 bytes; sometimes with a tail */
		static const size_t sizes[] = {32, 40,	48,  56,  64,  72, 80,
					       96, 104, 112, 128, 136, 168};
		size_t nf = fuzz_rnd() % 24, len = 8 + nf * 8;
		uint64_t type = fuzz_rnd() % 16;

		if (fuzz_rnd() % 2 == 0)
			len = sizes[fuzz_rnd() % (sizeof(sizes) / sizeof(sizes[0]))];
		if (fuzz_rnd() % 3 == 0)
			len += fuzz_rnd() % 200;
		if (fuzz_rnd() % 8 == 0)
			len = fuzz_rnd() % 8; /* shorter than a type */
		if (off + 3 + len > cap)
			len = cap - off - 3;
		buf[off] = (uint8_t)fuzz_rnd();
		buf[off + 1] = (uint8_t)len;
		buf[off + 2] = (uint8_t)(len >> 8);
		off += 3;
		for (size_t i = 0; i < len; i += 8) {
			uint64_t v = i == 0 ? type : fz_field();

			memcpy(buf + off + i, &v, len - i < 8 ? len - i : 8);
		}
		off += len;
	}
	return off;
}
#endif /* SDP_FUZZ_MAIN */

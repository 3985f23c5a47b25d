/*
 * UROM plugin loading and the worker_graph plugin's ops, driven directly (no worker process):
 * the loader's acceptance rules (missing symbols, wrong API version, not a plugin, a constructor
 * that crashes), the stubs it puts in place of NULL ops, and worker_graph's open / addr /
 * worker_cmd / progress / notif_pack / close, error paths included.
 *
 * usage: test_urom_plugin_load <worker_graph.so> <fixtures dir> <sparse plugin.so>
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <dlfcn.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "doca_urom_plugin.h"
#include "doca_version.h"
#include "sdp_urom_plugin.h"
#include "t_helpers.h"
#include "worker_graph.h"

static const char *fixtures_dir;

static const char *fixture(const char *name)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", fixtures_dir, name);
	return path;
}

static int is_zeroed(const struct sdp_urom_plugin *p)
{
	static const struct sdp_urom_plugin zero;

	return memcmp(p, &zero, sizeof(zero)) == 0;
}

static struct urom_worker_cmd_desc *make_cmd(uint64_t dest_id, uint64_t type, uint64_t context,
					     uint64_t graph_type, uint64_t data, size_t len)
{
	struct urom_worker_graph_cmd cmd = {.type = graph_type, .loopback = {.data = data}};
	struct urom_worker_cmd_desc *desc = calloc(1, sizeof(*desc) + sizeof(cmd));

	if (desc == NULL) {
		fprintf(stderr, "out of memory\n");
		exit(T_EXIT_FAIL);
	}
	desc->dest_id = dest_id;
	desc->worker_cmd.type = type;
	desc->worker_cmd.urom_context = context;
	desc->worker_cmd.len = len;
	memcpy(desc->worker_cmd.plugin_cmd, &cmd, sizeof(cmd));
	return desc;
}

static void test_names(void)
{
	char name[DOCA_UROM_PLUGIN_NAME_MAX_LEN];
	char long_path[80];

	T_OK(sdp_urom_plugin_name("/usr/lib/softdpu/plugins/worker_graph.so", name));
	T_EQ_STR(name, "worker_graph");
	T_OK(sdp_urom_plugin_name("plain", name));
	T_EQ_STR(name, "plain");
	T_OK(sdp_urom_plugin_name("dir/x.so.1", name));
	T_EQ_STR(name, "x.so.1");
	T_STATUS(sdp_urom_plugin_name("/dir/.so", name), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_plugin_name("/dir/", name), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_plugin_name(NULL, name), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_plugin_name("a.so", NULL), DOCA_ERROR_INVALID_VALUE);

	/* 47 characters fit (with the NUL), 48 do not. */
	memset(long_path, 'n', 47);
	strcpy(long_path + 47, ".so");
	T_OK(sdp_urom_plugin_name(long_path, name));
	T_EQ_INT(strlen(name), 47);
	memset(long_path, 'n', 48);
	strcpy(long_path + 48, ".so");
	T_STATUS(sdp_urom_plugin_name(long_path, name), DOCA_ERROR_INVALID_VALUE);
}

static void test_refused(void)
{
	struct sdp_urom_plugin p;

	memset(&p, 0, sizeof(p));
	T_STATUS(sdp_urom_plugin_load(NULL, 1, &p), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_plugin_load(fixture("not_a_plugin.so"), 1, NULL),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_plugin_load(fixture("does_not_exist.so"), 1, &p), DOCA_ERROR_NOT_FOUND);
	T_TRUE(is_zeroed(&p));
	T_STATUS(sdp_urom_plugin_load(fixture("not_a_plugin.so"), 1, &p), DOCA_ERROR_NOT_FOUND);
	T_TRUE(is_zeroed(&p));
	T_STATUS(sdp_urom_plugin_load(fixture("missing_symbol.so"), 1, &p), DOCA_ERROR_NOT_FOUND);
	T_TRUE(is_zeroed(&p));
	T_STATUS(sdp_urom_plugin_load(fixture("wrong_api_version.so"), 1, &p),
		 DOCA_ERROR_UNSUPPORTED_VERSION);
	T_TRUE(is_zeroed(&p));
	T_STATUS(sdp_urom_plugin_open(&p), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_plugin_open(NULL), DOCA_ERROR_INVALID_VALUE);
	sdp_urom_plugin_unload(&p); /* zeroed: nothing to do */
	sdp_urom_plugin_unload(NULL);
}

/* Loading the crashing fixture kills whoever loads it: do it in a child. */
static void test_crash_on_load(void)
{
	struct sdp_urom_plugin p;
	int wstatus = 0;
	pid_t pid;

	pid = fork();
	if (pid < 0) {
		t_fail("fork: %m");
		return;
	}
	if (pid == 0) {
		memset(&p, 0, sizeof(p));
		(void)sdp_urom_plugin_load(fixture("crash_on_load.so"), 1, &p);
		_exit(0);
	}
	T_EQ_INT(waitpid(pid, &wstatus, 0), pid);
	/* Killed by SIGSEGV, or (under ASan, which catches it) aborted / exited with an error. */
	T_TRUE(WIFSIGNALED(wstatus) || (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) != 0));
}

static void test_sparse(const char *path)
{
	struct urom_worker_cmd_desc *desc;
	ucs_list_link_t list;
	struct urom_worker_notify notif;
	struct sdp_urom_plugin p;
	uint8_t buf[64];
	size_t len = sizeof(buf);
	void *addr = NULL;
	int seg = 0;

	memset(&p, 0, sizeof(p));
	T_OK(sdp_urom_plugin_load(path, 0x4, &p));
	T_EQ_INT(p.version, 0x7);
	T_OK(sdp_urom_plugin_open(&p));
	T_TRUE(p.addr == NULL && p.addr_len == 0);

	/* Every op the plugin left NULL is a stub that refuses politely. */
	T_TRUE(p.ctx.iface.addr != NULL && p.ctx.iface.worker_cmd != NULL &&
	       p.ctx.iface.progress != NULL && p.ctx.iface.notif_pack != NULL);
	T_STATUS(p.ctx.iface.addr(&p.ctx, buf, &len), DOCA_ERROR_NOT_SUPPORTED);
	T_EQ_INT(len, sizeof(buf));

	desc = make_cmd(1, 0x4, 9, UROM_WORKER_CMD_GRAPH_LOOPBACK, 1, 16);
	ucs_list_head_init(&list);
	ucs_list_add_tail(&list, &desc->entry);
	T_STATUS(p.ctx.iface.worker_cmd(&p.ctx, &list), DOCA_ERROR_NOT_SUPPORTED);
	T_EQ_INT(ucs_list_length(&list), 1); /* not taken: still the caller's */
	free(desc);

	ucs_list_head_init(&list);
	T_STATUS(p.ctx.iface.progress(&p.ctx, &list), DOCA_ERROR_NOT_SUPPORTED);
	T_TRUE(ucs_list_is_empty(&list));
	memset(&notif, 0, sizeof(notif));
	T_STATUS(p.ctx.iface.notif_pack(&notif, &len, buf), DOCA_ERROR_NOT_SUPPORTED);

	/* The domain lookups know no domain yet. */
	T_STATUS(doca_urom_worker_domain_addr_lookup(&p.ctx, 0, &addr), DOCA_ERROR_NOT_FOUND);
	T_STATUS(doca_urom_worker_domain_seg_lookup(&p.ctx, 0, 0x10, &seg), DOCA_ERROR_NOT_FOUND);
	T_STATUS(doca_urom_worker_domain_memh_lookup(&p.ctx, 0, 0, &len, &addr),
		 DOCA_ERROR_NOT_FOUND);
	T_STATUS(doca_urom_worker_domain_mkey_lookup(&p.ctx, 0, 0, &len, &addr),
		 DOCA_ERROR_NOT_FOUND);
	T_STATUS(doca_urom_worker_domain_addr_lookup(&p.ctx, 0, NULL), DOCA_ERROR_INVALID_VALUE);

	sdp_urom_plugin_unload(&p);
	T_TRUE(is_zeroed(&p));
}

/* Pull the single notification progress hands out; NULL (and a failure) otherwise. */
static struct urom_worker_notif_desc *progress_one(struct sdp_urom_plugin *p)
{
	struct urom_worker_notif_desc *nd;
	ucs_list_link_t list;

	ucs_list_head_init(&list);
	T_OK(p->ctx.iface.progress(&p->ctx, &list));
	if (ucs_list_length(&list) != 1) {
		t_fail("expected 1 notification, got %lu", ucs_list_length(&list));
		while (!ucs_list_is_empty(&list))
			free(ucs_list_extract_head(&list, struct urom_worker_notif_desc, entry));
		return NULL;
	}
	nd = ucs_list_extract_head(&list, struct urom_worker_notif_desc, entry);
	return nd;
}

static void test_graph(const char *path)
{
	struct urom_worker_notify_graph gnotif;
	struct urom_worker_notif_desc *nd;
	struct sdp_urom_plugin p;
	ucs_list_link_t list;
	uint8_t buf[128];
	size_t len;
	doca_error_t (*get_version)(uint64_t *);
	doca_error_t (*get_iface)(struct urom_plugin_iface *);
	uint64_t version = 0;
	int i;

	memset(&p, 0, sizeof(p));
	T_OK(sdp_urom_plugin_load(path, 0x2, &p));
	T_EQ_STR(p.name, "worker_graph");
	T_EQ_INT(p.id, 0x2);
	T_EQ_INT(p.version, UROM_WORKER_GRAPH_VERSION);
	T_EQ_INT(p.ctx.iface.__doca_api_version, DOCA_VERSION_EXACT);
	T_OK(sdp_urom_plugin_open(&p));
	T_STATUS(sdp_urom_plugin_open(&p), DOCA_ERROR_INVALID_VALUE); /* already open */
	T_TRUE(p.addr != NULL && p.addr_len > 0);

	/* addr: the two-call size protocol. */
	len = 0;
	T_STATUS(p.ctx.iface.addr(&p.ctx, buf, &len), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(len, p.addr_len);
	len = p.addr_len - 1;
	T_STATUS(p.ctx.iface.addr(&p.ctx, buf, &len), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(len, p.addr_len);
	len = sizeof(buf);
	T_OK(p.ctx.iface.addr(&p.ctx, buf, &len));
	T_EQ_INT(len, p.addr_len);
	T_TRUE(memcmp(buf, p.addr, len) == 0);
	T_STATUS(p.ctx.iface.addr(&p.ctx, buf, NULL), DOCA_ERROR_INVALID_VALUE);

	/* Nothing queued yet. */
	ucs_list_head_init(&list);
	T_STATUS(p.ctx.iface.progress(&p.ctx, &list), DOCA_ERROR_EMPTY);
	T_STATUS(p.ctx.iface.progress(&p.ctx, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(p.ctx.iface.worker_cmd(&p.ctx, NULL), DOCA_ERROR_INVALID_VALUE);

	/* LOOPBACK echoes the value, the context and the dest id. */
	ucs_list_head_init(&list);
	ucs_list_add_tail(&list, &make_cmd(77, 0x2, 0xc0ffee, UROM_WORKER_CMD_GRAPH_LOOPBACK,
					   0x1122334455667788ull, 16)
					  ->entry);
	T_OK(p.ctx.iface.worker_cmd(&p.ctx, &list));
	T_TRUE(ucs_list_is_empty(&list));
	nd = progress_one(&p);
	if (nd != NULL) {
		T_EQ_INT(nd->dest_id, 77);
		T_EQ_INT(nd->worker_notif.type, 0x2);
		T_EQ_INT(nd->worker_notif.urom_context, 0xc0ffee);
		T_EQ_INT(nd->worker_notif.status, DOCA_SUCCESS);
		T_EQ_INT(nd->worker_notif.len, sizeof(gnotif));
		memcpy(&gnotif, nd->worker_notif.plugin_notif, sizeof(gnotif));
		T_EQ_INT(gnotif.type, UROM_WORKER_NOTIFY_GRAPH_LOOPBACK);
		T_TRUE(gnotif.loopback.data == 0x1122334455667788ull);

		/* notif_pack: header + payload, and nothing when it does not fit. */
		len = 40;
		T_STATUS(p.ctx.iface.notif_pack(&nd->worker_notif, &len, buf), DOCA_ERROR_TOO_BIG);
		T_EQ_INT(len, 40);
		T_STATUS(p.ctx.iface.notif_pack(NULL, &len, buf), DOCA_ERROR_INVALID_VALUE);
		T_STATUS(p.ctx.iface.notif_pack(&nd->worker_notif, NULL, buf),
			 DOCA_ERROR_INVALID_VALUE);
		len = sizeof(buf);
		T_OK(p.ctx.iface.notif_pack(&nd->worker_notif, &len, buf));
		T_EQ_INT(len, 32 + sizeof(gnotif));
		T_TRUE(memcmp(buf, &nd->worker_notif, len) == 0);
		free(nd);
	}
	T_STATUS(p.ctx.iface.progress(&p.ctx, &list), DOCA_ERROR_EMPTY);

	/* Unknown graph command: consumed (freed once), answered with INVALID_VALUE. */
	ucs_list_add_tail(&list, &make_cmd(5, 0x2, 42, 99, 1, 16)->entry);
	T_STATUS(p.ctx.iface.worker_cmd(&p.ctx, &list), DOCA_ERROR_INVALID_VALUE);
	T_TRUE(ucs_list_is_empty(&list));
	nd = progress_one(&p);
	if (nd != NULL) {
		T_EQ_INT(nd->dest_id, 5);
		T_EQ_INT(nd->worker_notif.urom_context, 42);
		T_EQ_INT(nd->worker_notif.status, DOCA_ERROR_INVALID_VALUE);
		T_EQ_INT(nd->worker_notif.len, 0);
		len = sizeof(buf);
		T_OK(p.ctx.iface.notif_pack(&nd->worker_notif, &len, buf));
		T_EQ_INT(len, 32);
		free(nd);
	}

	/* A payload of the wrong length: same. */
	ucs_list_add_tail(&list,
			  &make_cmd(6, 0x2, 43, UROM_WORKER_CMD_GRAPH_LOOPBACK, 1, 8)->entry);
	T_STATUS(p.ctx.iface.worker_cmd(&p.ctx, &list), DOCA_ERROR_INVALID_VALUE);
	nd = progress_one(&p);
	if (nd != NULL) {
		T_EQ_INT(nd->worker_notif.urom_context, 43);
		T_EQ_INT(nd->worker_notif.status, DOCA_ERROR_INVALID_VALUE);
		free(nd);
	}

	/* Several commands in one list: one notification each, in order. */
	for (i = 0; i < 5; i++)
		ucs_list_add_tail(&list, &make_cmd(9, 0x2, 100 + i, UROM_WORKER_CMD_GRAPH_LOOPBACK,
						   1000 + i, 16)
						  ->entry);
	T_OK(p.ctx.iface.worker_cmd(&p.ctx, &list));
	ucs_list_head_init(&list);
	T_OK(p.ctx.iface.progress(&p.ctx, &list));
	T_EQ_INT(ucs_list_length(&list), 5);
	for (i = 0; i < 5 && !ucs_list_is_empty(&list); i++) {
		nd = ucs_list_extract_head(&list, struct urom_worker_notif_desc, entry);
		memcpy(&gnotif, nd->worker_notif.plugin_notif, sizeof(gnotif));
		T_EQ_INT(nd->worker_notif.urom_context, 100 + i);
		T_EQ_INT(gnotif.loopback.data, 1000 + i);
		free(nd);
	}

	/* Closing with notifications still queued frees them (checked by LeakSanitizer). */
	ucs_list_add_tail(&list,
			  &make_cmd(9, 0x2, 1, UROM_WORKER_CMD_GRAPH_LOOPBACK, 1, 16)->entry);
	T_OK(p.ctx.iface.worker_cmd(&p.ctx, &list));

	/* The exported entry points refuse NULL. */
	*(void **)&get_version = dlsym(p.dl, "urom_plugin_get_version");
	*(void **)&get_iface = dlsym(p.dl, "urom_plugin_get_iface");
	T_TRUE(get_version != NULL && get_iface != NULL);
	if (get_version != NULL && get_iface != NULL) {
		T_STATUS(get_version(NULL), DOCA_ERROR_INVALID_VALUE);
		T_STATUS(get_iface(NULL), DOCA_ERROR_INVALID_VALUE);
		T_OK(get_version(&version));
		T_EQ_INT(version, 0x01);
	}

	sdp_urom_plugin_unload(&p);
	T_TRUE(is_zeroed(&p));
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s <worker_graph.so> <fixtures dir> <sparse plugin.so>\n",
			argv[0]);
		return T_EXIT_FAIL;
	}
	fixtures_dir = argv[2];

	test_names();
	test_refused();
	test_crash_on_load();
	test_sparse(argv[3]);
	test_graph(argv[1]);
	T_DONE();
}

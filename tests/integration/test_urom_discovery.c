/*
 * Integration: plugin discovery. The daemon scans UROM_PLUGIN_PATH = <fixtures>;<worker_graph
 * dir>, where the fixtures (tests/integration/plugins) are plugins it must skip: one missing a
 * required symbol, one that crashes while loading, one built for another DOCA API version and a
 * .so that is no plugin at all, linked into a directory of the test's own; the good plugin is
 * the real worker_graph.so. It must list only worker_graph with a single-bit id, survive the
 * crashing one, report each skipped file with a reason (status JSON) and name it in its log,
 * keep the id stable across connections, run workers with the id it reported, and refuse a mask
 * naming no plugin. Then, with the scanner_dies fixture first in the path: a scanner killed
 * between two files is restarted from the first file without an outcome (worker_graph is still
 * found), and a scanner that keeps dying without progress is given up after a few restarts,
 * the files left skipped with that reason.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "t_urom.h"
#include "t_urom_raw.h"
#include "t_uromd.h"

/* True when the status JSON lists a skipped file whose path ends in name, with a reason. */
static int status_skipped_has_reason(const char *json, const char *name)
{
	struct json_object *root = json_tokener_parse(json), *skipped, *e, *v;
	size_t i, n, len = strlen(name);
	int found = 0;

	if (root == NULL)
		return 0;
	if (json_object_object_get_ex(root, "skipped", &skipped) &&
	    json_object_is_type(skipped, json_type_array)) {
		n = json_object_array_length(skipped);
		for (i = 0; i < n && !found; i++) {
			const char *path, *reason;
			size_t plen;

			e = json_object_array_get_idx(skipped, i);
			if (!json_object_object_get_ex(e, "path", &v))
				continue;
			path = json_object_get_string(v);
			plen = path ? strlen(path) : 0;
			if (plen < len || strcmp(path + plen - len, name) != 0)
				continue;
			if (json_object_object_get_ex(e, "reason", &v) &&
			    (reason = json_object_get_string(v)) != NULL && reason[0] != '\0')
				found = 1;
		}
	}
	json_object_put(root);
	return found;
}

static int is_single_bit(uint64_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

/* Names and ids the service reported, in order. */
struct listing {
	size_t n;
	char names[8][DOCA_UROM_PLUGIN_NAME_MAX_LEN];
	uint64_t ids[8];
};

static void get_listing(struct t_svc *s, struct listing *l)
{
	const struct doca_urom_service_plugin_info *p = NULL;
	size_t n = 0, i;

	memset(l, 0, sizeof(*l));
	T_OK(doca_urom_service_get_plugins_list(s->svc, &p, &n));
	for (i = 0; i < n && i < 8; i++) {
		snprintf(l->names[i], sizeof(l->names[i]), "%s", p[i].plugin_name);
		l->ids[i] = p[i].id;
	}
	l->n = n;
}

static int find(const struct listing *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->names[i], name) == 0)
			return (int)i;
	return -1;
}

/* Link each fixture (paths separated by ';') into dir; returns how many. */
static int link_fixtures(const char *list, const char *dir, char names[][128], int max)
{
	char *copy = strdup(list), *save = NULL, *p;
	int n = 0;

	for (p = strtok_r(copy, ";", &save); p != NULL && n < max; p = strtok_r(NULL, ";", &save)) {
		const char *base = strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
		char link_path[PATH_MAX + 160];

		snprintf(names[n], 128, "%s", base);
		if (snprintf(link_path, sizeof(link_path), "%s/%s", dir, names[n]) >=
			    (int)sizeof(link_path) ||
		    symlink(p, link_path) != 0) {
			t_fail("symlink %s -> %s: %s", link_path, p, strerror(errno));
			continue;
		}
		n++;
	}
	free(copy);
	return n;
}

/* The reason the status JSON gives for the skipped file whose path ends in name, or "". */
static void status_skipped_reason(const char *json, const char *name, char *out, size_t size)
{
	struct json_object *root = json_tokener_parse(json), *skipped, *e, *v;
	size_t len = strlen(name);

	out[0] = '\0';
	if (root == NULL)
		return;
	if (json_object_object_get_ex(root, "skipped", &skipped) &&
	    json_object_is_type(skipped, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(skipped); i++) {
			const char *path;
			size_t plen;

			e = json_object_array_get_idx(skipped, i);
			if (!json_object_object_get_ex(e, "path", &v))
				continue;
			path = json_object_get_string(v);
			plen = path ? strlen(path) : 0;
			if (plen < len || strcmp(path + plen - len, name) != 0)
				continue;
			if (json_object_object_get_ex(e, "reason", &v))
				snprintf(out, size, "%s", json_object_get_string(v));
			break;
		}
	}
	json_object_put(root);
}

/* How many plugins the status JSON lists, and whether one is called name. */
static size_t status_plugins(const char *json, const char *name, int *found_p)
{
	struct json_object *root = json_tokener_parse(json), *plugins, *v;
	size_t n = 0;

	*found_p = 0;
	if (root == NULL)
		return 0;
	if (json_object_object_get_ex(root, "plugins", &plugins) &&
	    json_object_is_type(plugins, json_type_array)) {
		n = json_object_array_length(plugins);
		for (size_t i = 0; i < n; i++)
			if (json_object_object_get_ex(json_object_array_get_idx(plugins, i), "name",
						      &v) &&
			    strcmp(json_object_get_string(v), name) == 0)
				*found_p = 1;
	}
	json_object_put(root);
	return n;
}

/*
 * A daemon scanning <dir>;<graph_dir>, where dir holds 0_scanner_dies.so (index 0) and the
 * other fixtures. die_index 0: the fixture reports itself and kills the scanner, which must be
 * restarted after it, so worker_graph and every other fixture get their real outcome.
 * die_index 1: it reports another file each time, so no restart makes progress; the service
 * gives up (bounded) and skips the files left with that reason, and keeps running.
 */
static void scan_restart_case(const char *fixtures, const char *graph_dir, const char *dies_so,
			      int die_index)
{
	static char log[262144], json[65536];
	char names[16][128], pdir[PATH_MAX], path[2 * PATH_MAX], reason[512], idx[16];
	struct t_uromd d;
	int n_fix, found, i;
	size_t n;

	snprintf(pdir, sizeof(pdir), "/tmp/softdpu-it-scan-%d-XXXXXX", (int)getpid());
	if (mkdtemp(pdir) == NULL) {
		t_fail("mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/0_scanner_dies.so", pdir);
	if (symlink(dies_so, path) != 0)
		t_fail("symlink %s -> %s: %s", path, dies_so, strerror(errno));
	n_fix = link_fixtures(fixtures, pdir, names, 16);
	snprintf(path, sizeof(path), "%s;%s", pdir, graph_dir);
	setenv("UROM_PLUGIN_PATH", path, 1);
	snprintf(idx, sizeof(idx), "%d", die_index);
	setenv("SDP_TEST_SCANNER_DIES", idx, 1);
	if (t_uromd_start(&d, NULL) != 0) {
		t_fail("die index %d: the daemon did not start", die_index);
		unsetenv("SDP_TEST_SCANNER_DIES");
		t_rm_rf(pdir);
		return;
	}
	unsetenv("SDP_TEST_SCANNER_DIES");
	T_OK(t_raw_status(d.port, d.secret_file, json, sizeof(json)));
	T_TRUE(t_read_file(d.log_file, log, sizeof(log)) > 0);
	n = status_plugins(json, "worker_graph", &found);
	status_skipped_reason(json, "worker_graph.so", reason, sizeof(reason));
	if (die_index == 0) {
		if (n != 1 || !found)
			t_fail("scanner killed between files: expected worker_graph listed after "
			       "the restart, got %zu plugin(s); its skip reason: \"%s\"; status %s",
			       n, reason, json);
		status_skipped_reason(json, "0_scanner_dies.so", reason, sizeof(reason));
		if (strstr(reason, "test fixture") == NULL)
			t_fail("0_scanner_dies.so: expected the outcome it reported, got \"%s\"",
			       reason);
		for (i = 0; i < n_fix; i++) {
			status_skipped_reason(json, names[i], reason, sizeof(reason));
			if (reason[0] == '\0' || strstr(reason, "not examined") != NULL)
				t_fail("%s: expected a real skip reason after the restart, got "
				       "\"%s\"",
				       names[i], reason);
		}
		if (strstr(log, "restarting it from") == NULL)
			t_fail("daemon log does not mention the scanner restart");
	} else {
		if (n != 0)
			t_fail("scanner dying without progress: expected no plugin, got %zu: %s", n,
			       json);
		if (strstr(reason, "without progress") == NULL)
			t_fail("worker_graph.so: expected a \"without progress\" skip reason, "
			       "got \"%s\"",
			       reason);
		if (strstr(log, "giving up") == NULL)
			t_fail("daemon log does not say the scan gave up");
	}
	T_TRUE(t_uromd_alive(&d));
	t_uromd_stop(&d);
	t_rm_rf(pdir);
}

int main(void)
{
	const char *fixtures = getenv("SDP_TEST_BAD_PLUGINS");
	const char *graph_dir = getenv("UROM_PLUGIN_PATH");
	const char *dies_so = getenv("SDP_TEST_SCANNER_DIES_SO");
	struct t_worker_cfg c = {.id = DOCA_UROM_WORKER_ID_ANY, .max_inflight = 4};
	struct doca_urom_worker *w = NULL;
	char names[16][128], pdir[PATH_MAX], path[2 * PATH_MAX];
	static char log[262144], json[65536];
	struct listing l1, l2;
	struct t_loop loop;
	struct t_uromd d;
	struct t_svc s;
	int n_fix, i, g;

	if (fixtures == NULL || graph_dir == NULL || dies_so == NULL) {
		fprintf(stderr, "SDP_TEST_BAD_PLUGINS, SDP_TEST_SCANNER_DIES_SO and "
				"UROM_PLUGIN_PATH must be set (meson does)\n");
		return T_EXIT_FAIL;
	}
	snprintf(pdir, sizeof(pdir), "/tmp/softdpu-it-plugins-%d-XXXXXX", (int)getpid());
	if (mkdtemp(pdir) == NULL) {
		perror("mkdtemp");
		return T_EXIT_FAIL;
	}
	n_fix = link_fixtures(fixtures, pdir, names, 16);
	T_TRUE(n_fix >= 4);
	snprintf(path, sizeof(path), "%s;%s", pdir, graph_dir);
	setenv("UROM_PLUGIN_PATH", path, 1);
	if (t_uromd_start(&d, NULL) != 0) {
		t_rm_rf(pdir);
		return T_EXIT_FAIL;
	}
	t_loop_init(&loop, 16);

	T_OK(t_svc_open(&s, 0));
	get_listing(&s, &l1);
	g = find(&l1, "worker_graph");
	if (l1.n != 1 || g != 0)
		t_fail("plugin list: expected only \"worker_graph\", got %zu entries: %s %s %s",
		       l1.n, l1.n > 0 ? l1.names[0] : "", l1.n > 1 ? l1.names[1] : "",
		       l1.n > 2 ? l1.names[2] : "");
	for (i = 0; i < (int)l1.n; i++) {
		if (!is_single_bit(l1.ids[i]))
			t_fail("plugin %s: id 0x%" PRIx64 " is not a single bit", l1.names[i],
			       l1.ids[i]);
		if (strstr(l1.names[i], ".so") != NULL)
			t_fail("plugin name %s still carries .so", l1.names[i]);
	}
	T_TRUE(t_uromd_alive(&d));

	/* Every fixture is reported as skipped, with a reason, and named in the log. */
	T_OK(t_raw_status(d.port, d.secret_file, json, sizeof(json)));
	T_TRUE(t_read_file(d.log_file, log, sizeof(log)) > 0);
	for (i = 0; i < n_fix; i++) {
		if (!status_skipped_has_reason(json, names[i]))
			t_fail("status JSON: expected %s among \"skipped\" with a reason: %s",
			       names[i], json);
		if (strstr(log, names[i]) == NULL)
			t_fail("daemon log does not mention the skipped file %s", names[i]);
	}

	/* The ids stay the same for the daemon's lifetime. */
	{
		struct t_svc s2;
		size_t k;

		T_OK(t_svc_open(&s2, 0));
		get_listing(&s2, &l2);
		T_EQ_INT(l2.n, l1.n);
		for (k = 0; k < l1.n && k < l2.n; k++) {
			int j = find(&l2, l1.names[k]);

			if (j < 0 || l2.ids[j] != l1.ids[k])
				t_fail("plugin %s: id changed between connections", l1.names[k]);
		}
		t_svc_close(&s2);
	}

	/* The reported id reaches worker_graph in a worker. */
	if (g >= 0) {
		T_OK(t_svc_find_graph(&s));
		c.plugins = l1.ids[g];
		T_OK(t_worker_start(&s, s.pe, &c, &w));
		if (w != NULL) {
			T_OK(t_loop_one(&loop, w, s.pe, NULL, 3));
			t_worker_close(&s, s.pe, w);
		}
	}
	/* A mask naming no known plugin is refused. */
	c.plugins = 1ull << 40;
	w = NULL;
	t_expect_refused(t_worker_start(&s, s.pe, &c, &w), w, DOCA_ERROR_NOT_SUPPORTED,
			 "plugin mask with an unknown bit");
	if (w != NULL)
		T_OK(doca_urom_worker_destroy(w));

	t_svc_close(&s);
	t_loop_fini(&loop);
	T_TRUE(t_uromd_alive(&d));
	t_uromd_stop(&d);
	t_rm_rf(pdir);

	/* graph_dir still points into the initial environment, which setenv never frees. */
	scan_restart_case(fixtures, graph_dir, dies_so, 0);
	scan_restart_case(fixtures, graph_dir, dies_so, 1);
	T_DONE();
}

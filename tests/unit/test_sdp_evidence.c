/*
 * The ladder evidence (tools/sdp_evidence.c): the document the writer builds (schema key,
 * rung results, not-run rungs under their planned names, trigger, annotations, log tails), the
 * writer's file handling (created 0644; a file that is not evidence, a symbolic link, a
 * directory or another schema's JSON never replaced and no temporary file left; our own
 * evidence replaced atomically, as a new inode), reading back, and sdp_ev_compare on the
 * evidence pairs recorded from `softdpu ladder urom` in tests/data/ladder/ (argv[1]): resolved,
 * shape-changed by trigger (another rung, the same rung's other row), shape-changed by
 * material evidence (the snapshot, a rung's material), unchanged with other details and
 * timings, two green runs, mismatched ladders and rung layouts, garbage input.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sdp_evidence.h"
#include "t_helpers.h"

static const char *data_dir;
static char tmp_dir[PATH_MAX];

static struct json_object *data(const char *name)
{
	char path[PATH_MAX];
	struct json_object *o;

	snprintf(path, sizeof(path), "%s/%s", data_dir, name);
	o = sdp_ev_read(path);
	if (o == NULL)
		t_fail("cannot read recorded evidence %s", path);
	return o;
}

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (o == NULL || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

static const char *gets(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return v != NULL && json_object_is_type(v, json_type_string) ? json_object_get_string(v) :
								       NULL;
}

static struct json_object *rung(struct json_object *doc, int i)
{
	return json_object_array_get_idx(get(doc, "rungs"), (size_t)i);
}

/* Compare prev with cur (files of data_dir) and expect the outcome; why must contain needle. */
static void expect(const char *prev, const char *cur, enum sdp_ev_outcome want, const char *needle)
{
	struct json_object *a = data(prev), *b = data(cur);
	enum sdp_ev_outcome out = SDP_EV_RESOLVED;
	char why[512] = "";

	if (a != NULL && b != NULL) {
		T_EQ_INT(sdp_ev_compare(a, b, &out, why, sizeof(why)), 0);
		if (out != want)
			t_fail("%s -> %s: %s, expected %s (%s)", prev, cur,
			       sdp_ev_outcome_name(out), sdp_ev_outcome_name(want), why);
		if (needle != NULL && strstr(why, needle) == NULL)
			t_fail("%s -> %s: the reason \"%s\" does not say \"%s\"", prev, cur, why,
			       needle);
	}
	json_object_put(a);
	json_object_put(b);
}

static void expect_refused(struct json_object *a, struct json_object *b, const char *needle)
{
	enum sdp_ev_outcome out = SDP_EV_SHAPE_CHANGED;
	char why[512] = "";

	T_EQ_INT(sdp_ev_compare(a, b, &out, why, sizeof(why)), -1);
	T_EQ_INT(out, SDP_EV_SHAPE_CHANGED); /* untouched */
	if (strstr(why, needle) == NULL)
		t_fail("refusal reason \"%s\" does not say \"%s\"", why, needle);
}

/* ---- the document ----------------------------------------------------------------------- */

static struct sdp_ev *make_ev(void)
{
	struct sdp_ev *ev = sdp_ev_new("urom", 3);
	struct sdp_ev_rung *r;

	T_TRUE(ev != NULL);
	sdp_ev_set_quiet(ev, 1);
	sdp_ev_plan(ev, 0, "pre");
	sdp_ev_plan(ev, 1, "one");
	sdp_ev_plan(ev, 2, "two");
	sdp_ev_plan(ev, 3, "three");
	sdp_ev_snapshot(ev, "versions", json_object_new_string("1.2.3"), 0);
	sdp_ev_snapshot(ev, "pid", json_object_new_int(1234), 1);
	r = sdp_ev_rung_begin(ev, 0, "pre");
	T_TRUE(r != NULL);
	T_TRUE(sdp_ev_rung_begin(ev, 0, "again") == NULL); /* each rung once */
	T_TRUE(sdp_ev_rung_begin(ev, 4, "past the end") == NULL);
	T_TRUE(sdp_ev_rung_begin(ev, -1, "before") == NULL);
	sdp_ev_material(r, "plugins", json_object_new_int(2));
	sdp_ev_rung_pass(r);
	sdp_ev_rung_fail(r, "late", SDP_EV_LAYER_PROGRAM, DOCA_SUCCESS, "", "ignored"); /* ended */
	r = sdp_ev_rung_begin(ev, 1, "one");
	sdp_ev_material(r, "put", json_object_new_string("DOCA_ERROR_NOT_CONNECTED"));
	sdp_ev_detail(r, "put_us", json_object_new_int(17));
	T_EQ_INT(sdp_ev_failed(ev), 0);
	sdp_ev_rung_fail(r, "put:DOCA_ERROR_NOT_CONNECTED", SDP_EV_LAYER_TRANSPORT,
			 DOCA_ERROR_NOT_CONNECTED, "ucx_info -d", "rank %d: %s", 0, "put failed");
	T_EQ_INT(sdp_ev_failed(ev), 1);
	return ev;
}

static void test_document(void)
{
	struct sdp_ev *ev = make_ev();
	struct json_object *doc = sdp_ev_json(ev), *t, *r;

	T_EQ_STR(gets(doc, "schema"), SDP_EV_SCHEMA);
	T_EQ_STR(gets(doc, "ladder"), "urom");
	T_EQ_STR(gets(doc, "result"), "fail");
	T_EQ_INT(json_object_get_int(get(doc, "rungs_total")), 3);
	T_TRUE(gets(doc, "started") != NULL && gets(doc, "finished") != NULL);
	T_EQ_STR(gets(get(get(doc, "snapshot"), "material"), "versions"), "1.2.3");
	T_EQ_INT(json_object_get_int(get(get(get(doc, "snapshot"), "detail"), "pid")), 1234);
	t = get(doc, "trigger");
	T_EQ_INT(json_object_get_int(get(t, "rung")), 1);
	T_EQ_STR(gets(t, "trigger"), "put:DOCA_ERROR_NOT_CONNECTED");
	T_EQ_STR(gets(t, "layer"), "transport");
	T_EQ_STR(gets(t, "error"), "DOCA_ERROR_NOT_CONNECTED");
	T_EQ_INT((int)json_object_array_length(get(doc, "rungs")), 4);
	r = rung(doc, 0);
	T_EQ_STR(gets(r, "result"), "pass");
	T_EQ_INT(json_object_get_int(get(get(r, "material"), "plugins")), 2);
	T_TRUE(get(r, "layer") == NULL); /* the late fail was ignored */
	T_TRUE(get(get(r, "detail"), "elapsed_ms") != NULL);
	r = rung(doc, 1);
	T_EQ_STR(gets(r, "result"), "fail");
	T_EQ_STR(gets(r, "seen"), "rank 0: put failed");
	T_EQ_STR(gets(r, "next_check"), "ucx_info -d");
	T_EQ_INT(json_object_get_int(get(get(r, "detail"), "put_us")), 17);
	for (int i = 2; i <= 3; i++) {
		r = rung(doc, i);
		T_EQ_INT(json_object_get_int(get(r, "n")), i);
		T_EQ_STR(gets(r, "result"), "not-run");
		T_EQ_STR(gets(r, "name"), i == 2 ? "two" : "three");
		T_EQ_INT(json_object_object_length(get(r, "material")), 0);
	}
	/* annotations: a new top-level key, never one of the document's own */
	sdp_ev_annotate(ev, "compare", json_object_new_string("note"));
	sdp_ev_annotate(ev, "rungs", json_object_new_string("must not replace the rungs"));
	doc = sdp_ev_json(ev);
	T_EQ_STR(gets(doc, "compare"), "note");
	T_TRUE(json_object_is_type(get(doc, "rungs"), json_type_array));
	sdp_ev_free(ev);

	/* a rung skipped, a rung never ended, and a climb that did not reach every rung */
	ev = sdp_ev_new("gpunetio", 2);
	sdp_ev_set_quiet(ev, 1);
	sdp_ev_rung_skip(sdp_ev_rung_begin(ev, 1, "gpu"), "no GPU");
	doc = sdp_ev_json(ev);
	T_EQ_STR(gets(doc, "result"), "incomplete");
	T_TRUE(get(doc, "trigger") == NULL);
	T_EQ_INT((int)json_object_array_length(get(doc, "rungs")), 2); /* no rung 0 planned */
	T_EQ_STR(gets(rung(doc, 0), "result"), "skip");
	T_EQ_STR(gets(rung(doc, 0), "reason"), "no GPU");
	T_EQ_STR(gets(rung(doc, 1), "result"), "not-run");
	T_EQ_STR(gets(rung(doc, 1), "name"), "");
	(void)sdp_ev_rung_begin(ev, 2, "queue");
	doc = sdp_ev_json(ev);
	T_EQ_STR(gets(rung(doc, 1), "result"), "unfinished");
	T_EQ_STR(gets(doc, "result"), "incomplete");
	sdp_ev_free(ev);
	T_TRUE(sdp_ev_new(NULL, 3) == NULL);
	T_TRUE(sdp_ev_new("urom", -1) == NULL);
	T_TRUE(sdp_ev_new("urom", 1000) == NULL);
	T_EQ_STR(sdp_ev_outcome_name(SDP_EV_RESOLVED), "resolved");
	T_EQ_STR(sdp_ev_outcome_name(SDP_EV_SHAPE_CHANGED), "shape-changed");
	T_EQ_STR(sdp_ev_outcome_name(SDP_EV_UNCHANGED), "unchanged");
}

static void test_log_tail(void)
{
	struct sdp_ev *ev = sdp_ev_new("urom", 1);
	struct sdp_ev_rung *r;
	struct json_object *doc, *tails, *arr;
	char path[PATH_MAX + 16], missing[PATH_MAX + 16];
	FILE *f;

	sdp_ev_set_quiet(ev, 1);
	snprintf(path, sizeof(path), "%s/worker.log", tmp_dir);
	snprintf(missing, sizeof(missing), "%s/no-such.log", tmp_dir);
	f = fopen(path, "w");
	T_TRUE(f != NULL);
	for (int i = 1; i <= 30; i++)
		fprintf(f, "line %d\n", i);
	fclose(f);
	r = sdp_ev_rung_begin(ev, 1, "one");
	sdp_ev_log_tail(r, path, 20);
	sdp_ev_log_tail(r, missing, 20);
	sdp_ev_rung_pass(r);
	doc = sdp_ev_json(ev);
	tails = get(get(rung(doc, 0), "detail"), "log_tail");
	arr = get(tails, path);
	T_TRUE(arr != NULL && json_object_is_type(arr, json_type_array));
	T_EQ_INT((int)json_object_array_length(arr), 20);
	T_EQ_STR(json_object_get_string(json_object_array_get_idx(arr, 0)), "line 11");
	T_EQ_STR(json_object_get_string(json_object_array_get_idx(arr, 19)), "line 30");
	T_TRUE(strstr(gets(get(tails, missing), "error") ?: "", "cannot open") != NULL);
	unlink(path);
	sdp_ev_free(ev);
}

/* ---- the file writer ---------------------------------------------------------------------- */

static int temp_files_left(void)
{
	DIR *d = opendir(tmp_dir);
	struct dirent *de;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] == '.' && strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	T_TRUE(f != NULL);
	if (f != NULL) {
		fputs(text, f);
		fclose(f);
	}
}

static int same_content(const char *path, const char *text)
{
	char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strcmp(buf, text) == 0;
}

static void test_writer(void)
{
	struct sdp_ev *ev = make_ev();
	char ours[PATH_MAX + 16], foreign[PATH_MAX + 16], other[PATH_MAX + 16];
	char link[PATH_MAX + 16], dir[PATH_MAX + 16];
	struct json_object *back;
	struct stat st, st2;
	static const char text[] = "a file this tool did not write\n";
	static const char other_text[] = "{\"schema\": \"softdpu-env/1\"}\n";

	snprintf(ours, sizeof(ours), "%s/ev.json", tmp_dir);
	snprintf(foreign, sizeof(foreign), "%s/foreign.json", tmp_dir);
	snprintf(other, sizeof(other), "%s/other.json", tmp_dir);
	snprintf(link, sizeof(link), "%s/link.json", tmp_dir);
	snprintf(dir, sizeof(dir), "%s/adir", tmp_dir);

	/* created, 0644, a document that reads back with the schema key */
	T_EQ_INT(sdp_ev_write(ev, ours), 0);
	T_EQ_INT(stat(ours, &st), 0);
	T_EQ_INT((int)(st.st_mode & 0777), 0644);
	back = sdp_ev_read(ours);
	T_TRUE(back != NULL);
	T_EQ_STR(gets(back, "schema"), SDP_EV_SCHEMA);
	T_EQ_STR(gets(get(back, "trigger"), "layer"), "transport");
	T_EQ_STR(gets(rung(back, 3), "result"), "not-run");
	json_object_put(back);
	/* our own file: replaced by a new one (rename: another inode) */
	T_EQ_INT(sdp_ev_write(ev, ours), 0);
	T_EQ_INT(stat(ours, &st2), 0);
	T_TRUE(st2.st_ino != st.st_ino);
	T_EQ_INT(temp_files_left(), 0);

	/* never replaced: a text file, another schema's JSON, a symbolic link, a directory */
	write_file(foreign, text);
	T_EQ_INT(sdp_ev_write(ev, foreign), -1);
	T_TRUE(same_content(foreign, text));
	write_file(other, other_text);
	T_EQ_INT(sdp_ev_write(ev, other), -1);
	T_TRUE(same_content(other, other_text));
	T_EQ_INT(symlink(ours, link), 0);
	T_EQ_INT(sdp_ev_write(ev, link), -1);
	T_EQ_INT(lstat(link, &st), 0);
	T_TRUE(S_ISLNK(st.st_mode));
	T_EQ_INT(mkdir(dir, 0700), 0);
	T_EQ_INT(sdp_ev_write(ev, dir), -1);
	T_EQ_INT(temp_files_left(), 0);
	/* a directory that does not exist, an empty path */
	{
		char nodir[PATH_MAX + 32];

		snprintf(nodir, sizeof(nodir), "%s/no/such/dir/ev.json", tmp_dir);
		T_EQ_INT(sdp_ev_write(ev, nodir), -1);
		T_EQ_INT(sdp_ev_write(ev, ""), -1);
		T_EQ_INT(sdp_ev_write(NULL, ours), -1);
	}
	/* reading refuses what is not evidence */
	T_TRUE(sdp_ev_read(foreign) == NULL);
	T_TRUE(sdp_ev_read(other) == NULL);
	T_TRUE(sdp_ev_read(dir) == NULL);
	unlink(ours);
	unlink(foreign);
	unlink(other);
	unlink(link);
	rmdir(dir);
	sdp_ev_free(ev);
}

/* ---- comparison on recorded evidence ----------------------------------------------------- */

static void test_compare(void)
{
	struct json_object *a, *b;

	/* the failing rung passes now */
	expect("rung1_transport.json", "green.json", SDP_EV_RESOLVED, "passes now");
	expect("rung0_no_worker_rma.json", "rung1_transport.json", SDP_EV_RESOLVED,
	       "the climb now stops at rung 1");
	/* another trigger: another rung, or the same rung's other row */
	expect("rung1_transport.json", "rung0_no_service.json", SDP_EV_SHAPE_CHANGED,
	       "another trigger");
	expect("rung0_no_service.json", "rung0_no_worker_rma.json", SDP_EV_SHAPE_CHANGED,
	       "another trigger");
	expect("green.json", "rung1_transport.json", SDP_EV_SHAPE_CHANGED, "was green");
	/* the same trigger, materially different evidence: the snapshot, a rung's material */
	expect("rung0_no_worker_rma.json", "rung0_no_worker_coll.json", SDP_EV_SHAPE_CHANGED,
	       "snapshot.plugins");
	expect("rung1_transport.json", "rung1_transport_rank1_differs.json", SDP_EV_SHAPE_CHANGED,
	       "rung 1 material.ranks");
	/* the same trigger and material evidence, other details and timings: unchanged */
	a = data("rung1_transport.json");
	b = data("rung1_transport_rerun.json");
	T_TRUE(a != NULL && b != NULL);
	if (a != NULL && b != NULL) {
		T_TRUE(strcmp(gets(a, "started"), gets(b, "started")) != 0);
		T_TRUE(!json_object_equal(get(get(a, "snapshot"), "detail"),
					  get(get(b, "snapshot"), "detail")));
	}
	json_object_put(a);
	json_object_put(b);
	expect("rung1_transport.json", "rung1_transport_rerun.json", SDP_EV_UNCHANGED,
	       "same material evidence");
	expect("rung0_no_service.json", "rung0_no_service.json", SDP_EV_UNCHANGED, NULL);
	/* two green runs: unchanged, with no trigger */
	expect("green.json", "green_rerun.json", SDP_EV_UNCHANGED, "both iterations are green");

	/* mismatched ladders and rung layouts */
	a = data("green.json");
	b = data("green_rerun.json");
	if (a != NULL && b != NULL) {
		json_object_object_add(b, "ladder", json_object_new_string("gpunetio"));
		expect_refused(a, b, "different ladders");
		json_object_object_add(b, "ladder", json_object_new_string("urom"));
		json_object_array_del_idx(get(b, "rungs"), 5, 1);
		expect_refused(a, b, "rungs differ");
		json_object_put(b);
		b = data("green_rerun.json");
		json_object_object_add(rung(b, 2), "name", json_object_new_string("renamed"));
		expect_refused(a, b, "rungs differ at entry 2");
		expect_refused(NULL, b, "previous");
		expect_refused(a, NULL, "current");
	}
	json_object_put(a);
	json_object_put(b);

	/* garbage: not read as evidence at all, or refused by the comparison */
	{
		static const char *const bad[] = {"garbage.json", "other_schema.json",
						  "truncated.json", "trailing.json",
						  "no_such_file.json"};
		char path[PATH_MAX];

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			snprintf(path, sizeof(path), "%s/%s", data_dir, bad[i]);
			a = sdp_ev_read(path);
			if (a != NULL)
				t_fail("%s read as evidence", bad[i]);
			json_object_put(a);
		}
	}
	a = data("green.json");
	b = data("bad_rungs.json"); /* the schema key, malformed rungs */
	T_TRUE(b != NULL);
	if (a != NULL && b != NULL)
		expect_refused(a, b, "malformed rung");
	json_object_put(b);
	b = json_tokener_parse("{\"schema\": \"softdpu-ladder-evidence/1\", \"ladder\": \"urom\"}");
	expect_refused(a, b, "lacks");
	json_object_put(b);
	b = json_tokener_parse("[1, 2, 3]");
	expect_refused(a, b, "not ladder evidence");
	json_object_put(b);
	json_object_put(a);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s <tests/data/ladder>\n", argv[0]);
		return T_EXIT_FAIL;
	}
	data_dir = argv[1];
	snprintf(tmp_dir, sizeof(tmp_dir), "%s/test_sdp_evidence.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tmp_dir) == NULL) {
		fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
		return T_EXIT_FAIL;
	}
	test_document();
	test_log_tail();
	test_writer();
	test_compare();
	rmdir(tmp_dir);
	T_DONE();
}

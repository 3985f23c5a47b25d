/*
 * Devices and providers: doca_devinfo_* / doca_dev_* / representors, the host provider and its
 * aliases, provider loading (empty directory, broken modules), device declarations.
 *
 * Providers and declarations are read once per process, so every scenario that needs its own
 * environment runs in a child: the test re-executes itself as `test_dev <scenario>` with a
 * clean SOFTDPU_* environment plus the scenario's variables.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "doca_dev.h"
#include "sdp_provider.h"
#include "t_helpers.h"

extern char **environ;

/* snprintf into a path buffer; a truncated path is a test failure, not a silent wrong name. */
#define PATHF(buf, ...)                                                                            \
	do {                                                                                       \
		int n_ = snprintf(buf, sizeof(buf), __VA_ARGS__);                                  \
		if (n_ < 0 || (size_t)n_ >= sizeof(buf))                                           \
			t_fail("path too long: %s", buf);                                          \
	} while (0)

/* ---- helpers --------------------------------------------------------------------------------- */

static struct doca_devinfo *find_dev(struct doca_devinfo **list, uint32_t n, const char *name)
{
	char buf[DOCA_DEVINFO_IBDEV_NAME_SIZE];

	for (uint32_t i = 0; i < n; i++)
		if (doca_devinfo_get_ibdev_name(list[i], buf, sizeof(buf)) == DOCA_SUCCESS &&
		    strcmp(buf, name) == 0)
			return list[i];
	return NULL;
}

/* The list's ibdev names joined by ',' (for one comparison that shows the whole list). */
static const char *names_of(struct doca_devinfo **list, uint32_t n)
{
	static char out[1024];
	char buf[DOCA_DEVINFO_IBDEV_NAME_SIZE];

	out[0] = '\0';
	for (uint32_t i = 0; i < n; i++) {
		if (doca_devinfo_get_ibdev_name(list[i], buf, sizeof(buf)) != DOCA_SUCCESS)
			snprintf(buf, sizeof(buf), "?");
		if (i > 0)
			strncat(out, ",", sizeof(out) - strlen(out) - 1);
		strncat(out, buf, sizeof(out) - strlen(out) - 1);
	}
	return out;
}

/* Expect an issue whose `where` contains where_part and reason contains reason_part. */
static void expect_issue(const char *where_part, const char *reason_part)
{
	const struct sdp_provider_issue *issues;
	size_t n = sdp_provider_get_issues(&issues);

	for (size_t i = 0; i < n; i++)
		if (strstr(issues[i].where, where_part) != NULL &&
		    strstr(issues[i].reason, reason_part) != NULL)
			return;
	t_fail("expected an issue at '%s' saying '%s'; got %zu issue(s):", where_part, reason_part,
	       n);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "    %s: %s\n", issues[i].where, issues[i].reason);
}

static const char *g_self;     /* this executable */
static const char *g_host_dir; /* the host provider's directory (SOFTDPU_PROVIDER_PATH) */
static char g_fixture_dir[PATH_MAX];
static char g_tmp[PATH_MAX]; /* per-run scratch directory */

/* Run `self scenario` with SOFTDPU_* removed from the environment and `vars` added. */
static int run_child(const char *scenario, const char *const *vars)
{
	char *env[256];
	size_t n = 0;
	pid_t pid;
	int status;

	for (char **e = environ; *e != NULL && n < 200; e++)
		if (strncmp(*e, "SOFTDPU_", 8) != 0)
			env[n++] = *e;
	for (; vars != NULL && *vars != NULL && n < 254; vars++)
		env[n++] = (char *)*vars;
	env[n] = NULL;

	pid = fork();
	if (pid < 0) {
		t_fail("fork: %s", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		char *argv[] = {(char *)g_self, (char *)scenario, NULL};

		execve(g_self, argv, env);
		_exit(127);
	}
	/* bounded wait: 30 s, polling every 10 ms */
	for (int i = 0; i < 3000; i++) {
		struct timespec ts = {0, 10 * 1000 * 1000};
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid) {
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
				t_fail("scenario %s: expected exit 0, got %s %d", scenario,
				       WIFEXITED(status) ? "exit" : "signal",
				       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
				return 1;
			}
			return 0;
		}
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	t_fail("scenario %s: expected to end within 30 s, killed", scenario);
	return 1;
}

static void make_link(const char *dir, const char *module)
{
	char target[PATH_MAX], link_path[PATH_MAX];

	PATHF(target, "%s/%s", g_fixture_dir, module);
	PATHF(link_path, "%s/%s", dir, module);
	if (symlink(target, link_path) != 0)
		t_fail("symlink %s: %s", link_path, strerror(errno));
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		t_fail("create %s: %s", path, strerror(errno));
		return;
	}
	fputs(text, f);
	fclose(f);
}

/* ---- in-process tests (no environment of their own) ----------------------------------------- */

static void test_pci_normalize(void)
{
	char out[DOCA_DEVINFO_PCI_ADDR_SIZE];

	T_OK(sdp_pci_addr_normalize("0000:3B:00.1", out));
	T_EQ_STR(out, "0000:3b:00.1");
	T_OK(sdp_pci_addr_normalize("af:1f.7", out));
	T_EQ_STR(out, "0000:af:1f.7");
	T_OK(sdp_pci_addr_normalize("FfFf:00:00.0", out));
	T_EQ_STR(out, "ffff:00:00.0");
	/* device > 0x1f, function > 7, wrong separators, wrong lengths, non-hex */
	T_STATUS(sdp_pci_addr_normalize("0000:00:20.0", out), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_pci_addr_normalize("0000:00:00.8", out), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_pci_addr_normalize("0000-00:00.0", out), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_pci_addr_normalize("00:00:0", out), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_pci_addr_normalize("0:00:00.0", out), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_pci_addr_normalize("00000:00:00.0", out), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_pci_addr_normalize("0g:00.0", out), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_pci_addr_normalize("", out), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_pci_addr_normalize(NULL, out), DOCA_ERROR_INVALID_VALUE);
}

struct parsed {
	char text[8][160]; /* "provider|origin|k=v|k=v" */
	int good;
	char bad[8][160]; /* "origin|reason" */
	int nbad;
};

static void on_decl(const struct sdp_dev_decl *d, void *arg)
{
	struct parsed *p = arg;
	char *t;

	if (p->good == 8)
		return;
	t = p->text[p->good++];
	snprintf(t, 160, "%s|%s", d->provider, d->origin);
	for (size_t i = 0; i < d->num_params; i++)
		snprintf(t + strlen(t), 160 - strlen(t), "|%s=%s", d->params[i].key,
			 d->params[i].value);
}

static void on_bad(const char *origin, const char *reason, void *arg)
{
	struct parsed *p = arg;

	if (p->nbad < 8)
		snprintf(p->bad[p->nbad++], 160, "%s|%s", origin, reason);
}

static void test_decl_parse(void)
{
	struct parsed p = {0};
	size_t good;

	good = sdp_dev_decl_parse(" loop: name = w0 , peer=w1 ;;gen; pcap:file=/tmp/a.pcap;", "ENV",
				  0, on_decl, on_bad, &p);
	T_EQ_INT(good, 3);
	T_EQ_INT(p.nbad, 0);
	T_EQ_STR(p.text[0], "loop|ENV entry 1|name=w0|peer=w1");
	T_EQ_STR(p.text[1], "gen|ENV entry 3");
	T_EQ_STR(p.text[2], "pcap|ENV entry 4|file=/tmp/a.pcap");

	memset(&p, 0, sizeof(p));
	good = sdp_dev_decl_parse("Bad:x=1;a:x;a:=1;a:x=;a:x=1,,y=2;a:x=1,x=2;a:k!=1;a:x=1,", "E",
				  0, on_decl, on_bad, &p);
	T_EQ_INT(good, 0);
	T_EQ_INT(p.nbad, 8);
	T_TRUE(strstr(p.bad[0], "E entry 1|bad provider name 'Bad'") != NULL);
	T_TRUE(strstr(p.bad[1], "E entry 2|parameter 'x' is not key=value") != NULL);
	T_TRUE(strstr(p.bad[2], "E entry 3|") != NULL && strstr(p.bad[2], "empty key") != NULL);
	T_TRUE(strstr(p.bad[3], "E entry 4|") != NULL && strstr(p.bad[3], "empty value") != NULL);
	T_TRUE(strstr(p.bad[4], "E entry 5|empty parameter") != NULL);
	T_TRUE(strstr(p.bad[5], "E entry 6|key 'x' given twice") != NULL);
	T_TRUE(strstr(p.bad[6], "E entry 7|bad key 'k!'") != NULL);
	T_TRUE(strstr(p.bad[7], "E entry 8|empty parameter") != NULL);

	/* file mode: comments, blank lines, line numbers, ';' inside a line */
	memset(&p, 0, sizeof(p));
	good = sdp_dev_decl_parse("# devices\n\nloop:name=a # first\n  \nbad name\ngen;pcap:f=x\n",
				  "devices.conf", 1, on_decl, on_bad, &p);
	T_EQ_INT(good, 3);
	T_EQ_STR(p.text[0], "loop|devices.conf:3|name=a");
	T_EQ_STR(p.text[1], "gen|devices.conf:6");
	T_EQ_STR(p.text[2], "pcap|devices.conf:6|f=x");
	T_EQ_INT(p.nbad, 1);
	T_TRUE(strncmp(p.bad[0], "devices.conf:5|bad provider name", 32) == 0);

	T_EQ_INT(sdp_dev_decl_parse(NULL, "x", 0, on_decl, on_bad, &p), 0);
	T_EQ_INT(sdp_dev_decl_parse("", "x", 0, on_decl, on_bad, &p), 0);
}

/* ---- scenarios (children) -------------------------------------------------------------------- */

/* SOFTDPU_HOST_DEV_ALIASES=mlx5_0,mlx5_1: the whole doca_dev.h surface on the host device. */
static void scenario_host(void)
{
	struct doca_devinfo **list = NULL, **list2 = NULL, *info, *as;
	struct doca_dev *dev = NULL, *dev2 = NULL, *dev3 = NULL, *alias_dev = NULL;
	char name[DOCA_DEVINFO_IBDEV_NAME_SIZE], iface[DOCA_DEVINFO_IFACE_NAME_SIZE];
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	enum doca_pci_func_type type = DOCA_PCI_FUNC_TYPE_VF;
	uint32_t n = 0, n2 = 0, sf = 0;
	uint8_t eq = 2;

	T_STATUS(doca_devinfo_create_list(NULL, &n), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_devinfo_create_list(&list, NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_devinfo_create_list(&list, &n));
	T_EQ_INT(n, 3);
	T_EQ_STR(names_of(list, n), "softdpu0,mlx5_0,mlx5_1");
	T_TRUE(list[n] == NULL);
	T_EQ_INT(sdp_provider_get_issues(NULL), 0);
	T_EQ_STR(sdp_provider_get_name(0), "host");
	T_TRUE(sdp_provider_get_path(0) != NULL &&
	       strstr(sdp_provider_get_path(0), "sdp_provider_host.so") != NULL);
	T_TRUE(sdp_provider_get_name(1) == NULL);

	info = find_dev(list, n, "softdpu0");
	T_TRUE(info != NULL);
	if (info == NULL)
		goto out;
	T_EQ_STR(sdp_devinfo_get_provider_name(info), "host");

	/* names: exact fit works, one byte short fails, NULLs fail */
	T_OK(doca_devinfo_get_ibdev_name(info, name, sizeof(name)));
	T_EQ_STR(name, "softdpu0");
	T_OK(doca_devinfo_get_ibdev_name(info, name, 9));
	T_STATUS(doca_devinfo_get_ibdev_name(info, name, 8), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_devinfo_get_ibdev_name(info, name, 0), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_devinfo_get_ibdev_name(NULL, name, sizeof(name)), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_devinfo_get_ibdev_name(info, NULL, sizeof(name)), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_devinfo_get_iface_name(info, iface, sizeof(iface)));
	T_EQ_STR(iface, "lo");
	T_STATUS(doca_devinfo_get_iface_name(info, iface, 2), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_devinfo_get_iface_name(NULL, iface, sizeof(iface)), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_devinfo_get_iface_name(info, NULL, sizeof(iface)), DOCA_ERROR_INVALID_VALUE);

	/* PCI */
	T_OK(doca_devinfo_get_pci_addr_str(info, pci));
	T_EQ_STR(pci, "ffff:00:00.0");
	T_STATUS(doca_devinfo_get_pci_addr_str(NULL, pci), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_devinfo_get_pci_addr_str(info, NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_devinfo_is_equal_pci_addr(info, "ffff:00:00.0", &eq));
	T_EQ_INT(eq, 1);
	T_OK(doca_devinfo_is_equal_pci_addr(info, "FFFF:00:00.0", &eq));
	T_EQ_INT(eq, 1);
	T_OK(doca_devinfo_is_equal_pci_addr(info, "00:00.0", &eq)); /* domain 0000 */
	T_EQ_INT(eq, 0);
	T_OK(doca_devinfo_is_equal_pci_addr(info, "ffff:00:00.1", &eq));
	T_EQ_INT(eq, 0);
	T_STATUS(doca_devinfo_is_equal_pci_addr(info, "ffff:00:00", &eq), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_devinfo_is_equal_pci_addr(info, "mlx5_0", &eq), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_devinfo_is_equal_pci_addr(info, "", &eq), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_devinfo_is_equal_pci_addr(info, NULL, &eq), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_devinfo_is_equal_pci_addr(info, "ffff:00:00.0", NULL),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_devinfo_is_equal_pci_addr(NULL, "ffff:00:00.0", &eq),
		 DOCA_ERROR_INVALID_VALUE);

	T_OK(doca_devinfo_get_pci_func_type(info, &type));
	T_EQ_INT(type, DOCA_PCI_FUNC_TYPE_PF);
	T_STATUS(doca_devinfo_get_pci_func_type(NULL, &type), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_devinfo_get_pci_func_type(info, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_devinfo_get_sf_index(info, &sf), DOCA_ERROR_NOT_SUPPORTED);
	T_STATUS(doca_devinfo_get_sf_index(info, NULL), DOCA_ERROR_INVALID_VALUE);

	/* the aliases are the same device under another name */
	as = find_dev(list, n, "mlx5_1");
	T_TRUE(as != NULL);
	if (as != NULL) {
		T_OK(doca_devinfo_is_equal_pci_addr(as, "ffff:00:00.0", &eq));
		T_EQ_INT(eq, 1);
		T_OK(doca_devinfo_get_iface_name(as, iface, sizeof(iface)));
		T_EQ_STR(iface, "lo");
	}

	/* open: refcounted, same object through another list */
	T_STATUS(doca_dev_open(NULL, &dev), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_dev_open(info, NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_dev_open(info, &dev));
	T_OK(doca_dev_open(info, &dev2));
	T_TRUE(dev != NULL && dev == dev2);
	T_OK(doca_devinfo_create_list(&list2, &n2));
	T_EQ_INT(n2, 3);
	T_OK(doca_dev_open(find_dev(list2, n2, "softdpu0"), &dev3));
	T_TRUE(dev3 == dev);
	T_OK(doca_dev_open(find_dev(list2, n2, "mlx5_0"), &alias_dev));
	T_TRUE(alias_dev != NULL && alias_dev != dev);
	T_OK(doca_devinfo_destroy_list(list2));
	T_TRUE(doca_dev_as_devinfo(dev) == info);
	T_TRUE(doca_dev_as_devinfo(NULL) == NULL);
	T_TRUE(sdp_dev_get_provider_ops(dev) != NULL);
	T_TRUE(sdp_dev_get_priv(dev) == NULL); /* the host device keeps no private data */

	/* representors: none */
	{
		struct doca_devinfo_rep **reps = NULL;
		struct doca_dev_rep *rep = NULL;
		uint32_t nreps = 7;
		char vuid[DOCA_DEVINFO_REP_VUID_SIZE];

		T_STATUS(doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_ALL, &reps,
						      &nreps),
			 DOCA_ERROR_NOT_SUPPORTED);
		T_STATUS(doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_NET, &reps,
						      &nreps),
			 DOCA_ERROR_NOT_SUPPORTED);
		T_TRUE(reps == NULL && nreps == 7); /* outputs untouched on failure */
		T_STATUS(doca_devinfo_rep_create_list(dev, 1 << 5, &reps, &nreps),
			 DOCA_ERROR_INVALID_VALUE);
		T_STATUS(doca_devinfo_rep_create_list(NULL, 0, &reps, &nreps),
			 DOCA_ERROR_INVALID_VALUE);
		T_STATUS(doca_devinfo_rep_create_list(dev, 0, NULL, &nreps),
			 DOCA_ERROR_INVALID_VALUE);
		T_STATUS(doca_devinfo_rep_create_list(dev, 0, &reps, NULL),
			 DOCA_ERROR_INVALID_VALUE);
		T_STATUS(doca_devinfo_rep_destroy_list(NULL), DOCA_ERROR_INVALID_VALUE);
		T_STATUS(doca_devinfo_rep_get_vuid(NULL, vuid, sizeof(vuid)),
			 DOCA_ERROR_INVALID_VALUE);
		T_STATUS(doca_devinfo_rep_is_equal_pci_addr(NULL, "00:00.0", &eq),
			 DOCA_ERROR_INVALID_VALUE);
		T_STATUS(doca_dev_rep_open(NULL, &rep), DOCA_ERROR_INVALID_VALUE);
		T_STATUS(doca_dev_rep_open((struct doca_devinfo_rep *)&nreps, NULL),
			 DOCA_ERROR_INVALID_VALUE);
		T_STATUS(doca_dev_rep_open((struct doca_devinfo_rep *)&nreps, &rep),
			 DOCA_ERROR_NOT_SUPPORTED);
		T_TRUE(rep == NULL);
	}

	/* the list goes; the open devinfo stays valid */
	T_OK(doca_devinfo_destroy_list(list));
	list = NULL;
	as = doca_dev_as_devinfo(dev);
	T_OK(doca_devinfo_get_ibdev_name(as, name, sizeof(name)));
	T_EQ_STR(name, "softdpu0");
	T_OK(doca_devinfo_get_pci_addr_str(as, pci));
	T_EQ_STR(pci, "ffff:00:00.0");

	/* a holder blocks the last close only */
	sdp_dev_hold(dev);
	T_OK(doca_dev_close(dev));
	T_OK(doca_dev_close(dev));
	T_STATUS(doca_dev_close(dev), DOCA_ERROR_IN_USE);
	sdp_dev_release(dev);
	T_OK(doca_dev_close(dev)); /* the last one */
	T_OK(doca_dev_close(alias_dev));
	T_STATUS(doca_dev_close(NULL), DOCA_ERROR_INVALID_VALUE);

	/* a reopen after the last close is a fresh open */
	T_OK(doca_devinfo_create_list(&list, &n));
	T_OK(doca_dev_open(find_dev(list, n, "mlx5_1"), &dev));
	T_OK(doca_devinfo_destroy_list(list));
	list = NULL;
	T_OK(doca_devinfo_get_ibdev_name(doca_dev_as_devinfo(dev), name, sizeof(name)));
	T_EQ_STR(name, "mlx5_1");
	T_OK(doca_dev_close(dev));

	/* destroy_list on things that are not lists */
	{
		struct {
			uint32_t magic, num;
			struct doca_devinfo *items[2];
		} fake = {0};

		T_STATUS(doca_devinfo_destroy_list(NULL), DOCA_ERROR_INVALID_VALUE);
		T_STATUS(doca_devinfo_destroy_list(fake.items), DOCA_ERROR_INVALID_VALUE);
	}
out:
	if (list != NULL)
		doca_devinfo_destroy_list(list);
}

static void expect_list(const char *want)
{
	struct doca_devinfo **list;
	uint32_t n = 0;

	T_OK(doca_devinfo_create_list(&list, &n));
	T_EQ_STR(names_of(list, n), want);
	T_OK(doca_devinfo_destroy_list(list));
}

/* SOFTDPU_HOST_DEV_ALIASES unset: the default alias. */
static void scenario_default_alias(void)
{
	expect_list("softdpu0,mlx5_0");
}

/* SOFTDPU_HOST_DEV_ALIASES="": no alias. */
static void scenario_no_alias(void)
{
	expect_list("softdpu0");
}

/* Bad, repeated and colliding aliases are skipped; the good ones stay. */
static void scenario_bad_aliases(void)
{
	expect_list("softdpu0,mlx5_0,ok-1.x");
}

/* SOFTDPU_PROVIDER_PATH = an empty directory. */
static void scenario_empty_dir(void)
{
	struct doca_devinfo **list = NULL;
	uint32_t n = 99;

	T_OK(doca_devinfo_create_list(&list, &n));
	T_EQ_INT(n, 0);
	T_TRUE(list != NULL && list[0] == NULL);
	if (list != NULL)
		T_OK(doca_devinfo_destroy_list(list));
	expect_issue("providers", "no device provider loaded");
	T_TRUE(sdp_provider_get_name(0) == NULL);
}

/* Broken modules next to the host provider: each skipped with its reason, host still works. */
static void scenario_broken(void)
{
	expect_list("softdpu0,mlx5_0"); /* SOFTDPU_HOST_DEV_ALIASES unset: the default alias */
	expect_issue("sdp_provider_junk.so", "cannot load");
	expect_issue("sdp_provider_nosym.so", "no 'sdp_provider' symbol");
	expect_issue("sdp_provider_badabi.so", "provider ABI 999");
	expect_issue("sdp_provider_noenum.so", "no enumerate op");
	expect_issue("sdp_provider_misnamed.so", "calls itself 'somethingelse'");
	expect_issue("sdp_provider_failinit.so", "failed to initialise (DOCA_ERROR_DRIVER)");
	expect_issue("sdp_provider_intsym.so", "an object of 4 bytes, expected an object of 8");
	expect_issue("sdp_provider_bigsym.so", "an object of 200 bytes");
	expect_issue("sdp_provider_wildptr.so", "not at a whole provider table inside the module");
	expect_issue("sdp_provider_longname.so", "no name of at most 31 characters");
	expect_issue("sdp_provider_.so", "1 to 31 characters");
	expect_issue("does-not-exist", "cannot open provider directory");
	expect_issue("sdp_provider_host.so", "already loaded from");
	T_EQ_STR(sdp_provider_get_name(0), "host");
	T_TRUE(sdp_provider_get_name(1) == NULL);
}

/* Declarations from SOFTDPU_DEVICES and a file, for host and the fake provider. */
static void scenario_decls(void)
{
	struct doca_devinfo **list = NULL;
	struct doca_devinfo *vf, *sf, *broken;
	struct doca_dev *dev = NULL, *dev2 = NULL;
	enum doca_pci_func_type type;
	char iface[DOCA_DEVINFO_IFACE_NAME_SIZE];
	uint32_t n = 0, idx = 0;
	uint8_t eq = 0;

	T_OK(doca_devinfo_create_list(&list, &n));
	T_EQ_STR(names_of(list, n), "softdpu0,mlx5_7,fromfile,fvf,fsf,fbroken");
	expect_issue("SOFTDPU_DEVICES entry 2", "unknown provider 'nosuch'");
	expect_issue("SOFTDPU_DEVICES entry 3", "refused by provider 'host'");
	expect_issue("SOFTDPU_DEVICES entry 4", "key 'alias' given twice");
	expect_issue("SOFTDPU_DEVICES entry 5", "not key=value");
	expect_issue("SOFTDPU_DEVICES entry 6", "bad provider name");
	expect_issue("SOFTDPU_DEVICES entry 7", "refused by provider 'host'");
	expect_issue("SOFTDPU_DEVICES entry 10", "refused by provider 'fake'");
	expect_issue("devices.conf:4", "refused by provider 'host'");
	expect_issue("devices.conf:5", "malformed declaration");

	vf = find_dev(list, n, "fvf");
	sf = find_dev(list, n, "fsf");
	broken = find_dev(list, n, "fbroken");
	T_TRUE(vf != NULL && sf != NULL && broken != NULL);
	if (vf == NULL || sf == NULL || broken == NULL)
		goto out;
	T_OK(doca_devinfo_get_pci_func_type(vf, &type));
	T_EQ_INT(type, DOCA_PCI_FUNC_TYPE_VF);
	T_OK(doca_devinfo_is_equal_pci_addr(vf, "3b:00.2", &eq));
	T_EQ_INT(eq, 1);
	T_OK(doca_devinfo_is_equal_pci_addr(vf, "0000:3B:00.2", &eq));
	T_EQ_INT(eq, 1);
	T_STATUS(doca_devinfo_get_sf_index(vf, &idx), DOCA_ERROR_NOT_SUPPORTED);
	T_OK(doca_devinfo_get_pci_func_type(sf, &type));
	T_EQ_INT(type, DOCA_PCI_FUNC_TYPE_SF);
	T_OK(doca_devinfo_get_sf_index(sf, &idx));
	T_EQ_INT(idx, 5);
	T_OK(doca_devinfo_get_iface_name(sf, iface, sizeof(iface)));
	T_EQ_STR(iface, "fake1");

	/* provider private data per open device; a failing provider open */
	T_OK(doca_dev_open(vf, &dev));
	T_OK(doca_dev_open(vf, &dev2));
	T_TRUE(dev == dev2 && sdp_dev_get_priv(dev) != NULL);
	if (sdp_dev_get_priv(dev) != NULL)
		T_EQ_STR((const char *)sdp_dev_get_priv(dev), "fvf");
	dev2 = NULL;
	T_STATUS(doca_dev_open(broken, &dev2), DOCA_ERROR_DRIVER);
	T_TRUE(dev2 == NULL);
	T_OK(doca_devinfo_destroy_list(list));
	list = NULL;
	T_OK(doca_dev_close(dev));
	T_OK(doca_dev_close(dev)); /* frees the devinfo (and its provider data) too */
out:
	if (list != NULL)
		doca_devinfo_destroy_list(list);
}

/* SOFTDPU_DEVICE_CONFIG names a missing file. */
static void scenario_missing_conf(void)
{
	expect_list("softdpu0");
	expect_issue("no-such-devices.conf", "cannot open the device configuration file");
}

/* ---- main ------------------------------------------------------------------------------------ */

struct scenario {
	const char *name;
	void (*fn)(void);
};

static const struct scenario scenarios[] = {
	{"host", scenario_host},	   {"default_alias", scenario_default_alias},
	{"no_alias", scenario_no_alias},   {"bad_aliases", scenario_bad_aliases},
	{"empty_dir", scenario_empty_dir}, {"broken", scenario_broken},
	{"decls", scenario_decls},	   {"missing_conf", scenario_missing_conf},
};

int main(int argc, char **argv)
{
	char self[PATH_MAX], dir[PATH_MAX], var[8][PATH_MAX + 64], conf[PATH_MAX];
	static char host_dir[PATH_MAX];
	ssize_t len;

	if (argc == 2) {
		for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
			if (strcmp(argv[1], scenarios[i].name) == 0) {
				scenarios[i].fn();
				T_DONE();
			}
		}
		fprintf(stderr, "unknown scenario %s\n", argv[1]);
		return T_EXIT_FAIL;
	}

	/* the host provider's directory: the first one of SOFTDPU_PROVIDER_PATH (the list of
	 * the test environment goes on with the NIC backends, which these scenarios leave out) */
	g_host_dir = getenv("SOFTDPU_PROVIDER_PATH");
	if (g_host_dir == NULL || *g_host_dir == '\0' || *g_host_dir == ':')
		T_SKIP("SOFTDPU_PROVIDER_PATH (starting with the host provider's directory) is not "
		       "set");
	PATHF(host_dir, "%s", g_host_dir);
	if (strchr(host_dir, ':') != NULL)
		*strchr(host_dir, ':') = '\0';
	g_host_dir = host_dir;
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		T_SKIP("cannot find this executable: %s", strerror(errno));
	self[len] = '\0';
	g_self = self;
	PATHF(dir, "%s", self);
	PATHF(g_fixture_dir, "%s/providers", dirname(dir));
	PATHF(g_tmp, "/tmp/sdp_test_dev.%d.XXXXXX", (int)getpid());
	if (mkdtemp(g_tmp) == NULL)
		T_SKIP("mkdtemp: %s", strerror(errno));

	test_pci_normalize();
	test_decl_parse();

	PATHF(conf, "%s/devices.conf", g_tmp);
	write_file(conf, "# test devices\nhost:alias=fromfile   # trailing comment\n\n"
			 "host:alias=bad name\nhost:alias=a,\n");

	{
		const char *env[] = {"SOFTDPU_DEVICE_CONFIG=", var[0],
				     "SOFTDPU_HOST_DEV_ALIASES=mlx5_0,mlx5_1", NULL};

		PATHF(var[0], "SOFTDPU_PROVIDER_PATH=%s", g_host_dir);
		run_child("host", env);
	}
	{
		const char *env[] = {"SOFTDPU_DEVICE_CONFIG=", var[0], NULL};

		run_child("default_alias", env);
	}
	{
		const char *env[] = {"SOFTDPU_DEVICE_CONFIG=", var[0],
				     "SOFTDPU_HOST_DEV_ALIASES=", NULL};

		run_child("no_alias", env);
	}
	{
		const char *env[] = {
			"SOFTDPU_DEVICE_CONFIG=", var[0],
			"SOFTDPU_HOST_DEV_ALIASES=mlx5_0, softdpu0,mlx5_0,bad name,ok-1.x,"
			"a234567890123456789012345678901234567890123456789012345678901234",
			NULL};

		run_child("bad_aliases", env);
	}
	{
		char empty[PATH_MAX];
		const char *env[] = {"SOFTDPU_DEVICE_CONFIG=", var[1], NULL};

		PATHF(empty, "%s/empty", g_tmp);
		mkdir(empty, 0700);
		PATHF(var[1], "SOFTDPU_PROVIDER_PATH=%s", empty);
		run_child("empty_dir", env);
		rmdir(empty);
	}
	{
		static const char *const broken[] = {
			"sdp_provider_nosym.so",    "sdp_provider_badabi.so",
			"sdp_provider_noenum.so",   "sdp_provider_misnamed.so",
			"sdp_provider_failinit.so", "sdp_provider_intsym.so",
			"sdp_provider_bigsym.so",   "sdp_provider_wildptr.so",
			"sdp_provider_longname.so"};
		char bdir[PATH_MAX], path[PATH_MAX + 64];
		const char *env[] = {"SOFTDPU_DEVICE_CONFIG=", var[2], NULL};

		PATHF(bdir, "%s/broken", g_tmp);
		mkdir(bdir, 0700);
		for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++)
			make_link(bdir, broken[i]);
		PATHF(path, "%s/sdp_provider_junk.so", bdir);
		write_file(path, "this is not an ELF file\n");
		PATHF(path, "%s/sdp_provider_.so", bdir);
		write_file(path, "");
		/* the host directory twice: the second copy is a duplicate */
		PATHF(var[2], "SOFTDPU_PROVIDER_PATH=%s:%s:%s/does-not-exist:%s", g_host_dir, bdir,
		      g_tmp, g_host_dir);
		run_child("broken", env);
		for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
			PATHF(path, "%s/%s", bdir, broken[i]);
			unlink(path);
		}
		PATHF(path, "%s/sdp_provider_junk.so", bdir);
		unlink(path);
		PATHF(path, "%s/sdp_provider_.so", bdir);
		unlink(path);
		rmdir(bdir);
	}
	{
		char fdir[PATH_MAX], path[PATH_MAX + 64];
		const char *env[] = {
			var[3], var[4], "SOFTDPU_HOST_DEV_ALIASES=",
			"SOFTDPU_DEVICES=host:alias=mlx5_7; nosuch:a=b; host; host:alias=x,alias=y;"
			"host:alias; garbage!:x=y; host:alias=ok2,other=1;;"
			"fake:name=fvf,pci=0000:3B:00.2,type=vf;fake:name=bad,type=xx;"
			"fake:name=fsf,type=sf,sf=5,pci=3b:00.3;fake:name=fbroken,fail_open=1;"
			"fake:name=softdpu0;fake:name=rawbad,raw=1,pci=zz:zz.z",
			NULL};

		PATHF(fdir, "%s/fake", g_tmp);
		mkdir(fdir, 0700);
		make_link(fdir, "sdp_provider_fake.so");
		PATHF(var[3], "SOFTDPU_PROVIDER_PATH=%s:%s", g_host_dir, fdir);
		PATHF(var[4], "SOFTDPU_DEVICE_CONFIG=%s", conf);
		run_child("decls", env);
		PATHF(path, "%s/sdp_provider_fake.so", fdir);
		unlink(path);
		rmdir(fdir);
	}
	{
		const char *env[] = {var[5], var[0], "SOFTDPU_HOST_DEV_ALIASES=", NULL};

		PATHF(var[5], "SOFTDPU_DEVICE_CONFIG=%s/no-such-devices.conf", g_tmp);
		run_child("missing_conf", env);
	}

	unlink(conf);
	if (rmdir(g_tmp) != 0)
		t_fail("rmdir %s: %s (something left behind)", g_tmp, strerror(errno));
	T_DONE();
}

/*
 * libdoca_urom without a daemon: argument and state checks of every call, the setters'
 * validation (powers of two, environment rules), the service file parser (and the kinds of file
 * it refuses: FIFO, device, directory, oversized), and a service start
 * against a port where nothing listens (NOT_CONNECTED naming the address, within the timeout).
 * The daemon-backed flows are in tests/integration.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "doca_buf.h"
#include "doca_ctx.h"
#include "doca_log.h"
#include "doca_pe.h"
#include "doca_urom.h"
#include "sdp_config.h"
#include "sdp_urom_host.h"
#include "softdpu/ctx.h"
#include "softdpu/urom.h"
#include "t_helpers.h"
#include "t_log_capture.h"
#include "t_inotify.h"

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void test_null_args(void)
{
	struct doca_urom_service *svc = NULL;
	struct doca_urom_worker *worker = NULL;
	struct doca_urom_domain *domain = NULL;
	doca_cpu_set_t cpus;
	uint64_t id;
	uint32_t gid;

	DOCA_CPU_ZERO(&cpus);
	DOCA_CPU_SET(0, &cpus);
	T_STATUS(doca_urom_service_create(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_service_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_service_set_max_workers(NULL, 4), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_service_set_max_comm_msg_size(NULL, 4096), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_service_set_dev(NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	T_TRUE(doca_urom_service_as_ctx(NULL) == NULL);
	T_STATUS(doca_urom_service_get_plugins_list(NULL, NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_service_get_cpuset(NULL, &cpus), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_service_get_workers_by_gid_task_allocate(NULL, NULL),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_service_get_workers_by_gid_task_allocate_init(NULL, 0, NULL, NULL),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_service_get_workers_by_gid_task_release(NULL), DOCA_ERROR_INVALID_VALUE);
	T_TRUE(doca_urom_service_get_workers_by_gid_task_as_task(NULL) == NULL);
	T_EQ_INT(doca_urom_service_get_workers_by_gid_task_get_workers_count(NULL), 0);
	T_TRUE(doca_urom_service_get_workers_by_gid_task_get_worker_ids(NULL) == NULL);
	doca_urom_service_get_workers_by_gid_task_set_gid(NULL, 1);   /* logs, no crash */
	doca_urom_service_get_workers_by_gid_task_set_cb(NULL, NULL); /* logs, no crash */

	T_STATUS(doca_urom_worker_create(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_set_service(NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_set_id(NULL, 1), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_set_gid(NULL, 1), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_set_plugins(NULL, 1), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_set_cpuset(NULL, cpus), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_set_env(NULL, NULL, 0), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_set_max_inflight_tasks(NULL, 4), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_get_id(NULL, &id), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_get_gid(NULL, &gid), DOCA_ERROR_INVALID_VALUE);
	T_TRUE(doca_urom_worker_as_ctx(NULL) == NULL);
	T_STATUS(sdp_urom_worker_get_pid(NULL, &gid), DOCA_ERROR_INVALID_VALUE);

	T_STATUS(doca_urom_worker_cmd_task_allocate(NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_cmd_task_allocate_init(NULL, 1, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_cmd_task_release(NULL), DOCA_ERROR_INVALID_VALUE);
	T_TRUE(doca_urom_worker_cmd_task_get_payload(NULL) == NULL);
	T_TRUE(doca_urom_worker_cmd_task_get_response(NULL) == NULL);
	T_TRUE(doca_urom_worker_cmd_task_get_user_data(NULL) == NULL);
	T_TRUE(doca_urom_worker_cmd_task_as_task(NULL) == NULL);
	doca_urom_worker_cmd_task_set_plugin(NULL, 1); /* logs, no crash */
	doca_urom_worker_cmd_task_set_cb(NULL, NULL);  /* logs, no crash */

	T_STATUS(doca_urom_domain_create(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_domain_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	T_TRUE(doca_urom_domain_as_ctx(NULL) == NULL);

	/* a NULL second argument on a real object */
	T_OK(doca_urom_service_create(&svc));
	T_OK(doca_urom_worker_create(&worker));
	T_OK(doca_urom_domain_create(&domain));
	T_STATUS(doca_urom_service_set_dev(svc, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_set_service(worker, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_get_id(worker, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_get_gid(worker, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_service_get_cpuset(svc, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_domain_set_oob(domain, NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_urom_domain_destroy(domain));
	T_OK(doca_urom_worker_destroy(worker));
	T_OK(doca_urom_service_destroy(svc));
}

static void test_service_setters(void)
{
	const struct doca_urom_service_plugin_info *plugins = NULL;
	struct doca_urom_service_get_workers_by_gid_task *gid_task = NULL;
	struct doca_urom_service *svc = NULL;
	doca_cpu_set_t cpus;
	size_t count = 0;

	T_OK(doca_urom_service_create(&svc));
	T_TRUE(doca_urom_service_as_ctx(svc) != NULL);
	T_STATUS(doca_urom_service_set_max_workers(svc, 0), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_service_set_max_workers(svc, 3), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_service_set_max_workers(svc, 12), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_urom_service_set_max_workers(svc, 1));
	T_OK(doca_urom_service_set_max_workers(svc, 32));
	T_STATUS(doca_urom_service_set_max_comm_msg_size(svc, 0), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_service_set_max_comm_msg_size(svc, 16), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_urom_service_set_max_comm_msg_size(svc, 4096));
	T_OK(doca_urom_service_set_max_comm_msg_size(svc, 1024));

	/* RUNNING-only queries on an IDLE service */
	T_STATUS(doca_urom_service_get_plugins_list(svc, &plugins, &count), DOCA_ERROR_BAD_STATE);
	T_TRUE(plugins == NULL && count == 0);
	T_STATUS(doca_urom_service_get_cpuset(svc, &cpus), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_urom_service_get_workers_by_gid_task_allocate_init(svc, 0, NULL, &gid_task),
		 DOCA_ERROR_BAD_STATE);
	T_TRUE(gid_task == NULL);

	/* no PE: the core refuses the start */
	T_STATUS(doca_ctx_start(doca_urom_service_as_ctx(svc)), DOCA_ERROR_NOT_CONNECTED);
	T_OK(doca_urom_service_destroy(svc));
}

static void test_worker_setters(void)
{
	char *good_env[] = {"UCX_LOG_LEVEL=debug", "A=b"};
	char *space_env[] = {"UCX_LOG_LEVEL=debug", "X=a b"};
	char *noeq_env[] = {"NOEQUALS"};
	char *empty_name_env[] = {"=value"};
	char *null_env[] = {NULL};
	struct doca_urom_worker_cmd_task *task = NULL;
	struct doca_urom_worker *worker = NULL;
	struct doca_urom_service *svc = NULL;
	struct doca_pe *pe = NULL;
	doca_cpu_set_t cpus;
	uint64_t id = 0;
	uint32_t gid = 7, pid = 0;

	T_OK(doca_urom_worker_create(&worker));
	T_OK(doca_urom_worker_get_id(worker, &id));
	T_EQ_INT(id, DOCA_UROM_WORKER_ID_ANY);
	T_OK(doca_urom_worker_get_gid(worker, &gid));
	T_EQ_INT(gid, 0);
	T_OK(doca_urom_worker_set_id(worker, 5));
	T_OK(doca_urom_worker_set_gid(worker, 3));
	T_OK(doca_urom_worker_get_id(worker, &id));
	T_EQ_INT(id, 5);
	T_OK(doca_urom_worker_get_gid(worker, &gid));
	T_EQ_INT(gid, 3);

	T_STATUS(doca_urom_worker_set_max_inflight_tasks(worker, 0), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_set_max_inflight_tasks(worker, 3), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_set_max_inflight_tasks(worker, 100), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_urom_worker_set_max_inflight_tasks(worker, 16));
	T_OK(doca_urom_worker_set_max_inflight_tasks(worker, 1));

	T_STATUS(doca_urom_worker_set_env(worker, space_env, 2), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_set_env(worker, noeq_env, 1), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_set_env(worker, empty_name_env, 1), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_set_env(worker, null_env, 1), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_set_env(worker, NULL, 1), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_set_env(worker, good_env, 100000), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_urom_worker_set_env(worker, good_env, 2));
	T_OK(doca_urom_worker_set_env(worker, good_env, 1)); /* replaces */
	T_OK(doca_urom_worker_set_env(worker, NULL, 0));     /* clears */

	T_STATUS(doca_urom_worker_set_plugins(worker, 0), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_urom_worker_set_plugins(worker, 0x3));
	DOCA_CPU_ZERO(&cpus);
	T_STATUS(doca_urom_worker_set_cpuset(worker, cpus), DOCA_ERROR_INVALID_VALUE);
	DOCA_CPU_SET(1, &cpus);
	T_TRUE(doca_cpu_is_set(1, &cpus));
	T_TRUE(!doca_cpu_is_set(0, &cpus));
	T_OK(doca_urom_worker_set_cpuset(worker, cpus));

	/* tasks and the pid need a RUNNING worker */
	T_STATUS(doca_urom_worker_cmd_task_allocate_init(worker, 1, &task), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_urom_worker_cmd_task_allocate(worker, &task), DOCA_ERROR_BAD_STATE);
	T_TRUE(task == NULL);
	T_STATUS(sdp_urom_worker_get_pid(worker, &pid), DOCA_ERROR_BAD_STATE);

	/* start: without a service, then with a service that is not running */
	T_OK(doca_pe_create(&pe));
	T_OK(doca_pe_connect_ctx(pe, doca_urom_worker_as_ctx(worker)));
	T_STATUS(doca_ctx_start(doca_urom_worker_as_ctx(worker)), DOCA_ERROR_BAD_STATE);
	T_STATUS(sdp_ctx_get_last_error(doca_urom_worker_as_ctx(worker)), DOCA_ERROR_BAD_STATE);
	T_OK(doca_urom_service_create(&svc));
	T_OK(doca_urom_worker_set_service(worker, svc));
	T_OK(doca_urom_worker_set_service(worker, svc)); /* same service again */
	T_STATUS(doca_ctx_start(doca_urom_worker_as_ctx(worker)), DOCA_ERROR_BAD_STATE);

	/* the service is in use while the worker context refers to it */
	T_STATUS(doca_urom_service_destroy(svc), DOCA_ERROR_IN_USE);
	T_OK(doca_urom_worker_destroy(worker));
	T_OK(doca_urom_service_destroy(svc));
	T_OK(doca_pe_destroy(pe));
}

static void test_hostport_parse(void)
{
	char host[64];
	uint16_t port = 0;

	T_OK(sdp_urom_hostport_parse("dpu1", SDP_UROM_DEFAULT_PORT, host, sizeof(host), &port));
	T_EQ_STR(host, "dpu1");
	T_EQ_INT(port, SDP_UROM_DEFAULT_PORT);
	T_OK(sdp_urom_hostport_parse("10.0.0.2:7000", SDP_UROM_DEFAULT_PORT, host, sizeof(host),
				     &port));
	T_EQ_STR(host, "10.0.0.2");
	T_EQ_INT(port, 7000);
	T_OK(sdp_urom_hostport_parse("[::1]:65535", 1, host, sizeof(host), &port));
	T_EQ_STR(host, "::1");
	T_EQ_INT(port, 65535);
	T_OK(sdp_urom_hostport_parse("fe80::1", 9, host, sizeof(host), &port));
	T_EQ_STR(host, "fe80::1");
	T_EQ_INT(port, 9);
	port = 42;
	T_STATUS(sdp_urom_hostport_parse("h:0", 1, host, sizeof(host), &port),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_hostport_parse("h:65536", 1, host, sizeof(host), &port),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_hostport_parse("h:x1", 1, host, sizeof(host), &port),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_hostport_parse("h:12x", 1, host, sizeof(host), &port),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_hostport_parse(":12", 1, host, sizeof(host), &port),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_hostport_parse("[::1", 1, host, sizeof(host), &port),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_hostport_parse("", 1, host, sizeof(host), &port),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_hostport_parse(NULL, 1, host, sizeof(host), &port),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_hostport_parse("averyveryverylonghostname", 1, host, 8, &port),
		 DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(port, 42); /* untouched by the failures */
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		t_fail("cannot create %s", path);
		return;
	}
	fputs(text, f);
	fclose(f);
}

static void test_service_file(void)
{
	char path[] = "/tmp/test_urom_host_api_svcfile_XXXXXX";
	struct sdp_urom_addr addr;
	int fd = mkstemp(path);

	if (fd < 0) {
		t_fail("mkstemp failed");
		return;
	}
	close(fd);
	write_file(path, "# comment line\n"
			 "\n"
			 "apphost dpu\n"				 /* too few fields */
			 "apphost gpu dpuA 0000:03:00.0 mlx5_0:1\n"	 /* wrong type */
			 "apphost dpu dpuB notapci mlx5_0:1\n"		 /* bad PCI */
			 "otherhost dpu dpuC 0000:03:00.0 mlx5_0:1\n"	 /* other host */
			 "apphost dpu dpuD 0000:04:00.0 eth9\n"		 /* other device */
			 "apphost dpu dpuE:7001 03:00.0 dev1:1,dev2:1\n" /* the one */
			 "apphost dpu dpuF 0000:03:00.0 late\n");	 /* after the match */

	memset(&addr, 0, sizeof(addr));
	T_OK(sdp_urom_service_file_lookup(path, "apphost", "0000:03:00.0", &addr));
	T_EQ_STR(addr.host, "dpuE");
	T_EQ_INT(addr.port, 7001);
	T_EQ_STR(addr.net_devices, "dev1:1,dev2:1");
	T_TRUE(strstr(addr.origin, path) != NULL && strstr(addr.origin, ":8") != NULL);

	/* short PCI form on the caller's side, fully qualified host name, other case */
	T_OK(sdp_urom_service_file_lookup(path, "APPHOST.example.org", "04:00.0", &addr));
	T_EQ_STR(addr.host, "dpuD");
	T_EQ_INT(addr.port, SDP_UROM_DEFAULT_PORT);
	T_EQ_STR(addr.net_devices, "eth9");

	/* nothing for this host or device; output untouched */
	T_STATUS(sdp_urom_service_file_lookup(path, "nohost", "0000:03:00.0", &addr),
		 DOCA_ERROR_NOT_FOUND);
	T_STATUS(sdp_urom_service_file_lookup(path, "apphost", "0000:05:00.0", &addr),
		 DOCA_ERROR_NOT_FOUND);
	T_EQ_STR(addr.host, "dpuD");
	T_STATUS(sdp_urom_service_file_lookup(path, "apphost", "zz", &addr),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_service_file_lookup(NULL, "apphost", "03:00.0", &addr),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_service_file_lookup(path, "apphost", "03:00.0", NULL),
		 DOCA_ERROR_INVALID_VALUE);

	/* the file named by DOCA_UROM_SERVICE_FILE needs a device to be keyed by */
	setenv("DOCA_UROM_SERVICE_FILE", path, 1);
	T_STATUS(sdp_urom_addr_resolve(NULL, &addr), DOCA_ERROR_BAD_STATE);
	unsetenv("DOCA_UROM_SERVICE_FILE");
	unlink(path);
	T_STATUS(sdp_urom_service_file_lookup(path, "apphost", "03:00.0", &addr),
		 DOCA_ERROR_NOT_FOUND);

	/* without a file: SOFTDPU_UROM_SERVICE_ADDR, then the default */
	setenv("SOFTDPU_UROM_SERVICE_ADDR", "192.0.2.1:1234", 1);
	T_OK(sdp_urom_addr_resolve(NULL, &addr));
	T_EQ_STR(addr.host, "192.0.2.1");
	T_EQ_INT(addr.port, 1234);
	setenv("SOFTDPU_UROM_SERVICE_ADDR", "bad:port", 1);
	T_STATUS(sdp_urom_addr_resolve(NULL, &addr), DOCA_ERROR_INVALID_VALUE);
	unsetenv("SOFTDPU_UROM_SERVICE_ADDR");
	T_OK(sdp_urom_addr_resolve(NULL, &addr));
	T_EQ_STR(addr.host, "127.0.0.1");
	T_EQ_INT(addr.port, SDP_UROM_DEFAULT_PORT);
}

#if defined(__SANITIZE_ADDRESS__)
#define T_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_ASAN 1
#endif
#endif
#ifndef T_ASAN
#define T_ASAN 0
#endif

/*
 * The lookup of `path` in a child bounded in time (5 s) and memory (1 GiB of address space, so
 * a lookup that reads without a bound fails there instead of growing the test): its status, or
 * -1 when the child was killed or did not exit.
 */
static int lookup_in_child(const char *path)
{
	struct sdp_urom_addr addr;
	int wstatus = 0;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct rlimit rl = {.rlim_cur = 1ul << 30, .rlim_max = 1ul << 30};

		if (!T_ASAN)
			setrlimit(RLIMIT_AS, &rl); /* ASan reserves far more address space */
		alarm(5);
		_exit((int)sdp_urom_service_file_lookup(path, "apphost", "0000:03:00.0", &addr));
	}
	if (waitpid(pid, &wstatus, 0) != pid || !WIFEXITED(wstatus))
		return -1;
	return WEXITSTATUS(wstatus);
}

/* Write `len` bytes of comment lines, then `tail`, to path. */
static void write_big_file(const char *path, size_t len, const char *tail)
{
	static char line[64];
	FILE *f = fopen(path, "w");
	size_t done = 0, tail_len = strlen(tail);

	if (f == NULL) {
		t_fail("cannot create %s", path);
		return;
	}
	memset(line, 'x', sizeof(line));
	line[0] = '#';
	line[sizeof(line) - 1] = '\n';
	while (done + sizeof(line) <= len - tail_len) {
		fwrite(line, 1, sizeof(line), f);
		done += sizeof(line);
	}
	while (done < len - tail_len) {
		fputc(done + 1 == len - tail_len ? '\n' : '#', f);
		done++;
	}
	fputs(tail, f);
	fclose(f);
}

/* Only a regular file of at most SDP_UROM_SERVICE_FILE_MAX bytes is read, without blocking. */
static void test_service_file_kinds(void)
{
	static const char good_line[] = "apphost dpu dpuE:7001 03:00.0 dev1:1\n";
	char dir[] = "/tmp/test_urom_host_api_kinds_XXXXXX", path[128];
	struct sdp_urom_addr addr;
	uint64_t t0;

	if (mkdtemp(dir) == NULL) {
		t_fail("mkdtemp failed");
		return;
	}
	/* A regular file exactly at the bound, its matching line last: read. */
	snprintf(path, sizeof(path), "%s/exact", dir);
	write_big_file(path, SDP_UROM_SERVICE_FILE_MAX, good_line);
	T_OK(sdp_urom_service_file_lookup(path, "apphost", "0000:03:00.0", &addr));
	T_EQ_STR(addr.host, "dpuE");
	/* One byte more: refused. */
	write_big_file(path, SDP_UROM_SERVICE_FILE_MAX + 1, good_line);
	T_EQ_INT(lookup_in_child(path), DOCA_ERROR_IO_FAILED);
	unlink(path);

	/* /dev/zero: refused at once (it used to grow the process without end). */
	t0 = now_ms();
	T_EQ_INT(lookup_in_child("/dev/zero"), DOCA_ERROR_IO_FAILED);
	/* A FIFO nobody writes: refused at once (opening it used to block). */
	snprintf(path, sizeof(path), "%s/fifo", dir);
	T_EQ_INT(mkfifo(path, 0600), 0);
	T_EQ_INT(lookup_in_child(path), DOCA_ERROR_IO_FAILED);
	T_TRUE(now_ms() - t0 < 4000);
	/* ... and never opened (opening a device can act on it: /dev/watchdog arms itself). */
	{
		int watch = t_watch_open(path);

		t_log_reset();
		T_STATUS(sdp_urom_service_file_lookup(path, "apphost", "0000:03:00.0", &addr),
			 DOCA_ERROR_IO_FAILED);
		T_TRUE(!t_was_opened(watch));
		T_TRUE(strstr(t_log, "refused without opening it") != NULL);
		close(watch);
	}
	/* A symbolic link to a good file is followed. */
	{
		char file[160], link[160];

		snprintf(file, sizeof(file), "%s/good", dir);
		snprintf(link, sizeof(link), "%s/link", dir);
		write_big_file(file, sizeof(good_line) - 1, good_line);
		T_EQ_INT(symlink(file, link), 0);
		T_OK(sdp_urom_service_file_lookup(link, "apphost", "0000:03:00.0", &addr));
		unlink(link);
		unlink(file);
	}
	unlink(path);
	/* A directory. */
	T_EQ_INT(lookup_in_child(dir), DOCA_ERROR_IO_FAILED);
	T_STATUS(sdp_urom_service_file_lookup(dir, "apphost", "0000:03:00.0", &addr),
		 DOCA_ERROR_IO_FAILED);
	rmdir(dir);
}

/*
 * The default service address: one constant (sdp_urom_defaults.h) that the library and the
 * configuration registry's help agree on, and not the port DOCA's urom_rdmo application
 * hard-codes for its own side channel (18515, softdpu's default before).
 */
static void test_default_port(void)
{
	static char help[1 << 16];
	struct sdp_urom_addr addr;
	FILE *f = fmemopen(help, sizeof(help) - 1, "w");

	T_TRUE(SDP_UROM_DEFAULT_PORT != 18515);
	T_TRUE(SDP_UROM_DEFAULT_PORT > 60999); /* above Linux's default ephemeral range */
	T_EQ_STR(SDP_UROM_DEFAULT_ADDR, "127.0.0.1:" SDP_UROM_DEFAULT_PORT_STR);
	T_EQ_INT(atoi(SDP_UROM_DEFAULT_PORT_STR), SDP_UROM_DEFAULT_PORT);
	unsetenv("SOFTDPU_UROM_SERVICE_ADDR");
	unsetenv("DOCA_UROM_SERVICE_FILE");
	T_OK(sdp_urom_addr_resolve(NULL, &addr));
	T_EQ_STR(addr.host, SDP_UROM_DEFAULT_HOST);
	T_EQ_INT(addr.port, SDP_UROM_DEFAULT_PORT);
	if (f == NULL) {
		t_fail("fmemopen failed");
		return;
	}
	sdp_config_print(f);
	fclose(f);
	T_TRUE(strstr(help, "(empty: " SDP_UROM_DEFAULT_ADDR ")") != NULL);
}

/* Bind (without listening) a TCP port on loopback: nothing can be listening there. */
static int reserve_port(uint16_t *port)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

static void test_not_connected(void)
{
	struct doca_urom_service *svc = NULL;
	struct doca_urom_worker *worker = NULL;
	enum doca_ctx_states state;
	struct doca_pe *pe = NULL;
	char addr[64], secret[] = "/tmp/test_urom_host_api_secret_XXXXXX";
	uint64_t t0, elapsed;
	uint16_t port = 0;
	int fd, sfd;

	fd = reserve_port(&port);
	if (fd < 0) {
		t_fail("cannot reserve a loopback port");
		return;
	}
	sfd = mkstemp(secret); /* an empty secret file: never reached anyway */
	if (sfd >= 0)
		close(sfd);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
	setenv("SOFTDPU_UROM_SERVICE_ADDR", addr, 1);
	setenv("SOFTDPU_UROM_CONNECT_TIMEOUT_MS", "1500", 1);
	setenv("SOFTDPU_UROM_SECRET_FILE", secret, 1);
	unsetenv("DOCA_UROM_SERVICE_FILE");

	t_log_reset();

	T_OK(doca_pe_create(&pe));
	T_OK(doca_urom_service_create(&svc));
	T_OK(doca_pe_connect_ctx(pe, doca_urom_service_as_ctx(svc)));
	T_OK(doca_urom_service_set_max_workers(svc, 4));
	t0 = now_ms();
	T_STATUS(doca_ctx_start(doca_urom_service_as_ctx(svc)), DOCA_ERROR_NOT_CONNECTED);
	elapsed = now_ms() - t0;
	T_TRUE(elapsed < 1500 + 2000);
	T_OK(doca_ctx_get_state(doca_urom_service_as_ctx(svc), &state));
	T_EQ_INT(state, DOCA_CTX_STATE_IDLE);
	T_STATUS(sdp_ctx_get_last_error(doca_urom_service_as_ctx(svc)), DOCA_ERROR_NOT_CONNECTED);
	if (strstr(t_log, addr) == NULL)
		t_fail("the error log does not name the address %s: \"%s\"", addr, t_log);
	printf("start refused in %lu ms, logged: %s\n", (unsigned long)elapsed, t_log);

	/* still configurable and startable (again NOT_CONNECTED), then destroyable */
	T_OK(doca_urom_service_set_max_comm_msg_size(svc, 2048));
	T_STATUS(doca_ctx_start(doca_urom_service_as_ctx(svc)), DOCA_ERROR_NOT_CONNECTED);

	/* something listens there but never speaks UROM: refused when the timeout expires */
	if (listen(fd, 4) == 0) {
		t_log_reset();
		t0 = now_ms();
		T_STATUS(doca_ctx_start(doca_urom_service_as_ctx(svc)), DOCA_ERROR_NOT_CONNECTED);
		elapsed = now_ms() - t0;
		T_TRUE(elapsed < 1500 + 2000);
		if (strstr(t_log, addr) == NULL)
			t_fail("the error log does not name the address %s: \"%s\"", addr, t_log);
		printf("silent listener refused in %lu ms, logged: %s\n", (unsigned long)elapsed,
		       t_log);
		T_OK(doca_ctx_get_state(doca_urom_service_as_ctx(svc), &state));
		T_EQ_INT(state, DOCA_CTX_STATE_IDLE);
	} else {
		t_fail("listen on the reserved port failed");
	}

	/* a worker of a service that did not start cannot start */
	T_OK(doca_urom_worker_create(&worker));
	T_OK(doca_pe_connect_ctx(pe, doca_urom_worker_as_ctx(worker)));
	T_OK(doca_urom_worker_set_service(worker, svc));
	T_OK(doca_urom_worker_set_plugins(worker, 1));
	T_STATUS(doca_ctx_start(doca_urom_worker_as_ctx(worker)), DOCA_ERROR_BAD_STATE);
	T_OK(doca_ctx_get_state(doca_urom_worker_as_ctx(worker), &state));
	T_EQ_INT(state, DOCA_CTX_STATE_IDLE);
	T_OK(doca_urom_worker_destroy(worker));

	T_OK(doca_urom_service_destroy(svc));
	T_OK(doca_pe_destroy(pe));
	unsetenv("SOFTDPU_UROM_SERVICE_ADDR");
	unsetenv("SOFTDPU_UROM_CONNECT_TIMEOUT_MS");
	unsetenv("SOFTDPU_UROM_SECRET_FILE");
	unlink(secret);
	close(fd);
}

/* OOB callbacks that must never be called: the starts below are refused before the OOB. */
static doca_error_t t_oob_allgather_never(void *sbuf, void *rbuf, size_t msglen, void *coll_info,
					  void **req)
{
	(void)sbuf, (void)rbuf, (void)msglen, (void)coll_info, (void)req;
	t_fail("the OOB allgather was called");
	return DOCA_ERROR_UNEXPECTED;
}

static doca_error_t t_oob_req_never(void *req)
{
	(void)req;
	t_fail("an OOB request callback was called");
	return DOCA_ERROR_UNEXPECTED;
}

static void test_domain(void)
{
	struct doca_urom_domain_oob_coll oob = {0};
	struct doca_urom_domain *domain = NULL;
	struct doca_urom_worker *worker = NULL;
	enum doca_ctx_states state;
	struct doca_pe *pe = NULL;
	uint64_t ids[1] = {0};
	char mem[64], memh[8] = {1}, mkey[8] = {2};

	T_OK(doca_urom_domain_create(&domain));
	T_OK(doca_urom_worker_create(&worker));
	T_STATUS(doca_urom_domain_set_oob(domain, &oob), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_domain_set_workers(domain, ids, NULL, 1), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_domain_set_workers(domain, ids, &worker, 0), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_urom_domain_set_workers(domain, ids, &worker, 1));
	T_STATUS(doca_urom_domain_add_buffer(domain, mem, sizeof(mem), memh, sizeof(memh), mkey,
					     sizeof(mkey)),
		 DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_urom_domain_set_buffers_count(domain, 0), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_urom_domain_set_buffers_count(domain, 1));
	T_STATUS(doca_urom_domain_add_buffer(domain, NULL, 1, memh, 1, mkey, 1),
		 DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_urom_domain_add_buffer(domain, mem, sizeof(mem), memh, sizeof(memh), mkey,
					 sizeof(mkey)));
	T_STATUS(doca_urom_domain_add_buffer(domain, mem, sizeof(mem), memh, sizeof(memh), mkey,
					     sizeof(mkey)),
		 DOCA_ERROR_FULL);

	T_OK(doca_pe_create(&pe));
	T_OK(doca_pe_connect_ctx(pe, doca_urom_domain_as_ctx(domain)));
	/* No OOB collective yet, then a worker that is not RUNNING: refused, still IDLE. */
	T_STATUS(doca_ctx_start(doca_urom_domain_as_ctx(domain)), DOCA_ERROR_BAD_STATE);
	T_OK(doca_ctx_get_state(doca_urom_domain_as_ctx(domain), &state));
	T_EQ_INT(state, DOCA_CTX_STATE_IDLE);
	oob.allgather = t_oob_allgather_never;
	oob.req_test = t_oob_req_never;
	oob.req_free = t_oob_req_never;
	oob.n_oob_indexes = 1;
	T_OK(doca_urom_domain_set_oob(domain, &oob));
	T_STATUS(doca_ctx_start(doca_urom_domain_as_ctx(domain)), DOCA_ERROR_BAD_STATE);
	T_OK(doca_ctx_get_state(doca_urom_domain_as_ctx(domain), &state));
	T_EQ_INT(state, DOCA_CTX_STATE_IDLE);
	T_OK(doca_urom_domain_destroy(domain));
	T_OK(doca_urom_worker_destroy(worker));
	T_OK(doca_pe_destroy(pe));
}

int main(void)
{
	/* What the library logs (ERROR and worse), for checks on message contents. */
	(void)t_log_capture_level(DOCA_LOG_LEVEL_ERROR);
	/* Only this test's own settings count. */
	unsetenv("DOCA_UROM_SERVICE_FILE");
	unsetenv("SOFTDPU_UROM_SERVICE_ADDR");

	test_null_args();
	test_service_setters();
	test_worker_setters();
	test_hostport_parse();
	test_service_file();
	test_service_file_kinds();
	test_default_port();
	test_not_connected();
	test_domain();
	T_DONE();
}

/*
 * Integration: the UROM fault matrix that test_urom_worker_kill.c does not cover, against a
 * private daemon started with --worker-timeout T_TIMEOUT_MS.
 *  - Liveness: a worker frozen with SIGSTOP (alive but silent) while commands are in flight is
 *    declared unresponsive by the service within the bound, killed and reaped; every command
 *    it still owed completes with DOCA_ERROR_IO_FAILED, the status counts it
 *    (workers_unresponsive, the worker gone from "workers"), and the service keeps serving.
 *  - No false alarm: a worker idle for more than twice the bound, and one streaming commands
 *    for longer than the bound, stay alive (their heartbeats arrive).
 *  - Host SIGKILL: a host process killed with two workers running has them reaped within 2 s;
 *    another host's worker is untouched and still answers.
 *  - Kill cycles (SDP_TEST_FAULT_CYCLES, default 100): worker SIGKILLed with a command in
 *    flight, each cycle; afterwards this process and the daemon hold as many descriptors as
 *    before, this process maps no more shared memory than before, no SysV segment created by
 *    a killed worker is left and /dev/shm holds no entry named by softdpu.
 *  - Worker SIGKILL during its spawn: the start is refused with IO_FAILED (or, when the worker
 *    was ready first, its death is reported at once); the service still spawns.
 *  - Service SIGKILL: in-flight commands complete once each (IO_FAILED, or SUCCESS when the
 *    orphaned worker answered first: the kernel sends its orphaned process group SIGHUP and
 *    SIGCONT), within 2 s the host stops using the worker and its error names the address,
 *    the orphaned worker exits by itself within 2 s, a new service context against the dead
 *    address fails naming it; after a restart new contexts and workers work.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <signal.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>

#include "t_urom.h"
#include "t_urom_raw.h"
#include "t_uromd.h"

#define T_TIMEOUT_MS 1000			/* the daemon's --worker-timeout */
#define T_DETECT_BOUND_MS (T_TIMEOUT_MS + 1500) /* liveness bound + reap + host wake-up */
#define T_REAP_BOUND_MS 2000			/* host or service gone -> its workers gone */
#define DEPTH 8
#define MAX_CYCLE_PIDS 100000
#define LOOP_SLOTS (1 << 20) /* loopback bookkeeping slots (t_loop) */
#define BUSY_SLOTS 1024	     /* the top ones, reused by fill_busy */

static struct t_uromd d;
static struct t_svc s;
static struct t_loop loop;
static uint64_t next_idx;

static struct t_worker_cfg cfg(void)
{
	struct t_worker_cfg c = {
		.id = DOCA_UROM_WORKER_ID_ANY, .plugins = s.graph_id, .max_inflight = DEPTH};

	return c;
}

/* The one live worker process of the daemon not in `except` (n of them); 0 if none. */
static pid_t new_worker_pid(const pid_t *except, int n)
{
	pid_t pids[T_UROMD_MAX_PIDS];
	int k = t_uromd_worker_pids(&d, pids, T_UROMD_MAX_PIDS), i, j;

	for (i = 0; i < k && i < T_UROMD_MAX_PIDS; i++) {
		for (j = 0; j < n; j++)
			if (pids[i] == except[j])
				break;
		if (j == n)
			return pids[i];
	}
	return 0;
}

/* A number from the daemon's status document (-1 when it cannot be read). */
static long long status_num(const char *key)
{
	static char json[1 << 20];
	struct json_object *root, *v;
	long long n = -1;

	if (t_raw_status(d.port, d.secret_file, json, sizeof(json)) != DOCA_SUCCESS)
		return -1;
	root = json_tokener_parse(json);
	if (root != NULL && json_object_object_get_ex(root, key, &v))
		n = json_object_get_int64(v);
	json_object_put(root);
	return n;
}

/* Whether the status lists a worker process pid, and in which state (copied to state). */
static int status_has_pid(pid_t pid, char *state, size_t size)
{
	static char json[1 << 20];
	struct json_object *root, *ws, *o, *v;
	int found = 0;

	if (t_raw_status(d.port, d.secret_file, json, sizeof(json)) != DOCA_SUCCESS)
		return -1;
	root = json_tokener_parse(json);
	if (root != NULL && json_object_object_get_ex(root, "workers", &ws))
		for (size_t i = 0; i < json_object_array_length(ws); i++) {
			o = json_object_array_get_idx(ws, i);
			if (json_object_object_get_ex(o, "pid", &v) &&
			    json_object_get_int64(v) == pid) {
				found = 1;
				if (state != NULL && json_object_object_get_ex(o, "state", &v))
					snprintf(state, size, "%s", json_object_get_string(v));
			}
		}
	json_object_put(root);
	return found;
}

/* Fill the queue of w up to DEPTH in flight; returns how many were submitted. */
static long fill(struct doca_urom_worker *w, long submitted)
{
	long n = 0;

	if (next_idx + DEPTH >= LOOP_SLOTS - BUSY_SLOTS) {
		t_fail("the test ran out of loopback slots (%" PRIu64 " used)", next_idx);
		return 0;
	}
	while (submitted + n - loop.done < DEPTH && t_loop_submit(w, next_idx) == DOCA_SUCCESS) {
		next_idx++;
		n++;
	}
	return n;
}

/*
 * The same for a stream whose commands are counted but not checked one by one: they reuse
 * the BUSY_SLOTS slots at the top of the table, so a fast machine cannot run the test out of
 * slots however many commands it completes in a timed window.
 */
static long fill_busy(struct doca_urom_worker *w, long submitted, uint64_t *k)
{
	long n = 0;

	while (submitted + n - loop.done < DEPTH &&
	       t_loop_submit(w, LOOP_SLOTS - BUSY_SLOTS + *k % BUSY_SLOTS) == DOCA_SUCCESS) {
		(*k)++;
		n++;
	}
	return n;
}

/* Step pe for ms milliseconds (a window the test means to wait through). */
static void step_for(struct doca_pe *pe, int ms)
{
	int64_t end = t_now_ms() + ms;

	while (t_now_ms() < end)
		t_pe_step(pe, 5);
}

/* SIGSTOP pid and wait (bounded) until the kernel shows it stopped. */
static void stop_worker(pid_t pid)
{
	int64_t end = t_now_ms() + 5000;
	char state = 0;
	pid_t ppid;

	T_EQ_INT(kill(pid, SIGSTOP), 0);
	while (t_proc_stat(pid, &state, &ppid) == 0 && state != 'T' && t_now_ms() < end)
		t_sleep_ms(1);
	if (state != 'T')
		t_fail("worker %d not stopped 5 s after SIGSTOP (state %c)", (int)pid, state);
}

/* ---- liveness -------------------------------------------------------------------------------- */

static void test_sigstop(void)
{
	struct t_worker_cfg c = cfg();
	struct doca_urom_worker *w = NULL;
	long submitted = 0, before, unresp0 = status_num("workers_unresponsive");
	uint64_t first;
	pid_t pid;
	int64_t t0, waited;
	char state[32] = "";

	T_EQ_INT((int)status_num("worker_timeout_ms"), T_TIMEOUT_MS);
	T_EQ_INT((int)unresp0, 0);
	loop.done = 0;
	loop.errors = 0;
	T_OK(t_worker_start(&s, s.pe, &c, &w));
	if (w == NULL)
		return;
	pid = new_worker_pid(NULL, 0);
	T_TRUE(pid > 0);
	/* Busy for longer than the bound: commands keep flowing, nobody is declared dead. */
	{
		int64_t end = t_now_ms() + T_TIMEOUT_MS + 500;
		uint64_t k = 0;

		while (t_now_ms() < end) {
			submitted += fill_busy(w, submitted, &k);
			t_pe_step(s.pe, 1);
		}
		t_pe_wait_count(s.pe, NULL, &loop.done, submitted, T_WAIT_MS);
		T_EQ_INT(loop.done, submitted);
		T_EQ_INT(loop.errors, 0);
		T_TRUE(submitted > 0);
		fprintf(stderr, "note: busy worker: %ld commands in %d ms, none declared dead\n",
			submitted, T_TIMEOUT_MS + 500);
	}
	/* Idle for more than twice the bound: the heartbeats keep it alive. */
	step_for(s.pe, 2 * T_TIMEOUT_MS + 500);
	T_EQ_INT(status_has_pid(pid, state, sizeof(state)), 1);
	T_TRUE(strcmp(state, "running") == 0);
	T_EQ_INT((int)status_num("workers_unresponsive"), 0);
	T_STATUS(t_loop_one(&loop, w, s.pe, NULL, next_idx++), DOCA_SUCCESS);
	submitted++;

	/* Frozen with commands in flight: alive but silent. */
	stop_worker(pid);
	first = next_idx;
	submitted += fill(w, submitted);
	before = loop.done;
	T_TRUE(submitted - before > 0);
	t0 = t_now_ms();
	t_pe_wait_count(s.pe, NULL, &loop.done, submitted, T_DETECT_BOUND_MS + 3000);
	waited = t_now_ms() - t0;
	T_EQ_INT(loop.done, submitted);
	if (waited > T_DETECT_BOUND_MS)
		t_fail("tasks of a stopped worker completed after %lld ms, bound %d ms",
		       (long long)waited, T_DETECT_BOUND_MS);
	for (uint64_t i = first; i < next_idx; i++) {
		T_EQ_INT(loop.count[i], 1);
		if (loop.status[i] != DOCA_ERROR_IO_FAILED)
			t_fail("command %" PRIu64
			       " of the stopped worker: expected IO_FAILED, got %s",
			       i, doca_error_get_name(loop.status[i]));
	}
	fprintf(stderr,
		"note: stopped worker: %ld in-flight tasks failed %lld ms after SIGSTOP "
		"(--worker-timeout %d)\n",
		submitted - before, (long long)waited, T_TIMEOUT_MS);
	/* The service killed and reaped it, counted it, and shows it no more. */
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 2000), 0);
	T_EQ_INT((int)status_num("workers_unresponsive"), 1);
	T_EQ_INT(status_has_pid(pid, NULL, 0), 0);
	T_EQ_INT(t_uromd_log_count(&d, "unresponsive, nothing heard for"), 1);
	t_worker_close(&s, s.pe, w);
	/* A new worker works. */
	w = NULL;
	T_OK(t_worker_start(&s, s.pe, &c, &w));
	if (w != NULL) {
		T_STATUS(t_loop_one(&loop, w, s.pe, NULL, next_idx++), DOCA_SUCCESS);
		t_worker_close(&s, s.pe, w);
	}
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
	T_TRUE(t_uromd_alive(&d));
}

/* ---- host SIGKILL ---------------------------------------------------------------------------- */

/* The other host: two workers, one loopback each, 'R' on out, then progress until killed. */
static void __attribute__((noreturn)) other_host(int in, int out)
{
	struct t_svc s2;
	struct doca_urom_worker *w1 = NULL, *w2 = NULL;
	struct pollfd p = {.fd = in, .events = POLLIN};
	char go;
	int64_t end;

	if (poll(&p, 1, 30000) != 1 || read(in, &go, 1) != 1)
		_exit(3);
	if (t_svc_open(&s2, 0) != DOCA_SUCCESS || t_svc_find_graph(&s2) != DOCA_SUCCESS)
		_exit(4);
	{
		struct t_worker_cfg c = {.id = DOCA_UROM_WORKER_ID_ANY, .plugins = s2.graph_id};

		if (t_worker_start(&s2, s2.pe, &c, &w1) != DOCA_SUCCESS ||
		    t_worker_start(&s2, s2.pe, &c, &w2) != DOCA_SUCCESS)
			_exit(5);
	}
	if (t_loop_one(&loop, w1, s2.pe, NULL, 0) != DOCA_SUCCESS ||
	    t_loop_one(&loop, w2, s2.pe, NULL, 1) != DOCA_SUCCESS)
		_exit(6);
	if (write(out, "R", 1) != 1)
		_exit(7);
	end = t_now_ms() + 30000; /* bounded: the parent kills it long before */
	while (t_now_ms() < end)
		t_pe_step(s2.pe, 50);
	_exit(8);
}

static void test_host_kill(pid_t host_pid, int go_fd, int ready_fd)
{
	struct t_worker_cfg c = cfg();
	struct doca_urom_worker *w = NULL;
	struct pollfd p = {.fd = ready_fd, .events = POLLIN};
	pid_t mine = 0, theirs[2];
	int64_t t0, took;
	int status, n;
	char r = 0;

	T_OK(t_worker_start(&s, s.pe, &c, &w));
	if (w == NULL)
		return;
	mine = new_worker_pid(NULL, 0);
	T_TRUE(mine > 0);
	T_EQ_INT((int)write(go_fd, "G", 1), 1);
	/* The other host starts its workers meanwhile: keep ours served. */
	for (int64_t end = t_now_ms() + 20000; t_now_ms() < end;) {
		if (poll(&p, 1, 0) == 1)
			break;
		t_pe_step(s.pe, 20);
	}
	T_EQ_INT((int)read(ready_fd, &r, 1), 1);
	T_EQ_INT(r, 'R');
	T_EQ_INT(t_uromd_worker_pids(&d, NULL, 0), 3);
	theirs[0] = new_worker_pid(&mine, 1);
	{
		pid_t ex[2] = {mine, theirs[0]};

		theirs[1] = new_worker_pid(ex, 2);
	}
	T_TRUE(theirs[0] > 0 && theirs[1] > 0);
	t0 = t_now_ms();
	T_EQ_INT(kill(host_pid, SIGKILL), 0);
	T_EQ_INT(t_wait_child(host_pid, 5000, &status), 1);
	while ((t_pid_alive(theirs[0]) || t_pid_alive(theirs[1])) &&
	       t_now_ms() - t0 < T_REAP_BOUND_MS + 3000)
		t_pe_step(s.pe, 5);
	took = t_now_ms() - t0;
	T_TRUE(!t_pid_alive(theirs[0]) && !t_pid_alive(theirs[1]));
	if (took > T_REAP_BOUND_MS)
		t_fail("the killed host's workers were gone only after %lld ms, bound %d ms",
		       (long long)took, T_REAP_BOUND_MS);
	fprintf(stderr, "note: host SIGKILL: its 2 workers gone %lld ms after the kill\n",
		(long long)took);
	/* Ours is untouched. */
	n = t_uromd_worker_pids(&d, theirs, 1);
	T_EQ_INT(n, 1);
	T_EQ_INT((int)theirs[0], (int)mine);
	T_STATUS(t_loop_one(&loop, w, s.pe, NULL, next_idx++), DOCA_SUCCESS);
	t_worker_close(&s, s.pe, w);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
}

/* ---- worker SIGKILL during its spawn --------------------------------------------------------- */

/*
 * The worker process is killed as soon as it exists, while the host waits for its SPAWN_REPLY:
 * the start ends within the bound, either refused (IDLE, IO_FAILED: killed before SW_READY) or
 * RUNNING with the death reported right after (a command fails IO_FAILED). Never a hang.
 */
static void test_spawn_kill(void)
{
	struct doca_urom_worker *w = NULL;
	struct doca_ctx *ctx;
	enum doca_ctx_states state = DOCA_CTX_STATE_IDLE;
	doca_error_t st;
	int64_t end;
	pid_t pid = 0;

	T_OK(doca_urom_worker_create(&w));
	if (w == NULL)
		return;
	ctx = doca_urom_worker_as_ctx(w);
	T_OK(doca_urom_worker_set_service(w, s.svc));
	T_OK(doca_pe_connect_ctx(s.pe, ctx));
	T_OK(doca_urom_worker_set_id(w, DOCA_UROM_WORKER_ID_ANY));
	T_OK(doca_urom_worker_set_plugins(w, s.graph_id));
	st = doca_ctx_start(ctx);
	T_TRUE(st == DOCA_ERROR_IN_PROGRESS || st == DOCA_SUCCESS);
	/* The daemon forks it while handling the SPAWN: progress until it shows up. */
	for (end = t_now_ms() + 5000; pid == 0 && t_now_ms() < end;) {
		pid = new_worker_pid(NULL, 0);
		if (pid == 0)
			doca_pe_progress(s.pe);
	}
	T_TRUE(pid > 0);
	if (pid > 0)
		T_EQ_INT(kill(pid, SIGKILL), 0);
	for (end = t_now_ms() + T_WAIT_MS; t_now_ms() < end;) {
		if (doca_ctx_get_state(ctx, &state) != DOCA_SUCCESS ||
		    state == DOCA_CTX_STATE_IDLE || state == DOCA_CTX_STATE_RUNNING)
			break;
		t_pe_step(s.pe, 2);
	}
	if (state == DOCA_CTX_STATE_IDLE) {
		T_STATUS(sdp_ctx_get_last_error(ctx), DOCA_ERROR_IO_FAILED);
		fprintf(stderr, "note: worker killed during its spawn: start refused with "
				"IO_FAILED\n");
	} else if (state == DOCA_CTX_STATE_RUNNING) {
		long want = loop.done + 1;
		uint64_t i = next_idx++;

		if (t_loop_submit(w, i) == DOCA_SUCCESS) {
			t_pe_wait_count(s.pe, NULL, &loop.done, want, 5000);
			T_EQ_INT(loop.count[i], 1);
			T_STATUS(loop.status[i], DOCA_ERROR_IO_FAILED);
		}
		fprintf(stderr, "note: worker killed during its spawn: it was ready first, its "
				"death reported after\n");
	} else {
		t_fail("worker killed during its spawn: context in state %d after %d ms",
		       (int)state, T_WAIT_MS);
	}
	t_worker_close(&s, s.pe, w);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
	/* The service still spawns. */
	{
		struct t_worker_cfg c = cfg();

		w = NULL;
		T_OK(t_worker_start(&s, s.pe, &c, &w));
		if (w != NULL) {
			T_STATUS(t_loop_one(&loop, w, s.pe, NULL, next_idx++), DOCA_SUCCESS);
			t_worker_close(&s, s.pe, w);
		}
	}
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
}

/* ---- kill cycles: leaks ---------------------------------------------------------------------- */

static int count_fds_of(pid_t pid)
{
	char path[64];
	struct dirent *de;
	int n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	if (dir == NULL)
		return -1;
	while ((de = readdir(dir)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(dir);
	return n;
}

/* Mappings of shared memory in this process (/dev/shm files and SysV segments). */
static int count_shm_maps(void)
{
	char line[1024];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, "/dev/shm/") != NULL || strstr(line, "SYSV") != NULL)
			n++;
	fclose(f);
	return n;
}

/* /dev/shm entries whose name says softdpu made them (softdpu itself creates none). */
static int count_softdpu_shm(void)
{
	struct dirent *de;
	int n = 0;
	DIR *dir = opendir("/dev/shm");

	if (dir == NULL)
		return 0;
	while ((de = readdir(dir)) != NULL)
		if (strstr(de->d_name, "softdpu") != NULL || strncmp(de->d_name, "sdp", 3) == 0)
			n++;
	closedir(dir);
	return n;
}

static int pid_in(pid_t pid, const pid_t *set, int n)
{
	for (int i = 0; i < n; i++)
		if (set[i] == pid)
			return 1;
	return 0;
}

/* SysV segments still present whose creator is one of the killed workers. */
static int count_sysv_of(const pid_t *set, int n)
{
	char line[512];
	int count = 0;
	FILE *f = fopen("/proc/sysvipc/shm", "r");

	if (f == NULL)
		return 0;
	if (fgets(line, sizeof(line), f) == NULL) { /* header */
		fclose(f);
		return 0;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		long key, id, perms, size, cpid;

		if (sscanf(line, "%ld %ld %lo %ld %ld", &key, &id, &perms, &size, &cpid) == 5 &&
		    pid_in((pid_t)cpid, set, n))
			count++;
	}
	fclose(f);
	return count;
}

static void kill_cycle(pid_t *pid_p)
{
	struct t_worker_cfg c = cfg();
	struct doca_urom_worker *w = NULL;
	long want;
	pid_t pid;

	*pid_p = 0;
	T_OK(t_worker_start(&s, s.pe, &c, &w));
	if (w == NULL)
		return;
	pid = new_worker_pid(NULL, 0);
	*pid_p = pid;
	T_TRUE(pid > 0);
	T_STATUS(t_loop_one(&loop, w, s.pe, NULL, next_idx++), DOCA_SUCCESS);
	/* One command it cannot answer any more. */
	if (pid > 0) {
		stop_worker(pid);
		want = loop.done + 1;
		T_OK(t_loop_submit(w, next_idx));
		T_EQ_INT(kill(pid, SIGKILL), 0);
		t_pe_wait_count(s.pe, NULL, &loop.done, want, 5000);
		T_EQ_INT(loop.done, want);
		T_STATUS(loop.status[next_idx], DOCA_ERROR_IO_FAILED);
		next_idx++;
	}
	t_worker_close(&s, s.pe, w);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
}

static void test_kill_cycles(void)
{
	static pid_t killed[MAX_CYCLE_PIDS];
	const char *env = getenv("SDP_TEST_FAULT_CYCLES");
	int cycles = env != NULL && env[0] != '\0' ? atoi(env) : 100, i, n = 0;
	int host_fds, svc_fds, maps, sdp_shm;
	int64_t t0;

	if (cycles < 1 || cycles > MAX_CYCLE_PIDS)
		cycles = 100;
	/* One cycle first settles what UCX opens once per context. */
	kill_cycle(&killed[n]);
	n++;
	host_fds = t_count_fds();
	svc_fds = count_fds_of(d.pid);
	maps = count_shm_maps();
	sdp_shm = count_softdpu_shm();
	t0 = t_now_ms();
	for (i = 0; i < cycles && t_failures == 0; i++) {
		kill_cycle(&killed[n]);
		n++;
	}
	fprintf(stderr, "note: %d worker kill cycles in %lld ms\n", i,
		(long long)(t_now_ms() - t0));
	T_EQ_INT(i, cycles);
	T_EQ_INT(t_count_fds(), host_fds);
	T_EQ_INT(count_fds_of(d.pid), svc_fds);
	T_EQ_INT(count_shm_maps(), maps);
	T_EQ_INT(count_softdpu_shm(), sdp_shm);
	T_EQ_INT(sdp_shm, 0);
	T_EQ_INT(count_sysv_of(killed, n), 0);
	T_EQ_INT(t_uromd_worker_pids(&d, NULL, 0), 0);
	T_TRUE(t_uromd_alive(&d));
}

/* ---- service SIGKILL and restart ------------------------------------------------------------- */

/* Run fn with this process's stderr going to a file; copies what it wrote into buf. */
static void capture_stderr(void (*fn)(void *), void *arg, char *buf, size_t size)
{
	char path[PATH_MAX + 32];
	int saved, fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/stderr-capture", d.tmp_dir);
	fflush(stderr);
	saved = dup(2);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (saved < 0 || fd < 0) {
		t_fail("cannot capture stderr: %s", strerror(errno));
		buf[0] = '\0';
		if (saved >= 0)
			close(saved);
		if (fd >= 0)
			close(fd);
		fn(arg);
		return;
	}
	dup2(fd, 2);
	fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, buf, size - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(path);
}

static void open_dead(void *arg)
{
	struct t_svc dead;
	doca_error_t st = t_svc_open(&dead, 0);

	*(doca_error_t *)arg = st;
	t_svc_close(&dead);
}

struct stream_kill {
	struct doca_urom_worker *w;
	pid_t worker;
	long submitted;
	int refused; /* a command after the death was refused or failed */
};

/*
 * Kill the daemon with commands in flight (the worker frozen first, so they are still owed).
 * The daemon's death orphans the worker's process group: the kernel sends it SIGHUP and
 * SIGCONT, so the worker may still answer some before it dies. Every command completes once,
 * and within the bound the host stops using the worker: a new command is refused or fails.
 */
static void kill_service(void *arg)
{
	struct stream_kill *k = arg;
	int64_t end;
	int status;

	stop_worker(k->worker);
	k->submitted += fill(k->w, k->submitted);
	T_TRUE(k->submitted > loop.done);
	T_EQ_INT(kill(d.pid, SIGKILL), 0);
	T_EQ_INT(t_wait_child(d.pid, 5000, &status), 1);
	t_pe_wait_count(s.pe, NULL, &loop.done, k->submitted, 5000);
	for (end = t_now_ms() + T_REAP_BOUND_MS; t_now_ms() < end;) {
		uint64_t i = next_idx;

		if (t_loop_submit(k->w, next_idx++) != DOCA_SUCCESS) {
			k->refused = 1;
			break;
		}
		k->submitted++;
		t_pe_wait_count(s.pe, NULL, &loop.done, k->submitted, T_REAP_BOUND_MS);
		if (loop.count[i] == 1 && loop.status[i] != DOCA_SUCCESS) {
			k->refused = 1;
			break;
		}
	}
}

static void test_service_kill(void)
{
	static char err[1 << 16];
	struct t_worker_cfg c = cfg();
	struct stream_kill k = {0};
	pid_t pids[T_UROMD_MAX_PIDS];
	char old_addr[64];
	uint64_t first;
	doca_error_t st = DOCA_SUCCESS;
	int64_t t0, took;
	int n, before;

	loop.done = 0;
	loop.errors = 0;
	T_OK(t_worker_start(&s, s.pe, &c, &k.w));
	if (k.w == NULL)
		return;
	n = t_uromd_worker_pids(&d, pids, T_UROMD_MAX_PIDS);
	T_EQ_INT(n, 1);
	if (n < 1)
		return;
	k.worker = pids[0];
	{
		char state;
		pid_t ppid = 0;

		T_EQ_INT(t_proc_stat(k.worker, &state, &ppid), 0);
		T_EQ_INT((int)ppid, (int)d.pid); /* the daemon's own worker */
	}
	T_STATUS(t_loop_one(&loop, k.w, s.pe, NULL, next_idx++), DOCA_SUCCESS);
	k.submitted = loop.done;
	first = next_idx;
	before = t_failures;
	capture_stderr(kill_service, &k, err, sizeof(err));
	if (t_failures != before || strstr(err, "lost") == NULL)
		fprintf(stderr, "while the service was killed:\n%s\n", err);
	T_EQ_INT(loop.done, k.submitted);
	T_TRUE(k.refused);
	for (uint64_t i = first; i < next_idx; i++)
		if (loop.count[i] > 1 || (loop.count[i] == 1 && loop.status[i] != DOCA_SUCCESS &&
					  loop.status[i] != DOCA_ERROR_IO_FAILED))
			t_fail("command %" PRIu64 " when the service died: completed %d times, %s",
			       i, loop.count[i], doca_error_get_name(loop.status[i]));
	/* The orphan must exit by itself (SIGCONT in case it is still stopped). */
	(void)kill(k.worker, SIGCONT);
	t0 = t_now_ms();
	if (strstr(err, d.addr) == NULL || strstr(err, "lost") == NULL)
		t_fail("the host's error about the dead service does not name %s: \"%.300s\"",
		       d.addr, err);
	/* The orphaned worker exits by itself (its control link closed). */
	while (n > 0 && t_pid_alive(pids[0]) && t_now_ms() - t0 < T_REAP_BOUND_MS + 3000)
		t_sleep_ms(10);
	took = t_now_ms() - t0;
	T_TRUE(!t_pid_alive(pids[0]));
	if (took > T_REAP_BOUND_MS)
		t_fail("the orphaned worker exited only %lld ms after its service died",
		       (long long)took);
	fprintf(stderr,
		"note: service SIGKILL: %ld of %ld commands failed, the orphaned "
		"worker gone %lld ms after the host stopped using it\n",
		loop.errors, k.submitted - 1, (long long)took);
	t_worker_close(&s, s.pe, k.w);
	t_svc_close(&s);
	/* A new context against the dead address: a clean error naming it. */
	snprintf(old_addr, sizeof(old_addr), "%s", d.addr);
	capture_stderr(open_dead, &st, err, sizeof(err));
	if (st == DOCA_SUCCESS)
		t_fail("a service context started against the dead service at %s", old_addr);
	if (strstr(err, old_addr) == NULL)
		t_fail("the error about the dead service does not name %s: \"%.300s\"", old_addr,
		       err);
	d.pid = 0;
	t_uromd_stop(&d);
	/* Restart: new contexts and workers work. */
	{
		const char *args[] = {"--worker-timeout", "1000", NULL};

		if (t_uromd_start(&d, args) != 0)
			return;
	}
	before = t_failures;
	T_OK(t_svc_open(&s, 0));
	T_OK(t_svc_find_graph(&s));
	if (t_failures != before)
		return;
	c = cfg();
	k.w = NULL;
	T_OK(t_worker_start(&s, s.pe, &c, &k.w));
	if (k.w != NULL) {
		T_STATUS(t_loop_one(&loop, k.w, s.pe, NULL, next_idx++), DOCA_SUCCESS);
		t_worker_close(&s, s.pe, k.w);
	}
}

int main(void)
{
	const char *args[] = {"--worker-timeout", "1000", NULL};
	int go[2] = {-1, -1}, ready[2] = {-1, -1};
	pid_t host = -1;

	/* a second host that died early must fail a check (write: EPIPE), not kill the test */
	signal(SIGPIPE, SIG_IGN);
	if (t_uromd_start(&d, args) != 0)
		return T_EXIT_FAIL;
	t_loop_init(&loop, LOOP_SLOTS);
	/* The other host is forked before this process touches UCX or the library. */
	if (pipe(go) != 0 || pipe(ready) != 0) {
		t_fail("pipe: %s", strerror(errno));
		goto out;
	}
	host = fork();
	if (host == 0) {
		close(go[1]);
		close(ready[0]);
		other_host(go[0], ready[1]);
	}
	close(go[0]);
	close(ready[1]);
	if (host < 0) {
		t_fail("fork: %s", strerror(errno));
		goto out;
	}
	if (t_svc_open(&s, 0) != DOCA_SUCCESS || t_svc_find_graph(&s) != DOCA_SUCCESS) {
		t_fail("service start or worker_graph lookup failed");
		goto out;
	}
	test_sigstop();
	test_host_kill(host, go[1], ready[0]);
	host = -1;
	test_spawn_kill();
	test_kill_cycles();
	test_service_kill();
out:
	if (host > 0) {
		int status;

		kill(host, SIGKILL);
		t_wait_child(host, 5000, &status);
	}
	if (go[1] >= 0)
		close(go[1]);
	if (ready[0] >= 0)
		close(ready[0]);
	t_svc_close(&s);
	t_loop_fini(&loop);
	t_uromd_stop(&d);
	T_DONE();
}

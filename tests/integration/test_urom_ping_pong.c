/*
 * Integration: the urom_ping_pong sample against a private softdpu-uromd (t_uromd.h) that
 * offers worker_sandbox. The TCP build runs in launcher mode (--launch 2: it forks both ranks
 * with a private secret and a loopback OOB root on a port the kernel picks), with the default
 * and with a custom message; the MPI build runs under mpirun when both exist. Checked: the exit
 * status, every rank's result line and that each rank logged the message it received, byte for
 * byte (the sample itself compares every byte and the echoed contexts). Refusals: no OOB group
 * and no --launch, --launch with a rank count other than 2, an unreachable service.
 *
 * usage: test_urom_ping_pong <plugin dir> <doca_urom_ping_pong> <doca_urom_ping_pong_mpi or ->
 *                            <mpirun or ->
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "t_helpers.h"
#include "t_uromd.h"

#define RUN_TIMEOUT_MS 120000

static struct t_uromd d;
static char out_file[PATH_MAX + 32];
static char out[1 << 20];

/*
 * Run argv (a NULL-terminated list) with stdout and stderr into out_file; extra_env (may be
 * NULL) is set in the child only. Returns the exit status, or -1 (a failure recorded) when it
 * did not exit by itself within the bound. The output lands in out.
 */
static int run(const char *const argv[], const char *extra_env)
{
	int status = 0, fd;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		t_fail("fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		fd = open(out_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0)
			_exit(126);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		if (extra_env != NULL)
			putenv((char *)extra_env);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (!t_wait_child(pid, RUN_TIMEOUT_MS, &status)) {
		t_fail("%s did not finish within %d ms; killing it", argv[0], RUN_TIMEOUT_MS);
		kill(pid, SIGKILL);
		t_wait_child(pid, 5000, &status);
		status = -1;
	}
	if (t_read_file(out_file, out, sizeof(out)) < 0)
		out[0] = '\0';
	if (status == -1)
		return -1;
	if (!WIFEXITED(status)) {
		t_fail("%s died of signal %d", argv[0], WTERMSIG(status));
		return -1;
	}
	return WEXITSTATUS(status);
}

static void expect_line(const char *what, const char *needle)
{
	if (strstr(out, needle) == NULL)
		t_fail("%s: the output lacks \"%s\"", what, needle);
}

/* A run must pass: status 0, each rank's result line, the message seen on both sides. */
static void expect_passed(const char *what, int status, const char *message, int per_rank_lines)
{
	int before = t_failures;
	char line[2048];

	if (status != 0)
		t_fail("%s: exit status %d, expected 0", what, status);
	if (per_rank_lines) {
		expect_line(what, "urom_ping_pong: rank 0 PASSED");
		expect_line(what, "urom_ping_pong: rank 1 PASSED");
	}
	snprintf(line, sizeof(line), "rank 0: ping \"%s\" received (%zu bytes)", message,
		 strlen(message));
	expect_line(what, line);
	snprintf(line, sizeof(line), "rank 1: pong \"%s\" received (%zu bytes)", message,
		 strlen(message));
	expect_line(what, line);
	if (strstr(out, "FAILED") != NULL)
		t_fail("%s: a rank reports FAILED", what);
	if (t_failures > before)
		fprintf(stderr, "---- output of %s ----\n%s\n---- end ----\n", what, out);
	else
		printf("ok: %s\n", what);
}

static int workers_started;

/* Workers of a finished run leave before the next run asks for the same ids. */
static void wait_no_workers(void)
{
	workers_started += 2;
	if (t_uromd_wait_workers(&d, 0, 10000) != 0)
		t_fail("the daemon still has workers of the previous run");
}

/*
 * Each worker exited by itself with status 0 (a sanitizer report in a worker changes its exit
 * status): the daemon logs each worker's end.
 */
static void check_worker_exits(void)
{
	int64_t deadline = t_now_ms() + 10000;
	int clean, ended;

	/* A worker that is gone may not be reaped and logged yet: wait for the line. */
	for (;;) {
		clean = t_uromd_log_count(&d, "exited with status 0");
		ended = t_uromd_log_count(&d, "exited with status") +
			t_uromd_log_count(&d, "killed by signal") +
			t_uromd_log_count(&d, "ended with wait status");
		if (ended >= workers_started || t_now_ms() >= deadline)
			break;
		t_sleep_ms(20);
	}

	if (clean != workers_started || ended != workers_started)
		t_fail("worker exits: %d clean of %d, expected %d clean", clean, ended,
		       workers_started);
}

int main(int argc, char **argv)
{
	const char *custom = "softdpu sandbox ping-pong: 0123456789 ~!@#$%^&*()";
	int status;

	if (argc != 5) {
		fprintf(stderr, "usage: %s <plugin dir> <sample> <mpi sample or -> <mpirun or ->\n",
			argv[0]);
		return T_EXIT_FAIL;
	}
	setenv("UROM_PLUGIN_PATH", argv[1], 1);
	argv++; /* argv[1..3]: the sample, the MPI sample, mpirun */
	if (t_uromd_start(&d, NULL) != 0)
		return T_EXIT_FAIL;
	snprintf(out_file, sizeof(out_file), "%s/ping-pong.out", d.tmp_dir);

	/* Launcher mode, the default message. */
	{
		const char *args[] = {argv[1], "--launch", "2", NULL};

		status = run(args, NULL);
		expect_line("--launch 2", "urom_ping_pong: 2 ranks PASSED");
		expect_passed("--launch 2", status, "hello world", 1);
		wait_no_workers();
	}

	/* A message of our own. */
	{
		const char *args[] = {argv[1], "--launch", "2", "-m", custom, NULL};

		status = run(args, NULL);
		expect_passed("--launch 2 -m", status, custom, 1);
		wait_no_workers();
	}

	/* Under MPI. */
	if (strcmp(argv[2], "-") != 0 && strcmp(argv[3], "-") != 0) {
		const char *args[] = {
			argv[3], "--allow-run-as-root", "--oversubscribe", "-np", "2", argv[2],
			NULL};

		/* Open MPI's own allocations are not this test's to judge. */
		status = run(args, "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1");
		expect_passed("mpirun -np 2", status, "hello world", 1);
		wait_no_workers();
	} else {
		printf("# no MPI build or no mpirun: the MPI run is skipped\n");
	}

	/* No OOB group and no --launch: a clear refusal. */
	{
		const char *args[] = {argv[1], NULL};

		status = run(args, NULL);
		if (status != 1)
			t_fail("no OOB group: exit status %d, expected 1", status);
		expect_line("no OOB group", "--launch 2");
		expect_line("no OOB group", "FAILED");
	}

	/* Only 2 ranks. */
	{
		const char *args[] = {argv[1], "--launch", "3", NULL};

		status = run(args, NULL);
		if (status != 1)
			t_fail("--launch 3: exit status %d, expected 1", status);
	}

	/* A service nobody runs. */
	{
		const char *args[] = {argv[1], "--launch", "2", NULL};

		status = run(args, "SOFTDPU_UROM_SERVICE_ADDR=127.0.0.1:1");
		if (status != 1)
			t_fail("unreachable service: exit status %d, expected 1", status);
		expect_line("unreachable service", "urom_ping_pong: 2 ranks FAILED");
	}

	check_worker_exits();
	t_uromd_stop(&d);
	T_DONE();
}

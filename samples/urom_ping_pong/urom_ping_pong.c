/*
 * UROM ping-pong sample, written against DOCA's public headers and the worker_sandbox
 * plugin's host half: two processes each offload UCX tagged messaging to their own UROM
 * worker and bounce a message between the workers.
 *
 * Per rank: connect to the UROM service, find the worker_sandbox plugin, start a worker whose
 * id is the rank (16 tasks in flight), start a domain of that one worker (the ranks exchange
 * their workers' addresses through the out-of-band allgather), then
 *   rank 0: receive the ping (tag 0x1234, mask 0xffff), check it, send it back as the pong
 *           (tag 0x5678) to rank (rank + 1) % size;
 *   rank 1: post the receive for the pong (tag 0x5678), send the ping (tag 0x1234) to rank
 *           (rank + 1) % size, wait for the pong and check it.
 * Receives carry the context 0xdead and sends 0xbeef; every completion must echo its own,
 * and the message must arrive byte for byte. Then everything is torn down.
 *
 * The out-of-band allgather comes from MPI (doca_urom_ping_pong_mpi, built when meson finds
 * MPI: MPI_Iallgather) or from softdpu's TCP allgather (doca_urom_ping_pong: the SOFTDPU_OOB_*
 * environment, or --launch 2 which starts both ranks itself). samples/urom_ping_pong/README.md
 * has the commands.
 *
 * Waiting is event driven and bounded: with nothing to do the program sleeps on its PE's
 * notification handle. SIGINT or SIGTERM cuts the run short with the same teardown.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef SDP_PP_MPI
#include <mpi.h>
#else
#include <softdpu/urom_oob.h>
#endif

#include <doca_argp.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_pe.h>
#include <doca_urom.h>

#include "urom_sandbox.h"

DOCA_LOG_REGISTER(UROM_PING_PONG);

#define MAX_MESSAGE 1024
#define DEFAULT_MESSAGE "hello world"
#define PING_TAG 0x1234
#define PONG_TAG 0x5678
#define TAG_MASK 0xffff
#define RECV_CONTEXT 0xdead
#define SEND_CONTEXT 0xbeef
#define STATE_TIMEOUT_MS 30000
#define WAIT_SLICE_MS 100
#define LAUNCH_TIMEOUT_MS 120000

struct pp_config {
	char device[64]; /* IB device name, empty: no device (local service) */
	char message[MAX_MESSAGE + 1];
	int launch; /* --launch N: start N ranks as child processes (0: be one rank) */
};

/* One outstanding sandbox command. */
struct pp_op {
	int done;
	doca_error_t result;
	uint64_t context;
	ucs_status_t ucs_status;
	uint8_t data[MAX_MESSAGE];
	uint64_t count;
	uint64_t sender_tag;
};

static atomic_int force_quit;

#ifndef SDP_PP_MPI
static int launch_port_fd = -1; /* launcher's rank 0: where to report the OOB port */
#endif

static void signal_handler(int signum)
{
	(void)signum;
	atomic_store(&force_quit, 1);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Progress pe once; when it had nothing to do, sleep on its notification handle (bounded). */
static void progress_or_wait(struct doca_pe *pe)
{
	doca_notification_handle_t handle;
	struct pollfd pfd;

	if (doca_pe_progress(pe) != 0)
		return;
	if (doca_pe_get_notification_handle(pe, &handle) != DOCA_SUCCESS ||
	    doca_pe_request_notification(pe) != DOCA_SUCCESS)
		return;
	pfd.fd = (int)handle;
	pfd.events = POLLIN;
	pfd.revents = 0;
	if (poll(&pfd, 1, WAIT_SLICE_MS) > 0)
		(void)doca_pe_clear_notification(pe, handle);
}

/* Progress pe until ctx reaches want (DOCA_SUCCESS), a failed start, a timeout or a signal. */
static doca_error_t wait_for_state(struct doca_pe *pe, struct doca_ctx *ctx,
				   enum doca_ctx_states want, int allow_quit)
{
	uint64_t deadline = now_ms() + STATE_TIMEOUT_MS;
	enum doca_ctx_states state;
	doca_error_t result;

	for (;;) {
		result = doca_ctx_get_state(ctx, &state);
		if (result != DOCA_SUCCESS)
			return result;
		if (state == want)
			return DOCA_SUCCESS;
		if (want == DOCA_CTX_STATE_RUNNING && state == DOCA_CTX_STATE_IDLE)
			return DOCA_ERROR_BAD_STATE; /* the start failed */
		if (allow_quit && atomic_load(&force_quit))
			return DOCA_ERROR_SHUTDOWN;
		if (now_ms() > deadline)
			return DOCA_ERROR_TIME_OUT;
		progress_or_wait(pe);
	}
}

/* Progress pe until op completes (bounded). */
static doca_error_t wait_for_op(struct doca_pe *pe, struct pp_op *op, const char *what)
{
	uint64_t deadline = now_ms() + STATE_TIMEOUT_MS;

	while (!op->done) {
		if (atomic_load(&force_quit))
			return DOCA_ERROR_SHUTDOWN;
		if (now_ms() > deadline) {
			DOCA_LOG_ERR("%s did not complete within %d ms", what, STATE_TIMEOUT_MS);
			return DOCA_ERROR_TIME_OUT;
		}
		progress_or_wait(pe);
	}
	return DOCA_SUCCESS;
}

/* ---- the out-of-band allgather ------------------------------------------------------------- */

#ifdef SDP_PP_MPI
static doca_error_t mpi_allgather(void *sbuf, void *rbuf, size_t msglen, void *coll_info,
				  void **req)
{
	MPI_Comm comm = (MPI_Comm)(uintptr_t)coll_info;
	MPI_Request *request;

	if (msglen > INT_MAX) {
		DOCA_LOG_ERR("OOB allgather of %zu bytes is more than MPI counts", msglen);
		return DOCA_ERROR_INVALID_VALUE;
	}
	request = calloc(1, sizeof(*request));
	if (request == NULL)
		return DOCA_ERROR_NO_MEMORY;
	if (MPI_Iallgather(sbuf, (int)msglen, MPI_BYTE, rbuf, (int)msglen, MPI_BYTE, comm,
			   request) != MPI_SUCCESS) {
		DOCA_LOG_ERR("MPI_Iallgather failed");
		free(request);
		return DOCA_ERROR_IO_FAILED;
	}
	*req = request;
	return DOCA_SUCCESS;
}

static doca_error_t mpi_req_test(void *req)
{
	int done = 0;

	if (MPI_Test((MPI_Request *)req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
		return DOCA_ERROR_IO_FAILED;
	return done ? DOCA_SUCCESS : DOCA_ERROR_IN_PROGRESS;
}

static doca_error_t mpi_req_free(void *req)
{
	free(req);
	return DOCA_SUCCESS;
}
#endif

/* ---- the sandbox commands ------------------------------------------------------------------ */

static void send_finished(doca_error_t result, union doca_data cookie, union doca_data context,
			  ucs_status_t status)
{
	struct pp_op *op = cookie.ptr;

	op->result = result;
	op->context = context.u64;
	op->ucs_status = status;
	op->done = 1;
}

static void recv_finished(doca_error_t result, union doca_data cookie, union doca_data context,
			  void *buffer, uint64_t count, uint64_t sender_tag, ucs_status_t status)
{
	struct pp_op *op = cookie.ptr;

	op->result = result;
	op->context = context.u64;
	op->ucs_status = status;
	op->sender_tag = sender_tag;
	op->count = count;
	/* The inline bytes live in the task's response: copy them now. */
	if (result == DOCA_SUCCESS && buffer != NULL && count <= sizeof(op->data))
		memcpy(op->data, buffer, count);
	else if (result == DOCA_SUCCESS)
		op->result = DOCA_ERROR_INVALID_VALUE;
	op->done = 1;
}

static doca_error_t post_recv(struct doca_urom_worker *worker, struct pp_op *op, uint64_t tag)
{
	union doca_data cookie = {.ptr = op};

	memset(op, 0, sizeof(*op));
	return urom_sandbox_tag_task_recv(worker, cookie, RECV_CONTEXT, 0, MAX_MESSAGE, tag,
					  TAG_MASK, 0, recv_finished);
}

static doca_error_t post_send(struct doca_urom_worker *worker, struct pp_op *op, uint64_t dest,
			      const void *data, size_t len, uint64_t tag)
{
	union doca_data cookie = {.ptr = op};

	memset(op, 0, sizeof(*op));
	return urom_sandbox_tag_task_send(worker, cookie, SEND_CONTEXT, dest,
					  (uint64_t)(uintptr_t)data, len, tag, 0, send_finished);
}

/* A finished send: its status and its echoed context. */
static doca_error_t check_send(int rank, const struct pp_op *op, const char *what)
{
	if (op->result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("rank %d: %s failed: %s (UCX: %s)", rank, what,
			     doca_error_get_descr(op->result), ucs_status_string(op->ucs_status));
		return op->result;
	}
	if (op->context != SEND_CONTEXT) {
		DOCA_LOG_ERR("rank %d: %s completed with context %#" PRIx64 ", expected %#x", rank,
			     what, op->context, SEND_CONTEXT);
		return DOCA_ERROR_UNEXPECTED;
	}
	return DOCA_SUCCESS;
}

/* A finished receive: status, context, tag and the message byte for byte. */
static doca_error_t check_recv(int rank, const struct pp_op *op, const char *what, uint64_t tag,
			       const char *message)
{
	size_t len = strlen(message);

	if (op->result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("rank %d: %s failed: %s (UCX: %s)", rank, what,
			     doca_error_get_descr(op->result), ucs_status_string(op->ucs_status));
		return op->result;
	}
	if (op->context != RECV_CONTEXT) {
		DOCA_LOG_ERR("rank %d: %s completed with context %#" PRIx64 ", expected %#x", rank,
			     what, op->context, RECV_CONTEXT);
		return DOCA_ERROR_UNEXPECTED;
	}
	if ((op->sender_tag & TAG_MASK) != tag) {
		DOCA_LOG_ERR("rank %d: %s arrived with tag %#" PRIx64 ", expected %#" PRIx64, rank,
			     what, op->sender_tag, tag);
		return DOCA_ERROR_UNEXPECTED;
	}
	if (op->count != len || memcmp(op->data, message, len) != 0) {
		DOCA_LOG_ERR("rank %d: %s of %" PRIu64 " bytes differs from the %zu-byte message",
			     rank, what, op->count, len);
		return DOCA_ERROR_UNEXPECTED;
	}
	DOCA_LOG_INFO("rank %d: %s \"%.*s\" received (%zu bytes)", rank, what, (int)len,
		      (const char *)op->data, len);
	return DOCA_SUCCESS;
}

/* The exchange itself, once the domain runs. */
static doca_error_t ping_pong(struct doca_pe *pe, struct doca_urom_worker *worker, int rank,
			      int size, const char *message)
{
	uint64_t peer = (uint64_t)((rank + 1) % size);
	size_t len = strlen(message);
	struct pp_op recv_op, send_op;
	doca_error_t result;

	if (rank == 0) {
		result = post_recv(worker, &recv_op, PING_TAG);
		if (result == DOCA_SUCCESS)
			result = wait_for_op(pe, &recv_op, "ping receive");
		if (result == DOCA_SUCCESS)
			result = check_recv(rank, &recv_op, "ping", PING_TAG, message);
		if (result != DOCA_SUCCESS)
			return result;
		/* Back with the bytes that came in. */
		result = post_send(worker, &send_op, peer, recv_op.data, recv_op.count, PONG_TAG);
		if (result == DOCA_SUCCESS)
			result = wait_for_op(pe, &send_op, "pong send");
		if (result == DOCA_SUCCESS)
			result = check_send(rank, &send_op, "pong send");
		return result;
	}

	/* The pong's receive goes first, so it is posted before the ping leaves. */
	result = post_recv(worker, &recv_op, PONG_TAG);
	if (result != DOCA_SUCCESS)
		return result;
	result = post_send(worker, &send_op, peer, message, len, PING_TAG);
	if (result == DOCA_SUCCESS)
		result = wait_for_op(pe, &send_op, "ping send");
	if (result == DOCA_SUCCESS)
		result = check_send(rank, &send_op, "ping send");
	if (result != DOCA_SUCCESS) {
		/* The receive stays posted; the worker's stop cancels it. */
		return result;
	}
	result = wait_for_op(pe, &recv_op, "pong receive");
	if (result == DOCA_SUCCESS)
		result = check_recv(rank, &recv_op, "pong", PONG_TAG, message);
	return result;
}

/* ---- one rank ------------------------------------------------------------------------------ */

static doca_error_t open_device(const char *name, struct doca_dev **dev_p)
{
	char ibdev[DOCA_DEVINFO_IBDEV_NAME_SIZE];
	struct doca_devinfo **list = NULL;
	doca_error_t result;
	uint32_t n = 0, i;

	result = doca_devinfo_create_list(&list, &n);
	if (result != DOCA_SUCCESS)
		return result;
	result = DOCA_ERROR_NOT_FOUND;
	for (i = 0; i < n; i++) {
		if (doca_devinfo_get_ibdev_name(list[i], ibdev, sizeof(ibdev)) == DOCA_SUCCESS &&
		    strcmp(ibdev, name) == 0) {
			result = doca_dev_open(list[i], dev_p);
			break;
		}
	}
	doca_devinfo_destroy_list(list);
	return result;
}

/* Stop a context (progressing pe until IDLE when the stop is asynchronous). */
static doca_error_t stop_ctx(struct doca_pe *pe, struct doca_ctx *ctx, const char *what)
{
	enum doca_ctx_states state;
	doca_error_t result;

	if (doca_ctx_get_state(ctx, &state) != DOCA_SUCCESS || state == DOCA_CTX_STATE_IDLE)
		return DOCA_SUCCESS;
	result = doca_ctx_stop(ctx);
	if (result == DOCA_ERROR_IN_PROGRESS || result == DOCA_SUCCESS)
		result = wait_for_state(pe, ctx, DOCA_CTX_STATE_IDLE, 0);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("failed to stop the %s context: %s", what,
			     doca_error_get_descr(result));
	return result;
}

/* Everything one rank does, from the service connection to the teardown. */
static doca_error_t run_rank(const struct pp_config *cfg, struct doca_urom_domain_oob_coll *oob)
{
	const struct doca_urom_service_plugin_info *plugins = NULL;
	struct doca_urom_service *service = NULL;
	struct doca_urom_domain *domain = NULL;
	struct doca_urom_worker *worker = NULL;
	struct doca_dev *dev = NULL;
	struct doca_pe *pe = NULL;
	int rank = (int)oob->oob_index, size = (int)oob->n_oob_indexes;
	uint64_t sandbox_id = 0, worker_id = (uint64_t)rank;
	struct doca_urom_worker *workers[1];
	doca_cpu_set_t cpuset;
	size_t num_plugins = 0, i;
	doca_error_t result, tmp;
	int cpus = 0, c;

	if (size != 2) {
		DOCA_LOG_ERR("the ping-pong needs exactly 2 ranks, got %d", size);
		return DOCA_ERROR_INVALID_VALUE;
	}

	if (cfg->device[0] != '\0') {
		result = open_device(cfg->device, &dev);
		if (result != DOCA_SUCCESS) {
			DOCA_LOG_ERR("rank %d: failed to open device %s: %s", rank, cfg->device,
				     doca_error_get_descr(result));
			return result;
		}
	}
	result = doca_pe_create(&pe);
	if (result != DOCA_SUCCESS)
		goto close_dev;

	/* The service. */
	result = doca_urom_service_create(&service);
	if (result != DOCA_SUCCESS)
		goto destroy_pe;
	result = doca_pe_connect_ctx(pe, doca_urom_service_as_ctx(service));
	if (result == DOCA_SUCCESS)
		result = doca_urom_service_set_max_workers(service, 32);
	if (result == DOCA_SUCCESS && dev != NULL)
		result = doca_urom_service_set_dev(service, dev);
	if (result != DOCA_SUCCESS)
		goto destroy_service;
	result = doca_ctx_start(doca_urom_service_as_ctx(service));
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("rank %d: failed to connect to the UROM service: %s", rank,
			     doca_error_get_descr(result));
		goto destroy_service;
	}

	result = doca_urom_service_get_plugins_list(service, &plugins, &num_plugins);
	if (result != DOCA_SUCCESS)
		goto stop_service;
	result = DOCA_ERROR_NOT_FOUND;
	for (i = 0; i < num_plugins; i++) {
		if (strcmp(plugins[i].plugin_name, "worker_sandbox") == 0) {
			result = urom_sandbox_init(plugins[i].id, plugins[i].version);
			sandbox_id = plugins[i].id;
			break;
		}
	}
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("rank %d: the service offers no usable worker_sandbox plugin: %s",
			     rank, doca_error_get_descr(result));
		goto stop_service;
	}
	if (doca_urom_service_get_cpuset(service, &cpuset) == DOCA_SUCCESS) {
		for (c = 0; c < (int)(8 * sizeof(cpuset)); c++)
			cpus += doca_cpu_is_set(c, &cpuset) ? 1 : 0;
		DOCA_LOG_INFO("rank %d: the service offers %d CPU(s)", rank, cpus);
	}

	/* The worker: id = rank. */
	result = doca_urom_worker_create(&worker);
	if (result != DOCA_SUCCESS)
		goto stop_service;
	result = doca_urom_worker_set_service(worker, service);
	if (result == DOCA_SUCCESS)
		result = doca_pe_connect_ctx(pe, doca_urom_worker_as_ctx(worker));
	if (result == DOCA_SUCCESS)
		result = doca_urom_worker_set_id(worker, worker_id);
	if (result == DOCA_SUCCESS)
		result = doca_urom_worker_set_max_inflight_tasks(worker, 16);
	if (result == DOCA_SUCCESS)
		result = doca_urom_worker_set_plugins(worker, sandbox_id);
	if (result != DOCA_SUCCESS)
		goto destroy_worker;
	result = doca_ctx_start(doca_urom_worker_as_ctx(worker));
	if (result != DOCA_ERROR_IN_PROGRESS && result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("rank %d: worker start failed: %s", rank,
			     doca_error_get_descr(result));
		goto destroy_worker;
	}
	result = wait_for_state(pe, doca_urom_worker_as_ctx(worker), DOCA_CTX_STATE_RUNNING, 1);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("rank %d: worker did not reach RUNNING: %s", rank,
			     doca_error_get_descr(result));
		goto stop_worker;
	}
	DOCA_LOG_INFO("rank %d: worker %" PRIu64 " running", rank, worker_id);

	/* The domain: this rank's one worker, the others' through the OOB allgather. */
	result = doca_urom_domain_create(&domain);
	if (result != DOCA_SUCCESS)
		goto stop_worker;
	workers[0] = worker;
	result = doca_pe_connect_ctx(pe, doca_urom_domain_as_ctx(domain));
	if (result == DOCA_SUCCESS)
		result = doca_urom_domain_set_oob(domain, oob);
	if (result == DOCA_SUCCESS)
		result = doca_urom_domain_set_workers(domain, &worker_id, workers, 1);
	if (result != DOCA_SUCCESS)
		goto destroy_domain;
	result = doca_ctx_start(doca_urom_domain_as_ctx(domain));
	if (result != DOCA_ERROR_IN_PROGRESS && result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("rank %d: domain start failed: %s", rank,
			     doca_error_get_descr(result));
		goto destroy_domain;
	}
	result = wait_for_state(pe, doca_urom_domain_as_ctx(domain), DOCA_CTX_STATE_RUNNING, 1);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("rank %d: domain did not reach RUNNING: %s", rank,
			     doca_error_get_descr(result));
		goto stop_domain;
	}
	DOCA_LOG_INFO("rank %d: domain of %d workers running", rank, size);

	result = ping_pong(pe, worker, rank, size, cfg->message);

stop_domain:
	tmp = stop_ctx(pe, doca_urom_domain_as_ctx(domain), "domain");
	DOCA_ERROR_PROPAGATE(result, tmp);
destroy_domain:
	tmp = doca_urom_domain_destroy(domain);
	DOCA_ERROR_PROPAGATE(result, tmp);
stop_worker:
	tmp = stop_ctx(pe, doca_urom_worker_as_ctx(worker), "worker");
	DOCA_ERROR_PROPAGATE(result, tmp);
destroy_worker:
	tmp = doca_urom_worker_destroy(worker);
	DOCA_ERROR_PROPAGATE(result, tmp);
stop_service:
	tmp = stop_ctx(pe, doca_urom_service_as_ctx(service), "service");
	DOCA_ERROR_PROPAGATE(result, tmp);
destroy_service:
	tmp = doca_urom_service_destroy(service);
	DOCA_ERROR_PROPAGATE(result, tmp);
destroy_pe:
	tmp = doca_pe_destroy(pe);
	DOCA_ERROR_PROPAGATE(result, tmp);
close_dev:
	if (dev != NULL)
		(void)doca_dev_close(dev);
	return result;
}

/* ---- the ranks and their OOB --------------------------------------------------------------- */

#ifdef SDP_PP_MPI
static doca_error_t run(const struct pp_config *cfg)
{
	struct doca_urom_domain_oob_coll oob;
	int rank = 0, size = 0;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	memset(&oob, 0, sizeof(oob));
	oob.allgather = mpi_allgather;
	oob.req_test = mpi_req_test;
	oob.req_free = mpi_req_free;
	oob.coll_info = (void *)(uintptr_t)MPI_COMM_WORLD;
	oob.n_oob_indexes = (uint32_t)size;
	oob.oob_index = (uint32_t)rank;
	return run_rank(cfg, &oob);
}
#else
/* One rank whose group the SOFTDPU_OOB_* environment describes. */
static doca_error_t run(const struct pp_config *cfg)
{
	struct doca_urom_domain_oob_coll oob;
	struct sdp_urom_oob *group = NULL;
	doca_error_t result, tmp;
	uint16_t port;

	result = sdp_urom_oob_from_env(&group);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("no OOB group (%s): set SOFTDPU_OOB_ROOT, SOFTDPU_OOB_RANK, "
			     "SOFTDPU_OOB_SIZE and SOFTDPU_OOB_SECRET_FILE, or use --launch 2",
			     doca_error_get_descr(result));
		return result;
	}
	if (launch_port_fd >= 0) {
		/* The launcher starts the other ranks once it knows where rank 0 listens. */
		port = sdp_urom_oob_port(group);
		if (write(launch_port_fd, &port, sizeof(port)) != (ssize_t)sizeof(port))
			DOCA_LOG_ERR("failed to tell the launcher the OOB port: %s",
				     strerror(errno));
		close(launch_port_fd);
		launch_port_fd = -1;
	}
	memset(&oob, 0, sizeof(oob));
	sdp_urom_oob_coll(group, &oob);
	result = run_rank(cfg, &oob);
	tmp = sdp_urom_oob_destroy(group);
	DOCA_ERROR_PROPAGATE(result, tmp);
	return result;
}

/* A private directory with a fresh random secret for the launched ranks. */
static doca_error_t make_secret(char *dir, size_t dir_len, char *file, size_t file_len)
{
	uint8_t secret[32];
	ssize_t n;
	int fd;

	snprintf(dir, dir_len, "%s/urom-ping-pong-XXXXXX",
		 getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(dir) == NULL) {
		DOCA_LOG_ERR("mkdtemp %s: %s", dir, strerror(errno));
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	snprintf(file, file_len, "%s/secret", dir);
	n = getrandom(secret, sizeof(secret), 0);
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (n != (ssize_t)sizeof(secret) || fd < 0 ||
	    write(fd, secret, sizeof(secret)) != (ssize_t)sizeof(secret)) {
		DOCA_LOG_ERR("failed to write the secret file %s: %s", file, strerror(errno));
		if (fd >= 0)
			close(fd);
		unlink(file);
		rmdir(dir);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	close(fd);
	return DOCA_SUCCESS;
}

/* Fork one rank; in the child, set its OOB environment and run it (never returns). */
static pid_t launch_rank(const struct pp_config *cfg, int rank, int size, const char *root,
			 const char *secret_file, int port_fd)
{
	char value[32];
	doca_error_t result;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid != 0)
		return pid;

	snprintf(value, sizeof(value), "%d", rank);
	setenv("SOFTDPU_OOB_RANK", value, 1);
	snprintf(value, sizeof(value), "%d", size);
	setenv("SOFTDPU_OOB_SIZE", value, 1);
	setenv("SOFTDPU_OOB_ROOT", root, 1);
	setenv("SOFTDPU_OOB_SECRET_FILE", secret_file, 1);
	launch_port_fd = port_fd;
	result = run(cfg);
	if (result == DOCA_SUCCESS)
		printf("urom_ping_pong: rank %d PASSED\n", rank);
	else
		printf("urom_ping_pong: rank %d FAILED: %s\n", rank, doca_error_get_descr(result));
	fflush(stdout);
	doca_argp_destroy();
	_exit(result == DOCA_SUCCESS ? EXIT_SUCCESS : EXIT_FAILURE);
}

/* Wait for a child within the deadline; 1 when it exited (its status in *status_p). */
static int wait_child(pid_t pid, uint64_t deadline, int *status_p)
{
	for (;;) {
		pid_t r = waitpid(pid, status_p, WNOHANG);

		if (r == pid)
			return 1;
		if (r < 0 && errno != EINTR)
			return 1;
		if (now_ms() >= deadline)
			return 0;
		(void)poll(NULL, 0, 20);
	}
}

/*
 * --launch N: rank 0 listens on 127.0.0.1 with a port the system picks and reports it through
 * a pipe; then the other ranks start with that address. Every rank must exit with 0.
 */
static doca_error_t launch(const struct pp_config *cfg)
{
	char dir[PATH_MAX], secret_file[PATH_MAX + 16], root[64];
	uint64_t deadline = now_ms() + LAUNCH_TIMEOUT_MS;
	pid_t pids[2] = {0, 0};
	int fds[2], i, status, failed = 0, started = 0;
	struct pollfd pfd;
	uint16_t port = 0;
	doca_error_t result;

	if (cfg->launch != 2) {
		DOCA_LOG_ERR("--launch %d: the ping-pong needs exactly 2 ranks", cfg->launch);
		return DOCA_ERROR_INVALID_VALUE;
	}
	result = make_secret(dir, sizeof(dir), secret_file, sizeof(secret_file));
	if (result != DOCA_SUCCESS)
		return result;
	if (pipe2(fds, O_CLOEXEC) != 0) {
		DOCA_LOG_ERR("pipe2: %s", strerror(errno));
		result = DOCA_ERROR_OPERATING_SYSTEM;
		goto remove_secret;
	}

	pids[0] = launch_rank(cfg, 0, cfg->launch, "127.0.0.1:0", secret_file, fds[1]);
	close(fds[1]);
	if (pids[0] < 0) {
		DOCA_LOG_ERR("fork: %s", strerror(errno));
		close(fds[0]);
		result = DOCA_ERROR_OPERATING_SYSTEM;
		goto remove_secret;
	}
	started = 1;
	pfd.fd = fds[0];
	pfd.events = POLLIN;
	pfd.revents = 0;
	if (poll(&pfd, 1, STATE_TIMEOUT_MS) <= 0 ||
	    read(fds[0], &port, sizeof(port)) != (ssize_t)sizeof(port) || port == 0) {
		DOCA_LOG_ERR("rank 0 did not report its OOB port");
		failed = 1;
	}
	close(fds[0]);

	if (!failed) {
		snprintf(root, sizeof(root), "127.0.0.1:%u", port);
		for (i = 1; i < cfg->launch; i++) {
			pids[i] = launch_rank(cfg, i, cfg->launch, root, secret_file, -1);
			if (pids[i] < 0) {
				DOCA_LOG_ERR("fork: %s", strerror(errno));
				failed = 1;
				break;
			}
			started++;
		}
	}

	for (i = 0; i < started; i++) {
		if (!wait_child(pids[i], deadline, &status)) {
			DOCA_LOG_ERR("rank %d did not finish in %d ms, stopping it", i,
				     LAUNCH_TIMEOUT_MS);
			kill(pids[i], SIGKILL);
			(void)waitpid(pids[i], &status, 0);
			failed = 1;
		} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			DOCA_LOG_ERR("rank %d %s %d", i,
				     WIFEXITED(status) ? "exited with" : "died of signal",
				     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
			failed = 1;
		}
	}
	result = failed ? DOCA_ERROR_UNEXPECTED : DOCA_SUCCESS;

remove_secret:
	unlink(secret_file);
	rmdir(dir);
	return result;
}
#endif

/* ---- arguments ----------------------------------------------------------------------------- */

static doca_error_t device_cb(void *param, void *config)
{
	struct pp_config *cfg = config;
	const char *name = param;

	if (strlen(name) >= sizeof(cfg->device)) {
		DOCA_LOG_ERR("device name %s is too long", name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(cfg->device, name);
	return DOCA_SUCCESS;
}

static doca_error_t message_cb(void *param, void *config)
{
	struct pp_config *cfg = config;
	const char *msg = param;
	size_t len = strlen(msg);

	if (len == 0 || len > MAX_MESSAGE) {
		DOCA_LOG_ERR("message of %zu bytes: expected 1 to %d", len, MAX_MESSAGE);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(cfg->message, msg, len + 1);
	return DOCA_SUCCESS;
}

#ifndef SDP_PP_MPI
static doca_error_t launch_cb(void *param, void *config)
{
	struct pp_config *cfg = config;
	int n = *(int *)param;

	if (n != 2) {
		DOCA_LOG_ERR("--launch %d: the ping-pong runs exactly 2 ranks", n);
		return DOCA_ERROR_INVALID_VALUE;
	}
	cfg->launch = n;
	return DOCA_SUCCESS;
}
#endif

static doca_error_t register_param(const char *short_name, const char *long_name,
				   const char *description, enum doca_argp_type type,
				   doca_argp_param_cb_t cb)
{
	struct doca_argp_param *param;
	doca_error_t result;

	result = doca_argp_param_create(&param);
	if (result != DOCA_SUCCESS)
		return result;
	if (short_name != NULL)
		doca_argp_param_set_short_name(param, short_name);
	doca_argp_param_set_long_name(param, long_name);
	doca_argp_param_set_description(param, description);
	doca_argp_param_set_callback(param, cb);
	doca_argp_param_set_type(param, type);
	return doca_argp_register_param(param);
}

int main(int argc, char **argv)
{
	struct pp_config cfg;
	struct sigaction sa;
	doca_error_t result;
	int rank = 0;

#ifdef SDP_PP_MPI
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#endif
	memset(&cfg, 0, sizeof(cfg));
	strcpy(cfg.message, DEFAULT_MESSAGE);

	result = doca_log_backend_create_standard();
	if (result != DOCA_SUCCESS)
		goto out;
	result = doca_argp_init("doca_urom_ping_pong", &cfg);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to init ARGP: %s", doca_error_get_descr(result));
		goto out;
	}
	result = register_param("d", "device",
				"IB device name whose PCI address selects the "
				"DOCA_UROM_SERVICE_FILE line (optional)",
				DOCA_ARGP_TYPE_STRING, device_cb);
	if (result == DOCA_SUCCESS)
		result = register_param("m", "message",
					"message to ping-pong (default \"" DEFAULT_MESSAGE "\")",
					DOCA_ARGP_TYPE_STRING, message_cb);
#ifndef SDP_PP_MPI
	if (result == DOCA_SUCCESS)
		result = register_param(NULL, "launch",
					"start the 2 ranks as child processes, with a private "
					"TCP OOB on 127.0.0.1",
					DOCA_ARGP_TYPE_INT, launch_cb);
#endif
	if (result == DOCA_SUCCESS)
		result = doca_argp_start(argc, argv);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to parse the arguments: %s", doca_error_get_descr(result));
		doca_argp_destroy();
		goto out;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = signal_handler;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

#ifdef SDP_PP_MPI
	result = run(&cfg);
	/* Every rank reports, then rank 0 says how the whole run went. */
	{
		int ok = result == DOCA_SUCCESS, all_ok = 0;

		MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
		printf("urom_ping_pong: rank %d %s\n", rank, ok ? "PASSED" : "FAILED");
		fflush(stdout);
		if (result == DOCA_SUCCESS && !all_ok)
			result = DOCA_ERROR_UNEXPECTED;
	}
#else
	if (cfg.launch > 0) {
		result = launch(&cfg);
		printf("urom_ping_pong: %d ranks %s\n", cfg.launch,
		       result == DOCA_SUCCESS ? "PASSED" : "FAILED");
	} else {
		result = run(&cfg);
		const char *env_rank = getenv("SOFTDPU_OOB_RANK");

		printf("urom_ping_pong: rank %s %s\n", env_rank != NULL ? env_rank : "?",
		       result == DOCA_SUCCESS ? "PASSED" : "FAILED");
	}
	fflush(stdout);
	(void)rank;
#endif
	if (atomic_load(&force_quit))
		DOCA_LOG_INFO("ping-pong sample interrupted; everything was torn down");
	else if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("ping-pong sample failed: %s", doca_error_get_descr(result));
	else
		DOCA_LOG_INFO("ping-pong sample finished successfully");
	doca_argp_destroy();
out:
#ifdef SDP_PP_MPI
	MPI_Finalize();
#endif
	return result == DOCA_SUCCESS ? EXIT_SUCCESS : EXIT_FAILURE;
}

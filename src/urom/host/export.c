/*
 * libdoca_urom: the export engine behind include/softdpu/urom_mem.h.
 *
 * One process-wide UCP context (RMA, AMO32, AMO64, WAKEUP; mt_workers_shared, so registrations
 * from several application threads are safe) and one UCP worker whose address goes into every
 * memh, created at the first export and destroyed at the last unexport (a reference count
 * under engine.lock). Worker halves connect endpoints to that worker and put/get the exported
 * buffers. Over shared memory or CMA that needs nothing from this process; over TCP UCX runs
 * the transfer through this worker, so a thread progresses it. The thread is the only user of
 * the worker between engine start and stop (registration and key packing are context calls),
 * which is the serialisation UCS_THREAD_MODE_SERIALIZED asks for. It sleeps in epoll on the
 * worker's wakeup fd and an eventfd that tells it to stop, with a bounded timeout
 * (SDP_UROM_EXPORT_POLL_MS), and never spins while idle.
 *
 * Where UCX would emulate RMA in software (TCP), workers send softdpu's own active messages
 * instead (sdp_urom_xrma.h): the thread serves them, finding the region by the secret am_key
 * its memh carries and checking every range; UCX's emulation answers on endpoints that may have
 * failed and aborts this process when they have (integration/urom_netfault).
 *
 * UCX reads its configuration from the environment (UCX_TLS, UCX_NET_DEVICES, ...), so tests
 * and users pick transports and devices there.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "softdpu/urom_mem.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#include "doca_urom.h"
#include "sdp_log.h"
#include "sdp_ucx_am.h"
#include "sdp_urom_memh.h"
#include "sdp_urom_xrma.h"

SDP_LOG_COMPONENT("urom_mem");

/* Longest sleep of the progress thread: UCX also has timer-driven work. */
#define SDP_UROM_EXPORT_POLL_MS 100
/* How long the last unexport waits for the progress thread to stop. */
#define SDP_UROM_EXPORT_STOP_MS 5000

/* The progress thread's name (/proc/<pid>/task/<tid>/comm). */
#define SDP_UROM_EXPORT_THREAD_NAME "sdp-urom-export"

#define SDP_UROM_MEM_MAGIC 0x4d454d58u /* "XMEM" */

/* Bytes of answers the thread may have in flight: past it a get answers NO_MEMORY, and once
 * reached further requests are dropped. */
#define SDP_UROM_XRMA_REPLY_BYTES_MAX (256u << 20)

struct sdp_urom_mem {
	uint32_t magic;		   /* SDP_UROM_MEM_MAGIC while exported */
	struct sdp_urom_mem *next; /* on xrma.regions while its am_key is served */
	uint64_t am_key;	   /* 0: none (no random bytes to be had) */
	void *buf;
	size_t len;
	ucp_mem_h ucp_memh;
	void *rkey; /* ucp_rkey_pack() buffer: the mkey */
	size_t rkey_len;
	uint8_t *memh; /* the packed softdpu memh (sdp_urom_memh.h) */
	size_t memh_len;
};

/* The process-wide engine; every field is guarded by lock. */
static struct {
	pthread_mutex_t lock;
	unsigned long refs; /* exported buffers */
	ucp_context_h context;
	ucp_worker_h worker;
	void *addr; /* copy of the worker's address */
	size_t addr_len;
	int worker_fd; /* ucp_worker_get_efd() */
	int stop_fd;   /* eventfd: the thread stops when it is readable */
	int epoll_fd;
	pthread_t thread;
	atomic_int stop;
	int wedged; /* a thread that did not stop still uses the fields: never restart */
} engine = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.worker_fd = -1,
	.stop_fd = -1,
	.epoll_fd = -1,
};

/*
 * The regions the xrma path may reach, by am_key. Its own lock, not engine.lock: the thread
 * takes it inside ucp_worker_progress while engine_stop joins the thread under engine.lock.
 */
static struct {
	pthread_mutex_t lock;
	struct sdp_urom_mem *regions;
	size_t reply_bytes;    /* bytes of answers in flight (thread only) */
	unsigned long refused; /* requests refused or dropped (thread only) */
} xrma = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ---- the xrma server (the thread) ---- */

/* Log the first refusal and every 1024th after it: the bytes come from the network. */
static void xrma_refuse(const char *why)
{
	if (xrma.refused++ % 1024 == 0)
		sdp_error("refused an xrma request (%lu so far): %s", xrma.refused, why);
}

static void xrma_reply_done(void *request, ucs_status_t status, void *user_data)
{
	size_t *block = user_data;

	(void)status; /* the worker times out and fails the operation itself */
	xrma.reply_bytes -= block[0];
	free(block);
	ucp_request_free(request);
}

/* Answer on ep: rep, then data_len bytes of data (already in block after the header). */
static void xrma_reply(ucp_ep_h ep, size_t *block, size_t data_len)
{
	uint8_t *hdr = (uint8_t *)(block + 1);
	ucp_request_param_t param;
	ucs_status_ptr_t req;

	block[0] = sizeof(size_t) + SDP_UROM_XRMA_REP_LEN + data_len;
	xrma.reply_bytes += block[0];
	memset(&param, 0, sizeof(param));
	param.op_attr_mask =
		UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
	param.cb.send = xrma_reply_done;
	param.user_data = block;
	param.flags = UCP_AM_SEND_FLAG_EAGER;
	req = ucp_am_send_nbx(ep, SDP_UROM_XRMA_REP_AM_ID, hdr, SDP_UROM_XRMA_REP_LEN,
			      data_len != 0 ? hdr + SDP_UROM_XRMA_REP_LEN : NULL, data_len, &param);
	if (req == NULL || UCS_PTR_IS_ERR(req)) {
		if (UCS_PTR_IS_ERR(req))
			xrma_refuse("the reply could not be sent (the worker's endpoint failed?)");
		xrma.reply_bytes -= block[0];
		free(block);
	}
}

/* The region of key holding [va, va + len), xrma.lock held; NULL with the status in *st. */
static struct sdp_urom_mem *xrma_region(uint64_t key, uint64_t va, uint64_t len, doca_error_t *st)
{
	struct sdp_urom_mem *m;
	uint64_t base;

	for (m = xrma.regions; m != NULL; m = m->next) {
		if (m->am_key != key)
			continue;
		base = (uint64_t)(uintptr_t)m->buf;
		if (va < base || va - base > m->len || len > m->len - (va - base)) {
			*st = DOCA_ERROR_INVALID_VALUE;
			return NULL;
		}
		return m;
	}
	*st = DOCA_ERROR_NOT_FOUND;
	return NULL;
}

static ucs_status_t xrma_req_cb(void *arg, const void *header, size_t header_length, void *data,
				size_t length, const ucp_am_recv_param_t *param)
{
	struct sdp_urom_xrma_rep rep;
	struct sdp_urom_xrma_req req;
	doca_error_t st = DOCA_SUCCESS;
	struct sdp_urom_mem *m;
	size_t data_len = 0;
	size_t *block;
	char why[160];

	(void)arg;
	if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0) {
		xrma_refuse("a rendezvous message (requests are eager)");
		return UCS_OK; /* dropped */
	}
	if ((param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) == 0 || param->reply_ep == NULL) {
		xrma_refuse("a request without a reply endpoint");
		return UCS_OK;
	}
	why[0] = '\0';
	if (sdp_urom_xrma_req_unpack(header, header_length, length, &req, why, sizeof(why)) !=
	    DOCA_SUCCESS) {
		xrma_refuse(why);
		return UCS_OK;
	}
	/* Answers waiting to be sent are bounded, refusals included (a peer may not read). */
	if (xrma.reply_bytes >= SDP_UROM_XRMA_REPLY_BYTES_MAX) {
		xrma_refuse("answers in flight exceed their bound: dropped");
		return UCS_OK;
	}
	memset(&rep, 0, sizeof(rep));
	rep.opid = req.opid;
	rep.va = req.va;
	rep.op = req.op == SDP_UROM_XRMA_GET ? SDP_UROM_XRMA_GET_DATA : SDP_UROM_XRMA_PUT_ACK;
	block = NULL;
	pthread_mutex_lock(&xrma.lock);
	m = xrma_region(req.am_key, req.va, req.len, &st);
	if (m != NULL && req.op == SDP_UROM_XRMA_PUT) {
		memcpy((void *)(uintptr_t)req.va, data, req.len);
	} else if (m != NULL) {
		/* Only a get that found its region gets room for the bytes. */
		if (xrma.reply_bytes + req.len > SDP_UROM_XRMA_REPLY_BYTES_MAX) {
			st = DOCA_ERROR_NO_MEMORY;
		} else {
			block = malloc(sizeof(size_t) + SDP_UROM_XRMA_REP_LEN + req.len);
			if (block != NULL) {
				data_len = req.len;
				memcpy((uint8_t *)(block + 1) + SDP_UROM_XRMA_REP_LEN,
				       (const void *)(uintptr_t)req.va, req.len);
			} else {
				st = DOCA_ERROR_NO_MEMORY;
			}
		}
	}
	pthread_mutex_unlock(&xrma.lock);
	if (st != DOCA_SUCCESS) {
		snprintf(why, sizeof(why), "%s of %llu bytes at 0x%llx: %s",
			 req.op == SDP_UROM_XRMA_PUT ? "put" : "get", (unsigned long long)req.len,
			 (unsigned long long)req.va,
			 st == DOCA_ERROR_NOT_FOUND	? "no region has its key" :
			 st == DOCA_ERROR_INVALID_VALUE ? "outside its region" :
							  "no room for the answer");
		xrma_refuse(why);
	}
	/* One block: its size for the callback, the answer's header, then the data. */
	if (block == NULL)
		block = malloc(sizeof(size_t) + SDP_UROM_XRMA_REP_LEN);
	if (block == NULL) {
		xrma_refuse("no memory for an answer");
		return UCS_OK; /* the worker times out */
	}
	rep.status = (uint16_t)st;
	rep.len = data_len;
	sdp_urom_xrma_rep_pack(&rep, (uint8_t *)(block + 1));
	xrma_reply(param->reply_ep, block, data_len);
	return UCS_OK;
}

/* ---- the progress thread ---- */

static void *engine_thread(void *arg)
{
	struct timespec slice = {0, SDP_UROM_EXPORT_POLL_MS * 1000000L};
	struct pollfd stop_pfd = {.fd = engine.stop_fd, .events = POLLIN};
	struct epoll_event events[2];
	int warned = 0;
	ucs_status_t st;
	int i, n;

	(void)arg;
	while (!atomic_load(&engine.stop)) {
		/* Drain what is pending; stop requests are seen between rounds. */
		if (ucp_worker_progress(engine.worker) != 0)
			continue;
		st = ucp_worker_arm(engine.worker);
		if (st == UCS_ERR_BUSY)
			continue;
		if (st != UCS_OK) {
			/* The wakeup fd cannot be trusted: progress on a timer, bounded. */
			if (!warned)
				sdp_warn("ucp_worker_arm of the export worker failed: %s; polling "
					 "every %d ms",
					 ucs_status_string(st), SDP_UROM_EXPORT_POLL_MS);
			warned = 1;
			stop_pfd.revents = 0;
			if (poll(&stop_pfd, 1, SDP_UROM_EXPORT_POLL_MS) > 0)
				atomic_store(&engine.stop, 1);
			continue;
		}
		n = epoll_wait(engine.epoll_fd, events, 2, SDP_UROM_EXPORT_POLL_MS);
		if (n < 0 && errno != EINTR) {
			if (!warned)
				sdp_warn("epoll_wait of the export thread failed: %m");
			warned = 1;
			/* Keep the bound without the fd: sleep one slice instead. */
			nanosleep(&slice, NULL);
			continue;
		}
		for (i = 0; i < n; i++) {
			if (events[i].data.fd == engine.stop_fd)
				atomic_store(&engine.stop, 1);
		}
	}
	return NULL;
}

/* ---- engine start / stop (engine.lock held) ---- */

static void engine_close_fds(void)
{
	if (engine.epoll_fd >= 0)
		close(engine.epoll_fd);
	if (engine.stop_fd >= 0)
		close(engine.stop_fd);
	engine.epoll_fd = -1;
	engine.stop_fd = -1;
	engine.worker_fd = -1; /* UCX's, not closed here */
}

static doca_error_t engine_watch(int fd, const char *what)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.fd = fd;
	if (epoll_ctl(engine.epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		sdp_error("failed to watch the %s fd %d: %m", what, fd);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	return DOCA_SUCCESS;
}

/* The worker's address into engine.addr. */
static doca_error_t engine_copy_address(void)
{
	ucp_address_t *addr;
	ucs_status_t st;
	size_t len;

	st = ucp_worker_get_address(engine.worker, &addr, &len);
	if (st != UCS_OK) {
		sdp_error("ucp_worker_get_address of the export worker failed: %s",
			  ucs_status_string(st));
		return DOCA_ERROR_DRIVER;
	}
	if (len == 0 || len > SDP_UROM_MEMH_ADDR_MAX) {
		sdp_error("the export worker's address is %zu bytes; a memh carries 1 .. %d", len,
			  SDP_UROM_MEMH_ADDR_MAX);
		ucp_worker_release_address(engine.worker, addr);
		return DOCA_ERROR_DRIVER;
	}
	engine.addr = malloc(len);
	if (engine.addr == NULL) {
		sdp_error("failed to allocate %zu bytes for the export worker's address", len);
		ucp_worker_release_address(engine.worker, addr);
		return DOCA_ERROR_NO_MEMORY;
	}
	memcpy(engine.addr, addr, len);
	engine.addr_len = len;
	ucp_worker_release_address(engine.worker, addr);
	return DOCA_SUCCESS;
}

static doca_error_t engine_create_ucp(void)
{
	ucp_worker_params_t wparams;
	ucp_params_t params;
	ucp_config_t *config;
	ucs_status_t st;

	st = ucp_config_read(NULL, NULL, &config);
	if (st != UCS_OK) {
		sdp_error("ucp_config_read failed: %s", ucs_status_string(st));
		return DOCA_ERROR_DRIVER;
	}
	/*
	 * No TCP keepalive on the export side (unless the user sets it): this context only answers
	 * RMA that workers issue, and the workers bound their operations themselves. With UCX's
	 * default (10 s idle, 2 s probes) a link down for longer marks the connection failed here
	 * while the worker's side still holds unsent puts; when the link returns, those arrive
	 * and UCX 1.13 aborts the process sending their completion on the failed endpoint
	 * (ucp_request.inl "unexpected error: Endpoint timeout", integration/urom_netfault).
	 * The transport's own names: UCX 1.13 applies a cached key to every transport with that
	 * field and takes "KEEPIDLE" (it warns "invalid configuration" about "TCP_KEEPIDLE",
	 * which nothing takes); UCX 1.22 takes the prefixed name. Checked with getsockopt
	 * (SO_KEEPALIVE off on every socket of the context) against Debian's 1.13.1 and 1.22.0.
	 */
	if (getenv("UCX_TCP_KEEPIDLE") == NULL && getenv("UCX_TCP_KEEPINTVL") == NULL) {
		unsigned int major = 0, minor = 0, release = 0;
		int old_names;

		ucp_get_version(&major, &minor, &release);
		old_names = major == 1 && minor <= 13;
		(void)ucp_config_modify(config, old_names ? "KEEPIDLE" : "TCP_KEEPIDLE", "inf");
		(void)ucp_config_modify(config, old_names ? "KEEPINTVL" : "TCP_KEEPINTVL", "inf");
	}
	memset(&params, 0, sizeof(params));
	params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
	params.features = UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64 | UCP_FEATURE_AM |
			  UCP_FEATURE_WAKEUP;
	/* Registrations come from any application thread while the thread progresses. */
	params.mt_workers_shared = 1;
	st = ucp_init(&params, config, &engine.context);
	ucp_config_release(config);
	if (st != UCS_OK) {
		sdp_error("ucp_init of the export context failed: %s", ucs_status_string(st));
		engine.context = NULL;
		return DOCA_ERROR_DRIVER;
	}
	memset(&wparams, 0, sizeof(wparams));
	wparams.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
	wparams.thread_mode = UCS_THREAD_MODE_SERIALIZED;
	st = ucp_worker_create(engine.context, &wparams, &engine.worker);
	if (st != UCS_OK) {
		sdp_error("ucp_worker_create of the export worker failed: %s",
			  ucs_status_string(st));
		engine.worker = NULL;
		ucp_cleanup(engine.context);
		engine.context = NULL;
		return DOCA_ERROR_DRIVER;
	}
	st = sdp_ucx_am_handler(engine.worker, SDP_UROM_XRMA_REQ_AM_ID, xrma_req_cb, NULL);
	if (st == UCS_OK)
		st = ucp_worker_get_efd(engine.worker, &engine.worker_fd);
	if (st != UCS_OK) {
		sdp_error("ucp_worker_set_am_recv_handler or _get_efd of the export worker "
			  "failed: %s",
			  ucs_status_string(st));
		ucp_worker_destroy(engine.worker);
		ucp_cleanup(engine.context);
		engine.worker = NULL;
		engine.context = NULL;
		return DOCA_ERROR_DRIVER;
	}
	return DOCA_SUCCESS;
}

/*
 * Destroy the worker, then unmap memh (the last exported buffer, or NULL), then the context: a
 * reply still pending on the worker (to a peer that closed its endpoint) is purged by
 * ucp_worker_destroy and reads its memh, so the memh must outlive the worker.
 */
static void engine_destroy_ucp(ucp_mem_h memh)
{
	ucs_status_t st;

	free(engine.addr);
	engine.addr = NULL;
	engine.addr_len = 0;
	if (engine.worker != NULL)
		ucp_worker_destroy(engine.worker);
	if (memh != NULL && engine.context != NULL) {
		st = ucp_mem_unmap(engine.context, memh);
		if (st != UCS_OK)
			sdp_warn("ucp_mem_unmap of the last exported buffer failed: %s",
				 ucs_status_string(st));
	}
	if (engine.context != NULL)
		ucp_cleanup(engine.context);
	engine.worker = NULL;
	engine.context = NULL;
}

static doca_error_t engine_start(void)
{
	sigset_t all, old;
	doca_error_t status;
	int err;

	if (engine.wedged) {
		sdp_error("the export engine's thread never stopped: no export is possible in "
			  "this process any more");
		return DOCA_ERROR_DRIVER;
	}
	xrma.reply_bytes = 0; /* answers a destroyed worker dropped are not counted on */
	status = engine_create_ucp();
	if (status != DOCA_SUCCESS)
		return status;
	status = engine_copy_address();
	if (status != DOCA_SUCCESS)
		goto err_destroy_ucp;
	engine.stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (engine.stop_fd < 0) {
		sdp_error("failed to create the export thread's eventfd: %m");
		status = DOCA_ERROR_OPERATING_SYSTEM;
		goto err_destroy_ucp;
	}
	engine.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (engine.epoll_fd < 0) {
		sdp_error("failed to create the export thread's epoll fd: %m");
		status = DOCA_ERROR_OPERATING_SYSTEM;
		goto err_close_fds;
	}
	status = engine_watch(engine.worker_fd, "UCP wakeup");
	if (status != DOCA_SUCCESS)
		goto err_close_fds;
	status = engine_watch(engine.stop_fd, "stop eventfd");
	if (status != DOCA_SUCCESS)
		goto err_close_fds;

	/* The thread takes no signals: they belong to the application's threads. */
	atomic_store(&engine.stop, 0);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&engine.thread, NULL, engine_thread, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err != 0) {
		errno = err;
		sdp_error("failed to start the export progress thread: %m");
		status = DOCA_ERROR_OPERATING_SYSTEM;
		goto err_close_fds;
	}
	/* For ps and top (and the tests, which count it). */
	(void)pthread_setname_np(engine.thread, SDP_UROM_EXPORT_THREAD_NAME);
	sdp_debug("export engine started: UCP worker %p, address of %zu bytes",
		  (void *)engine.worker, engine.addr_len);
	return DOCA_SUCCESS;

err_close_fds:
	engine_close_fds();
err_destroy_ucp:
	engine_destroy_ucp(NULL);
	return status;
}

/* Stop the thread and tear UCX down; memh: see engine_destroy_ucp (not unmapped if wedged). */
static void engine_stop(ucp_mem_h memh)
{
	struct timespec deadline;
	uint64_t one = 1;
	int err;

	atomic_store(&engine.stop, 1);
	if (write(engine.stop_fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		sdp_warn("failed to wake the export thread: %m; it stops within %d ms",
			 SDP_UROM_EXPORT_POLL_MS);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += SDP_UROM_EXPORT_STOP_MS / 1000;
	err = pthread_timedjoin_np(engine.thread, NULL, &deadline);
	if (err != 0) {
		/*
		 * The thread may still be inside UCX and reads the engine's fields: leave them
		 * as they are (leaked) and never start another engine, which would share them.
		 */
		errno = err;
		sdp_error("the export thread did not stop within %d ms (%m); leaking the export "
			  "engine, no further exports in this process",
			  SDP_UROM_EXPORT_STOP_MS);
		engine.wedged = 1;
		return;
	}
	engine_close_fds();
	engine_destroy_ucp(memh);
	sdp_debug("export engine stopped");
}

/* ---- public calls ---- */

static int mem_live(const struct sdp_urom_mem *mem)
{
	return mem != NULL && mem->magic == SDP_UROM_MEM_MAGIC;
}

/* Register mem->buf and fill the keys (engine.lock held, engine started). */
static doca_error_t mem_register(struct sdp_urom_mem *mem)
{
	ucp_mem_map_params_t mparams;
	struct sdp_urom_memh desc;
	doca_error_t status;
	ucs_status_t st;

	memset(&mparams, 0, sizeof(mparams));
	mparams.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
	mparams.address = mem->buf;
	mparams.length = mem->len;
	st = ucp_mem_map(engine.context, &mparams, &mem->ucp_memh);
	if (st != UCS_OK) {
		sdp_error("ucp_mem_map of %zu bytes at %p failed: %s", mem->len, mem->buf,
			  ucs_status_string(st));
		return DOCA_ERROR_DRIVER;
	}
	st = ucp_rkey_pack(engine.context, mem->ucp_memh, &mem->rkey, &mem->rkey_len);
	if (st != UCS_OK) {
		sdp_error("ucp_rkey_pack of %zu bytes at %p failed: %s", mem->len, mem->buf,
			  ucs_status_string(st));
		status = DOCA_ERROR_DRIVER;
		goto err_unmap;
	}
	if (mem->rkey_len == 0 || mem->rkey_len > SDP_UROM_MEMH_RKEY_MAX) {
		sdp_error("UCX packed a %zu-byte remote key; a memh carries 1 .. %d", mem->rkey_len,
			  SDP_UROM_MEMH_RKEY_MAX);
		status = DOCA_ERROR_DRIVER;
		goto err_release_rkey;
	}
	memset(&desc, 0, sizeof(desc));
	desc.flags = SDP_UROM_MEMH_FLAG_OWNER_PROGRESS;
	/* A secret the xrma path names the region by; without random bytes, no such path. */
	if (getrandom(&mem->am_key, sizeof(mem->am_key), GRND_NONBLOCK) ==
		    (ssize_t)sizeof(mem->am_key) &&
	    mem->am_key != 0) {
		desc.flags |= SDP_UROM_MEMH_FLAG_AM_KEY;
		desc.am_key = mem->am_key;
	} else {
		mem->am_key = 0;
		sdp_warn("no random bytes for an am_key: workers reach %zu bytes at %p over UCX's "
			 "RMA only",
			 mem->len, mem->buf);
	}
	desc.va = (uint64_t)(uintptr_t)mem->buf;
	desc.len = mem->len;
	desc.owner_addr = engine.addr;
	desc.owner_addr_len = (uint32_t)engine.addr_len;
	desc.rkey = mem->rkey;
	desc.rkey_len = (uint32_t)mem->rkey_len;
	mem->memh_len = sdp_urom_memh_packed_size(&desc);
	mem->memh = malloc(mem->memh_len);
	if (mem->memh == NULL) {
		sdp_error("failed to allocate a memh of %zu bytes", mem->memh_len);
		status = DOCA_ERROR_NO_MEMORY;
		goto err_release_rkey;
	}
	status = sdp_urom_memh_pack(&desc, mem->memh, mem->memh_len, &mem->memh_len);
	if (status != DOCA_SUCCESS)
		goto err_free_memh;
	return DOCA_SUCCESS;

err_free_memh:
	free(mem->memh);
	mem->memh = NULL;
err_release_rkey:
	ucp_rkey_buffer_release(mem->rkey);
	mem->rkey = NULL;
err_unmap:
	(void)ucp_mem_unmap(engine.context, mem->ucp_memh);
	mem->ucp_memh = NULL;
	return status;
}

doca_error_t sdp_urom_mem_export(void *buf, size_t len, struct sdp_urom_mem **mem_p)
{
	struct sdp_urom_mem *mem;
	doca_error_t status;

	if (buf == NULL || len == 0 || mem_p == NULL || (uintptr_t)buf > UINTPTR_MAX - len) {
		sdp_error("sdp_urom_mem_export: invalid argument: buf %p, len %zu, mem %p", buf,
			  len, (void *)mem_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	mem = calloc(1, sizeof(*mem));
	if (mem == NULL) {
		sdp_error("failed to allocate an exported buffer record");
		return DOCA_ERROR_NO_MEMORY;
	}
	mem->buf = buf;
	mem->len = len;

	pthread_mutex_lock(&engine.lock);
	if (engine.refs == 0) {
		status = engine_start();
		if (status != DOCA_SUCCESS)
			goto err_unlock;
	}
	status = mem_register(mem);
	if (status != DOCA_SUCCESS) {
		if (engine.refs == 0)
			engine_stop(NULL);
		goto err_unlock;
	}
	engine.refs++;
	if (mem->am_key != 0) {
		pthread_mutex_lock(&xrma.lock);
		mem->next = xrma.regions;
		xrma.regions = mem;
		pthread_mutex_unlock(&xrma.lock);
	}
	pthread_mutex_unlock(&engine.lock);

	mem->magic = SDP_UROM_MEM_MAGIC;
	sdp_debug("exported %zu bytes at %p: memh %zu bytes, mkey %zu bytes", len, buf,
		  mem->memh_len, mem->rkey_len);
	*mem_p = mem;
	return DOCA_SUCCESS;

err_unlock:
	pthread_mutex_unlock(&engine.lock);
	free(mem);
	return status;
}

doca_error_t sdp_urom_mem_get_memh(const struct sdp_urom_mem *mem, const void **memh, size_t *len)
{
	if (!mem_live(mem) || memh == NULL || len == NULL) {
		sdp_error("sdp_urom_mem_get_memh: invalid argument: mem %p%s, memh %p, len %p",
			  (const void *)mem, mem != NULL && !mem_live(mem) ? " (unexported?)" : "",
			  (void *)memh, (void *)len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*memh = mem->memh;
	*len = mem->memh_len;
	return DOCA_SUCCESS;
}

doca_error_t sdp_urom_mem_get_mkey(const struct sdp_urom_mem *mem, const void **mkey, size_t *len)
{
	if (!mem_live(mem) || mkey == NULL || len == NULL) {
		sdp_error("sdp_urom_mem_get_mkey: invalid argument: mem %p%s, mkey %p, len %p",
			  (const void *)mem, mem != NULL && !mem_live(mem) ? " (unexported?)" : "",
			  (void *)mkey, (void *)len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*mkey = mem->rkey;
	*len = mem->rkey_len;
	return DOCA_SUCCESS;
}

doca_error_t sdp_urom_mem_unexport(struct sdp_urom_mem *mem)
{
	ucs_status_t st;

	if (!mem_live(mem)) {
		sdp_error("sdp_urom_mem_unexport: invalid argument: mem %p%s", (void *)mem,
			  mem != NULL ? " is not exported" : "");
		return DOCA_ERROR_INVALID_VALUE;
	}
	mem->magic = 0;
	pthread_mutex_lock(&engine.lock);
	/* No xrma request reaches the buffer once this returns. */
	pthread_mutex_lock(&xrma.lock);
	for (struct sdp_urom_mem **pp = &xrma.regions; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == mem) {
			*pp = mem->next;
			break;
		}
	}
	pthread_mutex_unlock(&xrma.lock);
	ucp_rkey_buffer_release(mem->rkey);
	if (--engine.refs == 0) {
		/* the worker goes first: a reply it still holds may reference this memh */
		engine_stop(mem->ucp_memh);
	} else {
		st = ucp_mem_unmap(engine.context, mem->ucp_memh);
		if (st != UCS_OK)
			sdp_warn("ucp_mem_unmap of %zu bytes at %p failed: %s", mem->len, mem->buf,
				 ucs_status_string(st));
	}
	pthread_mutex_unlock(&engine.lock);
	sdp_debug("unexported %zu bytes at %p", mem->len, mem->buf);
	free(mem->memh);
	free(mem);
	return DOCA_SUCCESS;
}

doca_error_t sdp_urom_domain_export_buffer(struct doca_urom_domain *domain, void *buf, size_t len,
					   struct sdp_urom_mem **mem_p)
{
	struct sdp_urom_mem *mem;
	doca_error_t status;

	if (domain == NULL || mem_p == NULL) {
		sdp_error("sdp_urom_domain_export_buffer: invalid argument: domain %p, mem %p",
			  (void *)domain, (void *)mem_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = sdp_urom_mem_export(buf, len, &mem);
	if (status != DOCA_SUCCESS)
		return status;
	/* The domain copies both byte strings. */
	status = doca_urom_domain_add_buffer(domain, buf, len, mem->memh, mem->memh_len, mem->rkey,
					     mem->rkey_len);
	if (status != DOCA_SUCCESS) {
		(void)sdp_urom_mem_unexport(mem);
		return status;
	}
	*mem_p = mem;
	return DOCA_SUCCESS;
}

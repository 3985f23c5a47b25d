/*
 * softdpu internal to libdoca_urom: the service, worker, task and domain objects and what their
 * files need from each other.
 *
 * Threads and locks. A service context owns one TCP connection to softdpu-uromd. Worker
 * contexts, which may live on other threads and progress engines, send their SPAWN and RELEASE
 * requests through it, so everything about that connection (the socket and its buffers, the
 * list of pending requests, the list of attached worker contexts) is guarded by the service's
 * `lock`. Whoever holds the lock may progress the connection: the service context's progress
 * op does, and so does the progress op of a worker context that waits for a reply. A reply is
 * matched to its request by req_id and marked done (done_cb runs, under the lock, for requests
 * that complete a task); the owner picks it up from its own progress op. Each worker context
 * owns a second UCP worker for its direct connection to the worker process, used only by the
 * thread that progresses that context's PE. That connection has no UCP error handling (shared
 * memory on one host): a worker's death is learnt from the service connection (WORKER_EXIT),
 * which a running worker context's progress op also polls, with trylock (worker.c).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_UROM_HOST_H_
#define SDP_UROM_HOST_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "doca_buf.h"
#include "doca_urom.h"
#include "sdp_buf.h"
#include "sdp_ctx.h"
#include "sdp_list.h"
#include "sdp_ucx.h"
#include "sdp_urom_chan.h"
#include "sdp_urom_defaults.h"
#include "sdp_urom_hdr.h"
#include "sdp_urom_proto.h"

#define SDP_UROM_DEFAULT_MSG_SIZE 4096
#define SDP_UROM_DEFAULT_MAX_INFLIGHT 128
#define SDP_UROM_MIN_MSG_SIZE 64
#define SDP_UROM_MAX_MSG_SIZE (64u << 20)
#define SDP_UROM_SPAWN_TIMEOUT_MIN_MS 10000
#define SDP_UROM_CLOSE_TIMEOUT_MS 200
#define SDP_UROM_ADDR_HOST_MAX 256
#define SDP_UROM_NET_DEVICES_MAX 256
/* Largest DOCA_UROM_SERVICE_FILE read (a larger one is refused: docs/environment.md). */
#define SDP_UROM_SERVICE_FILE_MAX (1u << 20)
/*
 * Progressing the service connection costs a system call (a recv on its socket), so progress ops that have no reply to wait for look at it only every
 * SDP_UROM_SVC_POLL_CALLS calls, and at most every SDP_UROM_SVC_POLL_MS: unsolicited news
 * (WORKER_EXIT) is then seen within about a millisecond of a busy PE's time.
 */
#define SDP_UROM_SVC_POLL_CALLS 16
#define SDP_UROM_SVC_POLL_MS 1

/* ---- where the service is (lookup.c) --------------------------------------------------------- */

struct sdp_urom_addr {
	char host[SDP_UROM_ADDR_HOST_MAX];
	uint16_t port;
	char net_devices[SDP_UROM_NET_DEVICES_MAX]; /* "" = let UCX choose */
	char origin[320];			    /* where it came from, for messages */
};

/*
 * Parse "host", "host:port" or "[v6addr]:port" (port 1..65535; default_port when absent).
 * INVALID_VALUE (not logged) for anything else; outputs are set only on success.
 */
doca_error_t sdp_urom_hostport_parse(const char *str, uint16_t default_port, char *host,
				     size_t host_size, uint16_t *port_p);

/*
 * Find the line of a DOCA_UROM_SERVICE_FILE for app host `hostname` and device `pci_addr`
 * (PCI addresses compare after normalisation, so "03:00.0" matches "0000:03:00.0"; host names
 * compare case-insensitively, and a line naming the short form of hostname matches too).
 * Blank lines and lines starting with '#' are skipped; a malformed line is reported with its
 * file:line and skipped. NOT_FOUND (logged) when no line matches, IO_FAILED / NOT_FOUND /
 * NOT_PERMITTED (logged, %m) when the file cannot be read.
 */
doca_error_t sdp_urom_service_file_lookup(const char *path, const char *hostname,
					  const char *pci_addr, struct sdp_urom_addr *addr_p);

/*
 * The service address for a device of PCI address pci_addr (NULL when no device was set):
 * DOCA_UROM_SERVICE_FILE if set (a device is then required), else SOFTDPU_UROM_SERVICE_ADDR,
 * else SDP_UROM_DEFAULT_ADDR. net,devs from the file (NET_DEVICES of the worker contexts' UCX)
 * lands in addr_p->net_devices, "" without one. Errors are logged.
 */
doca_error_t sdp_urom_addr_resolve(const char *pci_addr, struct sdp_urom_addr *addr_p);

/* Milliseconds on CLOCK_MONOTONIC. */
uint64_t sdp_urom_now_ms(void);

/* SOFTDPU_UROM_CONNECT_TIMEOUT_MS (default 5000). */
int sdp_urom_connect_timeout_ms(void);

/* ---- requests over the service connection (service.c) --------------------------------------- */

struct sdp_urom_req;
typedef void (*sdp_urom_req_done_func_t)(struct sdp_urom_req *req);

struct sdp_urom_req {
	sdp_list_link_t link; /* in svc->reqs while waiting (service lock) */
	uint64_t req_id;
	uint16_t want_type;  /* the reply type that completes it */
	int done;	     /* reply (or failure) arrived (service lock) */
	doca_error_t status; /* DOCA_SUCCESS or why it failed */
	char reason[256];    /* the service's reason text on refusal */
	void *reply_buf;     /* copy of the reply; reply points into it */
	struct sdp_urom_msg *reply;
	struct doca_pe *wake_pe;	  /* signalled when done (may be NULL) */
	sdp_urom_req_done_func_t done_cb; /* when set, runs (lock held) and owns req */
	void *arg;
};

struct doca_urom_service {
	struct doca_ctx ctx; /* first: doca_urom_service_as_ctx */
	/* configuration (application thread, IDLE) */
	struct doca_dev *dev;
	char pci_addr[32];
	size_t max_msg_size;
	uint32_t max_workers;
	/* the connection and everything shared with worker contexts */
	pthread_mutex_t lock;
	struct sdp_urom_chan chan; /* to softdpu-uromd's control port */
	int chan_ready;
	size_t ctrl_max; /* largest frame the service accepts from us */
	int efd_added;
	int conn_lost;		     /* the connection failed or closed */
	int handshake;		     /* the synchronous handshake of start is running */
	struct sdp_urom_req *hs_req; /* its current request */
	uint64_t next_req_id;
	sdp_list_link_t reqs;	 /* struct sdp_urom_req waiting for a reply */
	atomic_int poll_hot;	 /* progress every call: replies are due or events wait */
	uint32_t poll_calls;	 /* service PE thread: progress calls since the last look */
	uint64_t poll_ms;	 /* service PE thread: when it last progressed the connection */
	sdp_list_link_t workers; /* attached struct doca_urom_worker (svc_link) */
	size_t num_workers;
	size_t num_active; /* attached workers that are not IDLE */
	struct sdp_urom_addr addr;
	char addr_str[SDP_UROM_ADDR_HOST_MAX + 16];
	/* what WELCOME said (valid while RUNNING) */
	size_t msg_size;
	ucs_cpu_set_t cpuset;
	struct doca_urom_service_plugin_info *plugins;
	size_t num_plugins;
	uint64_t plugins_mask;
	char service_version[64];
};

/*
 * Send a request over the service connection and queue `req` for its reply (lock held).
 * req->req_id is assigned here. On failure req is not queued (status logged).
 */
doca_error_t sdp_urom_svc_request_locked(struct doca_urom_service *svc, struct sdp_urom_msg *msg,
					 struct sdp_urom_req *req, uint16_t want_type);

/* Send one message to the service that needs no reply (lock held; bounded wait). */
doca_error_t sdp_urom_svc_send_locked(struct doca_urom_service *svc,
				      const struct sdp_urom_msg *msg);

/* Progress the service connection a little (lock held); nonzero if anything happened. */
int sdp_urom_svc_progress_locked(struct doca_urom_service *svc);

/* Forget a queued request (lock held) and free its reply copy; req itself stays the caller's. */
void sdp_urom_req_drop_locked(struct sdp_urom_req *req);

/* Free a request's reply copy. */
void sdp_urom_req_clear(struct sdp_urom_req *req);

/* Send one message to a peer that needs no reply (lock held for the service's worker). */
doca_error_t sdp_urom_send_msg(struct sdp_ucx_worker *w, ucp_ep_h ep,
			       const struct sdp_urom_msg *msg);

/*
 * The release call of a UROM task type (cmd_task.c): refuses a NULL, submitted or released task
 * (INVALID_VALUE / NOT_PERMITTED, logged once as the public call api), else frees it.
 */
doca_error_t sdp_urom_task_release(struct doca_task *task, const char *kind, const char *api);

/* ---- worker context (worker.c, cmd_task.c) -------------------------------------------------- */

enum sdp_urom_worker_phase {
	SDP_UROM_W_IDLE = 0,
	SDP_UROM_W_SPAWNING,   /* SPAWN sent, waiting for SPAWN_REPLY */
	SDP_UROM_W_CONNECTING, /* W_CONNECT sent, waiting for W_CONNECT_REPLY */
	SDP_UROM_W_RUNNING,
	SDP_UROM_W_RELEASING, /* RELEASE sent, waiting for RELEASE_REPLY */
};

struct sdp_urom_slot {
	struct doca_urom_worker_cmd_task *task; /* NULL when free */
	uint32_t gen;				/* bumped each time the slot is taken */
};

/*
 * A domain start or stop waiting for one worker's answer (domain.c). It lives in the domain;
 * the worker context points at it while the answer is due. Both contexts are progressed by
 * the same PE (domain start checks), so no lock is needed.
 */
struct sdp_urom_dom_wait {
	uint64_t req_id;
	uint16_t want_type; /* W_DOMAIN_ADDR_REPLY or W_DOMAIN_REPLY */
	int done;
	doca_error_t status;
	uint8_t *record; /* W_DOMAIN_ADDR_REPLY: copy of the member record (malloc'd) */
	size_t record_len;
	char reason[200];
};

struct doca_urom_worker {
	struct doca_ctx ctx; /* first: doca_urom_worker_as_ctx */
	/* configuration (IDLE) */
	struct doca_urom_service *svc;
	sdp_list_link_t svc_link; /* in svc->workers (service lock) */
	uint64_t id;		  /* requested, then the one the service gave */
	uint32_t gid;
	uint64_t plugins;
	int has_cpuset;
	ucs_cpu_set_t cpuset;
	char **env;
	size_t num_env;
	uint32_t max_inflight;
	/* runtime (the thread that progresses the worker's PE, unless noted) */
	enum sdp_urom_worker_phase phase;
	int active;  /* counted in svc->num_active (service lock) */
	int abandon; /* stop arrived while starting */
	int release_sent;
	struct sdp_urom_req req; /* the SPAWN or RELEASE in flight */
	int req_queued;		 /* req is in svc->reqs (service lock) */
	uint64_t deadline_ms;
	uint64_t dest_id;
	uint32_t pid;
	uint8_t token[SDP_UROM_TOKEN_LEN];
	ucp_context_h ucp;
	struct sdp_ucx_worker ucx;
	int ucx_ready;
	ucp_ep_h ep;
	int efd_added;
	int svc_efd; /* duplicate of the service's wakeup fd while waiting for it, or -1 */
	int connect_done;
	doca_error_t connect_status;
	atomic_int dead;	     /* the worker process is gone (any thread) */
	uint32_t svc_poll_calls;     /* progress calls since the last look at the service */
	uint64_t svc_poll_ms;	     /* when the service connection was last progressed */
	size_t msg_size;	     /* effective message size */
	struct sdp_urom_slot *slots; /* max_inflight of them */
	uint32_t *free_slots;	     /* stack of free slot indexes */
	uint32_t num_free;
	/*
	 * W_CMDs packed back to back and not sent yet (send_len bytes; the slots of their tasks in
	 * send_slots, send_n of them): a submission with DOCA_TASK_SUBMIT_FLAG_FLUSH sends them
	 * with its own command in one active message, as do doca_ctx_flush_tasks(), the next
	 * progress call, arming the PE and any other message to the worker (cmd_task.c).
	 */
	void *send_buf;
	size_t send_cap;
	size_t send_len;
	uint32_t *send_slots; /* max_inflight of them */
	uint32_t send_n;
	struct sdp_urom_dom_wait *dom_wait; /* a domain waits for an answer of this worker */
	size_t dom_refs; /* domains started (not IDLE) with this worker: destroy says IN_USE */
	/* released command tasks kept for reuse, with their mmap and bufs (cmd_task.c) */
	sdp_list_link_t task_cache;
	size_t num_cached;
};

/* The service tells a worker context its worker process died (service lock held). */
void sdp_urom_worker_mark_dead(struct doca_urom_worker *worker, const char *why);

/* A W_NOTIF arrived on the worker's connection. */
void sdp_urom_worker_handle_notif(struct doca_urom_worker *worker, const struct sdp_urom_msg *msg);

/* A W_DOMAIN_ADDR_REPLY or W_DOMAIN_REPLY arrived on the worker's connection (domain.c). */
void sdp_urom_domain_handle_reply(struct doca_urom_worker *worker, const struct sdp_urom_msg *msg);

/* Complete every task in flight with `status` (worker death, stop). */
void sdp_urom_worker_flush_tasks(struct doca_urom_worker *worker, doca_error_t status);
/*
 * Send the commands submitted without DOCA_TASK_SUBMIT_FLAG_FLUSH (nothing to do: SUCCESS).
 * When the send fails their tasks complete with its error, and it is returned.
 */
doca_error_t sdp_urom_worker_send_cmds(struct doca_urom_worker *worker);

/* Free the released command tasks kept for reuse (worker destroy). */
void sdp_urom_worker_task_cache_fini(struct doca_urom_worker *worker);

struct doca_urom_worker_cmd_task {
	struct doca_task super; /* first: doca_urom_worker_cmd_task_as_task */
	struct doca_urom_worker *worker;
	uint64_t plugin;
	doca_urom_worker_cmd_task_completion_cb_t cb;
	struct doca_buf payload;
	struct doca_buf response;
	uint64_t user_data[4];	/* the 32-byte area of get_user_data */
	uint32_t slot;		/* while submitted */
	struct doca_mmap *mmap; /* covers cmd_mem and resp_mem */
	size_t payload_cap;
	size_t resp_cap;
	uint8_t *cmd_mem;	    /* struct urom_worker_cmd header, then payload_cap bytes */
	uint8_t *resp_mem;	    /* resp_cap bytes */
	sdp_list_link_t cache_link; /* in worker->task_cache once released */
};

#endif /* SDP_UROM_HOST_H_ */

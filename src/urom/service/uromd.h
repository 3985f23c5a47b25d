/*
 * softdpu-uromd internals: the state of the UROM offload service shared by its parts.
 *
 *   main.c    options, run dir, pid file, daemon mode, the event loop, orderly shutdown
 *   scan.c    plugin discovery in a child process (a crashing .so only kills the child)
 *   spawn.c   worker processes: spawn, control socket, release, death, reaping
 *   conn.c    host connections on softdpu's own TCP port: handshake, authentication,
 *             requests (sdp_urom_chan.h; no UCX between hosts and the service)
 *   status.c  the JSON status document (json-c)
 *   logcap.c  the cap on old worker logs in the run directory
 *   cpuset.c  CPU list parsing and printing ("0-7,9")
 *
 * The service is single-threaded: everything below is touched only by the event loop.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_UROMD_H_
#define SDP_UROMD_H_

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "doca_error.h"
#include "sdp_urom_defaults.h"
#include "sdp_urom_auth.h"
#include "sdp_urom_chan.h"
#include "sdp_urom_proto.h"

#define UROMD_DEFAULT_MSG_SIZE 4096
#define UROMD_MIN_MSG_SIZE 64
#define UROMD_MAX_MSG_SIZE (16u << 20)
#define UROMD_MAX_CPUS (SDP_UROM_CPUSET_WORDS * 64)
/* How long a worker may take to report SW_READY, and to exit after SW_EXIT. */
#define UROMD_WORKER_READY_MS 10000
#define UROMD_WORKER_EXIT_MS 2000
/* A host must finish the handshake within this time. */
#define UROMD_HANDSHAKE_MS 10000
/* A rejected connection is closed this long after the reply went out (unless the peer closes). */
#define UROMD_LINGER_MS 1000
/* Connections that have not authenticated yet, and connections in all: past these a new one is
 * closed at once. */
#define UROMD_MAX_PREAUTH_CONNS 64
#define UROMD_MAX_CONNS 4096
/* Out of descriptors (EMFILE...): accept pauses this long (the listener leaves the epoll set). */
#define UROMD_ACCEPT_PAUSE_MS 100
/* Warnings about unauthenticated peers a second; the rest are counted and reported. */
#define UROMD_PEER_WARN_PER_S 10
/* Fresh ids for DOCA_UROM_WORKER_ID_ANY start here, far from ids applications pick. */
#define UROMD_ANY_ID_BASE (1ULL << 62)
#define UROMD_WORKER_ID_ANY UINT64_MAX
/* SW_STATS a worker may send a second before it counts as broken (it sends about 2). */
#define UROMD_STATS_PER_S_MAX 64
/* Logs of workers that are gone kept in the run directory (--max-worker-logs). */
#define UROMD_DEFAULT_MAX_WORKER_LOGS 64
#define UROMD_MAX_WORKER_LOGS_LIMIT 100000
/*
 * Liveness (--worker-timeout, SOFTDPU_UROM_WORKER_TIMEOUT_MS): a ready worker sends SW_STATS at
 * least every timeout / UROMD_HEARTBEATS_PER_TIMEOUT ms (its heartbeat); one the service has
 * heard nothing from for the timeout is unresponsive: SIGKILLed, reaped, its hosts told.
 */
#define UROMD_DEFAULT_WORKER_TIMEOUT_MS 3000
#define UROMD_MIN_WORKER_TIMEOUT_MS 300
#define UROMD_MAX_WORKER_TIMEOUT_MS 3600000
#define UROMD_HEARTBEATS_PER_TIMEOUT 3

/* A CPU set as carried on the wire (bit i of word i / 64 = CPU i). */
struct uromd_cpuset {
	uint64_t bits[SDP_UROM_CPUSET_WORDS];
};

struct uromd_plugin {
	uint64_t id; /* single bit, stable for the daemon's lifetime */
	uint64_t version;
	char name[SDP_UROM_NAME_MAX];
	char *path;
};

struct uromd_skipped {
	char *path;
	char *reason;
};

struct uromd_scan_result {
	struct uromd_plugin *plugins;
	size_t num_plugins;
	struct uromd_skipped *skipped;
	size_t num_skipped;
};

struct uromd;
struct uromd_conn;

/* One host connection using a worker (told apart by dest_id). */
struct uromd_owner {
	struct uromd_conn *conn;
	uint64_t dest_id;
	uint8_t token[SDP_UROM_TOKEN_LEN]; /* what the host must present to the worker */
	uint64_t req_id;		   /* the SPAWN request still waiting for a reply */
	int reply_pending;		   /* SPAWN_REPLY not sent yet (worker not ready) */
};

enum uromd_worker_state {
	UROMD_WORKER_STARTING, /* forked, SW_READY not received */
	UROMD_WORKER_READY,
	UROMD_WORKER_EXITING, /* SW_EXIT sent (or failed): SIGKILL at the deadline */
	UROMD_WORKER_DEAD,    /* reaped, being removed */
};

/* What an epoll event's data.ptr points to: the first member of each such object. */
enum uromd_ev_kind {
	UROMD_EV_WORKER = 0, /* struct uromd_worker (its control socket) */
	UROMD_EV_CONN,	     /* struct uromd_conn */
	UROMD_EV_LISTENER,
	UROMD_EV_SIGNAL,
};

/*
 * A host's use of a worker that died: the host was told (WORKER_EXIT) and will release it when
 * its worker context stops. Kept until that RELEASE or the connection's end, so the RELEASE is
 * answered as done instead of as a mistake (at most UROMD_GONE_MAX, the oldest dropped first).
 */
struct uromd_gone {
	struct uromd_conn *conn;
	uint64_t worker_id;
	uint64_t dest_id;
};

#define UROMD_GONE_MAX 4096

/* The last SW_STATS of a worker (status.c shows it); have = 0 until the first one. */
struct uromd_worker_stats {
	int have;
	uint64_t recv_ms; /* CLOCK_MONOTONIC when it arrived */
	uint64_t uptime_ms, cmds, cmd_bytes, cmds_refused, notifs, notif_bytes, notifs_error,
		notifs_dropped, connects_refused, domains_committed;
	uint32_t hosts_connected, hosts_total;
	char ucx_version[SDP_UROM_STATS_VERSION_MAX + 1];
	char ucx_tls[SDP_UROM_STATS_STR_MAX + 1];
	char ucx_net_devices[SDP_UROM_STATS_STR_MAX + 1];
	char ucx_resources[SDP_UROM_STATS_STR_MAX + 1];
	/* flood guard: SW_STATS counted in the current one-second window */
	uint64_t window_ms;
	uint32_t window_count;
};

struct uromd_worker {
	enum uromd_ev_kind ev_kind; /* first: UROMD_EV_WORKER (zero, as calloc leaves it) */
	struct uromd_worker *next;
	uint64_t id;
	uint32_t gid;
	pid_t pid;
	uint64_t plugins; /* mask of plugin ids */
	uint32_t uid;	  /* uid of the host connection that spawned it: only it may attach */
	int ctrl_fd;	  /* service end of the SOCK_SEQPACKET control socket, -1 once closed */
	int ready_seen;	  /* its one SW_READY arrived (a second one is a broken worker) */
	char *log_path;
	enum uromd_worker_state state;
	void *addr; /* UCP worker address from SW_READY */
	size_t addr_len;
	uint64_t deadline_ms; /* ready deadline (STARTING) or kill deadline (EXITING); 0 = none */
	int broken;	      /* its control link failed: SIGKILLed (spawn.c) */
	int unresponsive;     /* silent past the worker timeout: SIGKILLed (spawn.c) */
	uint64_t heard_ms;    /* CLOCK_MONOTONIC of its last control message (liveness) */
	struct uromd_owner *owners;
	size_t num_owners;
	size_t cap_owners;
	struct uromd_worker_stats *stats; /* malloc'd with its first SW_STATS, else NULL */
};

enum uromd_conn_state {
	UROMD_CONN_HELLO,  /* accepted, waiting for HELLO */
	UROMD_CONN_AUTH,   /* CHALLENGE sent, waiting for AUTH */
	UROMD_CONN_READY,  /* authenticated */
	UROMD_CONN_DOOMED, /* to be closed by the loop (rejected, peer gone, timed out) */
};

struct uromd_conn {
	enum uromd_ev_kind ev_kind; /* first: UROMD_EV_CONN */
	struct uromd_conn *next;
	struct uromd *d;
	struct sdp_urom_chan chan;
	int preauth; /* counted in d->num_preauth (not authenticated yet) */
	enum uromd_conn_state state;
	int peer_failed; /* the socket failed or the peer closed: close without flushing */
	int want_out;	 /* EPOLLOUT is in the epoll set (output queued) */
	int shut;	 /* doomed and flushed: our side of the stream is shut down */
	char peer[96];	 /* "ip:port" of the host */
	uint8_t client_nonce[SDP_UROM_NONCE_LEN];
	uint8_t server_nonce[SDP_UROM_NONCE_LEN];
	uint32_t pid;
	uint32_t uid;	  /* HELLO's, replaced by the kernel's for a local peer (conn.c) */
	int uid_verified; /* uid is the kernel's owner of the peer's socket */
	char hostname[64];
	uint64_t max_msg_size; /* effective */
	uint32_t max_workers;  /* the host's limit for this connection, 0 = none */
	uint64_t deadline_ms;  /* handshake or linger deadline; 0 = none */
};

struct uromd_config {
	char *listen;	   /* host:port as given */
	char *listen_host; /* parsed */
	uint16_t listen_port;
	uint64_t max_msg_size;
	uint32_t max_workers; /* 0 = unlimited */
	char *cpuset_str;     /* as given, NULL = all CPUs */
	char *plugin_path;    /* semicolon-separated; NULL = UROM_PLUGIN_PATH */
	char *plugin_dir;     /* used without plugin_path and UROM_PLUGIN_PATH; NULL = default */
	uint32_t max_worker_logs; /* logs of gone workers kept (logcap.c) */
	int foreground;
	int allow_loader_env; /* hosts may set LD_* and the like for their workers (spawn.c) */
	char *pid_file;
	char *secret_file;
	char *run_dir;
	uint32_t log_level;	    /* level handed to workers (-l) */
	uint32_t worker_timeout_ms; /* liveness bound (--worker-timeout), 0 = off */
};

struct uromd {
	struct uromd_config cfg;
	char run_dir[PATH_MAX];
	char pid_path[PATH_MAX + 64];
	char port_path[PATH_MAX + 64];
	char listen_path[PATH_MAX + 64];
	char secret_rec_path[PATH_MAX + 64]; /* <run dir>/uromd.secret-path, "" until written */
	char worker_bin[PATH_MAX + 64];
	char *plugin_list;		     /* the directories scanned (main.c) */
	const char *plugin_list_from;	     /* where that list came from, for messages */
	char no_plugins_warning[4096 + 512]; /* "" unless no plugin was found (status.c) */
	char log_path[PATH_MAX + 32];	     /* <run dir>/uromd.log in daemon mode */
	FILE *log_file;			     /* its stream (the log backend's), NULL = stderr */
	int log_std;			     /* stdout/stderr are the log file too */
	char worker_net_devices[64]; /* UCX_NET_DEVICES given to workers, "" = none (main.c) */
	uint8_t secret[SDP_UROM_SECRET_LEN];
	struct uromd_cpuset cpuset;  /* as given (reported to hosts) */
	struct uromd_cpuset present; /* CPUs this daemon may run on */
	struct uromd_scan_result scan;
	uint64_t start_ms; /* CLOCK_MONOTONIC */
	uint16_t bound_port;

	int listen_fd;
	enum uromd_ev_kind listen_kind; /* UROMD_EV_LISTENER: listen_fd's epoll tag */

	struct uromd_conn *conns;
	size_t num_conns, num_preauth;
	uint64_t listen_resume_ms; /* accept paused (out of descriptors) until then; 0 = not */
	/* warnings about peers that have not authenticated: at most UROMD_PEER_WARN_PER_S a second */
	uint64_t peer_warn_window_ms;
	uint32_t peer_warn_count;
	uint64_t peer_warn_dropped;
	struct uromd_worker *workers;
	struct uromd_gone *gone; /* see struct uromd_gone */
	size_t num_gone;
	size_t cap_gone;
	uint64_t next_any_id;
	uint64_t next_spawn_seq; /* names a worker's log until its pid is known */
	uint64_t next_dest_id;
	uint64_t workers_unresponsive; /* workers killed for silence since the start */
	int epfd;
	int stopping;
};

/* main.c */
uint64_t uromd_now_ms(void);

/* cpuset.c: "0-7,9" <-> bits. INVALID_VALUE (logged, naming what) for a bad list. */
doca_error_t uromd_cpuset_parse(const char *str, struct uromd_cpuset *set_p);
void uromd_cpuset_format(const struct uromd_cpuset *set, char *buf, size_t size);
int uromd_cpuset_is_subset(const struct uromd_cpuset *a, const struct uromd_cpuset *b);
int uromd_cpuset_empty(const struct uromd_cpuset *set);
void uromd_cpuset_and(const struct uromd_cpuset *a, const struct uromd_cpuset *b,
		      struct uromd_cpuset *out);

/* scan.c: scan the semicolon-separated directory list (may be empty). */
doca_error_t uromd_scan_plugins(const char *path_list, struct uromd_scan_result *result_p);
void uromd_scan_result_fini(struct uromd_scan_result *result);

/* spawn.c */
struct uromd_worker *uromd_worker_find(struct uromd *d, uint64_t id);
/* Handle a SPAWN request of conn (replies itself, success or not). */
void uromd_worker_spawn_request(struct uromd *d, struct uromd_conn *conn,
				const struct sdp_urom_msg *req);
/* Handle a RELEASE request of conn. */
void uromd_worker_release_request(struct uromd *d, struct uromd_conn *conn,
				  const struct sdp_urom_msg *req);
/* Drop every use of conn (connection gone). */
void uromd_worker_drop_conn(struct uromd *d, struct uromd_conn *conn);
/* Control socket readable / hung up. */
void uromd_worker_ctrl_event(struct uromd *d, struct uromd_worker *w, uint32_t events);
/* Reap every exited child and tell the owners. */
void uromd_worker_reap(struct uromd *d);
/* Deadlines: kill late workers. Returns the next deadline (0 = none). */
uint64_t uromd_worker_timers(struct uromd *d, uint64_t now);
/* Ask every worker to exit, wait up to UROMD_WORKER_EXIT_MS, SIGKILL the rest, reap all. */
void uromd_worker_shutdown_all(struct uromd *d, int sigfd);
size_t uromd_worker_count_live(const struct uromd *d);

/* conn.c */
doca_error_t uromd_conn_listen(struct uromd *d);
void uromd_conn_listen_close(struct uromd *d);
/* The listening socket is readable: accept what waits. */
void uromd_conn_accept(struct uromd *d);
/* An epoll event on a connection's socket. */
void uromd_conn_event(struct uromd *d, struct uromd_conn *conn, uint32_t events);
/* Close doomed connections, enforce handshake deadlines; returns the next deadline. */
uint64_t uromd_conn_timers(struct uromd *d, uint64_t now);
void uromd_conn_close_all(struct uromd *d);
/* Pack msg and send it to conn (logs a failure; the connection is doomed then). */
void uromd_conn_send(struct uromd *d, struct uromd_conn *conn, struct sdp_urom_msg *msg);

/* logcap.c: remove the oldest logs of gone workers beyond cfg.max_worker_logs (only regular
 * files of this user named as spawn.c names worker logs; never a live worker's). */
void uromd_worker_logs_prune(struct uromd *d);

/* status.c: the JSON status document (malloc'd, NUL-terminated). */
doca_error_t uromd_status_json(const struct uromd *d, char **json_p, size_t *len_p);

#endif /* SDP_UROMD_H_ */

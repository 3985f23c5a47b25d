/*
 * softdpu internal: the UROM wire format. The ONLY place that packs and parses bytes that cross
 * a process boundary between the host library (libdoca_urom), the offload service
 * (softdpu-uromd) and the worker runtime (softdpu-urom-worker). Fuzzed (tests/fuzz).
 *
 * Framing: every message is one UCP active message (AM id SDP_UROM_AM_ID) or, between the
 * service and its own workers, one frame on a SOCK_SEQPACKET socketpair; since version 2 one
 * active message between a host and a worker may carry several whole messages back to back
 * (commands a host submitted together, notifications a worker produced in one round: one UCX
 * send and one receive for all of them; sdp_urom_msg_next() splits them). Each starts with a
 * fixed little-endian header:
 *
 *   u32 magic (SDP_UROM_MAGIC) | u16 proto version | u16 type | u64 req_id | u32 body length
 *
 * followed by the body. Integers are little-endian; byte strings carry a u32 length; strings
 * are u32 length + bytes (no NUL on the wire). Every unpack function checks every length
 * against what is left and returns DOCA_ERROR_INVALID_VALUE on any overrun, unknown type, bad
 * magic or trailing garbage; it never reads past `len`. Unpacked pointers (byte strings,
 * strings, arrays) point INTO the caller's buffer or into `struct sdp_urom_msg`'s fixed
 * storage; they are valid as long as that buffer is.
 *
 * Versioning: SDP_UROM_PROTO_VERSION is bumped on any incompatible change. A peer that
 * receives a header with another version answers (if it can) with SDP_UROM_MSG_VERSION_REJECT
 * carrying its own version, and both sides log both versions; the host library then returns
 * DOCA_ERROR_NOT_SUPPORTED.
 * The SW_* messages travel only between a service and the worker processes it spawns from its
 * own build (both ends built together): adding one of them, as SW_STATS was, changes nothing a
 * host sees and does not bump the version. Their bytes are still parsed as a peer's (bounded,
 * checked; a service kills a worker whose control message does not parse).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_UROM_PROTO_H_
#define SDP_UROM_PROTO_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_error.h"

#define SDP_UROM_MAGIC 0x4d525553u /* "SURM" */
#define SDP_UROM_PROTO_VERSION 2   /* 2: batched host <-> worker messages */
#define SDP_UROM_AM_ID 7
#define SDP_UROM_HDR_LEN 20

#define SDP_UROM_NONCE_LEN 32 /* challenge nonces */
#define SDP_UROM_MAC_LEN 32   /* crypto_auth_hmacsha256 */
#define SDP_UROM_TOKEN_LEN 32 /* worker access token issued by the service */
#define SDP_UROM_NAME_MAX 48  /* plugin names, incl. NUL (DOCA_UROM_PLUGIN_NAME_MAX_LEN) */
#define SDP_UROM_MAX_PLUGINS 64
#define SDP_UROM_MAX_ENV 64
#define SDP_UROM_MAX_WORKERS_REPLY 1024
#define SDP_UROM_CPUSET_WORDS 16 /* 1024 CPUs, as ucs_cpu_set_t */

enum sdp_urom_msg_type {
	/* host <-> service */
	SDP_UROM_MSG_HELLO = 1,	     /* host: versions, client nonce, who I am */
	SDP_UROM_MSG_CHALLENGE,	     /* service: server nonce + MAC proving it knows the secret */
	SDP_UROM_MSG_AUTH,	     /* host: MAC over the server nonce */
	SDP_UROM_MSG_WELCOME,	     /* service: accepted; limits, cpuset, plugins */
	SDP_UROM_MSG_REJECT,	     /* service or worker: status + reason text */
	SDP_UROM_MSG_VERSION_REJECT, /* any: "I speak version N", sent instead of a reply */
	SDP_UROM_MSG_SPAWN,	     /* host: start or attach a worker */
	SDP_UROM_MSG_SPAWN_REPLY,    /* service: status, worker id, address, token, dest id */
	SDP_UROM_MSG_RELEASE,	     /* host: drop my connection to a worker */
	SDP_UROM_MSG_RELEASE_REPLY,
	SDP_UROM_MSG_GID_QUERY, /* host: workers of a group */
	SDP_UROM_MSG_GID_REPLY,
	SDP_UROM_MSG_STATUS_QUERY, /* CLI: the service's status */
	SDP_UROM_MSG_STATUS_REPLY, /* JSON text */
	SDP_UROM_MSG_WORKER_EXIT,  /* service -> host: a worker it uses died (unsolicited) */
	/* host <-> worker (over the worker's UCP address) */
	SDP_UROM_MSG_W_CONNECT = 32, /* host: token + dest id */
	SDP_UROM_MSG_W_CONNECT_REPLY,
	SDP_UROM_MSG_W_CMD,   /* host: one packed struct urom_worker_cmd */
	SDP_UROM_MSG_W_NOTIF, /* worker: one notification as produced by notif_pack */
	SDP_UROM_MSG_W_DISCONNECT,
	SDP_UROM_MSG_W_DOMAIN_ADDR,	  /* host: your plugins' addresses, please */
	SDP_UROM_MSG_W_DOMAIN_ADDR_REPLY, /* worker: status + a member record (id 0, no segments) */
	SDP_UROM_MSG_W_DOMAIN_MEMBER,	  /* host: one member record of a domain being pushed */
	SDP_UROM_MSG_W_DOMAIN_COMMIT,	  /* host: that domain has num_members members: use it */
	SDP_UROM_MSG_W_DOMAIN_CLEAR,	  /* host: forget that domain */
	SDP_UROM_MSG_W_DOMAIN_REPLY,	  /* worker: outcome of a COMMIT or CLEAR */
	/* service <-> its worker processes (socketpair) */
	SDP_UROM_MSG_SW_READY = 64, /* worker: my UCP address, pid, plugins opened */
	SDP_UROM_MSG_SW_ADD_HOST,   /* service: accept dest id with this token */
	SDP_UROM_MSG_SW_DEL_HOST,   /* service: forget dest id */
	SDP_UROM_MSG_SW_EXIT,	    /* service: shut down */
	SDP_UROM_MSG_SW_STATS,	    /* worker: its counters and UCX facts (after SW_READY) */
};

/*
 * SW_STATS bounds. The strings are printable ASCII (0x20..0x7e), at most these many bytes; the
 * parser refuses anything else, and counts that contradict each other (see sw_stats).
 */
#define SDP_UROM_STATS_VERSION_MAX 64 /* ucx_version */
#define SDP_UROM_STATS_STR_MAX 1024   /* ucx_tls, ucx_net_devices, ucx_resources */
/* A worker sends SW_STATS at most this often (and only when a counter changed). */
#define SDP_UROM_STATS_INTERVAL_MS 500

struct sdp_urom_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint64_t req_id;
	uint32_t body_len;
};

/* A view of a byte string inside a message buffer. */
struct sdp_urom_bytes {
	const uint8_t *data;
	uint32_t len;
};

struct sdp_urom_plugin_desc {
	uint64_t id;	  /* single bit */
	uint64_t version; /* urom_plugin_get_version() */
	char name[SDP_UROM_NAME_MAX];
};

/* One decoded message; which member is valid depends on hdr.type. */
struct sdp_urom_msg {
	struct sdp_urom_hdr hdr;
	union {
		struct {
			uint16_t min_version, max_version;
			uint8_t nonce[SDP_UROM_NONCE_LEN];
			uint32_t pid, uid;
			struct sdp_urom_bytes hostname;
			uint64_t max_msg_size; /* host's doca_urom_service_set_max_comm_msg_size */
			uint32_t max_workers;  /* host's doca_urom_service_set_max_workers */
		} hello;
		struct {
			uint8_t nonce[SDP_UROM_NONCE_LEN];
			uint8_t mac
				[SDP_UROM_MAC_LEN]; /* HMAC(secret, "svc" | client | server nonce) */
		} challenge;
		struct {
			uint8_t mac
				[SDP_UROM_MAC_LEN]; /* HMAC(secret, "host" | server | client nonce) */
		} auth;
		struct {
			uint64_t max_msg_size; /* effective: min(host, service -m) */
			uint64_t cpuset[SDP_UROM_CPUSET_WORDS];
			struct sdp_urom_bytes service_version;
			uint32_t num_plugins;
			struct sdp_urom_plugin_desc plugins[SDP_UROM_MAX_PLUGINS];
		} welcome;
		struct {
			uint32_t status; /* doca_error_t */
			struct sdp_urom_bytes reason;
		} reject;
		struct {
			uint16_t version;		/* the sender's protocol version */
			struct sdp_urom_bytes software; /* e.g. "softdpu 0.1.0" */
		} version_reject;
		struct {
			uint64_t worker_id; /* DOCA_UROM_WORKER_ID_ANY for a new one */
			uint32_t gid;
			uint64_t plugins; /* mask of plugin ids */
			uint32_t has_cpuset;
			uint64_t cpuset[SDP_UROM_CPUSET_WORDS];
			uint32_t num_env;
			struct sdp_urom_bytes env[SDP_UROM_MAX_ENV];
		} spawn;
		struct {
			uint32_t status;
			struct sdp_urom_bytes reason;
			uint64_t worker_id;
			uint64_t dest_id;
			uint32_t pid;
			uint8_t token[SDP_UROM_TOKEN_LEN];
			struct sdp_urom_bytes worker_addr; /* UCP worker address */
		} spawn_reply;
		struct {
			uint64_t worker_id, dest_id;
		} release;
		struct {
			uint32_t status;
		} release_reply;
		struct {
			uint32_t gid;
		} gid_query;
		struct {
			uint32_t status;
			uint32_t count;
			/* count little-endian u64s: inside the buffer after unpack; for pack, the
			 * caller's array (a uint64_t array on little-endian hosts) */
			const uint8_t *ids;
		} gid_reply;
		struct {
			uint32_t flags;
		} status_query;
		struct {
			struct sdp_urom_bytes json;
		} status_reply;
		struct {
			uint64_t worker_id;
			int32_t exit_status; /* wait() status */
		} worker_exit;
		struct {
			uint64_t dest_id;
			uint8_t token[SDP_UROM_TOKEN_LEN];
		} w_connect;
		struct {
			uint32_t status;
			struct sdp_urom_bytes reason;
		} w_connect_reply;
		struct {
			uint64_t dest_id;
			struct sdp_urom_bytes cmd; /* struct urom_worker_cmd, header + payload */
		} w_cmd;
		struct {
			uint64_t dest_id;
			struct sdp_urom_bytes notif; /* packed struct urom_worker_notify */
		} w_notif;
		struct {
			uint64_t dest_id;
		} w_disconnect;
		struct {
			uint64_t dest_id;
		} w_domain_addr;
		struct {
			uint32_t status;
			struct sdp_urom_bytes record; /* sdp_urom_dom_member_pack */
		} w_domain_addr_reply;
		struct {
			uint64_t dest_id;
			uint64_t domain_key;
			struct sdp_urom_bytes record;
		} w_domain_member;
		struct {
			uint64_t dest_id;
			uint64_t domain_key;
			uint32_t num_members;
		} w_domain_commit;
		struct {
			uint64_t dest_id;
			uint64_t domain_key;
		} w_domain_clear;
		struct {
			uint32_t status;
			struct sdp_urom_bytes reason;
		} w_domain_reply;
		struct {
			uint32_t pid;
			uint32_t status; /* plugin loading outcome */
			struct sdp_urom_bytes worker_addr;
		} sw_ready;
		struct {
			uint64_t dest_id;
			uint8_t token[SDP_UROM_TOKEN_LEN];
		} sw_add_host;
		struct {
			uint64_t dest_id;
		} sw_del_host;
		/*
		 * A worker's snapshot of its counters, pushed after SW_READY and then whenever one
		 * changed, at most every SDP_UROM_STATS_INTERVAL_MS (docs/urom-service.md,
		 * "Status", says what each counts). Every count is since the worker started. The
		 * parser refuses cmds_refused > cmds, notifs_error > notifs, hosts_connected >
		 * hosts_total, and strings that are too long or not printable ASCII.
		 */
		struct {
			uint64_t uptime_ms;	   /* since the worker process started */
			uint64_t cmds;		   /* W_CMD messages received */
			uint64_t cmd_bytes;	   /* their commands' bytes (header + payload) */
			uint64_t cmds_refused;	   /* of those, not handed to a plugin */
			uint64_t notifs;	   /* notifications sent to hosts */
			uint64_t notif_bytes;	   /* their packed bytes */
			uint64_t notifs_error;	   /* of those, with a status other than success */
			uint64_t notifs_dropped;   /* not sent: host unknown, gone or send failed */
			uint64_t connects_refused; /* W_CONNECT refused (token, dest id) */
			uint64_t domains_committed;	       /* W_DOMAIN_COMMIT accepted */
			uint32_t hosts_connected;	       /* now */
			uint32_t hosts_total;		       /* W_CONNECT accepted, ever */
			struct sdp_urom_bytes ucx_version;     /* ucp_get_version_string() */
			struct sdp_urom_bytes ucx_tls;	       /* UCX_TLS as the worker sees it */
			struct sdp_urom_bytes ucx_net_devices; /* UCX_NET_DEVICES, likewise */
			struct sdp_urom_bytes ucx_resources;   /* "tl/dev,..." of its UCP context */
		} sw_stats;
	} u;
};

/*
 * Pack `msg` (hdr.type, hdr.req_id and the matching union member; magic, version and body
 * length are filled in) into buf. DOCA_ERROR_TOO_BIG if it does not fit (*len_p then holds the
 * size needed), DOCA_ERROR_INVALID_VALUE for an unknown type or out-of-range counts.
 */
doca_error_t sdp_urom_msg_pack(const struct sdp_urom_msg *msg, void *buf, size_t cap,
			       size_t *len_p);

/* Size the packed form of msg would take; 0 when msg cannot be packed (INVALID_VALUE). */
size_t sdp_urom_msg_packed_size(const struct sdp_urom_msg *msg);

/*
 * Parse one message. DOCA_ERROR_NOT_SUPPORTED when the header is well formed but carries
 * another protocol version (msg->hdr is filled so the caller can log and answer it; for a
 * VERSION_REJECT, whose layout every version keeps, msg->u.version_reject too when its body is
 * well formed, else zeroes); DOCA_ERROR_INVALID_VALUE for anything malformed. Nothing is logged
 * here: the bytes come from a peer and only the caller knows which one, so the caller logs once,
 * naming the peer and the reason that sdp_urom_msg_unpack_why() wrote into why (the field at
 * fault; why may be NULL). Never reads beyond len; msg is untouched on INVALID_VALUE. On success
 * only hdr and the union member of hdr.type are written (fields the message lacks read zero);
 * the rest of msg->u keeps what it held.
 */
doca_error_t sdp_urom_msg_unpack_why(const void *buf, size_t len, struct sdp_urom_msg *msg,
				     char *why, size_t why_size);
doca_error_t sdp_urom_msg_unpack(const void *buf, size_t len, struct sdp_urom_msg *msg);

/*
 * The first message of an active message that may carry several (version 2, see the top):
 * *msg_len = its header and the body the header announces, to be parsed with
 * sdp_urom_msg_unpack_why() on exactly those bytes. Only the magic and the body length are
 * looked at (a peer of another version is told apart by the unpack). DOCA_ERROR_INVALID_VALUE
 * (why filled, nothing logged) when fewer bytes than a header are left, the magic is wrong or
 * the body runs past len: the rest of the buffer cannot be trusted and is dropped.
 */
doca_error_t sdp_urom_msg_next(const void *buf, size_t len, size_t *msg_len, char *why,
			       size_t why_size);

/*
 * ---- domain records ----
 *
 * What one domain member tells the others, packed into the bytes the domain start allgathers
 * through the application's OOB collective and then pushes to each local worker
 * (W_DOMAIN_MEMBER). These bytes cross hosts through a channel softdpu does not control, so
 * they are parsed only here, with every count and length bounded.
 *
 *   member record: u32 magic SDP_UROM_DOM_MAGIC | u16 version | u16 flags (0) | u64 domain id
 *                  | u32 num_addrs | num_addrs x (string plugin name, bytes address)
 *                  | u32 num_segs  | num_segs  x (u64 va, u64 len, bytes memh, bytes mkey)
 *   host record:   u32 magic SDP_UROM_DOMH_MAGIC | u16 version | u16 flags (0) | u32 count
 *                  | count x (bytes member record)
 *
 * Addresses are keyed by plugin NAME: plugin ids are assigned per service and differ between
 * hosts. A segment has len > 0 and va + len does not wrap; names are unique in a record.
 */
#define SDP_UROM_DOM_MAGIC 0x4d445344u	/* "SDDM" */
#define SDP_UROM_DOMH_MAGIC 0x48445344u /* "SDDH" */
#define SDP_UROM_DOM_VERSION 1
#define SDP_UROM_DOM_MAX_SEGS 1024
#define SDP_UROM_DOM_MAX_MEMBERS 4096	   /* members of one domain */
#define SDP_UROM_DOM_MAX_BLOB (64u << 10)  /* one address, memh or mkey */
#define SDP_UROM_DOM_MAX_RECORD (1u << 20) /* one member record */
#define SDP_UROM_DOM_MAX_HOST (64u << 20)  /* one host record */

struct sdp_urom_dom_addr {
	char name[SDP_UROM_NAME_MAX]; /* NUL-terminated */
	struct sdp_urom_bytes addr;
};

struct sdp_urom_dom_seg {
	uint64_t va;
	uint64_t len;
	struct sdp_urom_bytes memh;
	struct sdp_urom_bytes mkey;
};

struct sdp_urom_dom_member {
	uint64_t id;
	uint32_t num_addrs;
	struct sdp_urom_dom_addr addrs[SDP_UROM_MAX_PLUGINS];
	uint32_t num_segs;
	/* unpack: the packed segments, already validated (read with sdp_urom_dom_seg_next) */
	const uint8_t *segs_raw;
	size_t segs_len;
};

/*
 * Pack m with the num_segs segments of segs (m->segs_raw is ignored). TOO_BIG when cap is short
 * (*len_p = size needed; buf may be NULL with cap 0 to size), INVALID_VALUE (logged) for counts
 * or lengths out of bounds.
 */
doca_error_t sdp_urom_dom_member_pack(const struct sdp_urom_dom_member *m,
				      const struct sdp_urom_dom_seg *segs, void *buf, size_t cap,
				      size_t *len_p);

/* Parse one member record (views into buf); INVALID_VALUE with the reason in why, not logged. */
doca_error_t sdp_urom_dom_member_unpack_why(const void *buf, size_t len,
					    struct sdp_urom_dom_member *m, char *why,
					    size_t why_size);

/*
 * Iterate the segments of an unpacked member: *pos starts at 0; returns 1 and fills seg while
 * there is one, 0 at the end.
 */
int sdp_urom_dom_seg_next(const struct sdp_urom_dom_member *m, size_t *pos,
			  struct sdp_urom_dom_seg *seg);

/* Pack count member records into a host record (TOO_BIG / INVALID_VALUE as above). */
doca_error_t sdp_urom_dom_host_pack(const struct sdp_urom_bytes *members, uint32_t count, void *buf,
				    size_t cap, size_t *len_p);

/*
 * Parse a host record: *count members, each a byte string read with sdp_urom_dom_host_next
 * (then parsed with sdp_urom_dom_member_unpack_why). Trailing bytes are an error, except zero
 * padding (the OOB exchange pads every record to the longest).
 */
doca_error_t sdp_urom_dom_host_unpack_why(const void *buf, size_t len, uint32_t *count,
					  const uint8_t **raw, size_t *raw_len, char *why,
					  size_t why_size);
int sdp_urom_dom_host_next(const uint8_t *raw, size_t raw_len, size_t *pos,
			   struct sdp_urom_bytes *member);

/* Read the little-endian u64 number i of a gid reply. */
uint64_t sdp_urom_gid_reply_id(const struct sdp_urom_msg *msg, uint32_t i);

/* "HELLO", "W_CMD", ... for logs; "UNKNOWN" otherwise. */
const char *sdp_urom_msg_type_name(uint16_t type);

#endif /* SDP_UROM_PROTO_H_ */

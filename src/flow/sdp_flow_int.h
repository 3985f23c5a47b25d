/*
 * softdpu internal, private to libdoca_flow: the objects behind the DOCA Flow handles and the
 * compiled form of a rule, shared by flow.c (control path) and classify.c (rule compilation,
 * packet parsing, matching, RSS).
 *
 * Locking: one process-wide mutex serialises every control call (init, ports, pipes, entries);
 * each port's rwlock is taken for writing around changes the classifier can see, and for reading
 * by sdp_flow_classify(). So control code holding the global mutex may read port state without
 * the rwlock, and classify never takes the global mutex.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_FLOW_INT_H_
#define SDP_FLOW_INT_H_

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "doca_flow.h"
#include "sdp_list.h"

/* Largest single match field (an IPv6 address). */
#define SDP_FLOW_FIELD_MAX 16
/* Fields one rule can use: every field the classifier knows fits. */
#define SDP_FLOW_RULE_MAX_FIELDS 48
/* Limits checked at configuration time. */
#define SDP_FLOW_MAX_PIPE_QUEUES 1024
#define SDP_FLOW_MAX_RSS_QUEUES 1024

/* Transport kinds found in a packet (bits, so a rule can accept several). */
enum sdp_flow_l4_kind {
	SDP_FLOW_L4K_TCP = 1u << 0,
	SDP_FLOW_L4K_UDP = 1u << 1,
	SDP_FLOW_L4K_ICMP = 1u << 2, /* ICMP or ICMPv6 */
};

/* Network layer a rule requires. */
enum sdp_flow_l3_need {
	SDP_FLOW_L3_ANY = 0,
	SDP_FLOW_L3_IP4,
	SDP_FLOW_L3_IP6,
};

/* One field compared against the parsed packet: (key[off..off+len) & mask) == value. */
struct sdp_flow_field_match {
	uint16_t off; /* offset in struct doca_flow_match */
	uint8_t len;
	uint8_t mask[SDP_FLOW_FIELD_MAX];
	uint8_t value[SDP_FLOW_FIELD_MAX]; /* already masked */
};

struct sdp_flow_rule {
	uint8_t need_l3; /* enum sdp_flow_l3_need */
	uint8_t need_l4; /* OR of enum sdp_flow_l4_kind; 0: anything */
	uint16_t nb_fields;
	struct sdp_flow_field_match *fields; /* nb_fields, owned (sdp_flow_rule_fini) */
};

/* A forward (or miss) action after validation. */
struct sdp_flow_action {
	enum doca_flow_fwd_type type; /* NONE, RSS, PIPE or DROP */
	uint32_t rss_flags;	      /* outer_flags, DOCA_FLOW_RSS_AUTO expanded */
	bool rss_symmetric;
	uint16_t nr_queues;
	uint16_t *queues; /* owned copy of queues_array */
	struct doca_flow_pipe *next_pipe;
};

/*
 * Exact-match index of a basic pipe: the entries whose rule uses the same fields with the same
 * masks as the first one indexed (in practice all of them: the template decides) hash by their
 * values, so a packet costs one hash and one bucket walk however many entries the pipe has.
 */
struct sdp_flow_index {
	struct sdp_flow_rule layout; /* fields, masks and needs; values unused */
	uint32_t nb_buckets;	     /* a power of two */
	uint32_t nb_entries;
	sdp_list_link_t *buckets;
};

struct doca_flow_cfg {
	uint16_t pipe_queues;
	uint32_t nr_counters;
	bool mode_set;
	char mode_args[128];
};

struct doca_flow_port_cfg {
	struct doca_dev *dev;
	uint16_t port_id;
};

struct doca_flow_port {
	uint16_t port_id;
	struct doca_dev *dev;
	uint64_t serial;       /* distinguishes ports that reuse an address */
	bool started;	       /* false once stopped (the object may live on for the engine) */
	unsigned int refs;     /* 1 while started + one per sdp_flow_port_get (global mutex) */
	pthread_rwlock_t lock; /* see the file comment */
	sdp_list_link_t pipes; /* struct doca_flow_pipe.link */
	struct doca_flow_pipe *root;
	uint16_t nb_pending_lists;
	sdp_list_link_t *pending; /* per pipe queue: WAIT_FOR_BATCH entries not yet processed */
	sdp_list_link_t link;	  /* in the list of started ports */
};

struct doca_flow_pipe_cfg {
	struct doca_flow_port *port;
	uint64_t port_serial;
	char *name;
	enum doca_flow_pipe_type type;
	bool is_root;
	bool has_match;
	bool has_mask;
	bool has_monitor;
	struct doca_flow_match match;
	struct doca_flow_match mask;
	struct doca_flow_monitor monitor;
};

struct doca_flow_pipe {
	struct doca_flow_port *port;
	char *name;
	enum doca_flow_pipe_type type;
	bool is_root;
	bool has_mask;
	struct doca_flow_match match; /* template (basic pipes) */
	struct doca_flow_match mask;
	struct sdp_flow_action fwd;	 /* basic: default of the entries; NONE: entries give it */
	struct sdp_flow_action fwd_miss; /* NONE: drop (MISS verdict for the root pipe) */
	sdp_list_link_t entries;	 /* active entries not in index, in matching order */
	struct sdp_flow_index *index;	 /* basic pipes, once an entry was indexed */
	uint64_t next_seq;		 /* order of activation, for basic pipes */
	uint32_t nb_entries;		 /* active and pending */
	uint64_t hits;			 /* atomic */
	uint64_t misses;		 /* atomic */
	sdp_list_link_t link;		 /* in port->pipes */
};

struct doca_flow_pipe_entry {
	struct doca_flow_pipe *pipe;
	uint32_t priority; /* control pipes; 0 first */
	bool active;	   /* in pipe->entries or the index (else in a port pending list) */
	bool indexed;	   /* in a bucket of pipe->index */
	uint32_t hash;	   /* of the rule values, when indexed */
	uint64_t seq;	   /* activation order within a basic pipe */
	bool own_fwd;	   /* fwd holds the entry's own action (else the pipe's is used) */
	struct sdp_flow_action fwd;
	void *usr_ctx;
	uint64_t pkts;	/* atomic */
	uint64_t bytes; /* atomic */
	sdp_list_link_t link;
	struct sdp_flow_rule rule;
};

/* ---- classify.c ------------------------------------------------------------------------------ */

/*
 * Check a pipe's match template (mask may be NULL) for fields the classifier does not
 * implement: DOCA_ERROR_NOT_SUPPORTED (logged, naming the field) or DOCA_SUCCESS.
 */
doca_error_t sdp_flow_template_check(const struct doca_flow_match *match,
				     const struct doca_flow_match *mask, const char *pipe_name);

/*
 * Compile the rule of a basic-pipe entry: the pipe's template and mask, filled in with the
 * entry's values for the template's all-ones fields. entry_match may be NULL.
 */
doca_error_t sdp_flow_rule_compile_basic(const struct doca_flow_pipe *pipe,
					 const struct doca_flow_match *entry_match,
					 struct sdp_flow_rule *rule);

/* Compile the rule of a control-pipe entry (match/mask may be NULL: match everything). */
doca_error_t sdp_flow_rule_compile_control(const struct doca_flow_pipe *pipe,
					   const struct doca_flow_match *match,
					   const struct doca_flow_match *mask,
					   struct sdp_flow_rule *rule);

/*
 * Put an active basic-pipe entry into its pipe's index (creating or growing it); false when the
 * entry does not fit the index (or memory is short): then it goes to pipe->entries. Port write
 * lock held.
 */
bool sdp_flow_index_insert(struct doca_flow_pipe_entry *entry);
/* Take an indexed entry out of its bucket. Port write lock held. */
void sdp_flow_index_remove(struct doca_flow_pipe_entry *entry);
/* Free the index (its entries must be gone). */
void sdp_flow_index_destroy(struct doca_flow_pipe *pipe);

/* Release what a compiled rule owns. */
void sdp_flow_rule_fini(struct sdp_flow_rule *rule);

#endif /* SDP_FLOW_INT_H_ */

/*
 * softdpu DOCA Flow: the software classifier. Rule compilation (which match fields are honoured,
 * how a pipe template and an entry combine), frame parsing, matching and RSS.
 *
 * A parsed frame is laid out as a struct doca_flow_match (its parser_meta and outer members), so
 * a compiled rule is a short list of (offset, mask, value) triples over that layout plus the
 * network and transport kinds it requires.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <arpa/inet.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "doca_flow.h"
#include "sdp_flow.h"
#include "sdp_flow_int.h"
#include "sdp_log.h"
#include "softdpu/flow.h"
#include "softdpu/sdp_pkt.h"

SDP_LOG_COMPONENT("flow");

/* Which header a field belongs to: decides how the l3 and l4 unions are read. */
enum sdp_flow_fgroup {
	SDP_FG_COMMON = 0, /* outside the unions */
	SDP_FG_IP4,
	SDP_FG_IP6,
	SDP_FG_PORTS, /* TCP/UDP/transport ports */
	SDP_FG_TCP,   /* TCP-only fields */
	SDP_FG_ICMP,
	SDP_FG_ROCE, /* known, not supported: only to name it */
};

#define SDP_FG_BIT(g) (1u << (g))

struct sdp_flow_fdesc {
	const char *name;
	uint16_t off;
	uint8_t len;
	uint8_t group;
	bool supported;
};

#define SDP_FM_OFF(member) offsetof(struct doca_flow_match, member)
#define SDP_FM_LEN(member) sizeof(((struct doca_flow_match *)0)->member)
#define SDP_FD(member, group)                                                                      \
	{                                                                                          \
#member, SDP_FM_OFF(member), SDP_FM_LEN(member), group, true                       \
	}
#define SDP_FD_NO(member, group)                                                                   \
	{                                                                                          \
#member, SDP_FM_OFF(member), SDP_FM_LEN(member), group, false                      \
	}

/* Every field of parser_meta and outer, supported or not (the order is the matching order). */
static const struct sdp_flow_fdesc sdp_flow_fields[] = {
	SDP_FD(parser_meta.port_id, SDP_FG_COMMON),
	SDP_FD(parser_meta.outer_l2_type, SDP_FG_COMMON),
	SDP_FD(parser_meta.outer_l3_type, SDP_FG_COMMON),
	SDP_FD(parser_meta.outer_l4_type, SDP_FG_COMMON),
	SDP_FD(parser_meta.outer_ip_fragmented, SDP_FG_COMMON),
	SDP_FD_NO(parser_meta.random, SDP_FG_COMMON),
	SDP_FD_NO(parser_meta.ipsec_syndrome, SDP_FG_COMMON),
	SDP_FD_NO(parser_meta.ipsec_ar_syndrome, SDP_FG_COMMON),
	SDP_FD_NO(parser_meta.psp_syndrome, SDP_FG_COMMON),
	SDP_FD_NO(parser_meta.meter_color, SDP_FG_COMMON),
	SDP_FD_NO(parser_meta.inner_l2_type, SDP_FG_COMMON),
	SDP_FD_NO(parser_meta.inner_l3_type, SDP_FG_COMMON),
	SDP_FD_NO(parser_meta.inner_l4_type, SDP_FG_COMMON),
	SDP_FD_NO(parser_meta.inner_ip_fragmented, SDP_FG_COMMON),
	SDP_FD_NO(parser_meta.outer_l3_ok, SDP_FG_COMMON),
	SDP_FD_NO(parser_meta.outer_ip4_checksum_ok, SDP_FG_COMMON),
	SDP_FD_NO(parser_meta.outer_l4_ok, SDP_FG_COMMON),
	SDP_FD_NO(parser_meta.outer_l4_checksum_ok, SDP_FG_COMMON),
	SDP_FD_NO(parser_meta.inner_l3_ok, SDP_FG_COMMON),
	SDP_FD_NO(parser_meta.inner_ip4_checksum_ok, SDP_FG_COMMON),
	SDP_FD_NO(parser_meta.inner_l4_ok, SDP_FG_COMMON),
	SDP_FD_NO(parser_meta.inner_l4_checksum_ok, SDP_FG_COMMON),
	SDP_FD(outer.eth.src_mac, SDP_FG_COMMON),
	SDP_FD(outer.eth.dst_mac, SDP_FG_COMMON),
	SDP_FD(outer.eth.type, SDP_FG_COMMON),
	SDP_FD(outer.l2_valid_headers, SDP_FG_COMMON),
	SDP_FD(outer.eth_vlan[0].tci, SDP_FG_COMMON),
	SDP_FD_NO(outer.eth_vlan[1].tci, SDP_FG_COMMON),
	SDP_FD(outer.l3_type, SDP_FG_COMMON),
	SDP_FD(outer.l4_type_ext, SDP_FG_COMMON),
	SDP_FD(outer.ip4.src_ip, SDP_FG_IP4),
	SDP_FD(outer.ip4.dst_ip, SDP_FG_IP4),
	SDP_FD(outer.ip4.version_ihl, SDP_FG_IP4),
	SDP_FD(outer.ip4.dscp_ecn, SDP_FG_IP4),
	SDP_FD(outer.ip4.total_len, SDP_FG_IP4),
	SDP_FD(outer.ip4.identification, SDP_FG_IP4),
	SDP_FD(outer.ip4.flags_fragment_offset, SDP_FG_IP4),
	SDP_FD(outer.ip4.next_proto, SDP_FG_IP4),
	SDP_FD(outer.ip4.ttl, SDP_FG_IP4),
	SDP_FD(outer.ip6.src_ip, SDP_FG_IP6),
	SDP_FD(outer.ip6.dst_ip, SDP_FG_IP6),
	SDP_FD(outer.ip6.traffic_class, SDP_FG_IP6),
	SDP_FD(outer.ip6.flow_label, SDP_FG_IP6),
	SDP_FD(outer.ip6.payload_len, SDP_FG_IP6),
	SDP_FD(outer.ip6.next_proto, SDP_FG_IP6),
	SDP_FD(outer.ip6.hop_limit, SDP_FG_IP6),
	SDP_FD(outer.tcp.l4_port.src_port, SDP_FG_PORTS),
	SDP_FD(outer.tcp.l4_port.dst_port, SDP_FG_PORTS),
	SDP_FD(outer.tcp.data_offset, SDP_FG_TCP),
	SDP_FD(outer.tcp.flags, SDP_FG_TCP),
	SDP_FD(outer.tcp.seq_num, SDP_FG_TCP),
	SDP_FD(outer.tcp.ack_num, SDP_FG_TCP),
	SDP_FD(outer.icmp.type, SDP_FG_ICMP),
	SDP_FD(outer.icmp.code, SDP_FG_ICMP),
	SDP_FD(outer.icmp.ident, SDP_FG_ICMP),
	SDP_FD_NO(outer.roce_v2.bth, SDP_FG_ROCE),
};

#define SDP_FLOW_NB_FIELDS (sizeof(sdp_flow_fields) / sizeof(sdp_flow_fields[0]))

/* The unions of struct doca_flow_header_format, as byte ranges of struct doca_flow_match. */
#define SDP_L3U_OFF SDP_FM_OFF(outer.ip4)
#define SDP_L3U_LEN (SDP_FM_OFF(outer.l4_type_ext) - SDP_FM_OFF(outer.ip4))
#define SDP_L4U_OFF SDP_FM_OFF(outer.tcp)
#define SDP_L4U_LEN                                                                                \
	(sizeof(struct doca_flow_header_format) - offsetof(struct doca_flow_header_format, tcp))

static bool flow_bytes_zero(const void *p, size_t len)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++)
		if (b[i] != 0)
			return false;
	return true;
}

static bool flow_bytes_ones(const void *p, size_t len)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++)
		if (b[i] != 0xff)
			return false;
	return true;
}

static uint32_t flow_get_u32(const struct doca_flow_match *m, size_t off)
{
	uint32_t v;

	memcpy(&v, (const uint8_t *)m + off, sizeof(v));
	return v;
}

/* A (value, mask) view of a match: mask NULL means "each nonzero field fully". */
struct sdp_flow_vm {
	const struct doca_flow_match *v;
	const struct doca_flow_match *m; /* may be NULL */
};

/* Is the field at off/len used by vm (for a region outside the field table: bytewise)? */
static bool flow_vm_used(const struct sdp_flow_vm *vm, size_t off, size_t len)
{
	const struct doca_flow_match *src = vm->m != NULL ? vm->m : vm->v;

	return !flow_bytes_zero((const uint8_t *)src + off, len);
}

/* The value of an enum-like 32-bit field when it is used with its full width, else 0. */
static uint32_t flow_vm_exact_u32(const struct sdp_flow_vm *vm, size_t off)
{
	uint32_t v = flow_get_u32(vm->v, off);

	if (vm->m != NULL && flow_get_u32(vm->m, off) != UINT32_MAX)
		return 0;
	if (v == UINT32_MAX) /* changeable in a template: not known yet */
		return 0;
	return v;
}

/* Which network layer the match means (decides how the l3 union is read). */
static enum sdp_flow_l3_need flow_vm_l3(const struct sdp_flow_vm *vm)
{
	uint32_t t = flow_vm_exact_u32(vm, SDP_FM_OFF(outer.l3_type));
	uint32_t meta = flow_vm_exact_u32(vm, SDP_FM_OFF(parser_meta.outer_l3_type));

	if (t == DOCA_FLOW_L3_TYPE_IP6 || meta == DOCA_FLOW_L3_META_IPV6)
		return SDP_FLOW_L3_IP6;
	if (t == DOCA_FLOW_L3_TYPE_IP4 || meta == DOCA_FLOW_L3_META_IPV4)
		return SDP_FLOW_L3_IP4;
	return SDP_FLOW_L3_ANY;
}

/* Which transport the match means: a kind bit, or 0 when it does not say. */
static uint32_t flow_vm_l4(const struct sdp_flow_vm *vm, enum sdp_flow_l3_need l3)
{
	uint32_t ext = flow_vm_exact_u32(vm, SDP_FM_OFF(outer.l4_type_ext));
	uint32_t meta = flow_vm_exact_u32(vm, SDP_FM_OFF(parser_meta.outer_l4_type));
	uint8_t proto = 0;

	switch (ext) {
	case DOCA_FLOW_L4_TYPE_EXT_TCP:
		return SDP_FLOW_L4K_TCP;
	case DOCA_FLOW_L4_TYPE_EXT_UDP:
		return SDP_FLOW_L4K_UDP;
	case DOCA_FLOW_L4_TYPE_EXT_ICMP:
	case DOCA_FLOW_L4_TYPE_EXT_ICMP6:
		return SDP_FLOW_L4K_ICMP;
	case DOCA_FLOW_L4_TYPE_EXT_TRANSPORT:
		return SDP_FLOW_L4K_TCP | SDP_FLOW_L4K_UDP;
	default:
		break;
	}
	switch (meta) {
	case DOCA_FLOW_L4_META_TCP:
		return SDP_FLOW_L4K_TCP;
	case DOCA_FLOW_L4_META_UDP:
		return SDP_FLOW_L4K_UDP;
	case DOCA_FLOW_L4_META_ICMP:
		return SDP_FLOW_L4K_ICMP;
	default:
		break;
	}
	if (l3 != SDP_FLOW_L3_IP6) {
		if (vm->m == NULL || vm->m->outer.ip4.next_proto == 0xff)
			proto = vm->v->outer.ip4.next_proto;
	} else if (vm->m == NULL || vm->m->outer.ip6.next_proto == 0xff) {
		proto = vm->v->outer.ip6.next_proto;
	}
	switch (proto) {
	case DOCA_FLOW_PROTO_TCP:
		return SDP_FLOW_L4K_TCP;
	case DOCA_FLOW_PROTO_UDP:
		return SDP_FLOW_L4K_UDP;
	case DOCA_FLOW_PROTO_ICMP:
	case DOCA_FLOW_PROTO_ICMP6:
		return SDP_FLOW_L4K_ICMP;
	default:
		return 0;
	}
}

/* The field groups the l3 and l4 unions are read as. */
static uint32_t flow_vm_groups(const struct sdp_flow_vm *vm)
{
	enum sdp_flow_l3_need l3 = flow_vm_l3(vm);
	uint32_t l4 = flow_vm_l4(vm, l3);
	uint32_t groups = SDP_FG_BIT(SDP_FG_COMMON);

	groups |= SDP_FG_BIT(l3 == SDP_FLOW_L3_IP6 ? SDP_FG_IP6 : SDP_FG_IP4);
	if (l4 == SDP_FLOW_L4K_ICMP)
		groups |= SDP_FG_BIT(SDP_FG_ICMP);
	else if (l4 == SDP_FLOW_L4K_UDP || l4 == (SDP_FLOW_L4K_TCP | SDP_FLOW_L4K_UDP))
		groups |= SDP_FG_BIT(SDP_FG_PORTS);
	else
		groups |= SDP_FG_BIT(SDP_FG_PORTS) | SDP_FG_BIT(SDP_FG_TCP);
	return groups;
}

/*
 * Bytes of a union region that vm uses but no field of the chosen groups covers: name a field
 * of another group that covers the first such byte.
 */
static const char *flow_union_stray(const struct sdp_flow_vm *vm, size_t off, size_t len,
				    uint32_t groups)
{
	for (size_t b = off; b < off + len; b++) {
		bool covered = false;
		const char *other = NULL;

		if (!flow_vm_used(vm, b, 1))
			continue;
		for (size_t i = 0; i < SDP_FLOW_NB_FIELDS; i++) {
			const struct sdp_flow_fdesc *f = &sdp_flow_fields[i];

			if (b < f->off || b >= (size_t)f->off + f->len)
				continue;
			if (f->supported && (groups & SDP_FG_BIT(f->group)))
				covered = true;
			else if (other == NULL)
				other = f->name;
		}
		if (!covered)
			return other != NULL ? other : "padding of a header union";
	}
	return NULL;
}

/*
 * Refuse what the classifier does not implement, naming the field. what: "pipe <name>
 * template", "entry of pipe <name>" (for messages).
 */
static doca_error_t flow_vm_check(const struct sdp_flow_vm *vm, const char *what,
				  const char *pipe_name)
{
	static const struct doca_flow_match zero;
	const struct doca_flow_match *src = vm->m != NULL ? vm->m : vm->v;
	uint32_t groups, ext;
	const char *stray;

	if (memcmp(&src->meta, &zero.meta, sizeof(zero.meta)) != 0) {
		sdp_error("%s of pipe %s: matching on meta (pkt_meta, u32[]) is not supported by "
			  "the software classifier",
			  what, pipe_name);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (memcmp(&src->tun, &zero.tun, sizeof(zero.tun)) != 0) {
		sdp_error(
			"%s of pipe %s: matching on tunnel fields (tun.*) is not supported by the "
			"software classifier",
			what, pipe_name);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (memcmp(&src->inner, &zero.inner, sizeof(zero.inner)) != 0) {
		sdp_error(
			"%s of pipe %s: matching on inner headers (inner.*) is not supported by the "
			"software classifier",
			what, pipe_name);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	for (size_t i = 0; i < SDP_FLOW_NB_FIELDS; i++) {
		const struct sdp_flow_fdesc *f = &sdp_flow_fields[i];

		if (f->group != SDP_FG_COMMON || f->supported)
			continue;
		if (flow_vm_used(vm, f->off, f->len)) {
			sdp_error("%s of pipe %s: matching on %s is not supported by the software "
				  "classifier",
				  what, pipe_name, f->name);
			return DOCA_ERROR_NOT_SUPPORTED;
		}
	}
	ext = flow_vm_exact_u32(vm, SDP_FM_OFF(outer.l4_type_ext));
	if (ext == DOCA_FLOW_L4_TYPE_EXT_ROCE_V2) {
		sdp_error(
			"%s of pipe %s: outer.l4_type_ext ROCE_V2 is not supported by the software "
			"classifier",
			what, pipe_name);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (ext > DOCA_FLOW_L4_TYPE_EXT_ROCE_V2) {
		sdp_error("%s of pipe %s: outer.l4_type_ext %u is not a doca_flow_l4_type_ext",
			  what, pipe_name, ext);
		return DOCA_ERROR_INVALID_VALUE;
	}
	groups = flow_vm_groups(vm);
	stray = flow_union_stray(vm, SDP_L3U_OFF, SDP_L3U_LEN, groups);
	if (stray == NULL)
		stray = flow_union_stray(vm, SDP_L4U_OFF, SDP_L4U_LEN, groups);
	if (stray != NULL) {
		sdp_error("%s of pipe %s: matching on %s is not supported with this match's l3/l4 "
			  "types by the software classifier",
			  what, pipe_name, stray);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	return DOCA_SUCCESS;
}

doca_error_t sdp_flow_template_check(const struct doca_flow_match *match,
				     const struct doca_flow_match *mask, const char *pipe_name)
{
	struct sdp_flow_vm vm = {match, mask};

	return flow_vm_check(&vm, "match template", pipe_name);
}

/*
 * Build the rule from a full (value, mask) pair that passed flow_vm_check(), then give it
 * its own copy of the fields it uses.
 */
static doca_error_t flow_rule_build(const struct doca_flow_match *v,
				    const struct doca_flow_match *m, uint32_t groups,
				    struct sdp_flow_rule *rule)
{
	struct sdp_flow_field_match tmp[SDP_FLOW_RULE_MAX_FIELDS];
	uint32_t ext = flow_get_u32(v, SDP_FM_OFF(outer.l4_type_ext)) &
		       flow_get_u32(m, SDP_FM_OFF(outer.l4_type_ext));
	bool want_tcp = false, want_ports = false, want_icmp = false;

	memset(rule, 0, sizeof(*rule));
	for (size_t i = 0; i < SDP_FLOW_NB_FIELDS; i++) {
		const struct sdp_flow_fdesc *f = &sdp_flow_fields[i];
		const uint8_t *mb = (const uint8_t *)m + f->off;
		const uint8_t *vb = (const uint8_t *)v + f->off;
		struct sdp_flow_field_match *fm;

		if (!f->supported || !(groups & SDP_FG_BIT(f->group)) ||
		    flow_bytes_zero(mb, f->len))
			continue;
		if (f->off == SDP_FM_OFF(outer.l4_type_ext) &&
		    ext == DOCA_FLOW_L4_TYPE_EXT_TRANSPORT) {
			/* no packet "is" TRANSPORT: it means TCP or UDP */
			want_ports = true;
			continue;
		}
		switch (f->group) {
		case SDP_FG_IP4:
			rule->need_l3 = SDP_FLOW_L3_IP4;
			break;
		case SDP_FG_IP6:
			rule->need_l3 = SDP_FLOW_L3_IP6;
			break;
		case SDP_FG_PORTS:
			want_ports = true;
			break;
		case SDP_FG_TCP:
			want_tcp = true;
			break;
		case SDP_FG_ICMP:
			want_icmp = true;
			break;
		default:
			break;
		}
		fm = &tmp[rule->nb_fields++];
		fm->off = f->off;
		fm->len = f->len;
		for (size_t b = 0; b < f->len; b++) {
			fm->mask[b] = mb[b];
			fm->value[b] = vb[b] & mb[b];
		}
	}
	if (want_icmp) {
		rule->need_l4 = SDP_FLOW_L4K_ICMP;
	} else if (want_tcp) {
		rule->need_l4 = SDP_FLOW_L4K_TCP;
	} else if (want_ports) {
		/* ports alone: the transport the match names, else TCP or UDP */
		struct sdp_flow_vm vm = {v, m};
		uint32_t l4 = flow_vm_l4(&vm, flow_vm_l3(&vm));

		rule->need_l4 = (l4 == SDP_FLOW_L4K_TCP || l4 == SDP_FLOW_L4K_UDP) ?
					l4 :
					(SDP_FLOW_L4K_TCP | SDP_FLOW_L4K_UDP);
	}
	if (rule->nb_fields == 0)
		return DOCA_SUCCESS;
	rule->fields = malloc(sizeof(*rule->fields) * rule->nb_fields);
	if (rule->fields == NULL) {
		sdp_error("failed to allocate the %u fields of a rule", rule->nb_fields);
		rule->nb_fields = 0;
		return DOCA_ERROR_NO_MEMORY;
	}
	memcpy(rule->fields, tmp, sizeof(*rule->fields) * rule->nb_fields);
	return DOCA_SUCCESS;
}

/*
 * The mask a NULL mask stands for: every field of the chosen groups that is nonzero in v, in
 * full (only those groups: the fields of the others overlap them in the unions).
 */
static void flow_mask_from_value(const struct doca_flow_match *v, uint32_t groups,
				 struct doca_flow_match *m)
{
	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < SDP_FLOW_NB_FIELDS; i++) {
		const struct sdp_flow_fdesc *f = &sdp_flow_fields[i];

		if (f->supported && (groups & SDP_FG_BIT(f->group)) &&
		    !flow_bytes_zero((const uint8_t *)v + f->off, f->len))
			memset((uint8_t *)m + f->off, 0xff, f->len);
	}
}

doca_error_t sdp_flow_rule_compile_control(const struct doca_flow_pipe *pipe,
					   const struct doca_flow_match *match,
					   const struct doca_flow_match *mask,
					   struct sdp_flow_rule *rule)
{
	static const struct doca_flow_match zero;
	struct doca_flow_match derived;
	struct sdp_flow_vm vm;
	doca_error_t status;
	uint32_t groups;

	if (match == NULL)
		match = &zero;
	vm.v = match;
	vm.m = mask;
	status = flow_vm_check(&vm, "entry", pipe->name);
	if (status != DOCA_SUCCESS)
		return status;
	groups = flow_vm_groups(&vm);
	if (mask == NULL) {
		flow_mask_from_value(match, groups, &derived);
		mask = &derived;
	}
	return flow_rule_build(match, mask, groups, rule);
}

doca_error_t sdp_flow_rule_compile_basic(const struct doca_flow_pipe *pipe,
					 const struct doca_flow_match *entry_match,
					 struct sdp_flow_rule *rule)
{
	static const struct doca_flow_match zero;
	struct doca_flow_match v, m;
	struct sdp_flow_vm tvm = {&pipe->match, pipe->has_mask ? &pipe->mask : NULL};
	struct sdp_flow_vm evm = {entry_match != NULL ? entry_match : &zero, NULL};
	struct sdp_flow_vm vm = {&v, &m};
	uint32_t groups = flow_vm_groups(&tvm);
	doca_error_t status;

	/* what the entry itself carries must be implementable too */
	status = flow_vm_check(&evm, "entry", pipe->name);
	if (status != DOCA_SUCCESS)
		return status;

	memset(&v, 0, sizeof(v));
	memset(&m, 0, sizeof(m));
	for (size_t i = 0; i < SDP_FLOW_NB_FIELDS; i++) {
		const struct sdp_flow_fdesc *f = &sdp_flow_fields[i];
		const uint8_t *tb = (const uint8_t *)&pipe->match + f->off;
		const uint8_t *eb = (const uint8_t *)evm.v + f->off;

		if (!f->supported || !(groups & SDP_FG_BIT(f->group)))
			continue;
		if (pipe->has_mask)
			memcpy((uint8_t *)&m + f->off, (const uint8_t *)&pipe->mask + f->off,
			       f->len);
		else if (!flow_bytes_zero(tb, f->len))
			memset((uint8_t *)&m + f->off, 0xff, f->len);
		/* an all-ones template field is given by each entry */
		memcpy((uint8_t *)&v + f->off, flow_bytes_ones(tb, f->len) ? eb : tb, f->len);
	}
	status = flow_vm_check(&vm, "entry", pipe->name);
	if (status != DOCA_SUCCESS)
		return status;
	return flow_rule_build(&v, &m, flow_vm_groups(&vm), rule);
}

void sdp_flow_rule_fini(struct sdp_flow_rule *rule)
{
	free(rule->fields);
	rule->fields = NULL;
	rule->nb_fields = 0;
}

/* ---- exact-match index of basic pipes -------------------------------------------------------- */

#define SDP_FLOW_INDEX_MIN_BUCKETS 256u
#define SDP_FLOW_INDEX_MAX_BUCKETS (1u << 22)

/* FNV-1a over the masked bytes of the layout's fields: of a rule's values or of a packet key. */
static uint32_t flow_index_hash(const struct sdp_flow_rule *layout, const uint8_t *key,
				const struct sdp_flow_rule *values)
{
	uint32_t h = 2166136261u;

	for (uint16_t i = 0; i < layout->nb_fields; i++) {
		const struct sdp_flow_field_match *f = &layout->fields[i];

		for (uint8_t b = 0; b < f->len; b++) {
			uint8_t byte = values != NULL ? values->fields[i].value[b] :
							(uint8_t)(key[f->off + b] & f->mask[b]);

			h = (h ^ byte) * 16777619u;
		}
	}
	return h;
}

static bool flow_rule_same_layout(const struct sdp_flow_rule *a, const struct sdp_flow_rule *b)
{
	if (a->need_l3 != b->need_l3 || a->need_l4 != b->need_l4 || a->nb_fields != b->nb_fields)
		return false;
	for (uint16_t i = 0; i < a->nb_fields; i++) {
		const struct sdp_flow_field_match *x = &a->fields[i], *y = &b->fields[i];

		if (x->off != y->off || x->len != y->len || memcmp(x->mask, y->mask, x->len) != 0)
			return false;
	}
	return true;
}

static sdp_list_link_t *flow_index_buckets_new(uint32_t n)
{
	sdp_list_link_t *b = malloc(sizeof(*b) * n);

	if (b == NULL)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		sdp_list_head_init(&b[i]);
	return b;
}

static struct sdp_flow_index *flow_index_create(const struct sdp_flow_rule *layout)
{
	struct sdp_flow_index *idx = calloc(1, sizeof(*idx));

	if (idx == NULL)
		return NULL;
	idx->layout = *layout;
	idx->layout.fields = malloc(sizeof(*layout->fields) * layout->nb_fields);
	idx->buckets = flow_index_buckets_new(SDP_FLOW_INDEX_MIN_BUCKETS);
	if (idx->layout.fields == NULL || idx->buckets == NULL) {
		free(idx->layout.fields);
		free(idx->buckets);
		free(idx);
		return NULL;
	}
	memcpy(idx->layout.fields, layout->fields, sizeof(*layout->fields) * layout->nb_fields);
	idx->nb_buckets = SDP_FLOW_INDEX_MIN_BUCKETS;
	return idx;
}

/* Double the buckets once entries outnumber them twice; order within a bucket is kept. */
static void flow_index_grow(struct sdp_flow_index *idx)
{
	uint32_t n = idx->nb_buckets * 2;
	sdp_list_link_t *nb;

	if (idx->nb_entries <= 2 * idx->nb_buckets || n > SDP_FLOW_INDEX_MAX_BUCKETS)
		return;
	nb = flow_index_buckets_new(n);
	if (nb == NULL) {
		sdp_debug("cannot grow a flow index to %u buckets; keeping %u", n, idx->nb_buckets);
		return;
	}
	for (uint32_t i = 0; i < idx->nb_buckets; i++) {
		while (!sdp_list_is_empty(&idx->buckets[i])) {
			struct doca_flow_pipe_entry *e = sdp_container_of(
				idx->buckets[i].next, struct doca_flow_pipe_entry, link);

			sdp_list_del(&e->link);
			sdp_list_add_tail(&nb[e->hash & (n - 1)], &e->link);
		}
	}
	free(idx->buckets);
	idx->buckets = nb;
	idx->nb_buckets = n;
	sdp_debug("flow index of %u entries grown to %u buckets", idx->nb_entries, n);
}

bool sdp_flow_index_insert(struct doca_flow_pipe_entry *entry)
{
	struct doca_flow_pipe *pipe = entry->pipe;
	struct sdp_flow_index *idx = pipe->index;

	if (entry->rule.nb_fields == 0)
		return false; /* matches everything: nothing to hash */
	if (idx == NULL) {
		idx = flow_index_create(&entry->rule);
		if (idx == NULL) {
			sdp_debug("pipe %s: no memory for an index; its entries are tried in order",
				  pipe->name);
			return false;
		}
		pipe->index = idx;
	}
	if (!flow_rule_same_layout(&idx->layout, &entry->rule))
		return false;
	entry->hash = flow_index_hash(&idx->layout, NULL, &entry->rule);
	sdp_list_add_tail(&idx->buckets[entry->hash & (idx->nb_buckets - 1)], &entry->link);
	entry->indexed = true;
	idx->nb_entries++;
	flow_index_grow(idx);
	return true;
}

void sdp_flow_index_remove(struct doca_flow_pipe_entry *entry)
{
	sdp_list_del(&entry->link);
	entry->indexed = false;
	entry->pipe->index->nb_entries--;
}

void sdp_flow_index_destroy(struct doca_flow_pipe *pipe)
{
	struct sdp_flow_index *idx = pipe->index;

	if (idx == NULL)
		return;
	sdp_flow_rule_fini(&idx->layout);
	free(idx->buckets);
	free(idx);
	pipe->index = NULL;
}

/* ---- parsing --------------------------------------------------------------------------------- */

/* A parsed frame: the match layout plus what the classifier needs besides. */
struct sdp_flow_pkt {
	struct doca_flow_match key; /* only parser_meta and outer are filled */
	uint8_t l3;		    /* enum sdp_flow_l3_need: IP4, IP6 or ANY (none) */
	uint8_t l4;		    /* one enum sdp_flow_l4_kind bit, or 0 */
};

static void flow_parse_l4(struct sdp_flow_pkt *pkt, uint8_t proto, const uint8_t *l4,
			  uint32_t avail, bool ip6)
{
	struct doca_flow_header_format *o = &pkt->key.outer;

	switch (proto) {
	case DOCA_FLOW_PROTO_TCP:
		if (avail < SDP_PKT_TCP_HLEN)
			return;
		memcpy(&o->tcp.l4_port.src_port, l4 + SDP_PKT_TCP_SPORT, 2);
		memcpy(&o->tcp.l4_port.dst_port, l4 + SDP_PKT_TCP_DPORT, 2);
		memcpy(&o->tcp.seq_num, l4 + SDP_PKT_TCP_SEQ, 4);
		memcpy(&o->tcp.ack_num, l4 + SDP_PKT_TCP_ACK, 4);
		o->tcp.data_offset = l4[SDP_PKT_TCP_DATA_OFF];
		o->tcp.flags = l4[SDP_PKT_TCP_FLAGS];
		o->l4_type_ext = DOCA_FLOW_L4_TYPE_EXT_TCP;
		pkt->key.parser_meta.outer_l4_type = DOCA_FLOW_L4_META_TCP;
		pkt->l4 = SDP_FLOW_L4K_TCP;
		break;
	case DOCA_FLOW_PROTO_UDP:
		if (avail < SDP_PKT_UDP_HLEN)
			return;
		memcpy(&o->udp.l4_port.src_port, l4 + SDP_PKT_UDP_SPORT, 2);
		memcpy(&o->udp.l4_port.dst_port, l4 + SDP_PKT_UDP_DPORT, 2);
		o->l4_type_ext = DOCA_FLOW_L4_TYPE_EXT_UDP;
		pkt->key.parser_meta.outer_l4_type = DOCA_FLOW_L4_META_UDP;
		pkt->l4 = SDP_FLOW_L4K_UDP;
		break;
	case DOCA_FLOW_PROTO_ICMP:
	case DOCA_FLOW_PROTO_ICMP6:
		if ((proto == DOCA_FLOW_PROTO_ICMP) == ip6 || avail < 4)
			return;
		o->icmp.type = l4[0];
		o->icmp.code = l4[1];
		if (avail >= 6)
			memcpy(&o->icmp.ident, l4 + 4, 2);
		o->l4_type_ext = ip6 ? DOCA_FLOW_L4_TYPE_EXT_ICMP6 : DOCA_FLOW_L4_TYPE_EXT_ICMP;
		pkt->key.parser_meta.outer_l4_type = DOCA_FLOW_L4_META_ICMP;
		pkt->l4 = SDP_FLOW_L4K_ICMP;
		break;
	case DOCA_FLOW_PROTO_ESP:
		pkt->key.parser_meta.outer_l4_type = DOCA_FLOW_L4_META_ESP;
		break;
	default:
		break;
	}
}

/* Parse Ethernet, one VLAN tag, IPv4 or IPv6 (no extension headers), then TCP/UDP/ICMP. */
static void flow_parse(const uint8_t *frame, uint32_t len, uint16_t port_id,
		       struct sdp_flow_pkt *pkt)
{
	struct doca_flow_header_format *o = &pkt->key.outer;
	struct doca_flow_parser_meta *pm = &pkt->key.parser_meta;
	uint32_t off = SDP_PKT_ETH_HLEN;
	uint16_t type;

	memset(pm, 0, sizeof(*pm));
	memset(o, 0, sizeof(*o));
	pkt->l3 = SDP_FLOW_L3_ANY;
	pkt->l4 = 0;
	pm->port_id = port_id;
	if (len < SDP_PKT_ETH_HLEN)
		return;
	memcpy(o->eth.dst_mac, frame + SDP_PKT_ETH_DST, 6);
	memcpy(o->eth.src_mac, frame + SDP_PKT_ETH_SRC, 6);
	type = sdp_pkt_get16(frame + SDP_PKT_ETH_TYPE);
	if (type == DOCA_FLOW_ETHER_TYPE_VLAN || type == DOCA_FLOW_ETHER_TYPE_QINQ) {
		if (len < off + SDP_PKT_VLAN_HLEN)
			return;
		memcpy(&o->eth_vlan[0].tci, frame + off, 2);
		o->l2_valid_headers = DOCA_FLOW_L2_VALID_HEADER_VLAN_0;
		pm->outer_l2_type = DOCA_FLOW_L2_META_SINGLE_VLAN;
		type = sdp_pkt_get16(frame + off + 2);
		off += SDP_PKT_VLAN_HLEN;
		if (type == DOCA_FLOW_ETHER_TYPE_VLAN || type == DOCA_FLOW_ETHER_TYPE_QINQ) {
			/* a second tag: counted, not parsed through */
			pm->outer_l2_type = DOCA_FLOW_L2_META_MULTI_VLAN;
			o->eth.type = htons(type);
			return;
		}
	}
	o->eth.type = htons(type);
	if (type == DOCA_FLOW_ETHER_TYPE_IPV4) {
		const uint8_t *ip = frame + off;
		uint32_t ihl;
		uint16_t frag;

		if (len < off + SDP_PKT_IP4_HLEN || (ip[0] >> 4) != 4)
			return;
		ihl = sdp_pkt_ip4_hlen(ip);
		if (ihl < SDP_PKT_IP4_HLEN || len < off + ihl)
			return;
		o->ip4.version_ihl = ip[SDP_PKT_IP4_VER_IHL];
		o->ip4.dscp_ecn = ip[SDP_PKT_IP4_TOS];
		memcpy(&o->ip4.total_len, ip + SDP_PKT_IP4_TOTAL_LEN, 2);
		memcpy(&o->ip4.identification, ip + SDP_PKT_IP4_ID, 2);
		memcpy(&o->ip4.flags_fragment_offset, ip + SDP_PKT_IP4_FRAG, 2);
		o->ip4.ttl = ip[SDP_PKT_IP4_TTL];
		o->ip4.next_proto = ip[SDP_PKT_IP4_PROTO];
		memcpy(&o->ip4.src_ip, ip + SDP_PKT_IP4_SRC, 4);
		memcpy(&o->ip4.dst_ip, ip + SDP_PKT_IP4_DST, 4);
		o->l3_type = DOCA_FLOW_L3_TYPE_IP4;
		pm->outer_l3_type = DOCA_FLOW_L3_META_IPV4;
		pkt->l3 = SDP_FLOW_L3_IP4;
		frag = sdp_pkt_get16(ip + SDP_PKT_IP4_FRAG);
		if (frag & (SDP_PKT_IP4_MF | SDP_PKT_IP4_FRAG_OFF))
			pm->outer_ip_fragmented = 1;
		/* only the first fragment carries the transport header */
		if ((frag & SDP_PKT_IP4_FRAG_OFF) == 0)
			flow_parse_l4(pkt, ip[SDP_PKT_IP4_PROTO], ip + ihl, len - off - ihl, false);
	} else if (type == DOCA_FLOW_ETHER_TYPE_IPV6) {
		const uint8_t *ip = frame + off;
		uint32_t flow;

		if (len < off + SDP_PKT_IP6_HLEN || (ip[0] >> 4) != 6)
			return;
		o->ip6.traffic_class = (uint8_t)(((ip[0] & 0xf) << 4) | (ip[1] >> 4));
		flow = htonl(((uint32_t)(ip[1] & 0xf) << 16) | ((uint32_t)ip[2] << 8) | ip[3]);
		o->ip6.flow_label = flow;
		memcpy(&o->ip6.payload_len, ip + SDP_PKT_IP6_PAYLOAD_LEN, 2);
		o->ip6.next_proto = ip[SDP_PKT_IP6_NEXT];
		o->ip6.hop_limit = ip[SDP_PKT_IP6_HOP_LIMIT];
		memcpy(o->ip6.src_ip, ip + SDP_PKT_IP6_SRC, 16);
		memcpy(o->ip6.dst_ip, ip + SDP_PKT_IP6_DST, 16);
		o->l3_type = DOCA_FLOW_L3_TYPE_IP6;
		pm->outer_l3_type = DOCA_FLOW_L3_META_IPV6;
		pkt->l3 = SDP_FLOW_L3_IP6;
		flow_parse_l4(pkt, ip[SDP_PKT_IP6_NEXT], ip + SDP_PKT_IP6_HLEN,
			      len - off - SDP_PKT_IP6_HLEN, true);
	}
}

static bool flow_rule_matches_needs(const struct sdp_flow_rule *rule,
				    const struct sdp_flow_pkt *pkt)
{
	if (rule->need_l3 != SDP_FLOW_L3_ANY && rule->need_l3 != pkt->l3)
		return false;
	return rule->need_l4 == 0 || (rule->need_l4 & pkt->l4);
}

static bool flow_rule_matches(const struct sdp_flow_rule *rule, const struct sdp_flow_pkt *pkt)
{
	const uint8_t *key = (const uint8_t *)&pkt->key;

	if (!flow_rule_matches_needs(rule, pkt))
		return false;
	for (uint16_t i = 0; i < rule->nb_fields; i++) {
		const struct sdp_flow_field_match *f = &rule->fields[i];

		for (uint8_t b = 0; b < f->len; b++)
			if ((key[f->off + b] & f->mask[b]) != f->value[b])
				return false;
	}
	return true;
}

/*
 * The entry of pipe that pkt matches: the first listed one that matches, unless the index holds
 * a match activated earlier (basic pipes keep the order in which entries took effect).
 */
static struct doca_flow_pipe_entry *flow_pipe_lookup(const struct doca_flow_pipe *pipe,
						     const struct sdp_flow_pkt *pkt)
{
	const struct sdp_flow_index *idx = pipe->index;
	struct doca_flow_pipe_entry *e, *found = NULL;

	if (idx != NULL && idx->nb_entries > 0 && flow_rule_matches_needs(&idx->layout, pkt)) {
		uint32_t h = flow_index_hash(&idx->layout, (const uint8_t *)&pkt->key, NULL);

		sdp_list_for_each(e, &idx->buckets[h & (idx->nb_buckets - 1)], link) {
			if (e->hash == h && flow_rule_matches(&e->rule, pkt)) {
				found = e;
				break;
			}
		}
	}
	sdp_list_for_each(e, &pipe->entries, link) {
		if (found != NULL && e->seq > found->seq)
			break;
		if (flow_rule_matches(&e->rule, pkt))
			return e;
	}
	return found;
}

/* ---- RSS ------------------------------------------------------------------------------------- */

/* The usual 40-byte Toeplitz key of RSS implementations. */
static const uint8_t sdp_flow_rss_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

static uint32_t flow_toeplitz(const uint8_t *in, size_t len)
{
	uint32_t hash = 0;
	uint32_t window = ((uint32_t)sdp_flow_rss_key[0] << 24) |
			  ((uint32_t)sdp_flow_rss_key[1] << 16) |
			  ((uint32_t)sdp_flow_rss_key[2] << 8) | sdp_flow_rss_key[3];

	for (size_t i = 0; i < len; i++) {
		for (int bit = 7; bit >= 0; bit--) {
			if (in[i] & (1u << bit))
				hash ^= window;
			window <<= 1;
			/* bring in the next key bit */
			if (i + 4 < sizeof(sdp_flow_rss_key) &&
			    (sdp_flow_rss_key[i + 4] & (1u << bit)))
				window |= 1;
		}
	}
	return hash;
}

/* Append a (src, dst) pair of n bytes each, in ascending order when symmetric. */
static size_t flow_rss_pair(uint8_t *buf, size_t pos, const void *src, const void *dst, size_t n,
			    bool use_src, bool use_dst, bool symmetric)
{
	if (symmetric && use_src && use_dst && memcmp(src, dst, n) > 0) {
		const void *t = src;

		src = dst;
		dst = t;
	}
	if (use_src) {
		memcpy(buf + pos, src, n);
		pos += n;
	}
	if (use_dst) {
		memcpy(buf + pos, dst, n);
		pos += n;
	}
	return pos;
}

static uint16_t flow_rss_pick(const struct sdp_flow_action *act, const struct sdp_flow_pkt *pkt)
{
	const struct doca_flow_header_format *o = &pkt->key.outer;
	uint32_t fl = act->rss_flags;
	uint8_t buf[36];
	size_t pos = 0;

	if (act->nr_queues == 1)
		return act->queues[0];
	if (pkt->l3 == SDP_FLOW_L3_IP4)
		pos = flow_rss_pair(buf, pos, &o->ip4.src_ip, &o->ip4.dst_ip, 4,
				    fl & (DOCA_FLOW_RSS_IPV4 | DOCA_FLOW_RSS_IPV4_SRC),
				    fl & (DOCA_FLOW_RSS_IPV4 | DOCA_FLOW_RSS_IPV4_DST),
				    act->rss_symmetric);
	else if (pkt->l3 == SDP_FLOW_L3_IP6)
		pos = flow_rss_pair(buf, pos, o->ip6.src_ip, o->ip6.dst_ip, 16,
				    fl & (DOCA_FLOW_RSS_IPV6 | DOCA_FLOW_RSS_IPV6_SRC),
				    fl & (DOCA_FLOW_RSS_IPV6 | DOCA_FLOW_RSS_IPV6_DST),
				    act->rss_symmetric);
	if (pkt->l4 == SDP_FLOW_L4K_TCP)
		pos = flow_rss_pair(buf, pos, &o->tcp.l4_port.src_port, &o->tcp.l4_port.dst_port, 2,
				    fl & (DOCA_FLOW_RSS_TCP | DOCA_FLOW_RSS_TCP_SRC),
				    fl & (DOCA_FLOW_RSS_TCP | DOCA_FLOW_RSS_TCP_DST),
				    act->rss_symmetric);
	else if (pkt->l4 == SDP_FLOW_L4K_UDP)
		pos = flow_rss_pair(buf, pos, &o->udp.l4_port.src_port, &o->udp.l4_port.dst_port, 2,
				    fl & (DOCA_FLOW_RSS_UDP | DOCA_FLOW_RSS_UDP_SRC),
				    fl & (DOCA_FLOW_RSS_UDP | DOCA_FLOW_RSS_UDP_DST),
				    act->rss_symmetric);
	if (pos == 0)
		return act->queues[0];
	return act->queues[flow_toeplitz(buf, pos) % act->nr_queues];
}

/* ---- classification -------------------------------------------------------------------------- */

static void flow_add(uint64_t *counter, uint64_t n)
{
	__atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

int sdp_flow_classify(struct doca_flow_port *port, const uint8_t *frame, uint32_t len,
		      uint16_t *queue_id)
{
	struct sdp_flow_pkt pkt;
	struct doca_flow_pipe *pipe;
	int verdict = SDP_FLOW_DROP;

	if (port == NULL || queue_id == NULL || (frame == NULL && len != 0))
		return SDP_FLOW_NO_RULES;
	pthread_rwlock_rdlock(&port->lock);
	pipe = port->root;
	if (!port->started || pipe == NULL) {
		pthread_rwlock_unlock(&port->lock);
		return SDP_FLOW_NO_RULES;
	}
	flow_parse(frame, len, port->port_id, &pkt);
	for (int hop = 0; hop < SDP_FLOW_MAX_HOPS; hop++) {
		const struct sdp_flow_action *act = NULL;
		struct doca_flow_pipe_entry *entry;

		entry = flow_pipe_lookup(pipe, &pkt);
		if (entry != NULL) {
			flow_add(&entry->pkts, 1);
			flow_add(&entry->bytes, len);
			flow_add(&pipe->hits, 1);
			act = entry->own_fwd ? &entry->fwd : &pipe->fwd;
		}
		if (act == NULL) {
			flow_add(&pipe->misses, 1);
			act = &pipe->fwd_miss;
			if (act->type == DOCA_FLOW_FWD_NONE) {
				verdict = pipe == port->root ? SDP_FLOW_MISS : SDP_FLOW_DROP;
				goto out;
			}
		}
		switch (act->type) {
		case DOCA_FLOW_FWD_RSS:
			*queue_id = flow_rss_pick(act, &pkt);
			verdict = SDP_FLOW_FORWARD;
			goto out;
		case DOCA_FLOW_FWD_PIPE:
			pipe = act->next_pipe;
			break;
		default: /* DROP, or a forward removed with its pipe */
			verdict = SDP_FLOW_DROP;
			goto out;
		}
	}
	sdp_trace("port %u: frame dropped after %d pipe hops (a forwarding loop?)", port->port_id,
		  SDP_FLOW_MAX_HOPS);
	verdict = SDP_FLOW_DROP;
out:
	pthread_rwlock_unlock(&port->lock);
	return verdict;
}

/* ---- counters (include/softdpu/flow.h) -------------------------------------------------------- */

doca_error_t sdp_flow_pipe_get_hits(const struct doca_flow_pipe *pipe, uint64_t *hits_p,
				    uint64_t *misses_p)
{
	if (pipe == NULL) {
		sdp_error("NULL pipe");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (hits_p != NULL)
		*hits_p = __atomic_load_n(&pipe->hits, __ATOMIC_RELAXED);
	if (misses_p != NULL)
		*misses_p = __atomic_load_n(&pipe->misses, __ATOMIC_RELAXED);
	return DOCA_SUCCESS;
}

doca_error_t sdp_flow_entry_get_hits(const struct doca_flow_pipe_entry *entry, uint64_t *pkts_p,
				     uint64_t *bytes_p)
{
	if (entry == NULL) {
		sdp_error("NULL entry");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (pkts_p != NULL)
		*pkts_p = __atomic_load_n(&entry->pkts, __ATOMIC_RELAXED);
	if (bytes_p != NULL)
		*bytes_p = __atomic_load_n(&entry->bytes, __ATOMIC_RELAXED);
	return DOCA_SUCCESS;
}

/* ---- steering summary (sdp_flow.h) ------------------------------------------------------------ */

/* Add one key unless already there; false when the summary is full (then it becomes `all`). */
static bool steer_key_add(struct sdp_eth_steer *s, uint16_t ethertype, uint8_t proto,
			  uint16_t dport)
{
	for (uint32_t i = 0; i < s->nb_keys; i++) {
		const struct sdp_eth_steer_key *k = &s->keys[i];

		if (k->ethertype == ethertype && k->ip_proto == proto && k->dst_port == dport)
			return true;
	}
	if (s->nb_keys == SDP_ETH_STEER_MAX_KEYS)
		return false;
	s->keys[s->nb_keys++] = (struct sdp_eth_steer_key){
		.ethertype = ethertype, .ip_proto = proto, .dst_port = dport};
	return true;
}

/* The exact value of a 2-byte (network order) field the rule compares in full, or 0. */
static uint16_t steer_rule_u16(const struct sdp_flow_rule *r, size_t off)
{
	for (uint16_t i = 0; i < r->nb_fields; i++) {
		const struct sdp_flow_field_match *f = &r->fields[i];

		if (f->off == off && f->len == 2 && f->mask[0] == 0xff && f->mask[1] == 0xff)
			return (uint16_t)(f->value[0] << 8 | f->value[1]);
	}
	return 0;
}

/*
 * The value of an enum field (host order u32) the rule pins down: compared in full, or with the
 * value as its own mask (DOCA's samples pass one struct as match and mask; no other value of
 * these small enums passes such a mask). 0 when the rule leaves it open.
 */
static uint32_t steer_rule_enum(const struct sdp_flow_rule *r, size_t off)
{
	for (uint16_t i = 0; i < r->nb_fields; i++) {
		const struct sdp_flow_field_match *f = &r->fields[i];
		uint32_t v, m;

		if (f->off != off || f->len != 4)
			continue;
		memcpy(&v, f->value, 4);
		memcpy(&m, f->mask, 4);
		return m == UINT32_MAX || m == v ? v : 0;
	}
	return 0;
}

/* The IP protocol field, compared in full, or 0. */
static uint8_t steer_rule_proto(const struct sdp_flow_rule *r)
{
	for (uint16_t i = 0; i < r->nb_fields; i++) {
		const struct sdp_flow_field_match *f = &r->fields[i];

		if ((f->off == SDP_FM_OFF(outer.ip4.next_proto) ||
		     f->off == SDP_FM_OFF(outer.ip6.next_proto)) &&
		    f->len == 1 && f->mask[0] == 0xff)
			return f->value[0];
	}
	return 0;
}

/*
 * The keys of one rule: a superset of the frames it accepts (fields the keys cannot express,
 * addresses among them, are left to the engine's classification). False when the summary is
 * full.
 */
static bool steer_rule(struct sdp_eth_steer *s, const struct sdp_flow_rule *r)
{
	uint32_t l3t = steer_rule_enum(r, SDP_FM_OFF(outer.l3_type));
	uint32_t l3m = steer_rule_enum(r, SDP_FM_OFF(parser_meta.outer_l3_type));
	uint32_t l4m = steer_rule_enum(r, SDP_FM_OFF(parser_meta.outer_l4_type));
	uint32_t ext = steer_rule_enum(r, SDP_FM_OFF(outer.l4_type_ext));
	uint16_t etype = 0, dport = steer_rule_u16(r, SDP_FM_OFF(outer.tcp.l4_port.dst_port));
	uint32_t l4 = r->need_l4;
	uint8_t proto = 0;
	bool ok = true;

	if (r->need_l3 == SDP_FLOW_L3_IP4 || l3t == DOCA_FLOW_L3_TYPE_IP4 ||
	    l3m == DOCA_FLOW_L3_META_IPV4)
		etype = SDP_PKT_ETHERTYPE_IPV4;
	else if (r->need_l3 == SDP_FLOW_L3_IP6 || l3t == DOCA_FLOW_L3_TYPE_IP6 ||
		 l3m == DOCA_FLOW_L3_META_IPV6)
		etype = SDP_PKT_ETHERTYPE_IPV6;
	else
		etype = steer_rule_u16(r, SDP_FM_OFF(outer.eth.type));
	if (l4 == 0) {
		if (l4m == DOCA_FLOW_L4_META_TCP || ext == DOCA_FLOW_L4_TYPE_EXT_TCP)
			l4 = SDP_FLOW_L4K_TCP;
		else if (l4m == DOCA_FLOW_L4_META_UDP || ext == DOCA_FLOW_L4_TYPE_EXT_UDP)
			l4 = SDP_FLOW_L4K_UDP;
		else if (l4m == DOCA_FLOW_L4_META_ICMP || ext == DOCA_FLOW_L4_TYPE_EXT_ICMP ||
			 ext == DOCA_FLOW_L4_TYPE_EXT_ICMP6)
			l4 = SDP_FLOW_L4K_ICMP;
		else
			proto = steer_rule_proto(r);
	}
	if (l4 == 0)
		return steer_key_add(s, etype, proto,
				     proto == IPPROTO_TCP || proto == IPPROTO_UDP ? dport : 0);
	if (l4 & SDP_FLOW_L4K_TCP)
		ok = ok && steer_key_add(s, etype, IPPROTO_TCP, dport);
	if (l4 & SDP_FLOW_L4K_UDP)
		ok = ok && steer_key_add(s, etype, IPPROTO_UDP, dport);
	if (l4 & SDP_FLOW_L4K_ICMP) {
		if (etype != SDP_PKT_ETHERTYPE_IPV6)
			ok = ok && steer_key_add(s, SDP_PKT_ETHERTYPE_IPV4, IPPROTO_ICMP, 0);
		if (etype != SDP_PKT_ETHERTYPE_IPV4)
			ok = ok && steer_key_add(s, SDP_PKT_ETHERTYPE_IPV6, IPPROTO_ICMPV6, 0);
	}
	return ok;
}

void sdp_flow_steer_summary(const struct doca_dev *dev, struct sdp_eth_steer *s)
{
	struct doca_flow_port *port = sdp_flow_port_get(dev);
	const struct doca_flow_pipe *root;
	const struct doca_flow_pipe_entry *e;
	bool ok = true;

	memset(s, 0, sizeof(*s));
	s->all = 1; /* no rules: every frame to the engine, whose default queue takes it */
	if (port == NULL)
		return;
	pthread_rwlock_rdlock(&port->lock);
	root = port->root;
	if (!port->started || root == NULL || root->fwd_miss.type != DOCA_FLOW_FWD_NONE)
		goto out; /* a miss action wants the frames no entry matches too */
	s->all = 0;
	sdp_list_for_each(e, &root->entries, link)
		ok = ok && steer_rule(s, &e->rule);
	for (uint32_t b = 0; ok && root->index != NULL && b < root->index->nb_buckets; b++)
		sdp_list_for_each(e, &root->index->buckets[b], link)
			ok = ok && steer_rule(s, &e->rule);
	if (!ok) {
		sdp_debug("port %u: more than %d steering keys: every frame to the queues",
			  port->port_id, SDP_ETH_STEER_MAX_KEYS);
		s->all = 1;
		s->nb_keys = 0;
	}
out:
	pthread_rwlock_unlock(&port->lock);
	sdp_flow_port_put(port);
}

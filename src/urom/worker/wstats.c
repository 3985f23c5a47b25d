/*
 * softdpu-urom-worker: counters and UCX facts reported in SW_STATS (see wstats.h).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "wstats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copy src into dst (size bytes with the NUL): printable ASCII only, cut with "..." if long. */
static void wstats_copy(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src), i;

	if (n >= size) {
		n = size - 1;
		for (i = 0; i < n - 3; i++)
			dst[i] = src[i];
		memcpy(dst + n - 3, "...", 3);
	} else {
		memcpy(dst, src, n);
	}
	dst[n] = '\0';
	for (i = 0; i < n; i++)
		if ((unsigned char)dst[i] < 0x20 || (unsigned char)dst[i] > 0x7e)
			dst[i] = '?';
}

static void wstats_env(char *dst, size_t size, const char *name)
{
	const char *v = getenv(name);

	wstats_copy(dst, size, v != NULL && v[0] != '\0' ? v : "default");
}

void sdp_urom_wstats_init(struct sdp_urom_wstats *s, uint64_t now_us)
{
	memset(s, 0, sizeof(*s));
	s->start_us = now_us;
	wstats_copy(s->ucx_version, sizeof(s->ucx_version), "unknown");
	wstats_copy(s->ucx_tls, sizeof(s->ucx_tls), "unknown");
	wstats_copy(s->ucx_net_devices, sizeof(s->ucx_net_devices), "unknown");
	wstats_copy(s->ucx_resources, sizeof(s->ucx_resources), "unknown");
}

/*
 * The resources of a UCP context: ucp_context_print_info writes one line per transport
 * resource, "#      resource N  :  md M  dev D  flags -- tl/dev"; the last word is the one.
 * Read once at start-up into a memory stream: no UCX internals touched.
 */
static void wstats_resources(char *dst, size_t size, ucp_context_h context)
{
	char *text = NULL, *line, *save = NULL, *list;
	size_t text_len = 0, used = 0;
	FILE *f;

	wstats_copy(dst, size, "unknown");
	f = open_memstream(&text, &text_len);
	if (f == NULL)
		return;
	ucp_context_print_info(context, f);
	if (fclose(f) != 0 || text == NULL) {
		free(text);
		return;
	}
	list = calloc(1, text_len + 1);
	if (list == NULL) {
		free(text);
		return;
	}
	for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char *word, *end;

		if (strstr(line, " resource ") == NULL)
			continue;
		end = line + strlen(line);
		while (end > line && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
			end--;
		word = end;
		while (word > line && word[-1] != ' ' && word[-1] != '\t')
			word--;
		if (word == end || memchr(word, '/', (size_t)(end - word)) == NULL)
			continue;
		if (used > 0)
			list[used++] = ',';
		memcpy(list + used, word, (size_t)(end - word));
		used += (size_t)(end - word);
	}
	list[used] = '\0';
	if (used > 0)
		wstats_copy(dst, size, list);
	free(list);
	free(text);
}

void sdp_urom_wstats_ucx(struct sdp_urom_wstats *s, ucp_context_h context)
{
	wstats_copy(s->ucx_version, sizeof(s->ucx_version), ucp_get_version_string());
	wstats_env(s->ucx_tls, sizeof(s->ucx_tls), "UCX_TLS");
	wstats_env(s->ucx_net_devices, sizeof(s->ucx_net_devices), "UCX_NET_DEVICES");
	if (context != NULL)
		wstats_resources(s->ucx_resources, sizeof(s->ucx_resources), context);
	s->dirty = 1;
}

static struct sdp_urom_bytes wstats_str(const char *s)
{
	struct sdp_urom_bytes b = {.data = (const uint8_t *)s, .len = (uint32_t)strlen(s)};

	return b;
}

void sdp_urom_wstats_fill(const struct sdp_urom_wstats *s, uint64_t now_us,
			  uint32_t hosts_connected, struct sdp_urom_msg *msg)
{
	memset(&msg->hdr, 0, sizeof(msg->hdr));
	memset(&msg->u.sw_stats, 0, sizeof(msg->u.sw_stats));
	msg->hdr.type = SDP_UROM_MSG_SW_STATS;
	msg->u.sw_stats.uptime_ms = now_us > s->start_us ? (now_us - s->start_us) / 1000 : 0;
	msg->u.sw_stats.cmds = s->cmds;
	msg->u.sw_stats.cmd_bytes = s->cmd_bytes;
	msg->u.sw_stats.cmds_refused = s->cmds_refused;
	msg->u.sw_stats.notifs = s->notifs;
	msg->u.sw_stats.notif_bytes = s->notif_bytes;
	msg->u.sw_stats.notifs_error = s->notifs_error;
	msg->u.sw_stats.notifs_dropped = s->notifs_dropped;
	msg->u.sw_stats.connects_refused = s->connects_refused;
	msg->u.sw_stats.domains_committed = s->domains_committed;
	msg->u.sw_stats.hosts_total = s->hosts_total;
	msg->u.sw_stats.hosts_connected =
		hosts_connected < s->hosts_total ? hosts_connected : s->hosts_total;
	msg->u.sw_stats.ucx_version = wstats_str(s->ucx_version);
	msg->u.sw_stats.ucx_tls = wstats_str(s->ucx_tls);
	msg->u.sw_stats.ucx_net_devices = wstats_str(s->ucx_net_devices);
	msg->u.sw_stats.ucx_resources = wstats_str(s->ucx_resources);
}

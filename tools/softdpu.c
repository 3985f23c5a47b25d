/*
 * softdpu: the command-line tool of softdpu.
 *
 *   softdpu service start [--json] [softdpu-uromd options...]   start the UROM service (daemon)
 *   softdpu service stop [--json] [--run-dir D] [--pid-file P] [--timeout S]
 *   softdpu service status [--json] [--run-dir D] [--pid-file P] [--secret-file S]
 *                          [--addr host:port]
 *   softdpu --help
 *
 * With --json each command prints exactly one line on stdout, a JSON object, whatever happens
 * (messages still go to stderr): start {"action":"start","ok",...}, stop {"action":"stop","ok",
 * "was_running",...}, status the service's document plus "running":true, or {"running":false,
 * "pid_file",...} when none runs. docs/urom-service.md lists the keys.
 * Exit status: 0 ok, 1 failure, 2 bad usage, 3 (status) no service running.
 * softdpu-uromd is looked for next to this program (/proc/self/exe), then where a build tree
 * puts it, then on PATH. The status query authenticates like any host (the same secret file),
 * so only the service's user (or whoever may read its secret) can ask. docs/urom-service.md describes the service.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "sdp_build_config.h"
#include "sdp_cli.h"
#include "sdp_config.h"
#include "sdp_urom_chan.h"
#include "sdp_urom_auth.h"
#include "sdp_urom_defaults.h"
#include "sdp_urom_proto.h"
#include "uromd_paths.h"

#define EXIT_OK 0
#define EXIT_FAIL 1
#define EXIT_USAGE 2
#define EXIT_NOT_RUNNING 3

#define STOP_TIMEOUT_S 10

/* Where the service is and how to reach it. */
struct cli_where {
	const char *run_dir_opt;
	const char *pid_file_opt;
	const char *secret_file_opt;
	const char *addr_opt;
	char run_dir[PATH_MAX];
	char pid_file[PATH_MAX];
	const char *error;	   /* why the pid file could not be used (JSON "error") */
	char secret_rec[PATH_MAX]; /* the running daemon's secret file (uromd.secret-path) */
};

/* The last error this tool reported (without "softdpu: "), for the JSON "error" of start. */
static char cli_last_error[512];
/* Where JSON documents go: stdout, which with --json carries nothing else (see main). */
static FILE *cli_json_out;

/* Report an error on stderr ("softdpu: ..." and a newline) and remember it. */
static void __attribute__((format(printf, 1, 2))) cli_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cli_last_error, sizeof(cli_last_error), fmt, ap);
	va_end(ap);
	fprintf(stderr, "softdpu: %s\n", cli_last_error);
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: softdpu <command> ...\n"
		"\n"
		"Commands:\n"
		"  service start [--json] [softdpu-uromd options]\n"
		"                                         start the UROM offload service (daemon "
		"mode)\n"
		"                                         and wait until it answers\n"
		"  service stop [--json] [options]        stop it (SIGTERM, bounded wait)\n"
		"  service status [--json] [options]      show what it runs\n"
		"  env [--json]                           versions, devices, GPUs, hugepages, service\n"
		"  caps [--json]                          capabilities of devices, GPUs and plugins\n"
		"  ladder urom [options]                  the UROM test ladder, with evidence\n"
		"  ladder gpunetio [options]              the GPUNetIO test ladder, with evidence\n"
		"  rollback gpunetio [options]            the GPUNetIO rollback, verified\n"
		"  --version                              softdpu's version and DOCA API level\n"
		"Each command takes --help.\n"
		"\n"
		"Options of stop and status:\n"
		"  --run-dir <dir>        run directory (default SOFTDPU_UROM_RUN_DIR, as root\n"
		"                         /run/softdpu, else $XDG_RUNTIME_DIR/softdpu or\n"
		"                         /tmp/softdpu-<uid>)\n"
		"  --pid-file <path>      pid file (default <run dir>/uromd.pid)\n"
		"  --secret-file <path>   service secret (status; default: the running daemon's,\n"
		"                         else SOFTDPU_UROM_SECRET_FILE or the documented default)\n"
		"  --addr <host:port>     service address (status; default from <run dir>/uromd.listen)\n"
		"  --timeout <seconds>    how long stop waits (default %d)\n"
		"  --json                 one line of JSON on stdout (start, stop, status: the\n"
		"                         service's document, or {\"running\":false,...})\n"
		"\n"
		"Run `softdpu-uromd --help` for the service's options.\n"
		"Exit status: 0 ok, 1 failure, 2 bad usage, 3 no service running (status).\n",
		STOP_TIMEOUT_S);
}

static int cli_resolve_where(struct cli_where *w)
{
	if (sdp_uromd_run_dir(w->run_dir_opt, w->run_dir, sizeof(w->run_dir)) != DOCA_SUCCESS)
		return -1;
	if (w->pid_file_opt != NULL)
		return sdp_uromd_abs_path(w->pid_file_opt, w->pid_file, sizeof(w->pid_file)) ==
				       DOCA_SUCCESS ?
			       0 :
			       -1;
	if ((size_t)snprintf(w->pid_file, sizeof(w->pid_file), "%s/%s", w->run_dir,
			     SDP_UROMD_PID_FILE) >= sizeof(w->pid_file)) {
		fprintf(stderr, "softdpu: run directory path too long\n");
		return -1;
	}
	return 0;
}

/* The JSON "error" text for a pid file status of sdp_uromd_pid_file_check/_claim. */
static const char *cli_pid_file_error(doca_error_t status)
{
	switch (status) {
	case DOCA_ERROR_INVALID_VALUE:
		return "the pid file is not a pid file softdpu-uromd wrote; left untouched";
	case DOCA_ERROR_NOT_PERMITTED:
		return "the pid file cannot be read: permission denied";
	case DOCA_ERROR_IN_USE:
		return "the pid file is in use by a running softdpu-uromd";
	default:
		return "cannot read the pid file";
	}
}

/*
 * 1 when a daemon holds the pid file (its pid in *pid_p), 0 when none runs (*stale_p: the file
 * exists and is stale, i.e. names a process that is gone or is not softdpu-uromd), -1 on error
 * (logged; w->error says what for JSON): unreadable, not a pid file, or a file naming a running
 * softdpu-uromd that does not hold its lock (nobody's to remove or signal).
 */
static int cli_daemon_running(struct cli_where *w, pid_t *pid_p, int *stale_p)
{
	pid_t pid = 0;
	int locked = 0;
	doca_error_t status;

	*stale_p = 0;
	status = sdp_uromd_pid_file_check(w->pid_file, &pid, &locked);
	if (status == DOCA_ERROR_NOT_FOUND)
		return 0;
	if (status != DOCA_SUCCESS) {
		w->error = cli_pid_file_error(status);
		return -1;
	}
	if (!locked && sdp_uromd_pid_is_uromd(pid)) {
		fprintf(stderr,
			"softdpu: pid file %s names pid %d, a running softdpu-uromd that does not "
			"hold its lock; left alone\n",
			w->pid_file, (int)pid);
		w->error = "the pid file names a running softdpu-uromd that does not hold it";
		return -1;
	}
	if (!locked) {
		*stale_p = 1;
		return 0;
	}
	*pid_p = pid;
	return 1;
}

/*
 * Without --secret-file, use the secret file the running daemon recorded in its run directory
 * (it may have been started with --secret-file or another SOFTDPU_UROM_SECRET_FILE); without
 * that record, the host library's default applies (sdp_urom_secret_path).
 */
static void cli_use_recorded_secret(struct cli_where *w)
{
	char path[PATH_MAX + 32];
	struct stat st;
	ssize_t n;
	int fd;

	if (w->secret_file_opt != NULL)
		return;
	snprintf(path, sizeof(path), "%s/%s", w->run_dir, SDP_UROMD_SECRET_PATH_FILE);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ?
		    read(fd, w->secret_rec, sizeof(w->secret_rec) - 1) :
		    -1;
	close(fd);
	if (n <= 0)
		return;
	w->secret_rec[n] = '\0';
	w->secret_rec[strcspn(w->secret_rec, "\n")] = '\0';
	if (w->secret_rec[0] == '/')
		w->secret_file_opt = w->secret_rec;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* ---- JSON results ----------------------------------------------------------------------- */

/* A result object to fill and print with cli_json_print (NULL when out of memory). */
static struct json_object *cli_json_new(const char *action)
{
	struct json_object *o = json_object_new_object();

	if (o != NULL && action != NULL)
		json_object_object_add(o, "action", json_object_new_string(action));
	return o;
}

static void cli_json_str(struct json_object *o, const char *key, const char *value)
{
	if (o != NULL)
		json_object_object_add(o, key, value ? json_object_new_string(value) : NULL);
}

static void cli_json_int(struct json_object *o, const char *key, int64_t value)
{
	if (o != NULL)
		json_object_object_add(o, key, json_object_new_int64(value));
}

static void cli_json_bool(struct json_object *o, const char *key, int value)
{
	if (o != NULL)
		json_object_object_add(o, key, json_object_new_boolean(value != 0));
}

/* Print o as one line on stdout and free it; a fallback line when it could not be built. */
static void cli_json_print(struct json_object *o)
{
	FILE *out = cli_json_out != NULL ? cli_json_out : stdout;

	if (o == NULL) {
		fprintf(out, "{\"ok\":false,\"error\":\"out of memory\"}\n");
		fflush(out);
		return;
	}
	fprintf(out, "%s\n",
		json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(out);
	json_object_put(o);
}

/* Print {"action":action,"ok":false,"error":error} (action NULL: no "action" key). */
static void cli_json_fail(const char *action, const char *error)
{
	struct json_object *o = cli_json_new(action);

	if (action != NULL)
		cli_json_bool(o, "ok", 0);
	cli_json_str(o, "error", error);
	cli_json_print(o);
}

/* True when --json is among args (for results printed before or without option parsing). */
static int cli_wants_json(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--json") == 0)
			return 1;
	}
	return 0;
}

/* ---- the status query ------------------------------------------------------------------- */

struct cli_conn {
	struct sdp_urom_chan chan;
	uint8_t *data; /* the last frame received (a copy) */
	size_t len;
};

/* The channel's frame callback: keep one frame, stop reading. */
static int cli_frame(void *arg, const uint8_t *frame, size_t len)
{
	struct cli_conn *c = arg;

	c->data = malloc(len);
	if (c->data != NULL) {
		memcpy(c->data, frame, len);
		c->len = len;
	}
	return 1;
}

/* Wait for the next message; it is unpacked into msg (pointing into c->data). */
static int cli_wait(struct cli_conn *c, const char *addr, uint64_t deadline, uint16_t want,
		    struct sdp_urom_msg *msg)
{
	doca_error_t status = DOCA_SUCCESS;
	uint64_t now;
	char why[160];
	int made;

	free(c->data);
	c->data = NULL;
	while (c->data == NULL) {
		status = sdp_urom_chan_read(&c->chan, cli_frame, c, &made);
		if (status != DOCA_SUCCESS || c->data != NULL)
			break;
		now = now_ms();
		if (now >= deadline) {
			status = DOCA_ERROR_TIME_OUT;
			break;
		}
		(void)sdp_urom_chan_wait(&c->chan, (int)(deadline - now));
	}
	if (c->data == NULL) {
		cli_err("%s softdpu-uromd at %s",
			status == DOCA_ERROR_TIME_OUT	   ? "no answer within the timeout from" :
			status == DOCA_ERROR_NOT_CONNECTED ? "the connection was closed by" :
							     "unreadable answer from",
			addr);
		return -1;
	}
	status = sdp_urom_msg_unpack_why(c->data, c->len, msg, why, sizeof(why));
	if (status == DOCA_ERROR_NOT_SUPPORTED) {
		cli_err("softdpu-uromd at %s speaks UROM protocol version %u, this tool %u", addr,
			msg->hdr.version, SDP_UROM_PROTO_VERSION);
		return -1;
	}
	if (status != DOCA_SUCCESS) {
		cli_err("malformed answer from %s: %s", addr, why);
		return -1;
	}
	if (msg->hdr.type == SDP_UROM_MSG_VERSION_REJECT) {
		cli_err("softdpu-uromd at %s (%.*s) speaks UROM protocol version %u, this "
			"tool %u",
			addr, (int)msg->u.version_reject.software.len,
			(const char *)msg->u.version_reject.software.data,
			msg->u.version_reject.version, SDP_UROM_PROTO_VERSION);
		return -1;
	}
	if (msg->hdr.type == SDP_UROM_MSG_REJECT) {
		cli_err("softdpu-uromd at %s refused: %s: %.*s", addr,
			doca_error_get_name((doca_error_t)msg->u.reject.status),
			(int)msg->u.reject.reason.len, (const char *)msg->u.reject.reason.data);
		return -1;
	}
	if (msg->hdr.type != want) {
		cli_err("unexpected %s from %s (expected %s)",
			sdp_urom_msg_type_name(msg->hdr.type), addr, sdp_urom_msg_type_name(want));
		return -1;
	}
	return 0;
}

/* Send msg and wait (bounded) until it is out. */
static int cli_send(struct cli_conn *c, struct sdp_urom_msg *msg, uint64_t deadline)
{
	uint64_t now = now_ms();

	if (now >= deadline ||
	    sdp_urom_chan_send_wait(&c->chan, msg, (int)(deadline - now)) != DOCA_SUCCESS) {
		cli_err("failed to send %s", sdp_urom_msg_type_name(msg->hdr.type));
		return -1;
	}
	return 0;
}

/* Split host:port into a sockaddr. */
static int cli_resolve_addr(const char *addr, struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints, *ai;
	const char *colon = strrchr(addr, ':');
	char host[256];
	size_t hlen;
	int rc;

	if (colon == NULL || colon[1] == '\0') {
		cli_err("address %s: expected host:port", addr);
		return -1;
	}
	hlen = (size_t)(colon - addr);
	if (hlen >= 2 && addr[0] == '[' && addr[hlen - 1] == ']') {
		addr++;
		hlen -= 2;
	}
	if (hlen >= sizeof(host))
		hlen = sizeof(host) - 1;
	memcpy(host, addr, hlen);
	host[hlen] = '\0';
	if (host[0] == '\0' || strcmp(host, "0.0.0.0") == 0 || strcmp(host, "*") == 0)
		snprintf(host, sizeof(host), "127.0.0.1");
	else if (strcmp(host, "::") == 0)
		snprintf(host, sizeof(host), "::1");
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	rc = getaddrinfo(host, colon + 1, &hints, &ai);
	if (rc != 0) {
		cli_err("address %s: %s", addr, gai_strerror(rc));
		return -1;
	}
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

/* The service address: --addr, else <run dir>/uromd.listen, else the host library's default. */
static void cli_service_addr(const struct cli_where *w, char *buf, size_t size)
{
	const char *env = sdp_config_get_string(SDP_CFG_UROM_SERVICE_ADDR);
	char path[PATH_MAX + 32];
	FILE *f;

	if (w->addr_opt != NULL) {
		snprintf(buf, size, "%s", w->addr_opt);
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", w->run_dir, SDP_UROMD_LISTEN_FILE);
	f = fopen(path, "re");
	if (f != NULL) {
		char line[300];

		if (fgets(line, sizeof(line), f) != NULL) {
			line[strcspn(line, "\r\n")] = '\0';
			fclose(f);
			if (line[0] != '\0') {
				snprintf(buf, size, "%s", line);
				return;
			}
		} else {
			fclose(f);
		}
	}
	snprintf(buf, size, "%s", env != NULL && *env != '\0' ? env : SDP_UROM_DEFAULT_ADDR);
}

/* Authenticate and fetch the status JSON (malloc'd, NUL-terminated). */
static int cli_query_status(const struct cli_where *w, int timeout_ms, char **json_p)
{
	uint8_t secret[SDP_UROM_SECRET_LEN], client_nonce[SDP_UROM_NONCE_LEN];
	uint8_t server_nonce[SDP_UROM_NONCE_LEN];
	char addr[320], secret_path[PATH_MAX], hostname[64] = "";
	struct sockaddr_storage ss;
	struct sdp_urom_msg msg;
	struct cli_conn c;
	socklen_t ss_len = 0;
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
	doca_error_t status;
	char why[128];
	int rc = -1, fd = -1;

	cli_service_addr(w, addr, sizeof(addr));
	if (w->secret_file_opt != NULL)
		status = sdp_uromd_abs_path(w->secret_file_opt, secret_path, sizeof(secret_path));
	else
		status = sdp_urom_secret_path(secret_path, sizeof(secret_path));
	if (status != DOCA_SUCCESS)
		return -1;
	status = sdp_urom_secret_load(secret_path, secret);
	if (status != DOCA_SUCCESS) {
		cli_err("cannot read the service secret %s: %s", secret_path,
			doca_error_get_descr(status));
		return -1;
	}
	if (cli_resolve_addr(addr, &ss, &ss_len) != 0)
		goto out_secret;

	memset(&c, 0, sizeof(c));
	if (sdp_urom_chan_connect((struct sockaddr *)&ss, ss_len, timeout_ms, &fd, why,
				  sizeof(why)) != DOCA_SUCCESS) {
		cli_err("cannot reach softdpu-uromd at %s: %s", addr, why);
		goto out_secret;
	}
	if (sdp_urom_chan_init(&c.chan, fd, SDP_UROM_FRAME_PREAUTH_MAX) != DOCA_SUCCESS) {
		close(fd);
		goto out_secret;
	}

	sdp_urom_random(client_nonce, sizeof(client_nonce));
	gethostname(hostname, sizeof(hostname) - 1);
	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_MSG_HELLO;
	msg.hdr.req_id = 1;
	msg.u.hello.min_version = SDP_UROM_PROTO_VERSION;
	msg.u.hello.max_version = SDP_UROM_PROTO_VERSION;
	memcpy(msg.u.hello.nonce, client_nonce, sizeof(client_nonce));
	msg.u.hello.pid = (uint32_t)getpid();
	msg.u.hello.uid = (uint32_t)getuid();
	msg.u.hello.hostname.data = (const uint8_t *)hostname;
	msg.u.hello.hostname.len = (uint32_t)strlen(hostname);
	if (cli_send(&c, &msg, deadline) != 0 ||
	    cli_wait(&c, addr, deadline, SDP_UROM_MSG_CHALLENGE, &msg))
		goto out_ep;
	memcpy(server_nonce, msg.u.challenge.nonce, sizeof(server_nonce));
	if (sdp_urom_auth_verify(secret, "svc", client_nonce, server_nonce, msg.u.challenge.mac) !=
	    DOCA_SUCCESS) {
		cli_err("the service at %s does not know the secret in %s (another "
			"service, or another secret)",
			addr, secret_path);
		goto out_ep;
	}
	/* The service proved itself: its status document may be long. */
	sdp_urom_chan_set_max_frame(&c.chan, SDP_UROM_CHAN_MAX_FROM_SERVICE);
	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_MSG_AUTH;
	msg.hdr.req_id = 2;
	sdp_urom_auth_mac(secret, "host", server_nonce, client_nonce, msg.u.auth.mac);
	if (cli_send(&c, &msg, deadline) != 0 ||
	    cli_wait(&c, addr, deadline, SDP_UROM_MSG_WELCOME, &msg))
		goto out_ep;
	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_MSG_STATUS_QUERY;
	msg.hdr.req_id = 3;
	if (cli_send(&c, &msg, deadline) != 0 ||
	    cli_wait(&c, addr, deadline, SDP_UROM_MSG_STATUS_REPLY, &msg))
		goto out_ep;
	*json_p = strndup((const char *)msg.u.status_reply.json.data, msg.u.status_reply.json.len);
	rc = *json_p != NULL ? 0 : -1;

out_ep:
	free(c.data);
	sdp_urom_chan_fini(&c.chan);
out_secret:
	sodium_memzero(secret, sizeof(secret));
	return rc;
}

int sdp_cli_service_status(const char *run_dir, const char *secret_file, const char *addr,
			   int timeout_ms, char **json_p, char *err, size_t errlen)
{
	struct cli_where w;
	pid_t pid = 0;
	int stale = 0, r;

	memset(&w, 0, sizeof(w));
	w.run_dir_opt = run_dir;
	w.secret_file_opt = secret_file;
	w.addr_opt = addr;
	cli_last_error[0] = '\0';
	*json_p = NULL;
	if (cli_resolve_where(&w) != 0) {
		snprintf(err, errlen, "cannot resolve the service's run directory or pid file");
		return -1;
	}
	if (addr == NULL) {
		r = cli_daemon_running(&w, &pid, &stale);
		if (r < 0) {
			snprintf(err, errlen, "%s (%s)", w.error, w.pid_file);
			return -1;
		}
		if (r == 0) {
			snprintf(err, errlen, "no service running (pid file %s %s)", w.pid_file,
				 stale ? "is stale" : "not found");
			return -1;
		}
	}
	cli_use_recorded_secret(&w);
	if (cli_query_status(&w, timeout_ms, json_p) != 0) {
		snprintf(err, errlen, "%s",
			 cli_last_error[0] != '\0' ? cli_last_error :
						     "the service did not answer the status query");
		return -1;
	}
	return 0;
}

/* ---- text summary ----------------------------------------------------------------------- */

static const char *js(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return "?";
	return json_object_get_string(v);
}

static uint64_t ju(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	return (uint64_t)json_object_get_uint64(v);
}

static struct json_object *ja(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_array))
		return NULL;
	return v;
}

static int cli_print_text(const char *json)
{
	struct json_object *root = json_tokener_parse(json), *arr;
	size_t n;

	if (root == NULL) {
		fprintf(stderr, "softdpu: the service's status is not valid JSON\n");
		return -1;
	}
	printf("softdpu-uromd %s running: pid %" PRIu64 ", up %" PRIu64 " s\n", js(root, "version"),
	       ju(root, "pid"), ju(root, "uptime_s"));
	printf("  listen:        %s\n", js(root, "listen"));
	printf("  run dir:       %s\n", js(root, "run_dir"));
	printf("  DOCA API:      %s (protocol %" PRIu64 ")\n", js(root, "doca_api"),
	       ju(root, "protocol"));
	printf("  max msg size:  %" PRIu64 "\n", ju(root, "max_msg_size"));
	if (ju(root, "max_workers") == 0)
		printf("  max workers:   no limit\n");
	else
		printf("  max workers:   %" PRIu64 "\n", ju(root, "max_workers"));
	if (ju(root, "worker_timeout_ms") == 0)
		printf("  liveness:      off\n");
	else
		printf("  liveness:      %" PRIu64 " ms (%" PRIu64
		       " unresponsive worker(s) killed)\n",
		       ju(root, "worker_timeout_ms"), ju(root, "workers_unresponsive"));
	printf("  cpuset:        %s (CPUs here: %s)\n", js(root, "cpuset"),
	       js(root, "cpuset_present"));
	arr = ja(root, "plugins");
	n = arr ? json_object_array_length(arr) : 0;
	printf("  plugins:       %zu\n", n);
	for (size_t i = 0; i < n; i++) {
		struct json_object *p = json_object_array_get_idx(arr, i);

		printf("    %-24s id %#" PRIx64 "  version %#" PRIx64 "  %s\n", js(p, "name"),
		       ju(p, "id"), ju(p, "version"), js(p, "path"));
	}
	arr = ja(root, "warnings");
	n = arr ? json_object_array_length(arr) : 0;
	for (size_t i = 0; i < n; i++)
		printf("  WARNING:       %s\n",
		       json_object_get_string(json_object_array_get_idx(arr, i)));
	arr = ja(root, "skipped");
	n = arr ? json_object_array_length(arr) : 0;
	if (n > 0) {
		printf("  skipped:       %zu\n", n);
		for (size_t i = 0; i < n; i++) {
			struct json_object *s = json_object_array_get_idx(arr, i);

			printf("    %s: %s\n", js(s, "path"), js(s, "reason"));
		}
	}
	arr = ja(root, "workers");
	n = arr ? json_object_array_length(arr) : 0;
	printf("  workers:       %zu\n", n);
	for (size_t i = 0; i < n; i++) {
		struct json_object *w = json_object_array_get_idx(arr, i),
				   *owners = ja(w, "owners");
		size_t no = owners ? json_object_array_length(owners) : 0;
		struct json_object *ucx = NULL, *c = NULL, *res;

		printf("    id %" PRIu64 "  gid %" PRIu64 "  pid %" PRIu64 "  %s  plugins %#" PRIx64
		       "  log %s\n",
		       ju(w, "id"), ju(w, "gid"), ju(w, "pid"), js(w, "state"), ju(w, "plugins"),
		       js(w, "log"));
		for (size_t j = 0; j < no; j++) {
			struct json_object *o = json_object_array_get_idx(owners, j);

			printf("      host %s (%s, pid %" PRIu64 ") dest %" PRIu64 "\n",
			       js(o, "host"), js(o, "hostname"), ju(o, "pid"), ju(o, "dest_id"));
		}
		/* The worker's last SW_STATS (null until the first one arrived). */
		if (json_object_object_get_ex(w, "ucx", &ucx) &&
		    json_object_is_type(ucx, json_type_object)) {
			res = ja(ucx, "resources");
			printf("      UCX %s  UCX_TLS %s  UCX_NET_DEVICES %s  resources",
			       js(ucx, "version"), js(ucx, "tls"), js(ucx, "net_devices"));
			for (size_t j = 0; res != NULL && j < json_object_array_length(res); j++)
				printf("%s%s", j ? "," : " ",
				       json_object_get_string(json_object_array_get_idx(res, j)));
			printf("\n");
		}
		if (json_object_object_get_ex(w, "counters", &c) &&
		    json_object_is_type(c, json_type_object))
			printf("      cmds %" PRIu64 " (%" PRIu64 " refused)  notifs %" PRIu64
			       " (%" PRIu64 " errors, %" PRIu64 " dropped)  hosts %" PRIu64
			       " now, %" PRIu64 " in all  domains %" PRIu64 "  up %" PRIu64
			       " s  (%" PRIu64 " ms ago)\n",
			       ju(c, "cmds"), ju(c, "cmds_refused"), ju(c, "notifs"),
			       ju(c, "notifs_error"), ju(c, "notifs_dropped"),
			       ju(c, "hosts_connected"), ju(c, "hosts_total"),
			       ju(c, "domains_committed"),
			       (ju(c, "uptime_ms") + ju(w, "stats_age_ms")) / 1000,
			       ju(w, "stats_age_ms"));
		else
			printf("      counters: none reported yet\n");
	}
	json_object_put(root);
	return 0;
}

/* ---- commands --------------------------------------------------------------------------- */

enum {
	OPT_RUN_DIR = 256,
	OPT_PID_FILE,
	OPT_SECRET_FILE,
	OPT_ADDR,
	OPT_TIMEOUT,
	OPT_JSON
};

static const struct option cli_options[] = {
	{"run-dir", required_argument, NULL, OPT_RUN_DIR},
	{"pid-file", required_argument, NULL, OPT_PID_FILE},
	{"secret-file", required_argument, NULL, OPT_SECRET_FILE},
	{"addr", required_argument, NULL, OPT_ADDR},
	{"timeout", required_argument, NULL, OPT_TIMEOUT},
	{"json", no_argument, NULL, OPT_JSON},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

/* Parse stop/status options; returns -1 on bad usage (reported), 1 for --help. */
static int cli_parse(int argc, char **argv, struct cli_where *w, int *json, int *timeout_s)
{
	int opt;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "h", cli_options, NULL)) != -1) {
		switch (opt) {
		case OPT_RUN_DIR:
			w->run_dir_opt = optarg;
			break;
		case OPT_PID_FILE:
			w->pid_file_opt = optarg;
			break;
		case OPT_SECRET_FILE:
			w->secret_file_opt = optarg;
			break;
		case OPT_ADDR:
			w->addr_opt = optarg;
			break;
		case OPT_TIMEOUT: {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (timeout_s == NULL || *end != '\0' || v < 1 || v > 3600) {
				fprintf(stderr,
					"softdpu: --timeout %s: expected 1..3600 seconds%s\n",
					optarg, timeout_s == NULL ? " (stop only)" : "");
				return -1;
			}
			*timeout_s = (int)v;
			break;
		}
		case OPT_JSON:
			*json = 1;
			break;
		case 'h':
			return 1;
		default:
			fprintf(stderr, "softdpu: %s %s: unknown option or missing argument\n",
				argv[0], argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "softdpu: %s: unexpected argument %s\n", argv[0], argv[optind]);
		return -1;
	}
	return 0;
}

static int cmd_status(int argc, char **argv)
{
	struct cli_where w;
	char *json = NULL;
	int json_out = 0, stale = 0, r;
	pid_t pid = 0;
	uint64_t timeout = 5000;

	memset(&w, 0, sizeof(w));
	r = cli_parse(argc, argv, &w, &json_out, NULL);
	if (r != 0) {
		if (r < 0 && cli_wants_json(argc, argv))
			cli_json_fail(NULL, "bad usage");
		usage(r > 0 ? stdout : stderr);
		return r > 0 ? EXIT_OK : EXIT_USAGE;
	}
	if (cli_resolve_where(&w) != 0) {
		if (json_out)
			cli_json_fail(NULL, "cannot resolve the run directory or pid file");
		return EXIT_FAIL;
	}
	r = cli_daemon_running(&w, &pid, &stale);
	if (r < 0) {
		if (json_out) {
			struct json_object *o = cli_json_new(NULL);

			cli_json_str(o, "pid_file", w.pid_file);
			cli_json_str(o, "error", w.error);
			cli_json_print(o);
		}
		return EXIT_FAIL;
	}
	if (r == 0) {
		if (json_out) {
			struct json_object *o = cli_json_new(NULL);

			cli_json_bool(o, "running", 0);
			cli_json_str(o, "pid_file", w.pid_file);
			cli_json_bool(o, "stale", stale);
			cli_json_print(o);
		} else {
			printf("softdpu-uromd is not running (pid file %s%s)\n", w.pid_file,
			       stale ? " is stale" : " not found");
		}
		return EXIT_NOT_RUNNING;
	}
	cli_use_recorded_secret(&w);
	if (sdp_config_get_uint(SDP_CFG_UROM_CONNECT_TIMEOUT_MS, &timeout) != DOCA_SUCCESS)
		timeout = 5000;
	cli_last_error[0] = '\0';
	if (cli_query_status(&w, (int)(timeout > 600000 ? 600000 : timeout), &json) != 0) {
		/* cli_err already said why when it knew (secret, address, handshake) */
		if (cli_last_error[0] == '\0')
			fprintf(stderr,
				"softdpu: softdpu-uromd (pid %d) runs but did not answer the "
				"status query\n",
				(int)pid);
		if (json_out) {
			struct json_object *o = cli_json_new(NULL);

			cli_json_bool(o, "running", 1);
			cli_json_int(o, "pid", pid);
			cli_json_str(o, "pid_file", w.pid_file);
			/* The real cause when the query said it (cli_err), else the symptom. */
			cli_json_str(o, "error",
				     cli_last_error[0] != '\0' ?
					     cli_last_error :
					     "the service did not answer the status query");
			cli_json_print(o);
		}
		return EXIT_FAIL;
	}
	if (json_out) {
		/*
		 * The service's document with "running":true added first, re-encoded with json-c
		 * (which keeps 64-bit ids exact: it reads and writes them as 64-bit integers).
		 */
		struct json_object *root = json_tokener_parse(json);
		struct json_object *o = NULL;

		if (root == NULL || !json_object_is_type(root, json_type_object)) {
			fprintf(stderr, "softdpu: the service's status is not valid JSON\n");
			cli_json_fail(NULL, "the service's status is not valid JSON");
			r = -1;
		} else {
			o = cli_json_new(NULL);
			cli_json_bool(o, "running", 1);
			json_object_object_foreach(root, key, val)
			{
				if (o != NULL && strcmp(key, "running") != 0 &&
				    json_object_object_add(o, key, json_object_get(val)) != 0) {
					json_object_put(val);
					json_object_put(o);
					o = NULL;
				}
			}
			cli_json_print(o); /* a fallback document when o could not be built */
		}
		if (root != NULL)
			json_object_put(root);
	} else if (cli_print_text(json) != 0) {
		r = -1;
	}
	free(json);
	return r < 0 ? EXIT_FAIL : EXIT_OK;
}

/* SIGTERM to the daemon pid (holding w's pid file) and a bounded wait until it released it. */
static int cli_stop_pid(struct cli_where *w, pid_t pid, int timeout_s)
{
	uint64_t deadline;

	if (kill(pid, SIGTERM) != 0) {
		cli_err("cannot signal softdpu-uromd pid %d: %s", (int)pid, strerror(errno));
		return -1;
	}
	/* The daemon releases the pid file lock when it exits. */
	deadline = now_ms() + (uint64_t)timeout_s * 1000;
	while (now_ms() < deadline) {
		pid_t p2 = 0;
		int stale = 0;

		if (cli_daemon_running(w, &p2, &stale) == 0)
			return 0;
		sleep_ms(50);
	}
	cli_err("softdpu-uromd (pid %d) did not stop within %d s", (int)pid, timeout_s);
	return -1;
}

static int cmd_stop(int argc, char **argv)
{
	struct cli_where w;
	int timeout_s = STOP_TIMEOUT_S, stale = 0, json_out = 0, r;
	struct json_object *o = NULL;
	pid_t pid = 0;

	memset(&w, 0, sizeof(w));
	r = cli_parse(argc, argv, &w, &json_out, &timeout_s);
	if (r != 0) {
		if (r < 0 && cli_wants_json(argc, argv))
			cli_json_fail("stop", "bad usage");
		usage(r > 0 ? stdout : stderr);
		return r > 0 ? EXIT_OK : EXIT_USAGE;
	}
	if (cli_resolve_where(&w) != 0) {
		if (json_out)
			cli_json_fail("stop", "cannot resolve the run directory or pid file");
		return EXIT_FAIL;
	}
	if (json_out) {
		o = cli_json_new("stop");
		if (o == NULL) {
			cli_json_print(NULL);
			return EXIT_FAIL;
		}
		cli_json_bool(o, "ok", 0); /* set below; added here to come first */
		cli_json_str(o, "pid_file", w.pid_file);
	}
	r = cli_daemon_running(&w, &pid, &stale);
	if (r < 0) {
		if (o != NULL) {
			cli_json_bool(o, "ok", 0);
			cli_json_str(o, "error", w.error);
			cli_json_print(o);
		}
		return EXIT_FAIL;
	}
	if (r == 0) {
		int removed = 0;

		if (stale) {
			/* Checked again under the file's lock, then removed (logged if refused). */
			pid_t old = 0;
			doca_error_t st = sdp_uromd_pid_file_remove_stale(w.pid_file, &old);

			if (st != DOCA_SUCCESS && st != DOCA_ERROR_NOT_FOUND) {
				if (o != NULL) {
					cli_json_bool(o, "ok", 0);
					cli_json_str(o, "error", cli_pid_file_error(st));
					cli_json_print(o);
				}
				return EXIT_FAIL;
			}
			removed = st == DOCA_SUCCESS;
		}

		if (o != NULL) {
			cli_json_bool(o, "ok", 1);
			cli_json_bool(o, "was_running", 0);
			cli_json_bool(o, "stale_pid_file_removed", removed);
			cli_json_print(o);
		} else if (removed) {
			printf("softdpu-uromd is not running; removed the stale pid file %s\n",
			       w.pid_file);
		} else {
			printf("softdpu-uromd is not running (pid file %s)\n", w.pid_file);
		}
		return EXIT_OK;
	}
	cli_json_bool(o, "was_running", 1);
	cli_json_int(o, "pid", pid);
	if (pid <= 0 || !sdp_uromd_pid_is_uromd(pid)) {
		fprintf(stderr,
			"softdpu: pid file %s is locked but names pid %d, which is not "
			"softdpu-uromd; not signalling it\n",
			w.pid_file, (int)pid);
		if (o != NULL) {
			cli_json_bool(o, "ok", 0);
			cli_json_str(o, "error",
				     "the pid file names a process that is not "
				     "softdpu-uromd; not signalled");
			cli_json_print(o);
		}
		return EXIT_FAIL;
	}
	if (cli_stop_pid(&w, pid, timeout_s) != 0) {
		if (o != NULL) {
			cli_json_bool(o, "ok", 0);
			cli_json_str(o, "error", cli_last_error);
			cli_json_int(o, "timeout_s", timeout_s);
			cli_json_print(o);
		}
		return EXIT_FAIL;
	}
	if (o != NULL) {
		cli_json_bool(o, "ok", 1);
		cli_json_print(o);
	} else {
		printf("softdpu-uromd (pid %d) stopped\n", (int)pid);
	}
	return EXIT_OK;
}

/*
 * The softdpu-uromd binary: next to this program (installed layout), else where a build tree
 * puts it relative to tools/softdpu, else on PATH (execvp looks it up).
 */
static void cli_find_uromd(char *buf, size_t size)
{
	static const char *const rel[] = {"softdpu-uromd", "../src/urom/service/softdpu-uromd"};
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash != NULL) {
			*slash = '\0';
			for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
				struct stat st;

				if ((size_t)snprintf(buf, size, "%s/%s", self, rel[i]) < size &&
				    stat(buf, &st) == 0 && S_ISREG(st.st_mode) &&
				    access(buf, X_OK) == 0)
					return;
			}
		}
	}
	snprintf(buf, size, "softdpu-uromd");
}

/* The value of option `name` in uromd's argv (--name value or --name=value). */
static const char *cli_opt_value(int argc, char **argv, const char *name)
{
	size_t len = strlen(name);
	const char *found = NULL;

	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], name, len) != 0)
			continue;
		if (argv[i][len] == '=')
			found = argv[i] + len + 1;
		else if (argv[i][len] == '\0' && i + 1 < argc)
			found = argv[++i];
	}
	return found;
}

/*
 * The message of a log record relayed from softdpu-uromd ("[time][pid][ERR][comp][file:line]
 * [func] message"), or the line itself when it is not one.
 */
static const char *cli_record_message(const char *line)
{
	const char *p = line;

	while (*p == '[') {
		const char *close = strchr(p, ']');

		if (close == NULL)
			break;
		p = close + 1;
	}
	while (*p == ' ')
		p++;
	return p;
}

/* Keep the first error line of softdpu-uromd's output (its cause, before the consequences). */
static void cli_note_line(const char *line, char *reason, size_t size)
{
	if (reason[0] != '\0')
		return;
	if (strstr(line, "][ERR][") != NULL || strstr(line, "][CRIT][") != NULL ||
	    strncmp(line, "softdpu: ", 9) == 0)
		snprintf(reason, size, "%s",
			 strncmp(line, "softdpu: ", 9) == 0 ? line + 9 : cli_record_message(line));
}

/*
 * Relay what softdpu-uromd writes on fd (its launcher's stdout and stderr) to our stderr until
 * it closes (bounded), keeping its first error in reason.
 */
static void cli_relay(int fd, char *reason, size_t size)
{
	/* softdpu-uromd's launcher gives up after 30 s; allow it a margin. */
	uint64_t deadline = now_ms() + 45000;
	char buf[4096], line[1024];
	size_t used = 0;

	reason[0] = '\0';
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		uint64_t now = now_ms();
		ssize_t n, shown;

		if (now >= deadline)
			break;
		if (poll(&p, 1, (int)(deadline - now)) <= 0)
			continue;
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		/* (If stderr is gone there is nowhere to show it: keep reading for the reason.) */
		shown = write(STDERR_FILENO, buf, (size_t)n);
		(void)shown;
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n' && used + 1 < sizeof(line)) {
				line[used++] = buf[i];
				continue;
			}
			if (buf[i] != '\n')
				continue; /* an overlong line: the rest of it is dropped */
			line[used] = '\0';
			cli_note_line(line, reason, size);
			used = 0;
		}
	}
	line[used] = '\0';
	if (used > 0)
		cli_note_line(line, reason, size);
}

/*
 * Run softdpu-uromd (args) and wait for its launcher, which returns once the daemon is ready or
 * failed (bounded). With json_out its stdout and stderr go through a pipe to our stderr, and
 * its first error lands in reason; otherwise they are ours. Returns its exit status, -1 when it
 * died of a signal or could not be run.
 */
static int cli_launch(const char *uromd, char **args, int json_out, char *reason, size_t size)
{
	int pfd[2] = {-1, -1}, wstatus = 0;
	pid_t child;

	reason[0] = '\0';
	if (json_out && pipe2(pfd, O_CLOEXEC) != 0) {
		cli_err("pipe failed: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);
	child = fork();
	if (child < 0) {
		cli_err("fork failed: %s", strerror(errno));
		if (json_out) {
			close(pfd[0]);
			close(pfd[1]);
		}
		return -1;
	}
	if (child == 0) {
		/* stdout carries only our result: the service's output goes to stderr. */
		if (json_out &&
		    (dup2(pfd[1], STDOUT_FILENO) < 0 || dup2(pfd[1], STDERR_FILENO) < 0))
			_exit(127);
		execvp(uromd, args);
		fprintf(stderr, "softdpu: cannot run %s: %s\n", uromd, strerror(errno));
		_exit(127);
	}
	if (json_out) {
		close(pfd[1]);
		cli_relay(pfd[0], reason, size);
		close(pfd[0]);
	}
	while (waitpid(child, &wstatus, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
}

/* The start failed after the daemon came up: stop it again (it is ours: none ran before). */
static void cli_start_undo(struct cli_where *w, pid_t pid)
{
	char keep[sizeof(cli_last_error)];

	if (!sdp_uromd_pid_is_uromd(pid))
		return; /* not ours to signal */
	memcpy(keep, cli_last_error, sizeof(keep));
	if (cli_stop_pid(w, pid, STOP_TIMEOUT_S) == 0)
		fprintf(stderr, "softdpu: stopped softdpu-uromd (pid %d) again\n", (int)pid);
	memcpy(cli_last_error, keep, sizeof(keep));
}

static void cli_start_json_fail(const struct cli_where *w, const char *error, int code, pid_t pid)
{
	struct json_object *o = cli_json_new("start");

	cli_json_bool(o, "ok", 0);
	cli_json_str(o, "error", error);
	if (code >= 0)
		cli_json_int(o, "exit_status", code);
	if (pid > 0)
		cli_json_int(o, "pid", pid);
	cli_json_str(o, "run_dir", w->run_dir);
	cli_json_str(o, "pid_file", w->pid_file);
	cli_json_print(o);
}

/* Exit early for -h (softdpu-uromd's help) and -f (refused). 0 = go on. */
static int cli_start_special(int argc, char **argv, int json_out, int *rc_p)
{
	char uromd[PATH_MAX];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			cli_find_uromd(uromd, sizeof(uromd));
			argv[0] = uromd;
			execvp(uromd, argv);
			fprintf(stderr, "softdpu: cannot run %s: %s\n", uromd, strerror(errno));
			*rc_p = EXIT_FAIL;
			return 1;
		}
		if (strcmp(argv[i], "-f") == 0 || strcmp(argv[i], "--foreground") == 0) {
			fprintf(stderr,
				"softdpu: service start runs softdpu-uromd as a daemon; run "
				"softdpu-uromd -f yourself for the foreground\n");
			if (json_out)
				cli_json_fail("start", "bad usage: --foreground");
			*rc_p = EXIT_USAGE;
			return 1;
		}
	}
	return 0;
}

static int cmd_start(int argc, char **argv)
{
	char uromd[PATH_MAX], reason[512];
	struct cli_where w;
	char **args;
	char *json = NULL;
	int stale = 0, json_out = cli_wants_json(argc, argv), nargs = 1, code, r;
	pid_t pid = 0;
	uint64_t deadline;

	if (cli_start_special(argc, argv, json_out, &r))
		return r;
	memset(&w, 0, sizeof(w));
	w.run_dir_opt = cli_opt_value(argc, argv, "--run-dir");
	w.pid_file_opt = cli_opt_value(argc, argv, "--pid-file");
	w.secret_file_opt = cli_opt_value(argc, argv, "--secret-file");
	if (cli_resolve_where(&w) != 0) {
		if (json_out)
			cli_json_fail("start", "cannot resolve the run directory or pid file");
		return EXIT_FAIL;
	}
	/* One running already (or a pid file nobody may touch): nothing to start, nothing to undo. */
	r = cli_daemon_running(&w, &pid, &stale);
	if (r != 0) {
		if (r > 0)
			cli_err("softdpu-uromd is already running (pid %d, pid file %s)", (int)pid,
				w.pid_file);
		if (json_out)
			cli_start_json_fail(&w, r > 0 ? cli_last_error : w.error, -1,
					    r > 0 ? pid : 0);
		return EXIT_FAIL;
	}

	cli_find_uromd(uromd, sizeof(uromd));
	args = calloc((size_t)argc + 1, sizeof(*args));
	if (args == NULL) {
		if (json_out)
			cli_json_print(NULL);
		return EXIT_FAIL;
	}
	args[0] = uromd;
	/* --json is this tool's; softdpu-uromd gets everything else. */
	for (int i = 1, opts = 1; i < argc; i++) {
		if (opts && strcmp(argv[i], "--") == 0)
			opts = 0;
		if (opts && strcmp(argv[i], "--json") == 0)
			continue;
		args[nargs++] = argv[i];
	}
	code = cli_launch(uromd, args, json_out, reason, sizeof(reason));
	free(args);
	if (code != 0) {
		if (code != EXIT_USAGE)
			cli_err("softdpu-uromd failed to start (exit status %d)", code);
		if (json_out)
			cli_start_json_fail(&w,
					    reason[0]	       ? reason :
					    code == EXIT_USAGE ? "bad usage" :
								 cli_last_error,
					    code, 0);
		return code == EXIT_USAGE ? EXIT_USAGE : EXIT_FAIL;
	}
	if (cli_daemon_running(&w, &pid, &stale) != 1) {
		cli_err("softdpu-uromd reported ready but holds no pid file %s", w.pid_file);
		if (json_out)
			cli_start_json_fail(&w, cli_last_error, code, 0);
		return EXIT_FAIL;
	}
	/* Check it answers (bounded: a few tries within 10 s); if not, stop it again. */
	deadline = now_ms() + 10000;
	while (cli_query_status(&w, 5000, &json) != 0) {
		if (now_ms() >= deadline) {
			char why[sizeof(cli_last_error)];

			snprintf(why, sizeof(why), "%s", cli_last_error);
			cli_err("softdpu-uromd (pid %d) started but does not answer status queries "
				"(%s)",
				(int)pid, why);
			cli_start_undo(&w, pid);
			if (json_out)
				cli_start_json_fail(&w, cli_last_error, code, pid);
			return EXIT_FAIL;
		}
		sleep_ms(200);
	}
	{
		struct json_object *root = json_tokener_parse(json);

		if (json_out) {
			struct json_object *o = cli_json_new("start");

			cli_json_bool(o, "ok", 1);
			cli_json_int(o, "pid", pid);
			cli_json_str(o, "listen", root ? js(root, "listen") : NULL);
			cli_json_str(o, "run_dir", w.run_dir);
			cli_json_str(o, "pid_file", w.pid_file);
			cli_json_print(o);
		} else {
			printf("softdpu-uromd started: pid %d, listening on %s, run dir %s\n",
			       (int)pid, root ? js(root, "listen") : "?", w.run_dir);
		}
		if (root)
			json_object_put(root);
	}
	free(json);
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	/*
	 * With --json, stdout carries exactly one JSON document: it moves to a private stream and
	 * fd 1 becomes stderr, so whatever else writes to stdout (UCX's warnings, a library)
	 * ends up on stderr.
	 */
	if (cli_wants_json(argc, argv)) {
		int fd = dup(STDOUT_FILENO);

		cli_json_out = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (cli_json_out != NULL && dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
			fclose(cli_json_out);
			cli_json_out = NULL;
		}
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("softdpu %s (DOCA API %s)\n", SOFTDPU_VERSION, SDP_DOCA_API_VERSION);
		return EXIT_OK;
	}
	{
		static const struct {
			const char *name;
			int (*fn)(int argc, char **argv, FILE *json_out);
		} sub[] = {
			{"env", sdp_cli_env},
			{"caps", sdp_cli_caps},
			{"rollback", sdp_cli_rollback},
		};
		FILE *jout = cli_json_out != NULL ? cli_json_out : stdout;

		for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
			if (strcmp(argv[1], sub[i].name) == 0)
				return sub[i].fn(argc - 1, argv + 1, jout);
		}
		if (strcmp(argv[1], "ladder") == 0) {
			if (argc >= 3 && strcmp(argv[2], "urom") == 0)
				return sdp_cli_ladder_urom(argc - 2, argv + 2, jout);
			if (argc >= 3 && strcmp(argv[2], "gpunetio") == 0)
				return sdp_cli_ladder_gpunetio(argc - 2, argv + 2, jout);
			if (argc >= 3 &&
			    (strcmp(argv[2], "-h") == 0 || strcmp(argv[2], "--help") == 0)) {
				usage(stdout);
				return EXIT_OK;
			}
			fprintf(stderr, "softdpu: ladder needs urom or gpunetio\n");
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (strcmp(argv[1], "service") != 0) {
		fprintf(stderr, "softdpu: unknown command %s\n", argv[1]);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (argc < 3) {
		fprintf(stderr, "softdpu: service needs start, stop or status\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[2], "-h") == 0 || strcmp(argv[2], "--help") == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[2], "start") == 0)
		return cmd_start(argc - 2, argv + 2);
	if (strcmp(argv[2], "stop") == 0)
		return cmd_stop(argc - 2, argv + 2);
	if (strcmp(argv[2], "status") == 0)
		return cmd_status(argc - 2, argv + 2);
	fprintf(stderr, "softdpu: unknown service command %s\n", argv[2]);
	usage(stderr);
	return EXIT_USAGE;
}

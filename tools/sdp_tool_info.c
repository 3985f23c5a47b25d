/*
 * Facts about this host and this softdpu as json-c objects (sdp_tool_info.h): versions, UCX,
 * Open MPI, GPUs, hugepages, devices and their Ethernet queue capabilities.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "doca_dev.h"
#include "doca_error.h"
#include "doca_eth_rxq.h"
#include "doca_eth_txq.h"
#include "doca_version.h"
#include "sdp_build_config.h"
#include "sdp_cuda.h"
#include "sdp_provider.h"
#include "sdp_tool_info.h"
#include "softdpu/gpunetio.h"
#include "softdpu/version.h"

#ifdef SDP_TOOL_HAVE_UCX
#include <ucp/api/ucp.h>
#include <uct/api/uct.h>
#endif

/* How long `mpirun --version` may take before it is killed. */
#define SDP_INFO_MPI_TIMEOUT_MS 5000
#define SDP_INFO_MPI_OUT_MAX 4096

/* ---- small helpers ---------------------------------------------------------------------- */

static void add_str(struct json_object *o, const char *key, const char *val)
{
	json_object_object_add(o, key, val != NULL ? json_object_new_string(val) : NULL);
}

static void add_int(struct json_object *o, const char *key, int64_t val)
{
	json_object_object_add(o, key, json_object_new_int64(val));
}

static void add_bool(struct json_object *o, const char *key, int val)
{
	json_object_object_add(o, key, json_object_new_boolean(val != 0));
}

/* {"present": false, "reason": reason} */
static struct json_object *missing(const char *reason)
{
	struct json_object *o = json_object_new_object();

	if (o == NULL)
		return NULL;
	add_bool(o, "present", 0);
	add_str(o, "reason", reason);
	return o;
}

static struct json_object *missing_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static struct json_object *missing_fmt(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return missing(buf);
}

const char *sdp_info_str(struct json_object *obj, const char *key)
{
	struct json_object *v;

	if (obj == NULL || !json_object_object_get_ex(obj, key, &v) || v == NULL ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

const char *sdp_info_present_str(struct json_object *obj, char *buf, size_t len)
{
	struct json_object *p;
	const char *v;

	if (obj != NULL && json_object_object_get_ex(obj, "present", &p) &&
	    json_object_get_boolean(p)) {
		v = sdp_info_str(obj, "version");
		snprintf(buf, len, "%s", v != NULL ? v : "present");
	} else {
		v = sdp_info_str(obj, "reason");
		snprintf(buf, len, "missing (%s)", v != NULL ? v : "unknown cause");
	}
	return buf;
}

int sdp_info_print_json(FILE *out, struct json_object *doc)
{
	const char *text = json_object_to_json_string_ext(
		doc,
		JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);

	if (text == NULL || fputs(text, out) == EOF || fputc('\n', out) == EOF || fflush(out) != 0)
		return -1;
	return 0;
}

/* "12.4" from a CUDA version number 12040. */
static void cuda_version_str(int v, char *buf, size_t len)
{
	snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
}

/* ---- versions --------------------------------------------------------------------------- */

static struct json_object *ucx_version(void)
{
#ifdef SDP_TOOL_HAVE_UCX
	struct json_object *o = json_object_new_object();
	char api[32];

	if (o == NULL)
		return NULL;
	snprintf(api, sizeof(api), "%d.%d", UCP_API_MAJOR, UCP_API_MINOR);
	add_bool(o, "present", 1);
	add_str(o, "version", ucp_get_version_string());
	add_str(o, "api", api);
	return o;
#else
	return missing("this program was built without UCX");
#endif
}

static struct json_object *cuda_driver_version(void)
{
	const struct sdp_cuda_api *api = NULL;
	struct json_object *o;
	char ver[32], err[160];
	int v = 0;
	sdp_cu_result_t r;

	if (sdp_cuda_load(&api) != DOCA_SUCCESS)
		return missing(sdp_cuda_load_reason());
	r = api->driver_get_version(&v);
	if (r != SDP_CUDA_SUCCESS)
		return missing_fmt("cuDriverGetVersion: %s",
				   sdp_cuda_strerror(r, err, sizeof(err)));
	o = json_object_new_object();
	if (o == NULL)
		return NULL;
	cuda_version_str(v, ver, sizeof(ver));
	add_bool(o, "present", 1);
	add_str(o, "version", ver);
	add_int(o, "raw", v);
	return o;
}

/*
 * The CUDA runtime library this host would give a CUDA program (softdpu links none: its CUDA
 * code is built with the toolkit's static runtime). Looked up with dlopen, only for its
 * version; never initialised.
 */
static struct json_object *cuda_runtime_version(void)
{
	static const char *const names[] = {"libcudart.so", "libcudart.so.13", "libcudart.so.12",
					    "libcudart.so.11.0", "libcudart.so.11"};
	int (*get_version)(int *);
	struct json_object *o;
	char ver[32], first_err[256] = "";
	void *h = NULL;
	const char *name = NULL;
	int v = 0, r;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && h == NULL; i++) {
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (h != NULL)
			name = names[i];
		else if (first_err[0] == '\0')
			snprintf(first_err, sizeof(first_err), "%s", dlerror());
	}
	if (h == NULL)
		return missing_fmt("no CUDA runtime library found (%s)", first_err);
	*(void **)&get_version = dlsym(h, "cudaRuntimeGetVersion");
	if (get_version == NULL) {
		o = missing_fmt("%s has no cudaRuntimeGetVersion", name);
		dlclose(h);
		return o;
	}
	r = get_version(&v);
	if (r != 0) {
		o = missing_fmt("%s: cudaRuntimeGetVersion failed (error %d)", name, r);
		dlclose(h);
		return o;
	}
	o = json_object_new_object();
	if (o != NULL) {
		Dl_info where;

		cuda_version_str(v, ver, sizeof(ver));
		add_bool(o, "present", 1);
		add_str(o, "version", ver);
		add_int(o, "raw", v);
		/* the file the loader picked, when it tells */
		add_str(o, "library",
			dladdr(*(void **)&get_version, &where) != 0 && where.dli_fname != NULL ?
				where.dli_fname :
				name);
	}
	/* the library stays loaded: unloading a CUDA library from a running process is unsafe */
	return o;
}

static struct json_object *cuda_toolkit_version(void)
{
#ifdef SDP_TOOL_CUDA_VERSION
	struct json_object *o = json_object_new_object();

	if (o == NULL)
		return NULL;
	add_bool(o, "present", 1);
	add_str(o, "version", SDP_TOOL_CUDA_VERSION);
	return o;
#else
	return missing("softdpu was built without CUDA (no nvcc, or -Dcuda=disabled)");
#endif
}

struct json_object *sdp_info_versions(void)
{
	struct json_object *o = json_object_new_object();

	if (o == NULL)
		return NULL;
	add_str(o, "softdpu", sdp_version());
	add_str(o, "doca_api", doca_version());
	add_str(o, "doca_runtime", doca_version_runtime());
	json_object_object_add(o, "ucx", ucx_version());
	json_object_object_add(o, "cuda_driver", cuda_driver_version());
	json_object_object_add(o, "cuda_runtime", cuda_runtime_version());
	json_object_object_add(o, "cuda_toolkit", cuda_toolkit_version());
	return o;
}

/* ---- UCX -------------------------------------------------------------------------------- */

#ifdef SDP_TOOL_HAVE_UCX
static const char *uct_dev_type_name(uct_device_type_t t)
{
	switch (t) {
	case UCT_DEVICE_TYPE_NET:
		return "net";
	case UCT_DEVICE_TYPE_SHM:
		return "shm";
	case UCT_DEVICE_TYPE_ACC:
		return "acc";
	case UCT_DEVICE_TYPE_SELF:
		return "self";
	default:
		return "other";
	}
}

static void add_unique(struct json_object *arr, const char *name)
{
	for (size_t i = 0; i < json_object_array_length(arr); i++)
		if (strcmp(json_object_get_string(json_object_array_get_idx(arr, i)), name) == 0)
			return;
	json_object_array_add(arr, json_object_new_string(name));
}

static void md_error(struct json_object *errs, const char *comp, const char *md, const char *what,
		     ucs_status_t st)
{
	struct json_object *e = json_object_new_object();
	char reason[256];

	snprintf(reason, sizeof(reason), "%s: %s", what, ucs_status_string(st));
	add_str(e, "component", comp);
	add_str(e, "md", md);
	add_str(e, "reason", reason);
	json_object_array_add(errs, e);
}

/* The transport resources of one memory domain, added to res and tls. */
static void ucx_md(uct_component_h comp, const char *comp_name, const char *md_name,
		   struct json_object *res, struct json_object *tls, struct json_object *errs)
{
	uct_tl_resource_desc_t *tl = NULL;
	uct_md_config_t *cfg = NULL;
	unsigned ntl = 0;
	uct_md_h md = NULL;
	ucs_status_t st;

	st = uct_md_config_read(comp, NULL, NULL, &cfg);
	if (st != UCS_OK) {
		md_error(errs, comp_name, md_name, "uct_md_config_read", st);
		return;
	}
	st = uct_md_open(comp, md_name, cfg, &md);
	uct_config_release(cfg);
	if (st != UCS_OK) {
		md_error(errs, comp_name, md_name, "uct_md_open", st);
		return;
	}
	st = uct_md_query_tl_resources(md, &tl, &ntl);
	if (st != UCS_OK) {
		md_error(errs, comp_name, md_name, "uct_md_query_tl_resources", st);
		uct_md_close(md);
		return;
	}
	for (unsigned i = 0; i < ntl; i++) {
		struct json_object *r = json_object_new_object();

		add_str(r, "component", comp_name);
		add_str(r, "md", md_name);
		add_str(r, "transport", tl[i].tl_name);
		add_str(r, "device", tl[i].dev_name);
		add_str(r, "type", uct_dev_type_name(tl[i].dev_type));
		json_object_array_add(res, r);
		add_unique(tls, tl[i].tl_name);
	}
	uct_release_tl_resource_list(tl);
	uct_md_close(md);
}
#endif

struct json_object *sdp_info_ucx(void)
{
#ifdef SDP_TOOL_HAVE_UCX
	struct json_object *o, *res, *tls, *errs, *comps;
	uct_component_h *comp = NULL;
	unsigned ncomp = 0;
	ucs_status_t st;

	o = ucx_version();
	if (o == NULL)
		return NULL;
	st = uct_query_components(&comp, &ncomp);
	if (st != UCS_OK) {
		json_object_put(o);
		return missing_fmt("uct_query_components: %s", ucs_status_string(st));
	}
	comps = json_object_new_array();
	res = json_object_new_array();
	tls = json_object_new_array();
	errs = json_object_new_array();
	for (unsigned c = 0; c < ncomp; c++) {
		uct_component_attr_t attr;

		memset(&attr, 0, sizeof(attr));
		attr.field_mask =
			UCT_COMPONENT_ATTR_FIELD_NAME | UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
		st = uct_component_query(comp[c], &attr);
		if (st != UCS_OK) {
			md_error(errs, "?", "?", "uct_component_query", st);
			continue;
		}
		json_object_array_add(comps, json_object_new_string(attr.name));
		if (attr.md_resource_count == 0)
			continue;
		attr.md_resources = calloc(attr.md_resource_count, sizeof(*attr.md_resources));
		if (attr.md_resources == NULL)
			continue;
		attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
		st = uct_component_query(comp[c], &attr);
		if (st != UCS_OK)
			md_error(errs, attr.name, "?", "uct_component_query", st);
		else
			for (unsigned m = 0; m < attr.md_resource_count; m++)
				ucx_md(comp[c], attr.name, attr.md_resources[m].md_name, res, tls,
				       errs);
		free(attr.md_resources);
	}
	uct_release_component_list(comp);
	json_object_object_add(o, "components", comps);
	json_object_object_add(o, "transports", tls);
	json_object_object_add(o, "resources", res);
	json_object_object_add(o, "md_errors", errs);
	return o;
#else
	return missing("this program was built without UCX");
#endif
}

/* ---- Open MPI --------------------------------------------------------------------------- */

/* The first executable `name` on PATH into buf; 0, or -1 when there is none. */
static int find_on_path(const char *name, char *buf, size_t len)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL;
	int found = -1;

	if (path == NULL || path[0] == '\0')
		return -1;
	copy = strdup(path);
	if (copy == NULL)
		return -1;
	for (dir = strtok_r(copy, ":", &save); dir != NULL; dir = strtok_r(NULL, ":", &save)) {
		struct stat st;

		if (dir[0] == '\0')
			continue;
		if ((size_t)snprintf(buf, len, "%s/%s", dir, name) >= len)
			continue;
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0) {
			found = 0;
			break;
		}
	}
	free(copy);
	return found;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Run `path arg` with stdin from /dev/null and stdout+stderr into out (at most len-1 bytes,
 * NUL-terminated), killing it after timeout_ms. 0 when it exited with status 0; else -1 with
 * the cause in err.
 */
static int run_bounded(const char *path, const char *arg, int timeout_ms, char *out, size_t len,
		       char *err, size_t errlen)
{
	int64_t deadline = now_ms() + timeout_ms;
	size_t got = 0;
	int pfd[2], status = 0, timed_out = 0;
	pid_t pid;

	out[0] = '\0';
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);

		if (devnull >= 0)
			dup2(devnull, STDIN_FILENO);
		dup2(pfd[1], STDOUT_FILENO);
		dup2(pfd[1], STDERR_FILENO);
		execl(path, path, arg, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		struct pollfd p = {.fd = pfd[0], .events = POLLIN};
		int64_t left = deadline - now_ms();
		char tmp[512];
		ssize_t n;

		if (left <= 0) {
			timed_out = 1;
			break;
		}
		if (poll(&p, 1, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p.revents == 0)
			continue;
		n = read(pfd[0], tmp, sizeof(tmp));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (got + 1 < len) {
			size_t take = (size_t)n < len - 1 - got ? (size_t)n : len - 1 - got;

			memcpy(out + got, tmp, take);
			got += take;
			out[got] = '\0';
		}
	}
	close(pfd[0]);
	if (timed_out)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (timed_out) {
		snprintf(err, errlen, "%s %s did not finish within %d ms (killed)", path, arg,
			 timeout_ms);
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(err, errlen, "%s %s exited with status %d", path, arg,
			 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		return -1;
	}
	return 0;
}

struct json_object *sdp_info_mpi(void)
{
	char path[4096], out[SDP_INFO_MPI_OUT_MAX], err[4096 + 256], ver[64] = "";
	struct json_object *o;
	const char *p, *nl;

	if (find_on_path("mpirun", path, sizeof(path)) != 0)
		return missing("no mpirun on PATH");
	if (run_bounded(path, "--version", SDP_INFO_MPI_TIMEOUT_MS, out, sizeof(out), err,
			sizeof(err)) != 0)
		return missing(err);
	nl = strchr(out, '\n');
	p = strstr(out, "(Open MPI) ");
	o = json_object_new_object();
	if (o == NULL)
		return NULL;
	if (p == NULL || (nl != NULL && p > nl)) {
		/* another MPI (MPICH's hydra, ...): say so, keep its first line */
		add_bool(o, "present", 0);
		add_str(o, "reason", "mpirun on PATH is not Open MPI's");
	} else {
		size_t n = 0;

		p += strlen("(Open MPI) ");
		while (p[n] != '\0' && p[n] != '\n' && p[n] != ' ' && n + 1 < sizeof(ver))
			n++;
		memcpy(ver, p, n);
		ver[n] = '\0';
		add_bool(o, "present", 1);
		add_str(o, "implementation", "Open MPI");
		add_str(o, "version", ver);
	}
	add_str(o, "path", path);
	if (nl != NULL)
		*(char *)nl = '\0';
	add_str(o, "output", out);
	return o;
}

/* ---- GPUs ------------------------------------------------------------------------------- */

static struct json_object *peermem(void)
{
	char line[512];
	struct json_object *o;
	int loaded = 0;
	FILE *f = fopen("/proc/modules", "re");

	if (f == NULL)
		return missing_fmt("/proc/modules: %s", strerror(errno));
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "nvidia_peermem ", strlen("nvidia_peermem ")) == 0)
			loaded = 1;
	fclose(f);
	o = json_object_new_object();
	if (o == NULL)
		return NULL;
	add_bool(o, "present", 1);
	add_bool(o, "loaded", loaded);
	return o;
}

/* The NVIDIA kernel module's version, as the loaded module tells it. */
static struct json_object *kernel_module(void)
{
	static const char path[] = "/sys/module/nvidia/version";
	struct json_object *o;
	char buf[64] = "";
	FILE *f = fopen(path, "re");

	if (f == NULL)
		return missing_fmt("%s: %s (the nvidia module is not loaded)", path,
				   strerror(errno));
	if (fgets(buf, sizeof(buf), f) == NULL)
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	if (buf[0] == '\0')
		return missing_fmt("%s is empty", path);
	o = json_object_new_object();
	if (o == NULL)
		return NULL;
	add_bool(o, "present", 1);
	add_str(o, "version", buf);
	return o;
}

/* Memory and the dma-buf attribute of CUDA device `ordinal`, from the driver. */
static void gpu_driver_facts(const struct sdp_cuda_api *api, int ordinal, struct json_object *g)
{
	sdp_cu_device_t dev = 0;
	char err[160];
	size_t bytes = 0;
	int v = 0;
	sdp_cu_result_t r;

	r = api != NULL ? api->device_get(&dev, ordinal) : SDP_CUDA_ERROR_NOT_INITIALIZED;
	if (r != SDP_CUDA_SUCCESS) {
		json_object_object_add(g, "memory_bytes", NULL);
		json_object_object_add(g, "dmabuf_supported", NULL);
		add_str(g, "driver_error", sdp_cuda_strerror(r, err, sizeof(err)));
		return;
	}
	if (api->device_total_mem != NULL && api->device_total_mem(&bytes, dev) == SDP_CUDA_SUCCESS)
		add_int(g, "memory_bytes", (int64_t)bytes);
	else
		json_object_object_add(g, "memory_bytes", NULL);
	if (api->device_get_attribute(&v, SDP_CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, dev) ==
	    SDP_CUDA_SUCCESS)
		add_bool(g, "dmabuf_supported", v);
	else
		json_object_object_add(g, "dmabuf_supported", NULL);
}

struct json_object *sdp_info_gpus(void)
{
	const struct sdp_cuda_api *api = NULL;
	struct json_object *o, *list;
	const char *reason = NULL;
	int n = 0;

	o = json_object_new_object();
	list = json_object_new_array();
	if (o == NULL || list == NULL) {
		json_object_put(o);
		json_object_put(list);
		return NULL;
	}
	if (sdp_gpu_cap_count(&n, &reason) != DOCA_SUCCESS) {
		add_bool(o, "present", 0);
		add_str(o, "reason", reason != NULL ? reason : "CUDA is not available");
		n = 0;
	} else {
		add_bool(o, "present", n > 0);
		if (n == 0)
			add_str(o, "reason", "the CUDA driver reports no GPU");
		if (sdp_cuda_init(&api, NULL) != DOCA_SUCCESS)
			api = NULL;
	}
	add_int(o, "count", n);
	json_object_object_add(o, "kernel_module", kernel_module());
	json_object_object_add(o, "nvidia_peermem", peermem());
	for (int i = 0; i < n; i++) {
		struct json_object *g = json_object_new_object();
		struct sdp_gpu_cap cap;
		char cc[16];
		doca_error_t st;

		if (g == NULL)
			break;
		add_int(g, "ordinal", i);
		st = sdp_gpu_cap_query(i, &cap);
		if (st != DOCA_SUCCESS) {
			add_str(g, "error", doca_error_get_descr(st));
			json_object_array_add(list, g);
			continue;
		}
		snprintf(cc, sizeof(cc), "%d.%d", cap.cc_major, cap.cc_minor);
		add_str(g, "pci_bus_id", cap.bus_id);
		add_str(g, "name", cap.name);
		add_str(g, "compute_capability", cc);
		add_bool(g, "cc_overridden", cap.cc_overridden);
		add_bool(g, "gpunetio_supported", cap.supported);
		add_str(g, "gpunetio_reason", cap.reason);
		gpu_driver_facts(api, i, g);
		json_object_array_add(list, g);
	}
	json_object_object_add(o, "list", list);
	return o;
}

/* ---- hugepages -------------------------------------------------------------------------- */

static struct json_object *meminfo_huge(void)
{
	static const struct {
		const char *key, *name;
	} keys[] = {
		{"HugePages_Total:", "total"},	      {"HugePages_Free:", "free"},
		{"HugePages_Rsvd:", "reserved"},      {"HugePages_Surp:", "surplus"},
		{"Hugepagesize:", "default_size_kb"},
	};
	struct json_object *o;
	char line[256];
	int seen = 0;
	FILE *f = fopen("/proc/meminfo", "re");

	if (f == NULL)
		return missing_fmt("/proc/meminfo: %s", strerror(errno));
	o = json_object_new_object();
	if (o == NULL) {
		fclose(f);
		return NULL;
	}
	add_bool(o, "present", 1);
	while (fgets(line, sizeof(line), f) != NULL)
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			size_t kl = strlen(keys[i].key);

			if (strncmp(line, keys[i].key, kl) == 0) {
				add_int(o, keys[i].name, strtoll(line + kl, NULL, 10));
				seen++;
			}
		}
	fclose(f);
	if (seen == 0) {
		json_object_put(o);
		return missing("/proc/meminfo has no HugePages_* lines (no hugetlbfs support)");
	}
	return o;
}

/* A number from a sysfs file; -1 when unreadable. */
static int64_t read_num(const char *dir, const char *name)
{
	char path[1024], buf[64];
	int64_t v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "re");
	if (f == NULL)
		return -1;
	if (fgets(buf, sizeof(buf), f) != NULL)
		v = strtoll(buf, NULL, 10);
	fclose(f);
	return v;
}

static int cmp_size(const void *a, const void *b)
{
	int64_t x = json_object_get_int64(
		json_object_object_get(*(struct json_object *const *)a, "size_kb"));
	int64_t y = json_object_get_int64(
		json_object_object_get(*(struct json_object *const *)b, "size_kb"));

	return x < y ? -1 : x > y;
}

static struct json_object *sys_huge(void)
{
	static const char base[] = "/sys/kernel/mm/hugepages";
	struct json_object *o, *list;
	struct dirent *de;
	DIR *d = opendir(base);

	if (d == NULL)
		return missing_fmt("%s: %s", base, strerror(errno));
	o = json_object_new_object();
	list = json_object_new_array();
	while ((de = readdir(d)) != NULL) {
		static const char *const files[] = {"nr_hugepages", "free_hugepages",
						    "resv_hugepages", "surplus_hugepages"};
		static const char *const names[] = {"nr", "free", "reserved", "surplus"};
		struct json_object *e;
		char dir[512];
		long long kb;
		char *end;

		if (strncmp(de->d_name, "hugepages-", 10) != 0)
			continue;
		kb = strtoll(de->d_name + 10, &end, 10);
		if (end == de->d_name + 10 || strcmp(end, "kB") != 0)
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", base, de->d_name);
		e = json_object_new_object();
		add_int(e, "size_kb", kb);
		for (size_t i = 0; i < 4; i++) {
			int64_t v = read_num(dir, files[i]);

			if (v >= 0)
				add_int(e, names[i], v);
			else
				json_object_object_add(e, names[i], NULL);
		}
		json_object_array_add(list, e);
	}
	closedir(d);
	json_object_array_sort(list, cmp_size);
	add_bool(o, "present", 1);
	json_object_object_add(o, "list", list);
	return o;
}

struct json_object *sdp_info_hugepages(void)
{
	struct json_object *o = json_object_new_object();

	if (o == NULL)
		return NULL;
	json_object_object_add(o, "meminfo", meminfo_huge());
	json_object_object_add(o, "sizes", sys_huge());
	return o;
}

/* ---- devices and their capabilities ----------------------------------------------------- */

static const char *func_type_name(enum doca_pci_func_type type)
{
	switch (type) {
	case DOCA_PCI_FUNC_TYPE_PF:
		return "PF";
	case DOCA_PCI_FUNC_TYPE_VF:
		return "VF";
	case DOCA_PCI_FUNC_TYPE_SF:
		return "SF";
	}
	return "unknown";
}

static void add_u32_or_null(struct json_object *o, const char *key, doca_error_t st, uint32_t v)
{
	if (st == DOCA_SUCCESS)
		add_int(o, key, v);
	else
		json_object_object_add(o, key, NULL);
}

static struct json_object *type_entry(const char *type, const char *path, doca_error_t st)
{
	struct json_object *e = json_object_new_object();

	add_str(e, "type", type);
	add_str(e, "data_path", path);
	add_bool(e, "supported", st == DOCA_SUCCESS);
	add_str(e, "status", doca_error_get_name(st));
	return e;
}

struct json_object *sdp_info_dev_caps(const struct doca_devinfo *info)
{
	static const struct {
		enum doca_eth_rxq_type type;
		const char *name;
	} rxq_types[] = {
		{DOCA_ETH_RXQ_TYPE_CYCLIC, "CYCLIC"},
		{DOCA_ETH_RXQ_TYPE_MANAGED_MEMPOOL, "MANAGED_MEMPOOL"},
		{DOCA_ETH_RXQ_TYPE_REGULAR, "REGULAR"},
	};
	static const struct {
		enum doca_eth_rxq_data_path_type path;
		const char *name;
	} rx_paths[] = {
		{DOCA_ETH_RXQ_DATA_PATH_TYPE_CPU, "CPU"},
		{DOCA_ETH_RXQ_DATA_PATH_TYPE_GPU, "GPU"},
	};
	static const struct {
		enum doca_eth_txq_data_path_type path;
		const char *name;
	} tx_paths[] = {
		{DOCA_ETH_TXQ_DATA_PATH_TYPE_CPU, "CPU"},
		{DOCA_ETH_TXQ_DATA_PATH_TYPE_GPU, "GPU"},
	};
	struct json_object *caps, *rxq, *txq, *types;
	enum doca_eth_wait_on_time_type wot = DOCA_ETH_WAIT_ON_TIME_TYPE_NONE;
	int any_rx = 0, any_tx = 0;
	uint32_t v = 0;
	doca_error_t st;

	caps = json_object_new_object();
	rxq = json_object_new_object();
	txq = json_object_new_object();
	if (caps == NULL || rxq == NULL || txq == NULL) {
		json_object_put(caps);
		json_object_put(rxq);
		json_object_put(txq);
		return NULL;
	}

	types = json_object_new_array();
	for (size_t t = 0; t < sizeof(rxq_types) / sizeof(rxq_types[0]); t++)
		for (size_t p = 0; p < sizeof(rx_paths) / sizeof(rx_paths[0]); p++) {
			st = doca_eth_rxq_cap_is_type_supported(info, rxq_types[t].type,
								rx_paths[p].path);
			any_rx |= st == DOCA_SUCCESS;
			json_object_array_add(types,
					      type_entry(rxq_types[t].name, rx_paths[p].name, st));
		}
	json_object_object_add(rxq, "types", types);
	st = doca_eth_rxq_cap_get_max_burst_size(info, &v);
	add_u32_or_null(rxq, "max_burst_size", st, v);
	st = doca_eth_rxq_cap_get_max_packet_size(info, &v);
	add_u32_or_null(rxq, "max_packet_size", st, v);

	types = json_object_new_array();
	for (size_t p = 0; p < sizeof(tx_paths) / sizeof(tx_paths[0]); p++) {
		st = doca_eth_txq_cap_is_type_supported(info, DOCA_ETH_TXQ_TYPE_REGULAR,
							tx_paths[p].path);
		any_tx |= st == DOCA_SUCCESS;
		json_object_array_add(types, type_entry("REGULAR", tx_paths[p].name, st));
	}
	json_object_object_add(txq, "types", types);
	/* one buffer per packet, no LSO header: what softdpu's send queues take */
	st = doca_eth_txq_cap_get_max_burst_size(info, 1, 0, &v);
	add_u32_or_null(txq, "max_burst_size", st, v);
	add_bool(txq, "l3_checksum_offload",
		 doca_eth_txq_cap_is_l3_chksum_offload_supported(info) == DOCA_SUCCESS);
	add_bool(txq, "l4_checksum_offload",
		 doca_eth_txq_cap_is_l4_chksum_offload_supported(info) == DOCA_SUCCESS);
	st = doca_eth_txq_cap_get_wait_on_time_offload_supported(info, &wot);
	if (st != DOCA_SUCCESS)
		json_object_object_add(txq, "wait_on_time", NULL);
	else
		add_str(txq, "wait_on_time",
			wot == DOCA_ETH_WAIT_ON_TIME_TYPE_NATIVE ? "NATIVE" :
			wot == DOCA_ETH_WAIT_ON_TIME_TYPE_DPDK	 ? "DPDK" :
								   "NONE");

	add_bool(caps, "ethernet", any_rx || any_tx);
	json_object_object_add(caps, "rxq", rxq);
	json_object_object_add(caps, "txq", txq);
	return caps;
}

/*
 * The port's MAC: open the device and an RX-only port for a moment. 0 with mac set, or -1 with
 * the reason.
 */
static int probe_mac(const struct doca_devinfo *info, uint8_t mac[6], char *why, size_t len)
{
	const struct sdp_eth_port_ops *ops;
	struct sdp_eth_port_cfg cfg = {.nb_rxq = 1, .nb_txq = 0, .ring_size = 64};
	struct sdp_eth_port_info pinfo;
	struct sdp_eth_port *port = NULL;
	struct doca_dev *dev = NULL;
	doca_error_t st;

	if (sdp_devinfo_get_eth_ops(info) == NULL) {
		snprintf(why, len, "no Ethernet port (provider %s)",
			 sdp_devinfo_get_provider_name(info));
		return -1;
	}
	st = doca_dev_open((struct doca_devinfo *)info, &dev);
	if (st != DOCA_SUCCESS) {
		snprintf(why, len, "doca_dev_open: %s", doca_error_get_descr(st));
		return -1;
	}
	ops = sdp_dev_get_eth_ops(dev);
	memset(&pinfo, 0, sizeof(pinfo));
	st = ops != NULL ? ops->port_open(sdp_dev_get_priv(dev), &cfg, &port, &pinfo) :
			   DOCA_ERROR_NOT_SUPPORTED;
	if (st != DOCA_SUCCESS) {
		snprintf(why, len, "opening a port: %s", doca_error_get_descr(st));
		doca_dev_close(dev);
		return -1;
	}
	memcpy(mac, pinfo.mac, 6);
	ops->port_close(port);
	doca_dev_close(dev);
	return 0;
}

struct json_object *sdp_info_device(const struct doca_devinfo *info, int caps)
{
	char ibdev[DOCA_DEVINFO_IBDEV_NAME_SIZE], iface[DOCA_DEVINFO_IFACE_NAME_SIZE];
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE], why[256], macs[32];
	const struct sdp_devinfo_attr *attr = sdp_devinfo_get_attr(info);
	enum doca_pci_func_type ft = DOCA_PCI_FUNC_TYPE_PF;
	struct json_object *o;
	uint8_t mac[6];

	if (attr == NULL ||
	    doca_devinfo_get_ibdev_name(info, ibdev, sizeof(ibdev)) != DOCA_SUCCESS ||
	    doca_devinfo_get_iface_name(info, iface, sizeof(iface)) != DOCA_SUCCESS ||
	    doca_devinfo_get_pci_addr_str(info, pci) != DOCA_SUCCESS ||
	    doca_devinfo_get_pci_func_type(info, &ft) != DOCA_SUCCESS)
		return NULL;
	o = json_object_new_object();
	if (o == NULL)
		return NULL;
	add_str(o, "name", ibdev);
	add_str(o, "pci_addr", pci);
	add_str(o, "backend", sdp_devinfo_get_provider_name(info));
	add_str(o, "iface", iface);
	add_str(o, "pci_func_type", func_type_name(ft));
	add_str(o, "link", attr->link_up ? "up" : "down");
	if (probe_mac(info, mac, why, sizeof(why)) == 0) {
		snprintf(macs, sizeof(macs), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1],
			 mac[2], mac[3], mac[4], mac[5]);
		add_str(o, "mac", macs);
	} else {
		json_object_object_add(o, "mac", NULL);
		add_str(o, "mac_reason", why);
	}
	if (caps)
		json_object_object_add(o, "caps", sdp_info_dev_caps(info));
	return o;
}

/* Does devinfo match select (ibdev name, interface name or PCI address)? */
static int dev_matches(const struct doca_devinfo *info, const char *select)
{
	char name[DOCA_DEVINFO_IBDEV_NAME_SIZE], iface[DOCA_DEVINFO_IFACE_NAME_SIZE];
	uint8_t eq = 0;

	if (doca_devinfo_get_ibdev_name(info, name, sizeof(name)) == DOCA_SUCCESS &&
	    strcmp(name, select) == 0)
		return 1;
	if (doca_devinfo_get_iface_name(info, iface, sizeof(iface)) == DOCA_SUCCESS &&
	    iface[0] != '\0' && strcmp(iface, select) == 0)
		return 1;
	/* only something shaped like a PCI address: the call logs anything else as an error */
	if (strchr(select, ':') != NULL && strchr(select, '.') != NULL &&
	    strspn(select, "0123456789abcdefABCDEF:.") == strlen(select) &&
	    doca_devinfo_is_equal_pci_addr(info, select, &eq) == DOCA_SUCCESS && eq)
		return 1;
	return 0;
}

struct json_object *sdp_info_devices(const char *select, int caps, char *err, size_t errlen)
{
	struct doca_devinfo **list = NULL;
	struct json_object *arr;
	uint32_t n = 0;
	doca_error_t st;

	err[0] = '\0';
	st = doca_devinfo_create_list(&list, &n);
	if (st != DOCA_SUCCESS) {
		snprintf(err, errlen, "doca_devinfo_create_list: %s", doca_error_get_descr(st));
		return NULL;
	}
	arr = json_object_new_array();
	for (uint32_t i = 0; arr != NULL && i < n; i++) {
		struct json_object *d;

		if (select != NULL && !dev_matches(list[i], select))
			continue;
		d = sdp_info_device(list[i], caps);
		if (d == NULL) {
			snprintf(err, errlen, "device %u: cannot read its attributes", i);
			json_object_put(arr);
			arr = NULL;
			break;
		}
		json_object_array_add(arr, d);
	}
	doca_devinfo_destroy_list(list);
	if (arr != NULL && select != NULL && json_object_array_length(arr) == 0) {
		snprintf(err, errlen,
			 "no device named %s (ibdev name, interface name or PCI address) among the "
			 "%u devices found",
			 select, n);
		json_object_put(arr);
		return NULL;
	}
	if (arr == NULL && err[0] == '\0')
		snprintf(err, errlen, "out of memory");
	return arr;
}

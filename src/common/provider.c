/*
 * Device provider modules: finding and loading them, and reading device declarations.
 *
 * Done once per process, at the first need (sdp_providers_load). Everything built here stays
 * until the process ends: providers are never unloaded, because devinfos and open devices point
 * into them.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "sdp_build_config.h" /* build facts: versions, paths, SDP_HAVE_* */

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#endif
#endif

#include "sdp_config.h"
#include "sdp_dev_int.h"
#include "sdp_log.h"
#include "sdp_provider.h"

SDP_LOG_COMPONENT("provider");

/* A declaration file larger than this is refused (it is a few lines in practice). */
#define DECL_FILE_MAX (1u << 20)
/* One declaration longer than this is refused. */
#define DECL_TEXT_MAX 4096

struct provider {
	const struct sdp_provider_ops *ops;
	void *handle;
	char *path;
	struct sdp_dev_decl **decls; /* kept declarations, each one allocation */
	size_t num_decls;
};

static struct {
	pthread_mutex_t lock;
	int loaded;
	doca_error_t load_status;
	struct provider *providers;
	size_t num_providers;
	struct sdp_provider_issue *issues;
	size_t num_issues;
} g_reg = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

/* ---- issues ---------------------------------------------------------------------------------- */

/* Keep one issue (and log it, at WARNING, unless the caller already did). */
static void __attribute__((format(printf, 3, 4)))
issue_add(int log, const char *where, const char *fmt, ...)
{
	struct sdp_provider_issue *issues;
	char reason[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);

	if (log)
		sdp_warn("%s: %s", where, reason);

	issues = realloc(g_reg.issues, (g_reg.num_issues + 1) * sizeof(*issues));
	if (issues == NULL)
		return; /* already logged; the record is best effort */
	g_reg.issues = issues;
	issues[g_reg.num_issues].where = strdup(where);
	issues[g_reg.num_issues].reason = strdup(reason);
	if (issues[g_reg.num_issues].where == NULL || issues[g_reg.num_issues].reason == NULL) {
		free((void *)issues[g_reg.num_issues].where);
		free((void *)issues[g_reg.num_issues].reason);
		return;
	}
	g_reg.num_issues++;
}

/* ---- PCI addresses --------------------------------------------------------------------------- */

static int hex_field(const char *s, size_t n, unsigned *value)
{
	unsigned v = 0;

	for (size_t i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return 0;
		v = v * 16 + (unsigned)(isdigit((unsigned char)s[i]) ?
						s[i] - '0' :
						tolower((unsigned char)s[i]) - 'a' + 10);
	}
	*value = v;
	return 1;
}

doca_error_t sdp_pci_addr_normalize(const char *in, char out[DOCA_DEVINFO_PCI_ADDR_SIZE])
{
	unsigned domain = 0, bus, device, function;
	const char *bdf;
	size_t len;

	if (in == NULL || out == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	len = strnlen(in, DOCA_DEVINFO_PCI_ADDR_SIZE);
	if (len == DOCA_DEVINFO_PCI_ADDR_SIZE - 1) {
		if (in[4] != ':' || !hex_field(in, 4, &domain))
			return DOCA_ERROR_INVALID_VALUE;
		bdf = in + 5;
	} else if (len == DOCA_DEVINFO_PCI_BDF_SIZE - 1) {
		bdf = in;
	} else {
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* bdf is "bb:dd.f" */
	if (bdf[2] != ':' || bdf[5] != '.' || !hex_field(bdf, 2, &bus) ||
	    !hex_field(bdf + 3, 2, &device) || !hex_field(bdf + 6, 1, &function))
		return DOCA_ERROR_INVALID_VALUE;
	if (device > 0x1f || function > 7)
		return DOCA_ERROR_INVALID_VALUE;
	snprintf(out, DOCA_DEVINFO_PCI_ADDR_SIZE, "%04x:%02x:%02x.%x", domain, bus, device,
		 function);
	return DOCA_SUCCESS;
}

/* ---- declarations ---------------------------------------------------------------------------- */

const char *sdp_dev_decl_get(const struct sdp_dev_decl *decl, const char *key)
{
	if (decl == NULL || key == NULL)
		return NULL;
	for (size_t i = 0; i < decl->num_params; i++)
		if (strcmp(decl->params[i].key, key) == 0)
			return decl->params[i].value;
	return NULL;
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

static int is_name_char(int c)
{
	return islower(c) || isdigit(c) || c == '_';
}

static int is_key_char(int c)
{
	return isalnum(c) || c == '_' || c == '.' || c == '-';
}

/*
 * Parse one trimmed, non-empty declaration in place and hand it to cb: returns 1. For a
 * malformed one, writes why into `why`, points *reason at it and returns 0.
 */
static int parse_one(char *text, const char *origin, sdp_decl_cb_t cb, void *arg,
		     const char **reason, char *why, size_t why_size)
{
	struct sdp_dev_param params[64];
	struct sdp_dev_decl decl = {.origin = origin, .params = params};
	char *colon, *item, *save = NULL;
	size_t nlen;

	colon = strchr(text, ':');
	if (colon != NULL)
		*colon = '\0';
	decl.provider = trim(text);
	nlen = strlen(decl.provider);
	if (nlen == 0 || nlen >= SDP_PROVIDER_NAME_MAX) {
		snprintf(why, why_size, "provider name must have 1 to %d characters",
			 SDP_PROVIDER_NAME_MAX - 1);
		goto bad;
	}
	for (size_t i = 0; i < nlen; i++) {
		if (!is_name_char((unsigned char)decl.provider[i])) {
			snprintf(why, why_size, "bad provider name '%s' (allowed: a-z 0-9 _)",
				 decl.provider);
			goto bad;
		}
	}

	if (colon != NULL && *trim(colon + 1) != '\0') {
		for (item = strtok_r(colon + 1, ",", &save); item != NULL;
		     item = strtok_r(NULL, ",", &save)) {
			char *eq, *key, *value;

			item = trim(item);
			eq = strchr(item, '=');
			if (eq == NULL) {
				snprintf(why, why_size, "parameter '%s' is not key=value", item);
				goto bad;
			}
			*eq = '\0';
			key = trim(item);
			value = trim(eq + 1);
			if (*key == '\0' || *value == '\0') {
				snprintf(why, why_size, "parameter '%s=%s' has an empty %s", key,
					 value, *key == '\0' ? "key" : "value");
				goto bad;
			}
			for (const char *k = key; *k != '\0'; k++) {
				if (!is_key_char((unsigned char)*k)) {
					snprintf(why, why_size,
						 "bad key '%s' (allowed: A-Z a-z 0-9 _ . -)", key);
					goto bad;
				}
			}
			for (size_t i = 0; i < decl.num_params; i++) {
				if (strcmp(params[i].key, key) == 0) {
					snprintf(why, why_size, "key '%s' given twice", key);
					goto bad;
				}
			}
			if (decl.num_params == sizeof(params) / sizeof(params[0])) {
				snprintf(why, why_size, "more than %zu parameters",
					 sizeof(params) / sizeof(params[0]));
				goto bad;
			}
			params[decl.num_params].key = key;
			params[decl.num_params].value = value;
			decl.num_params++;
		}
	}
	cb(&decl, arg);
	return 1;

bad:
	*reason = why;
	return 0;
}

/* Empty items between commas are a typo worth reporting; strtok_r would hide them. */
static int has_empty_param(const char *text)
{
	const char *colon = strchr(text, ':');
	const char *p;
	int seen_value = 0, only_space = 1;

	if (colon == NULL)
		return 0;
	for (p = colon + 1; *p != '\0'; p++) {
		if (*p == ',') {
			if (only_space)
				return 1;
			only_space = 1;
			seen_value = 1;
		} else if (!isspace((unsigned char)*p)) {
			only_space = 0;
		}
	}
	return seen_value && only_space;
}

size_t sdp_dev_decl_parse(const char *text, const char *source, int lines, sdp_decl_cb_t cb,
			  sdp_decl_bad_cb_t bad_cb, void *arg)
{
	char *copy, *line, *line_save = NULL;
	size_t good = 0, entry = 0, lineno = 1;
	const char *counted = text; /* newlines before here are in lineno */
	char origin[PATH_MAX + 32];
	char why[256];

	if (text == NULL || source == NULL || cb == NULL)
		return 0;
	copy = strdup(text);
	if (copy == NULL) {
		sdp_error("cannot read the declarations of %s: out of memory", source);
		return 0;
	}

	/* Split by lines first (file mode), then every line by ';'. */
	for (line = lines ? strtok_r(copy, "\n", &line_save) : copy; line != NULL;
	     line = lines ? strtok_r(NULL, "\n", &line_save) : NULL) {
		char *decl_text, *next;

		/* strtok_r skips empty lines: count the newlines up to this line */
		if (lines) {
			char *hash;

			for (; counted < text + (line - copy); counted++)
				lineno += (*counted == '\n');
			hash = strchr(line, '#');
			if (hash != NULL)
				*hash = '\0';
		}

		for (decl_text = line; decl_text != NULL; decl_text = next) {
			const char *reason = NULL;
			char *t;

			next = strchr(decl_text, ';');
			if (next != NULL)
				*next++ = '\0';
			entry++;
			t = trim(decl_text);
			if (*t == '\0')
				continue;
			if (lines)
				snprintf(origin, sizeof(origin), "%s:%zu", source, lineno);
			else
				snprintf(origin, sizeof(origin), "%s entry %zu", source, entry);

			if (strlen(t) > DECL_TEXT_MAX) {
				snprintf(why, sizeof(why), "declaration longer than %d characters",
					 DECL_TEXT_MAX);
				reason = why;
			} else if (has_empty_param(t)) {
				reason = "empty parameter (stray ',')";
			} else if (parse_one(t, origin, cb, arg, &reason, why, sizeof(why))) {
				good++;
				continue;
			}
			sdp_warn("%s: malformed device declaration, skipped: %s", origin, reason);
			if (bad_cb != NULL)
				bad_cb(origin, reason, arg);
		}
	}
	free(copy);
	return good;
}

/* ---- keeping declarations -------------------------------------------------------------------- */

/* Copy src (with its NUL) to *strings, move *strings past it, and return the copy. */
static char *str_into(char **strings, const char *src)
{
	size_t n = strlen(src) + 1;
	char *copy = memcpy(*strings, src, n);

	*strings += n;
	return copy;
}

static struct sdp_dev_decl *decl_dup(const struct sdp_dev_decl *d)
{
	size_t size = sizeof(struct sdp_dev_decl) + d->num_params * sizeof(struct sdp_dev_param);
	struct sdp_dev_param *params;
	struct sdp_dev_decl *copy;
	char *strings;

	size += strlen(d->provider) + 1 + strlen(d->origin) + 1;
	for (size_t i = 0; i < d->num_params; i++)
		size += strlen(d->params[i].key) + 1 + strlen(d->params[i].value) + 1;
	copy = malloc(size);
	if (copy == NULL)
		return NULL;
	params = (struct sdp_dev_param *)(copy + 1);
	strings = (char *)(params + d->num_params);

	copy->provider = str_into(&strings, d->provider);
	copy->origin = str_into(&strings, d->origin);
	for (size_t i = 0; i < d->num_params; i++) {
		params[i].key = str_into(&strings, d->params[i].key);
		params[i].value = str_into(&strings, d->params[i].value);
	}
	copy->num_params = d->num_params;
	copy->params = params;
	return copy;
}

static struct provider *provider_find(const char *name)
{
	for (size_t i = 0; i < g_reg.num_providers; i++)
		if (strcmp(g_reg.providers[i].ops->name, name) == 0)
			return &g_reg.providers[i];
	return NULL;
}

/* Called for every syntactically good declaration. */
static void decl_keep(const struct sdp_dev_decl *decl, void *arg)
{
	struct provider *p = provider_find(decl->provider);
	struct sdp_dev_decl **decls, *copy;
	doca_error_t status;

	(void)arg;
	if (p == NULL) {
		issue_add(1, decl->origin, "unknown provider '%s', declaration skipped",
			  decl->provider);
		return;
	}
	if (p->ops->decl_check == NULL) {
		issue_add(1, decl->origin, "provider '%s' takes no device declarations, skipped",
			  decl->provider);
		return;
	}
	status = p->ops->decl_check(decl);
	if (status != DOCA_SUCCESS) {
		/* the provider logged its reason */
		issue_add(0, decl->origin, "refused by provider '%s' (%s), skipped", decl->provider,
			  doca_error_get_name(status));
		return;
	}
	copy = decl_dup(decl);
	decls = realloc(p->decls, (p->num_decls + 1) * sizeof(*decls));
	if (copy == NULL || decls == NULL) {
		free(copy);
		if (decls != NULL)
			p->decls = decls;
		issue_add(1, decl->origin, "out of memory, declaration skipped");
		return;
	}
	p->decls = decls;
	p->decls[p->num_decls++] = copy;
}

static void decl_bad(const char *origin, const char *reason, void *arg)
{
	(void)arg;
	issue_add(0, origin, "malformed declaration, skipped: %s", reason);
}

static void read_decl_file(void)
{
	const char *path = sdp_config_get_string(SDP_CFG_DEVICE_CONFIG);
	const char *def = sdp_config_default(SDP_CFG_DEVICE_CONFIG);
	int explicit = path != NULL && (def == NULL || strcmp(path, def) != 0);
	char *text = NULL;
	struct stat st;
	size_t got;
	FILE *f;

	if (path == NULL || *path == '\0')
		return;
	f = fopen(path, "re");
	if (f == NULL) {
		if (explicit || errno != ENOENT)
			issue_add(1, path, "cannot open the device configuration file: %s",
				  strerror(errno));
		else
			sdp_debug("no device configuration file %s", path);
		return;
	}
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > DECL_FILE_MAX) {
		issue_add(1, path, "not a regular file of at most %u bytes, ignored",
			  DECL_FILE_MAX);
		goto out;
	}
	text = malloc((size_t)st.st_size + 1);
	if (text == NULL) {
		issue_add(1, path, "out of memory, file ignored");
		goto out;
	}
	got = fread(text, 1, (size_t)st.st_size, f);
	if (ferror(f)) {
		issue_add(1, path, "read failed: %s", strerror(errno));
		goto out;
	}
	text[got] = '\0';
	if (strlen(text) != got) {
		issue_add(1, path, "file contains a NUL byte, ignored");
		goto out;
	}
	sdp_dev_decl_parse(text, path, 1, decl_keep, decl_bad, NULL);
out:
	free(text);
	fclose(f);
}

/* ---- modules --------------------------------------------------------------------------------- */

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* True when [addr, addr+len) starts and ends inside the loaded segments of the object map. */
static int in_module(const struct link_map *map, const void *addr, size_t len)
{
	const char *last = (const char *)addr + len - 1;
	struct link_map *found = NULL;
	Dl_info info;

	if (addr == NULL || len == 0 || (uintptr_t)last < (uintptr_t)addr)
		return 0;
	if (dladdr1(addr, &info, (void **)&found, RTLD_DL_LINKMAP) == 0 || found != map)
		return 0;
	if (last == (const char *)addr)
		return 1;
	found = NULL;
	return dladdr1(last, &info, (void **)&found, RTLD_DL_LINKMAP) != 0 && found == map;
}

/*
 * The length of the string at s (below max), read only inside the loaded segments of the object
 * map, so a string at the end of a segment is not read past it; max when s has no NUL among its
 * first max bytes or leaves the module first. Segments are mapped in whole pages: the module is
 * looked up for the first byte and again only where the string enters a new page.
 */
static size_t module_strnlen(const struct link_map *map, const char *s, size_t max)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

	for (size_t n = 0; n < max; n++) {
		if ((n == 0 || ((uintptr_t)(s + n) & (page - 1)) == 0) && !in_module(map, s + n, 1))
			return max;
		if (s[n] == '\0')
			return n;
	}
	return max;
}

/*
 * Whether the ELF symbol at `symbol` of st_size `size` is an object of exactly one pointer.
 * clang's ASan counts a global's redzone in st_size (a pointer and an int are both 32 bytes
 * there), so under ASan a padded size is judged by the shadow: the pointer's bytes addressable,
 * the byte after them a redzone.
 */
static int symbol_is_one_pointer(const void *symbol, size_t size)
{
	(void)symbol; /* read only under ASan */
	if (size == sizeof(const struct sdp_provider_ops *))
		return 1;
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
	if (size > sizeof(const struct sdp_provider_ops *) &&
	    __asan_region_is_poisoned((void *)(uintptr_t)symbol,
				      sizeof(const struct sdp_provider_ops *)) == NULL &&
	    __asan_address_is_poisoned((const char *)symbol +
				       sizeof(const struct sdp_provider_ops *)))
		return 1;
#endif
#endif
	return 0;
}

/*
 * The ops table a module exports, or NULL after recording why it is not one. The symbol is read
 * only through the layout its ELF entry proves: it must be an object of exactly one pointer
 * (`int sdp_provider = 5;` is 4 bytes and refused unread; symbol_is_one_pointer), and the
 * pointer must lead to a whole, aligned table inside the module's own loaded image (a garbage
 * pointer is refused undereferenced).
 * Only then are the table's ABI version and name read.
 */
static const struct sdp_provider_ops *module_ops(void *handle, const char *path)
{
	const struct sdp_provider_ops *const *symbol;
	const struct sdp_provider_ops *ops;
	const ElfW(Sym) *sym = NULL;
	struct link_map *map = NULL;
	Dl_info info;

	dlerror();
	symbol = dlsym(handle, SDP_PROVIDER_SYMBOL);
	if (symbol == NULL) {
		issue_add(1, path, "not a softdpu provider (no '%s' symbol), skipped",
			  SDP_PROVIDER_SYMBOL);
		return NULL;
	}
	if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == NULL ||
	    dladdr1(symbol, &info, (void **)&sym, RTLD_DL_SYMENT) == 0 || sym == NULL ||
	    info.dli_saddr != (void *)symbol) {
		issue_add(1, path, "cannot read the ELF symbol entry of '%s', skipped",
			  SDP_PROVIDER_SYMBOL);
		return NULL;
	}
	if (ELF64_ST_TYPE(sym->st_info) != STT_OBJECT ||
	    !symbol_is_one_pointer(symbol, (size_t)sym->st_size) ||
	    (uintptr_t)symbol % _Alignof(const struct sdp_provider_ops *) != 0) {
		issue_add(1, path,
			  "'%s' is not a pointer to a provider table (%s of %zu bytes, expected "
			  "an object of %zu), skipped",
			  SDP_PROVIDER_SYMBOL,
			  ELF64_ST_TYPE(sym->st_info) == STT_OBJECT ? "an object" : "a non-object",
			  (size_t)sym->st_size, sizeof(ops));
		return NULL;
	}
	ops = *symbol;
	if (ops == NULL) {
		issue_add(1, path, "'%s' is NULL, skipped", SDP_PROVIDER_SYMBOL);
		return NULL;
	}
	if ((uintptr_t)ops % _Alignof(struct sdp_provider_ops) != 0 ||
	    !in_module(map, ops, sizeof(*ops))) {
		issue_add(1, path,
			  "'%s' points at %p, not at a whole provider table inside the module, "
			  "skipped",
			  SDP_PROVIDER_SYMBOL, (const void *)ops);
		return NULL;
	}
	if (ops->abi_version != SDP_PROVIDER_ABI_VERSION) {
		issue_add(1, path, "provider ABI %u, this library needs %u, skipped",
			  ops->abi_version, SDP_PROVIDER_ABI_VERSION);
		return NULL;
	}
	if (ops->name == NULL ||
	    module_strnlen(map, ops->name, SDP_PROVIDER_NAME_MAX) == SDP_PROVIDER_NAME_MAX) {
		issue_add(1, path,
			  "provider table has no name of at most %d characters inside the module, "
			  "skipped",
			  SDP_PROVIDER_NAME_MAX - 1);
		return NULL;
	}
	return ops;
}

static void load_module(const char *path, const char *file)
{
	const struct sdp_provider_ops *ops;
	char name[SDP_PROVIDER_NAME_MAX];
	size_t name_len = strlen(file) - strlen(SDP_PROVIDER_FILE_PREFIX) - strlen(".so");
	struct provider *providers;
	doca_error_t status;
	void *handle;

	if (name_len == 0 || name_len >= sizeof(name)) {
		issue_add(1, path, "module name must have 1 to %zu characters after '%s', skipped",
			  sizeof(name) - 1, SDP_PROVIDER_FILE_PREFIX);
		return;
	}
	memcpy(name, file + strlen(SDP_PROVIDER_FILE_PREFIX), name_len);
	name[name_len] = '\0';
	if (provider_find(name) != NULL) {
		issue_add(1, path, "provider '%s' is already loaded from %s, skipped", name,
			  sdp_provider_get_path((size_t)(provider_find(name) - g_reg.providers)));
		return;
	}

	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (handle == NULL) {
		issue_add(1, path, "cannot load: %s", dlerror());
		return;
	}
	ops = module_ops(handle, path);
	if (ops == NULL)
		goto err_close;
	if (strncmp(ops->name, name, sizeof(name)) != 0) {
		issue_add(1, path, "provider calls itself '%.*s' but its file says '%s', skipped",
			  (int)sizeof(name), ops->name, name);
		goto err_close;
	}
	if (ops->enumerate == NULL) {
		issue_add(1, path, "provider '%s' has no enumerate op, skipped", name);
		goto err_close;
	}
	if (ops->init != NULL) {
		status = ops->init();
		if (status != DOCA_SUCCESS) {
			issue_add(1, path, "provider '%s' failed to initialise (%s), skipped", name,
				  doca_error_get_name(status));
			goto err_close;
		}
	}

	providers = realloc(g_reg.providers, (g_reg.num_providers + 1) * sizeof(*providers));
	if (providers == NULL) {
		issue_add(1, path, "out of memory, skipped");
		goto err_close;
	}
	g_reg.providers = providers;
	providers[g_reg.num_providers] =
		(struct provider){.ops = ops, .handle = handle, .path = strdup(path)};
	if (providers[g_reg.num_providers].path == NULL) {
		issue_add(1, path, "out of memory, skipped");
		goto err_close;
	}
	g_reg.num_providers++;
	sdp_debug("loaded provider '%s' from %s", name, path);
	return;

err_close:
	dlclose(handle);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Load every sdp_provider_*.so of dir, in name order. */
static void scan_dir(const char *dir, int explicit)
{
	char **files = NULL, **grown;
	size_t num_files = 0;
	struct dirent *de;
	DIR *d;

	d = opendir(dir);
	if (d == NULL) {
		if (explicit)
			issue_add(1, dir, "cannot open provider directory: %s", strerror(errno));
		else
			sdp_debug("no provider directory %s: %m", dir);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, SDP_PROVIDER_FILE_PREFIX,
			    strlen(SDP_PROVIDER_FILE_PREFIX)) != 0 ||
		    !has_suffix(de->d_name, ".so"))
			continue;
		grown = realloc(files, (num_files + 1) * sizeof(*files));
		if (grown == NULL || (grown[num_files] = strdup(de->d_name)) == NULL) {
			if (grown != NULL)
				files = grown;
			issue_add(1, dir, "out of memory while listing providers");
			break;
		}
		files = grown;
		num_files++;
	}
	closedir(d);

	if (num_files > 0)
		qsort(files, num_files, sizeof(*files), cmp_str);
	for (size_t i = 0; i < num_files; i++) {
		char path[PATH_MAX];

		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, files[i]) >= sizeof(path))
			issue_add(1, dir, "path of '%s' too long, skipped", files[i]);
		else
			load_module(path, files[i]);
		free(files[i]);
	}
	free(files);
}

/* 1 when the configured provider directory lies under the configured prefix. */
static int provider_under_prefix(void)
{
	size_t len = strlen(SDP_PREFIX);

	return strncmp(SDP_PROVIDER_DIR, SDP_PREFIX, len) == 0 && SDP_PROVIDER_DIR[len] == '/';
}

/* 1 when a and b name the same directory (both exist). */
static int same_dir(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* Directories searched when SOFTDPU_PROVIDER_PATH is not set (docs/devices.md). */
static void scan_default_dirs(void)
{
	char lib_dir[PATH_MAX], dir[PATH_MAX], real_a[PATH_MAX], real_b[PATH_MAX];
	const char *build_root = SDP_BUILD_ROOT;
	size_t root_len = strlen(build_root);
	Dl_info info;
	char *slash;

	if (dladdr((void *)&sdp_providers_load, &info) == 0 || info.dli_fname == NULL ||
	    strlen(info.dli_fname) >= sizeof(lib_dir)) {
		sdp_warn("cannot tell where libdoca_common was loaded from; searching %s only",
			 SDP_PROVIDER_DIR);
		scan_dir(SDP_PROVIDER_DIR, 0);
		return;
	}
	strcpy(lib_dir, info.dli_fname);
	slash = strrchr(lib_dir, '/');
	if (slash != NULL)
		*slash = '\0';
	else
		strcpy(lib_dir, ".");
	/* dli_fname is the path the loader used, relative when LD_LIBRARY_PATH was. */
	if (realpath(lib_dir, real_a) != NULL)
		strcpy(lib_dir, real_a);

	if (strncmp(lib_dir, build_root, root_len) == 0 &&
	    (lib_dir[root_len] == '/' || lib_dir[root_len] == '\0')) {
		/* Running from the build tree: only the modules of this build. */
		char providers[PATH_MAX];
		struct dirent *de;
		char **subdirs = NULL;
		size_t num = 0;
		DIR *d;

		snprintf(providers, sizeof(providers), "%s/src/providers", build_root);
		d = opendir(providers);
		if (d == NULL) {
			sdp_warn("build tree provider directory %s: %m", providers);
			return;
		}
		while ((de = readdir(d)) != NULL) {
			char **grown;

			if (de->d_name[0] == '.')
				continue;
			grown = realloc(subdirs, (num + 1) * sizeof(*subdirs));
			if (grown == NULL)
				break;
			subdirs = grown;
			if ((subdirs[num] = strdup(de->d_name)) == NULL)
				break;
			num++;
		}
		closedir(d);
		if (num > 0)
			qsort(subdirs, num, sizeof(*subdirs), cmp_str);
		for (size_t i = 0; i < num; i++) {
			struct stat st;

			if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", providers, subdirs[i]) <
				    sizeof(dir) &&
			    stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
				scan_dir(dir, 0);
			free(subdirs[i]);
		}
		free(subdirs);
		return;
	}

	/*
	 * Installed: next to the library, and the configured directory when it differs, unless
	 * the library runs from another libdir (a relocated or DESTDIR-staged install) and the
	 * configured directory is under the configured prefix: that one is another install's.
	 */
	snprintf(dir, sizeof(dir), "%s/softdpu/providers", lib_dir);
	scan_dir(dir, 0);
	if ((realpath(dir, real_a) == NULL || realpath(SDP_PROVIDER_DIR, real_b) == NULL ||
	     strcmp(real_a, real_b) != 0) &&
	    !(provider_under_prefix() && !same_dir(lib_dir, SDP_LIBDIR)))
		scan_dir(SDP_PROVIDER_DIR, 0);
}

static void scan_path(void)
{
	char **dirs = NULL;
	size_t num = 0;
	doca_error_t status;

	status = sdp_config_get_list(SDP_CFG_PROVIDER_PATH, &dirs, &num);
	if (status != DOCA_SUCCESS || num == 0) {
		sdp_config_free_list(dirs);
		scan_default_dirs();
		return;
	}
	for (size_t i = 0; i < num; i++)
		scan_dir(dirs[i], 1);
	sdp_config_free_list(dirs);
}

doca_error_t sdp_providers_load(void)
{
	doca_error_t status;

	pthread_mutex_lock(&g_reg.lock);
	if (g_reg.loaded) {
		status = g_reg.load_status;
		pthread_mutex_unlock(&g_reg.lock);
		return status;
	}
	scan_path();
	if (g_reg.num_providers == 0)
		issue_add(
			1, "providers",
			"no device provider loaded (see docs/devices.md); the device list is empty");
	sdp_dev_decl_parse(sdp_config_get_string(SDP_CFG_DEVICES), sdp_config_name(SDP_CFG_DEVICES),
			   0, decl_keep, decl_bad, NULL);
	read_decl_file();
	g_reg.loaded = 1;
	g_reg.load_status = DOCA_SUCCESS;
	status = g_reg.load_status;
	pthread_mutex_unlock(&g_reg.lock);
	return status;
}

/* ---- queries --------------------------------------------------------------------------------- */

size_t sdp_provider_get_issues(const struct sdp_provider_issue **issues)
{
	sdp_providers_load();
	if (issues != NULL)
		*issues = g_reg.issues;
	return g_reg.num_issues;
}

const char *sdp_provider_get_name(size_t idx)
{
	return idx < g_reg.num_providers ? g_reg.providers[idx].ops->name : NULL;
}

const char *sdp_provider_get_path(size_t idx)
{
	return idx < g_reg.num_providers ? g_reg.providers[idx].path : NULL;
}

const struct sdp_eth_port_ops *sdp_dev_get_eth_ops(const struct doca_dev *dev)
{
	const struct sdp_provider_ops *ops = sdp_dev_get_provider_ops(dev);

	return ops != NULL ? ops->eth : NULL;
}

size_t sdp_providers_num(void)
{
	return g_reg.num_providers;
}

const struct sdp_provider_ops *
sdp_providers_ops(size_t idx, const struct sdp_dev_decl *const **decls, size_t *num_decls)
{
	if (idx >= g_reg.num_providers)
		return NULL;
	*decls = (const struct sdp_dev_decl *const *)g_reg.providers[idx].decls;
	*num_decls = g_reg.providers[idx].num_decls;
	return g_reg.providers[idx].ops;
}

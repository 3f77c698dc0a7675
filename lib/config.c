#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "macro.h"
#include "timeutil.h"

void config_defaults(struct config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	strcpy(cfg->db, FB_DEFAULT_DB);
	strcpy(cfg->runtime_dir, FB_DEFAULT_RUNTIME_DIR);
	strcpy(cfg->listen, FB_DEFAULT_LISTEN);
	strcpy(cfg->http_read_token, FB_DEFAULT_READ_TOKEN);
	strcpy(cfg->http_action_token, FB_DEFAULT_ACTION_TOKEN);
	cfg->http_uid = FB_DEFAULT_HTTP_UID;
	cfg->http_clients_max = 256;
	cfg->http_idle_timeout_ns = 30LL * NSEC_PER_SEC;
	cfg->log_level = LOG_LEVEL_INFO;
	cfg->batch_max = 4096;
	cfg->queue_max = 262144;
	cfg->sync_full = 1;
	cfg->retention_max_age_ns = 30LL * 86400 * NSEC_PER_SEC;
	cfg->retention_max_bytes = 8ULL << 30;
	cfg->retention_interval_ns = 600LL * NSEC_PER_SEC;
	cfg->trace_clients_max = 256;
	cfg->trace_idle_timeout_ns = 300LL * NSEC_PER_SEC;
	cfg->trace_stall_timeout_ns = 30LL * NSEC_PER_SEC;
	cfg->trace_reply_buffer_max = 1 << 20;
	cfg->gate_nflog_group = 7301;
	cfg->stats_period_ns = 250 * NSEC_PER_MSEC;
	cfg->proc_ring_size = 4 << 20;
	cfg->detector_actions = 1;
}

static int set_path(char *dst, const char *value, char *err, size_t errlen)
{
	if (value[0] != '/') {
		snprintf(err, errlen, "must be an absolute path");
		return -EINVAL;
	}
	if (strscpy(dst, PATH_MAX, value) < 0) {
		snprintf(err, errlen, "path too long");
		return -EINVAL;
	}
	return 0;
}

static int set_uint(uint64_t *dst, const char *value, uint64_t min, uint64_t max, char *err,
		    size_t errlen)
{
	uint64_t v;

	if (size_parse(value, &v) < 0 || v < min || v > max) {
		snprintf(err, errlen, "must be a number from %llu to %llu", (unsigned long long)min,
			 (unsigned long long)max);
		return -EINVAL;
	}
	*dst = v;
	return 0;
}

static int set_duration(int64_t *dst, const char *value, int allow_zero, char *err, size_t errlen)
{
	int64_t v;

	if (duration_parse(value, &v) < 0 || (v == 0 && !allow_zero)) {
		snprintf(err, errlen, "must be a duration such as 250ms, 30s, 15m, 2h or 7d%s",
			 allow_zero ? " (0 = off)" : "");
		return -EINVAL;
	}
	*dst = v;
	return 0;
}

int config_endpoint_parse(const char *url, struct endpoint *ret)
{
	struct endpoint e = { 0 };
	const char *h, *colon, *slash;
	struct in6_addr a6;
	struct in_addr a4;
	unsigned long port;
	char *end;

	if (strncmp(url, "http://", 7) != 0)
		return -EINVAL;
	h = url + 7;
	slash = strchr(h, '/');
	if (!slash)
		slash = h + strlen(h);
	if (*h == '[') {
		const char *close = memchr(h, ']', (size_t)(slash - h));

		if (!close || close[1] != ':' || (size_t)(close - h - 1) >= sizeof(e.host))
			return -EINVAL;
		memcpy(e.host, h + 1, (size_t)(close - h - 1));
		colon = close + 1;
	} else {
		colon = memchr(h, ':', (size_t)(slash - h));
		if (!colon || (size_t)(colon - h) >= sizeof(e.host))
			return -EINVAL;
		memcpy(e.host, h, (size_t)(colon - h));
	}
	if (inet_pton(AF_INET, e.host, &a4) != 1 && inet_pton(AF_INET6, e.host, &a6) != 1)
		return -EINVAL;
	port = strtoul(colon + 1, &end, 10);
	if (end != slash || port == 0 || port > 65535)
		return -EINVAL;
	snprintf(e.port, sizeof(e.port), "%lu", port);
	if (strscpy(e.path, sizeof(e.path), *slash ? slash : "/") < 0 ||
	    strpbrk(e.path, " \t\r\n"))
		return -EINVAL;
	*ret = e;
	return 0;
}

int config_set(struct config *cfg, const char *key, const char *value, char *err, size_t errlen)
{
	uint64_t v;
	int r;

	if (strcmp(key, "db") == 0)
		return set_path(cfg->db, value, err, errlen);
	if (strcmp(key, "runtime_dir") == 0)
		return set_path(cfg->runtime_dir, value, err, errlen);
	if (strcmp(key, "listen") == 0) {
		if ((strcmp(value, "off") != 0 && !strchr(value, ':')) ||
		    strscpy(cfg->listen, sizeof(cfg->listen), value) < 0) {
			snprintf(err, errlen, "must be ADDRESS:PORT or off");
			return -EINVAL;
		}
		return 0;
	}
	if (strcmp(key, "web_dir") == 0)
		return set_path(cfg->web_dir, value, err, errlen);
	if (strcmp(key, "http_read_token") == 0)
		return set_path(cfg->http_read_token, value, err, errlen);
	if (strcmp(key, "http_action_token") == 0)
		return set_path(cfg->http_action_token, value, err, errlen);
	if (strcmp(key, "http_uid") == 0) {
		r = set_uint(&v, value, 1, 0xfffffffe, err, errlen);
		if (r == 0)
			cfg->http_uid = (uint32_t)v;
		return r;
	}
	if (strcmp(key, "http_clients_max") == 0) {
		r = set_uint(&v, value, 1, 4096, err, errlen);
		if (r == 0)
			cfg->http_clients_max = (unsigned)v;
		return r;
	}
	if (strcmp(key, "http_idle_timeout") == 0) {
		r = set_duration(&cfg->http_idle_timeout_ns, value, 0, err, errlen);
		if (r == 0 && (cfg->http_idle_timeout_ns < NSEC_PER_SEC ||
			       cfg->http_idle_timeout_ns > 3600 * NSEC_PER_SEC)) {
			snprintf(err, errlen, "must be 1s to 1h");
			return -EINVAL;
		}
		return r;
	}
	if (strcmp(key, "otlp_endpoint") == 0 || strcmp(key, "loki_endpoint") == 0) {
		if (config_endpoint_parse(value, key[0] == 'o' ? &cfg->otlp : &cfg->loki) < 0) {
			snprintf(err, errlen, "must be http://ADDRESS:PORT/PATH, the address numeric");
			return -EINVAL;
		}
		return 0;
	}
	if (strcmp(key, "http_cors_origin") == 0) {
		/* One origin, as a browser sends it: scheme://host[:port], nothing a header could
		 * be split with. */
		if ((strncmp(value, "http://", 7) != 0 && strncmp(value, "https://", 8) != 0) ||
		    strpbrk(value, " \t\r\n,;\"") ||
		    strscpy(cfg->http_cors_origin, sizeof(cfg->http_cors_origin), value) < 0) {
			snprintf(err, errlen, "must be one origin, http(s)://host[:port]");
			return -EINVAL;
		}
		return 0;
	}
	if (strcmp(key, "log_level") == 0) {
		r = log_level_from_string(value);
		if (r < 0) {
			snprintf(err, errlen, "must be error, warn, info or debug");
			return -EINVAL;
		}
		cfg->log_level = r;
		return 0;
	}
	if (strcmp(key, "sync") == 0) {
		if (strcmp(value, "full") != 0 && strcmp(value, "normal") != 0) {
			snprintf(err, errlen, "must be full or normal");
			return -EINVAL;
		}
		cfg->sync_full = strcmp(value, "full") == 0;
		return 0;
	}
	if (strcmp(key, "batch_max") == 0) {
		r = set_uint(&v, value, 1, 1000000, err, errlen);
		if (r == 0)
			cfg->batch_max = (unsigned)v;
		return r;
	}
	if (strcmp(key, "queue_max") == 0)
		return set_uint(&cfg->queue_max, value, 1024, 100000000, err, errlen);
	if (strcmp(key, "retention_max_age") == 0)
		return set_duration(&cfg->retention_max_age_ns, value, 1, err, errlen);
	if (strcmp(key, "retention_max_size") == 0)
		return set_uint(&cfg->retention_max_bytes, value, 0, UINT64_MAX / 2, err, errlen);
	if (strcmp(key, "retention_interval") == 0)
		return set_duration(&cfg->retention_interval_ns, value, 1, err, errlen);
	if (strcmp(key, "trace_clients_max") == 0) {
		r = set_uint(&v, value, 1, 65536, err, errlen);
		if (r == 0)
			cfg->trace_clients_max = (unsigned)v;
		return r;
	}
	if (strcmp(key, "trace_idle_timeout") == 0)
		return set_duration(&cfg->trace_idle_timeout_ns, value, 0, err, errlen);
	if (strcmp(key, "trace_stall_timeout") == 0)
		return set_duration(&cfg->trace_stall_timeout_ns, value, 0, err, errlen);
	if (strcmp(key, "trace_reply_buffer_max") == 0)
		return set_uint(&cfg->trace_reply_buffer_max, value, 4096, 1ULL << 30, err, errlen);
	if (strcmp(key, "gate_outside_netns") == 0) {
		/* A netns name under /run/netns, firebreak's own: never the host's. */
		if (strncmp(value, "firebreak-", 10) != 0 || strchr(value, '/') ||
		    strscpy(cfg->gate_outside_netns, sizeof(cfg->gate_outside_netns), value) < 0) {
			snprintf(err, errlen, "must name a netns firebreak-* (tests' world)");
			return -EINVAL;
		}
		return 0;
	}
	if (strcmp(key, "stats_period") == 0)
		return set_duration(&cfg->stats_period_ns, value, 1, err, errlen);
	if (strcmp(key, "detector_actions") == 0) {
		if (strcmp(value, "on") != 0 && strcmp(value, "off") != 0) {
			snprintf(err, errlen, "must be on or off");
			return -EINVAL;
		}
		cfg->detector_actions = strcmp(value, "on") == 0;
		return 0;
	}
	if (strcmp(key, "proc_ring_size") == 0) {
		/* The kernel wants a power of two, a page at least. */
		r = set_uint(&v, value, 4096, 1ULL << 30, err, errlen);
		if (r == 0 && (v & (v - 1))) {
			snprintf(err, errlen, "must be a power of two");
			return -EINVAL;
		}
		if (r == 0)
			cfg->proc_ring_size = v;
		return r;
	}
	if (strcmp(key, "gate_uplink") == 0) {
		size_t n = strlen(value);

		if (n == 0 || n >= sizeof(cfg->gate_uplink) || strchr(value, '/') ||
		    strchr(value, '"') || strchr(value, ' ')) {
			snprintf(err, errlen, "must be a network interface name");
			return -EINVAL;
		}
		strcpy(cfg->gate_uplink, value);
		return 0;
	}
	if (strcmp(key, "gate_nflog_group") == 0) {
		r = set_uint(&v, value, 1, 65535, err, errlen);
		if (r == 0)
			cfg->gate_nflog_group = (unsigned)v;
		return r;
	}
	if (strcmp(key, "gate_dns_upstream") == 0) {
		unsigned char buf[16];

		if (inet_pton(AF_INET, value, buf) != 1 ||
		    strscpy(cfg->gate_dns_upstream, sizeof(cfg->gate_dns_upstream), value) < 0) {
			snprintf(err, errlen, "must be an IPv4 address");
			return -EINVAL;
		}
		return 0;
	}
	snprintf(err, errlen, "unknown key \"%s\"", key);
	return -EINVAL;
}

static char *strip(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

int config_load(struct config *cfg, const char *path, int required)
{
	FILE *f = fopen(path, "re");
	char line[4096];
	int lineno = 0, r = 0;

	if (!f) {
		if (errno == ENOENT && !required)
			return 0;
		return log_errno(-errno, "%s", path);
	}
	while (fgets(line, sizeof(line), f)) {
		char err[160], *key, *value, *eq;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			log_error("%s:%d: line too long", path, lineno);
			r = -EINVAL;
			break;
		}
		key = strip(line);
		if (*key == '\0' || *key == '#')
			continue;
		eq = strchr(key, '=');
		if (!eq) {
			log_error("%s:%d: expected key = value", path, lineno);
			r = -EINVAL;
			break;
		}
		*eq = '\0';
		key = strip(key);
		value = strip(eq + 1);
		if (config_set(cfg, key, value, err, sizeof(err)) < 0) {
			log_error("%s:%d: %s: %s", path, lineno, key, err);
			r = -EINVAL;
			break;
		}
	}
	fclose(f);
	return r;
}

void config_apply_env(struct config *cfg)
{
	const char *v;

	v = secure_getenv("FIREBREAK_DB");
	if (v && *v == '/')
		strscpy(cfg->db, sizeof(cfg->db), v);
	v = secure_getenv("FIREBREAK_RUNTIME_DIR");
	if (v && *v == '/')
		strscpy(cfg->runtime_dir, sizeof(cfg->runtime_dir), v);
}

int config_sandbox_path(const struct config *cfg, const char *name, const char *file, char *buf,
			size_t size)
{
	int n = snprintf(buf, size, "%s/%s/%s/%s", cfg->runtime_dir, FB_SANDBOX_STATE_DIR, name,
			 file);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int config_socket_path(const struct config *cfg, const char *name, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s/%s", cfg->runtime_dir, name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

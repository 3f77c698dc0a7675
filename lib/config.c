#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "macro.h"
#include "timeutil.h"

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
	if (strscpy(e.path, sizeof(e.path), *slash ? slash : "/") < 0 || strpbrk(e.path, " \t\r\n"))
		return -EINVAL;
	*ret = e;
	return 0;
}

/*
 * One key of the file: how its text is read into its field of struct config, its bounds, its
 * default, and its row of docs/config.md. The table below is the one place a key is named; the
 * unit tests check that docs/config.md shows exactly its rows.
 */
struct config_key {
	const char *key;
	/* Reads value into field (size bytes); 0, or -EINVAL with the reason in err. The field is
	 * left as it was on failure. */
	int (*set)(const struct config_key *k, void *field, const char *value, char *err,
		   size_t errlen);
	size_t offset, size;
	/* set_uint, set_power_of_two: the bounds. set_duration: the shortest (0: 0 is allowed
	 * and means off) and, if max is not 0, the longest, in ns. */
	uint64_t min, max;
	const char *words[2];		 /* set_switch: the word for 1, the word for 0 */
	int (*valid)(const char *value); /* set_text: whether value is one */
	const char *bad;		 /* set_text: what value must be, for the error */
	const char *def;     /* the default, as the file would write it; NULL: empty or 0 */
	const char *doc_def; /* the docs' default column where def is NULL ("none" if NULL) */
	const char *flag;    /* the docs' flag column, NULL if there is none */
	const char *help;    /* the docs' meaning column */
};

static int set_path(const struct config_key *k, void *field, const char *value, char *err,
		    size_t errlen)
{
	if (value[0] != '/') {
		snprintf(err, errlen, "must be an absolute path");
		return -EINVAL;
	}
	if (strscpy(field, k->size, value) < 0) {
		snprintf(err, errlen, "path too long");
		return -EINVAL;
	}
	return 0;
}

/* Reads a number or size within k's bounds into *ret. */
static int parse_uint(const struct config_key *k, const char *value, uint64_t *ret, char *err,
		      size_t errlen)
{
	if (size_parse(value, ret) < 0 || *ret < k->min || *ret > k->max) {
		snprintf(err, errlen, "must be a number from %llu to %llu",
			 (unsigned long long)k->min, (unsigned long long)k->max);
		return -EINVAL;
	}
	return 0;
}

/* Stores v in an unsigned field of 4 or 8 bytes; the table's bounds make it fit. */
static void store_uint(void *field, size_t size, uint64_t v)
{
	uint32_t v32 = (uint32_t)v;

	if (size == sizeof(v32))
		memcpy(field, &v32, sizeof(v32));
	else
		memcpy(field, &v, sizeof(v));
}

static int set_uint(const struct config_key *k, void *field, const char *value, char *err,
		    size_t errlen)
{
	uint64_t v;

	if (parse_uint(k, value, &v, err, errlen) < 0)
		return -EINVAL;
	store_uint(field, k->size, v);
	return 0;
}

/* The kernel wants a ring buffer's size a power of two, a page at least. */
static int set_power_of_two(const struct config_key *k, void *field, const char *value, char *err,
			    size_t errlen)
{
	uint64_t v;

	if (parse_uint(k, value, &v, err, errlen) < 0)
		return -EINVAL;
	if (v & (v - 1)) {
		snprintf(err, errlen, "must be a power of two");
		return -EINVAL;
	}
	store_uint(field, k->size, v);
	return 0;
}

/* A whole number of the largest unit that fits ns: "1h", "30s", "250ms". */
static void format_duration(int64_t ns, char *buf, size_t size)
{
	static const struct {
		int64_t ns;
		const char *unit;
	} units[] = { { 86400 * NSEC_PER_SEC, "d" },
		      { 3600 * NSEC_PER_SEC, "h" },
		      { 60 * NSEC_PER_SEC, "m" },
		      { NSEC_PER_SEC, "s" },
		      { NSEC_PER_MSEC, "ms" } };

	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (ns % units[i].ns == 0) {
			snprintf(buf, size, "%lld%s", (long long)(ns / units[i].ns), units[i].unit);
			return;
		}
	snprintf(buf, size, "%lldns", (long long)ns);
}

static int set_duration(const struct config_key *k, void *field, const char *value, char *err,
			size_t errlen)
{
	int64_t v;

	if (duration_parse(value, &v) < 0 || (v == 0 && k->min > 0)) {
		snprintf(err, errlen, "must be a duration such as 250ms, 30s, 15m, 2h or 7d%s",
			 k->min == 0 ? " (0 = off)" : "");
		return -EINVAL;
	}
	if (k->max && ((uint64_t)v < k->min || (uint64_t)v > k->max)) {
		char lo[24], hi[24];

		format_duration((int64_t)k->min, lo, sizeof(lo));
		format_duration((int64_t)k->max, hi, sizeof(hi));
		snprintf(err, errlen, "must be %s to %s", lo, hi);
		return -EINVAL;
	}
	memcpy(field, &v, sizeof(v));
	return 0;
}

/* One of two words: k->words[0] sets 1, k->words[1] sets 0. */
static int set_switch(const struct config_key *k, void *field, const char *value, char *err,
		      size_t errlen)
{
	int on = strcmp(value, k->words[0]) == 0;

	if (!on && strcmp(value, k->words[1]) != 0) {
		snprintf(err, errlen, "must be %s or %s", k->words[0], k->words[1]);
		return -EINVAL;
	}
	memcpy(field, &on, sizeof(on));
	return 0;
}

static int set_log_level(const struct config_key *k, void *field, const char *value, char *err,
			 size_t errlen)
{
	int level = log_level_from_string(value);

	if (level < 0) {
		snprintf(err, errlen, "must be error, warn, info or debug");
		return -EINVAL;
	}
	memcpy(field, &level, sizeof(level));
	return 0;
}

/* Text within its field's size that k->valid accepts; k->bad says what it must be. */
static int set_text(const struct config_key *k, void *field, const char *value, char *err,
		    size_t errlen)
{
	if (!k->valid(value) || strscpy(field, k->size, value) < 0) {
		snprintf(err, errlen, "%s", k->bad);
		return -EINVAL;
	}
	return 0;
}

static int listen_valid(const char *s)
{
	return strcmp(s, "off") == 0 || strchr(s, ':');
}

/* One origin, as a browser sends it: scheme://host[:port], nothing a header could be split with. */
static int origin_valid(const char *s)
{
	return (strncmp(s, "http://", 7) == 0 || strncmp(s, "https://", 8) == 0) &&
	       !strpbrk(s, " \t\r\n,;\"");
}

/* A netns name under /run/netns, firebreak's own: never the host's. */
static int netns_valid(const char *s)
{
	return strncmp(s, "firebreak-", 10) == 0 && !strchr(s, '/');
}

static int ifname_valid(const char *s)
{
	return s[0] != '\0' && !strpbrk(s, "/\" ");
}

static int ipv4_valid(const char *s)
{
	unsigned char buf[16];

	return inet_pton(AF_INET, s, buf) == 1;
}

static int set_endpoint(const struct config_key *k, void *field, const char *value, char *err,
			size_t errlen)
{
	if (config_endpoint_parse(value, field) < 0) {
		snprintf(err, errlen, "must be http://ADDRESS:PORT/PATH, the address numeric");
		return -EINVAL;
	}
	return 0;
}

#define STR_(x) #x
#define STR(x) STR_(x)
#define FIELD(f) offsetof(struct config, f), sizeof(((struct config *)0)->f)

/* In docs/config.md's order. */
static const struct config_key keys[] = {
	{ "db", set_path, FIELD(db), .def = FB_DEFAULT_DB, .flag = "`--db`",
	  .help = "the SQLite store" },
	{ "runtime_dir", set_path, FIELD(runtime_dir), .def = FB_DEFAULT_RUNTIME_DIR,
	  .flag = "`--runtime-dir`", .help = "sockets and pid file" },
	{ "listen", set_text, FIELD(listen), .valid = listen_valid,
	  .bad = "must be ADDRESS:PORT or off", .def = FB_DEFAULT_LISTEN, .flag = "`--listen`",
	  .help = "the HTTP API's address (docs/api.md); `[::1]:9137` for IPv6, port 0 for one the "
		  "kernel picks (`status --json` says which), `off` for none; a non-loopback "
		  "address is allowed with a warning" },
	{ "http_read_token", set_path, FIELD(http_read_token), .def = FB_DEFAULT_READ_TOKEN,
	  .help = "the read token's file (root's, mode 0600; made if missing)" },
	{ "http_action_token", set_path, FIELD(http_action_token), .def = FB_DEFAULT_ACTION_TOKEN,
	  .help = "the action token's file (same rules; must differ from the read token)" },
	{ "http_uid", set_uint, FIELD(http_uid), 1, 0xfffffffe, .def = STR(FB_DEFAULT_HTTP_UID),
	  .help = "the uid and gid the HTTP child runs as" },
	{ "http_clients_max", set_uint, FIELD(http_clients_max), 1, 4096, .def = "256",
	  .help = "HTTP connections at once (a thread each)" },
	{ "http_idle_timeout", set_duration, FIELD(http_idle_timeout_ns), NSEC_PER_SEC,
	  3600 * NSEC_PER_SEC, .def = "30s",
	  .help = "a connection that moves no byte (sends nothing, or reads nothing of its answer) "
		  "for this long is closed, streams too (they send a keepalive every third of it, "
		  "15 s at most); 1s to 1h" },
	{ "http_clients_per_ip_max", set_uint, FIELD(http_clients_per_ip_max), 1, 4096,
	  .def = "128",
	  .help = "HTTP connections from one address at once (on loopback every local client is "
		  "127.0.0.1 or ::1)" },
	{ "http_cors_origin", set_text, FIELD(http_cors_origin), .valid = origin_valid,
	  .bad = "must be one origin, http(s)://host[:port]",
	  .help = "the one origin (`https://host[:port]`) CORS headers are sent to" },
	{ "web_dir", set_path, FIELD(web_dir), .doc_def = "beside the binary",
	  .help = "the web page's files (docs/export.md)" },
	{ "otlp_endpoint", set_endpoint, FIELD(otlp),
	  .help = "push incidents as OTLP/HTTP traces to `http://ADDRESS:PORT/v1/traces` "
		  "(docs/export.md)" },
	{ "loki_endpoint", set_endpoint, FIELD(loki),
	  .help = "push every event to Loki, `http://ADDRESS:PORT/loki/api/v1/push`" },
	{ "log_level", set_log_level, FIELD(log_level), .def = "info", .flag = "`--log-level`",
	  .help = "error, warn, info, debug" },
	{ "sync", set_switch, FIELD(sync_full), .words = { "full", "normal" }, .def = "full",
	  .help = "`full`: every commit is fsynced before its acks go out; `normal`: commits "
		  "survive a crash of firebreakd but not of the machine" },
	{ "batch_max", set_uint, FIELD(batch_max), 1, 1000000, .def = "4096",
	  .help = "store operations per transaction" },
	{ "queue_max", set_uint, FIELD(queue_max), 1024, 100000000, .def = "262144",
	  .help = "operations waiting for the store before ingest pauses (backpressure)" },
	{ "queue_max_bytes", set_uint, FIELD(queue_max_bytes), 1 << 20, 1ULL << 36, .def = "4M",
	  .help = "or the memory they (and those being written) hold, whichever comes first: what "
		  "the store's queue can cost in a storm (`writer.pending_bytes`, "
		  "`writer.full`)" },
	{ "retention_max_age", set_duration, FIELD(retention_max_age_ns), .def = "30d",
	  .help = "raw events older than this are deleted (0 = keep)" },
	{ "retention_max_size", set_uint, FIELD(retention_max_bytes), 0, UINT64_MAX / 2,
	  .def = "8G", .help = "then the oldest raw events until the live data fits (0 = no cap)" },
	{ "retention_interval", set_duration, FIELD(retention_interval_ns), .def = "10m",
	  .help = "how often retention runs" },
	{ "stats_period", set_duration, FIELD(stats_period_ns), .def = "250ms",
	  .help = "how often the cgroup stats collector samples each running sandbox and its steps "
		  "(0 = off); a sample is stored only when it changed" },
	{ "detector_actions", set_switch, FIELD(detector_actions), .words = { "on", "off" },
	  .def = "on",
	  .help = "`off`: verdicts are recorded (and open incidents) but never freeze or kill; for "
		  "tests that attack on purpose and check something else, and for trying "
		  "detectors out on live traffic" },
	{ "file_events", set_switch, FIELD(file_events), .words = { "on", "off" }, .def = "on",
	  .help = "`off`: no fanotify marks on the sandboxes' mounts, no file events (for "
		  "measuring what they cost)" },
	{ "file_groups_max", set_uint, FIELD(file_groups_max), 0, 65536, .def = "0",
	  .help = "fanotify group pairs the file collector makes: each sandbox has one of its own "
		  "until then, later ones share the least used (a shared pair's queue overflowing "
		  "is loss for each of its sandboxes). 0: half of what "
		  "/proc/sys/fs/fanotify/max_user_groups allows, less 16 left to others "
		  "(docs/collectors.md)" },
	{ "proc_ring_size", set_power_of_two, FIELD(proc_ring_size), 4096, 1ULL << 30,
	  .def = "4194304",
	  .help = "bytes of the process tracer's ring buffer (a power of two, 4096 at least); what "
		  "does not fit is counted as lost per kind and shown as `monitor.loss` events" },
	{ "proc_sandbox_rate", set_uint, FIELD(proc_sandbox_rate), 0, 1ULL << 34, .def = "4194304",
	  .help = "bytes a second of the process tracer's ring each sandbox may fill (an eighth of "
		  "the ring at once); what a sandbox sends past it is its own loss "
		  "(`monitor.loss`, "
		  "`over_share`), so a flood cannot take the ring from the others. 0: no limit" },
	{ "dns_ring_size", set_power_of_two, FIELD(dns_ring_size), 4096, 1ULL << 30,
	  .def = "1048576",
	  .help = "bytes of the DNS tracer's ring buffer (a power of two, 4096 at least; a record "
		  "is "
		  "600 bytes); what does not fit is counted in `dns.lost.ring`" },
	{ "dns_sandbox_rate", set_uint, FIELD(dns_sandbox_rate), 0, 1ULL << 34, .def = "1048576",
	  .help = "bytes a second of the DNS tracer's ring each sandbox may fill (an eighth of the "
		  "ring at once, 8 KiB at least); what a sandbox sends past it is its own loss "
		  "(`monitor.loss`, `over_share`; `dns.over_share`), so a flood cannot take the "
		  "ring from the others. 0: no limit" },
	{ "gate_outside_netns", set_text, FIELD(gate_outside_netns), .valid = netns_valid,
	  .bad = "must name a netns firebreak-* (tests' world)",
	  .help = "the netns (a `firebreak-*` one: the tests' world) the egress gate's outside "
		  "link goes to" },
	{ "gate_uplink", set_text, FIELD(gate_uplink), .valid = ifname_valid,
	  .bad = "must be a network interface name", .flag = "`create --uplink`",
	  .help = "or a host interface the gate reaches with NAT (docs/egress.md)" },
	{ "gate_dns_upstream", set_text, FIELD(gate_dns_upstream), .valid = ipv4_valid,
	  .bad = "must be an IPv4 address",
	  .help = "the IPv4 DNS server the gate's DNS asks for allowlisted names" },
	{ "gate_dns_uid", set_uint, FIELD(gate_dns_uid), 1, 0xfffffffe,
	  .def = STR(FB_DEFAULT_DNS_UID),
	  .help = "the uid and gid the gate's jailed dnsmasq runs as (docs/egress.md)" },
	{ "gate_proxy_uid_base", set_uint, FIELD(gate_proxy_uid_base), 1, 0xfffffffe - 1024,
	  .def = STR(FB_DEFAULT_PROXY_UID_BASE),
	  .help = "sandbox link k's jailed L7 proxy runs as this uid and gid plus k "
		  "(docs/egress.md)" },
	{ "gate_proxy_upstream_ca", set_path, FIELD(gate_proxy_upstream_ca),
	  .def = "/etc/ssl/certs/ca-certificates.crt",
	  .help = "the certificate authorities the L7 proxy trusts to sign the servers it "
		  "reaches (PEM)" },
	{ "gate_nflog_group", set_uint, FIELD(gate_nflog_group), 1, 65535, .def = "7301",
	  .help = "the NFLOG group of the gate's denied packets" },
	{ "trace_clients_max", set_uint, FIELD(trace_clients_max), 1, 65536, .def = "256",
	  .help = "trace socket clients at once" },
	{ "control_clients_max", set_uint, FIELD(control_clients_max), 16, 65536, .def = "4096",
	  .help = "control socket clients at once: every sandbox's exec launcher holds one for its "
		  "step records, so this bounds the sandboxes that can run tool calls, beside the "
		  "commands' own short connections" },
	{ "trace_idle_timeout", set_duration, FIELD(trace_idle_timeout_ns), 1, .def = "300s",
	  .help = "a trace client with no complete line for this long is closed" },
	{ "trace_stall_timeout", set_duration, FIELD(trace_stall_timeout_ns), 1, .def = "30s",
	  .help = "a trace client that reads no replies for this long is closed" },
	{ "trace_reply_buffer_max", set_uint, FIELD(trace_reply_buffer_max), 4096, 1ULL << 30,
	  .def = "1M", .help = "unread replies beyond this pause reading that client" },
	{ "trace_request_timeout", set_duration, FIELD(trace_request_timeout_ns), 1, .def = "30s",
	  .help = "a trace or control client that began a line and did not finish it for this "
		  "long is closed" },
	{ "socket_clients_per_uid_max", set_uint, FIELD(socket_clients_per_uid_max), 1, 65536,
	  .def = "32",
	  .help = "clients of one non-root uid at once, on the trace socket and on the control "
		  "socket (root's are not counted)" },
};

static int set_key(struct config *cfg, const struct config_key *k, const char *value, char *err,
		   size_t errlen)
{
	return k->set(k, (char *)cfg + k->offset, value, err, errlen);
}

int config_set(struct config *cfg, const char *key, const char *value, char *err, size_t errlen)
{
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (strcmp(keys[i].key, key) == 0)
			return set_key(cfg, &keys[i], value, err, errlen);
	snprintf(err, errlen, "unknown key \"%s\"", key);
	return -EINVAL;
}

void config_defaults(struct config *cfg)
{
	char err[160];

	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (keys[i].def && set_key(cfg, &keys[i], keys[i].def, err, sizeof(err)) < 0) {
			/* The table refuses its own default: a broken build, not a bad config. */
			log_error("config: the default of %s: %s", keys[i].key, err);
			abort();
		}
}

int config_doc_row(size_t i, char *buf, size_t size)
{
	const struct config_key *k;
	const char *tick;
	int n;

	if (i >= ARRAY_SIZE(keys))
		return -ENOENT;
	k = &keys[i];
	/* A default is written as code; its absence in words. */
	tick = k->def ? "`" : "";
	n = snprintf(buf, size, "| `%s` | %s%s| %s%s%s | %s |", k->key, k->flag ? k->flag : "",
		     k->flag ? " " : "", tick,
		     k->def	  ? k->def
		     : k->doc_def ? k->doc_def
				  : "none",
		     tick, k->help);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
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

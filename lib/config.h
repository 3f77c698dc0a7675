/*
 * firebreakd's configuration, shared with the CLI (which needs the store's path and the runtime
 * dir). Sources in rising precedence: built-in defaults, the config file, FIREBREAK_* environment
 * variables (CLI only), command-line flags. The file holds `key = value` lines and # comments;
 * an unknown key or a bad value is an error naming FILE:LINE. Each key is named once, in the table
 * in config.c, with its parser, bounds, default and docs/config.md row.
 */
#ifndef FB_CONFIG_H
#define FB_CONFIG_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define FB_DEFAULT_CONFIG "/etc/firebreak/firebreakd.conf"
#define FB_DEFAULT_DB "/var/lib/firebreak/firebreak.db"
#define FB_DEFAULT_RUNTIME_DIR "/run/firebreak"
#define FB_DEFAULT_LISTEN "127.0.0.1:9137"
#define FB_DEFAULT_READ_TOKEN "/etc/firebreak/http-read.token"
#define FB_DEFAULT_ACTION_TOKEN "/etc/firebreak/http-action.token"
/* The HTTP child's uid and gid: unassigned on Debian (system users end at 999, the sandboxes'
 * range starts at 420000), owned by no file. */
#define FB_DEFAULT_HTTP_UID 419999
/* The DNS gate's (every sandbox's dnsmasq): the same kind of unassigned uid, one below. */
#define FB_DEFAULT_DNS_UID 419998
/* The L7 proxies': link k's runs as this base + k (1..1023), so the gate tells them apart. */
#define FB_DEFAULT_PROXY_UID_BASE 418000
#define FB_CONTROL_SOCKET "control.sock"
#define FB_TRACE_SOCKET "trace.sock"
#define FB_PID_FILE "firebreakd.pid"
#define FB_GROUP "firebreak"

/* Where an exporter sends: http://ADDRESS:PORT/PATH, the address numeric (no name lookups in the
 * exporter's jail). */
struct endpoint {
	char host[64];
	char port[8];
	char path[192];
};

struct config {
	char db[PATH_MAX];
	char runtime_dir[PATH_MAX];
	char listen[128];		  /* the HTTP API's ADDRESS:PORT, or "off" */
	char http_read_token[PATH_MAX];	  /* the read token's file (root's, 0600) */
	char http_action_token[PATH_MAX]; /* the action token's file */
	uint32_t http_uid;		  /* the HTTP child runs as this uid and gid */
	char http_cors_origin[256];	  /* "" = no CORS headers */
	unsigned http_clients_max;	  /* HTTP connections at once */
	int64_t http_idle_timeout_ns;
	unsigned http_clients_per_ip_max; /* HTTP connections from one address at once */
	char web_dir[PATH_MAX];		  /* the web page's files ("" = found beside the binary) */
	struct endpoint otlp;		  /* host "" = no OTLP push */
	struct endpoint loki; /* host "" = no Loki push */ /* a connection silent this long is
							      closed (not streams) */
	int log_level;
	unsigned batch_max;	      /* store ops per transaction */
	uint64_t queue_max;	      /* ops waiting for the store before ingest pauses */
	uint64_t queue_max_bytes;     /* or the memory they hold */
	int sync_full;		      /* fsync every commit (1) or only order them (0) */
	int64_t retention_max_age_ns; /* 0 = keep forever */
	uint64_t retention_max_bytes; /* 0 = no cap */
	int64_t retention_interval_ns;
	unsigned trace_clients_max;
	unsigned control_clients_max;	  /* each sandbox's launcher holds one */
	int64_t trace_idle_timeout_ns;	  /* a client that sends no line for this long is closed */
	int64_t trace_stall_timeout_ns;	  /* a client that reads no ack for this long is closed */
	uint64_t trace_reply_buffer_max;  /* unread acks beyond this pause reading that client */
	int64_t trace_request_timeout_ns; /* a line begun and not finished this long: closed */
	unsigned socket_clients_per_uid_max; /* one non-root uid's clients per socket */
	int64_t stats_period_ns;	     /* cgroup stats sampling (0 = off) */
	uint64_t proc_ring_size;    /* the process tracer's ring buffer, bytes (power of 2) */
	uint64_t proc_sandbox_rate; /* bytes a second of it each sandbox may fill (0: no limit) */
	uint64_t dns_ring_size;	    /* the DNS tracer's, the same */
	uint64_t dns_sandbox_rate;  /* bytes a second of it each sandbox may fill (0: no limit) */
	int detector_actions;	    /* verdicts freeze and kill (on), or are only recorded */
	int file_events;	    /* the file collector marks sandboxes' mounts (on) */
	uint64_t file_groups_max; /* fanotify group pairs before sandboxes share (0: from the limit)
				   */
	char gate_outside_netns[64];  /* where the gate's outside link goes ("" = offline) */
	char gate_uplink[16];	      /* or: a host interface the gate reaches by NAT */
	unsigned gate_nflog_group;    /* NFLOG group of the gate's denied packets */
	char gate_dns_upstream[64];   /* where the gate's DNS asks allowlisted names ("" = none) */
	uint32_t gate_dns_uid;	      /* the jailed dnsmasq runs as this uid and gid */
	uint32_t gate_proxy_uid_base; /* link k's jailed squid runs as this + k */
	char gate_proxy_upstream_ca[PATH_MAX]; /* the CAs the proxy trusts upstream */
};

/* Fills cfg with the built-in defaults (the key table's). */
void config_defaults(struct config *cfg);

/*
 * Reads path into cfg (over what is there). A missing file is an error only if required.
 * Returns 0, -ENOENT, or -EINVAL after printing FILE:LINE: message to the log.
 */
int config_load(struct config *cfg, const char *path, int required);

/* Sets one key from text, as the file would; returns 0 or -EINVAL with a message in err. */
int config_set(struct config *cfg, const char *key, const char *value, char *err, size_t errlen);

/*
 * Writes key i's row of the table in docs/config.md into buf ("| `key` | flag | default | meaning
 * |"). Returns 0, -ENOENT past the last key, or -ENAMETOOLONG if buf is too small.
 */
int config_doc_row(size_t i, char *buf, size_t size);

/* Applies FIREBREAK_DB and FIREBREAK_RUNTIME_DIR from the environment (secure_getenv). */
void config_apply_env(struct config *cfg);

/* Parses url (http://ADDRESS:PORT/PATH, [v6]:PORT too) into *ret; 0 or -EINVAL. */
int config_endpoint_parse(const char *url, struct endpoint *ret);

/* Writes the socket path for name (FB_CONTROL_SOCKET, ...) in cfg's runtime dir into buf. */
int config_socket_path(const struct config *cfg, const char *name, char *buf, size_t size);

/* Where the enforcer keeps each sandbox's state (state.json, policy.json...), in the runtime dir.
 */
#define FB_SANDBOX_STATE_DIR "sandboxes"

/*
 * The path of file in sandbox name's state dir (<runtime_dir>/sandboxes/NAME/FILE): the
 * enforcer writes there; firebreakd reads its inits, links and policies from there. 0 or
 * -ENAMETOOLONG.
 */
int config_sandbox_path(const struct config *cfg, const char *name, const char *file, char *buf,
			size_t size);

#endif

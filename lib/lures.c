/* The lures' one table (lures.h). */
#include "lures.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "sha256.h"

const struct lure lures[] = {
	{ LURE_HOME "/.aws/credentials", LURE_DECOY },
	{ LURE_HOME "/.ssh/id_ed25519", LURE_DECOY },
	{ LURE_HOME "/.netrc", LURE_DECOY },
	{ LURE_HOME "/.git-credentials", LURE_DECOY },
	{ LURE_HOME "/.docker/config.json", LURE_DECOY },
	{ "/var/run/secrets/kubernetes.io/serviceaccount/token", LURE_DECOY },

	{ "/proc/sysrq-trigger", LURE_KERNEL },
	{ "/proc/sys/kernel/core_pattern", LURE_KERNEL },
	{ "/proc/sys/kernel/modprobe", LURE_KERNEL },
	{ "/proc/sys/kernel/sysrq", LURE_KERNEL },
	{ "/proc/sys/kernel/panic", LURE_KERNEL },
	{ "/proc/sys/kernel/randomize_va_space", LURE_KERNEL },
	{ "/proc/sys/kernel/kptr_restrict", LURE_KERNEL },
	{ "/proc/sys/kernel/dmesg_restrict", LURE_KERNEL },
	{ "/proc/sys/kernel/unprivileged_bpf_disabled", LURE_KERNEL },
	{ "/proc/sys/vm/overcommit_memory", LURE_KERNEL },
	{ "/proc/sys/fs/suid_dumpable", LURE_KERNEL },
	{ "/proc/sys/fs/protected_symlinks", LURE_KERNEL },
	{ "/proc/sys/fs/protected_hardlinks", LURE_KERNEL },
	{ "/proc/sys/kernel/perf_event_paranoid", LURE_KERNEL },
	{ "/proc/sys/kernel/kexec_load_disabled", LURE_KERNEL },
	{ "/proc/sys/kernel/ns_last_pid", LURE_KERNEL },
	{ "/proc/sys/kernel/hotplug", LURE_KERNEL },
	{ "/proc/sys/kernel/yama/ptrace_scope", LURE_KERNEL },
	{ "/proc/sys/kernel/unprivileged_userns_clone", LURE_KERNEL },
	{ "/proc/sys/user/max_user_namespaces", LURE_KERNEL },
	{ "/proc/sys/vm/drop_caches", LURE_KERNEL },
	/* the sandbox's own network namespace, but still the way out: forwarding, routing local
	 * addresses out, and the JIT */
	{ "/proc/sys/net/ipv4/ip_forward", LURE_KERNEL },
	{ "/proc/sys/net/ipv4/conf/all/forwarding", LURE_KERNEL },
	{ "/proc/sys/net/ipv4/conf/all/route_localnet", LURE_KERNEL },
	{ "/proc/sys/net/ipv4/conf/all/rp_filter", LURE_KERNEL },
	{ "/proc/sys/net/ipv4/ping_group_range", LURE_KERNEL },
	{ "/proc/sys/net/ipv6/conf/all/forwarding", LURE_KERNEL },
	{ "/proc/sys/net/ipv6/conf/all/disable_ipv6", LURE_KERNEL },
	{ "/proc/sys/net/core/bpf_jit_enable", LURE_KERNEL },
	/* the sandbox's init (pid 1, uid 0): what nsenter and a credential thief open first; the
	 * kernel's own refusal (EACCES) leaves no trace. ns/ is one directory bound whole: its
	 * entries are magic links, which cannot be bound over one by one. */
	{ "/proc/1/environ", LURE_PROCESS },
	{ "/proc/1/mem", LURE_PROCESS },
	{ "/proc/1/maps", LURE_PROCESS },
	{ "/proc/1/ns/cgroup", LURE_PROCESS },
	{ "/proc/1/ns/ipc", LURE_PROCESS },
	{ "/proc/1/ns/mnt", LURE_PROCESS },
	{ "/proc/1/ns/net", LURE_PROCESS },
	{ "/proc/1/ns/pid", LURE_PROCESS },
	{ "/proc/1/ns/pid_for_children", LURE_PROCESS },
	{ "/proc/1/ns/time", LURE_PROCESS },
	{ "/proc/1/ns/time_for_children", LURE_PROCESS },
	{ "/proc/1/ns/user", LURE_PROCESS },
	{ "/proc/1/ns/uts", LURE_PROCESS },
	/* the host's /etc, shown read-only: a write is refused by the mount before any hook sees
	 * it. The account files read as the host's own. */
	{ "/etc/passwd", LURE_SYSTEM },
	{ "/etc/group", LURE_SYSTEM },
	{ "/etc/crontab", LURE_SYSTEM },
	{ "/etc/shadow", LURE_SECRET },
	{ "/etc/gshadow", LURE_SECRET },
	{ "/etc/sudoers", LURE_SECRET },
	{ "/sys/kernel/uevent_helper", LURE_KERNEL }, /* run as root on every device event */

	{ "/sys/fs/cgroup/cgroup.procs", LURE_CGROUP },
	{ "/sys/fs/cgroup/cgroup.threads", LURE_CGROUP },
	{ "/sys/fs/cgroup/cgroup.freeze", LURE_CGROUP },
	{ "/sys/fs/cgroup/cgroup.kill", LURE_CGROUP },
	{ "/sys/fs/cgroup/cgroup.subtree_control", LURE_CGROUP },
	{ "/sys/fs/cgroup/cgroup.max.depth", LURE_CGROUP },
	{ "/sys/fs/cgroup/memory.max", LURE_CGROUP },
	{ "/sys/fs/cgroup/memory.high", LURE_CGROUP },
	{ "/sys/fs/cgroup/pids.max", LURE_CGROUP },
	{ "/sys/fs/cgroup/cpu.max", LURE_CGROUP },
	{ "/sys/fs/cgroup/release_agent", LURE_CGROUP },
	{ "/sys/fs/cgroup/notify_on_release", LURE_CGROUP },

	{ "/dev/mem", LURE_DEVICE },
	{ "/dev/kmem", LURE_DEVICE },
	{ "/dev/port", LURE_DEVICE },
	{ "/dev/sda", LURE_DEVICE },
	{ "/dev/vda", LURE_DEVICE },
	{ "/dev/nvme0n1", LURE_DEVICE },
	{ "/dev/dm-0", LURE_DEVICE },
	{ "/dev/loop0", LURE_DEVICE },
	{ "/dev/loop-control", LURE_DEVICE },
	{ "/dev/mapper/control", LURE_DEVICE },
	{ "/dev/kmsg", LURE_DEVICE },	 /* the kernel's log, writable by root: log injection */
	{ "/dev/kvm", LURE_DEVICE },	 /* a VM of one's own */
	{ "/dev/fuse", LURE_DEVICE },	 /* a file system of one's own */
	{ "/dev/net/tun", LURE_DEVICE }, /* an interface of one's own, a way around the gate */
};
const size_t n_lures = ARRAY_SIZE(lures);

const char *lure_kind_name(enum lure_kind k)
{
	static const char *const names[] = { "decoy",	"kernel", "cgroup", "device",
					     "process", "system", "secret" };

	return (size_t)k < ARRAY_SIZE(names) ? names[k] : "?";
}

int lure_refuses_reads(enum lure_kind k)
{
	return k == LURE_DEVICE || k == LURE_PROCESS || k == LURE_SECRET;
}

int lure_records_reads(enum lure_kind k)
{
	return k != LURE_SYSTEM;
}

int lure_where_present(const struct lure *l)
{
	/* the kernel's /proc and the host's read-only /etc; /sys and /dev are the sandbox's own */
	return strncmp(l->path, "/proc/", 6) == 0 || strncmp(l->path, "/etc/", 5) == 0;
}

int lure_held_by_init(const struct lure *l)
{
	return strncmp(l->path, "/proc/sys/net/", 14) == 0;
}

const struct lure *lure_find(const char *path)
{
	for (size_t i = 0; i < n_lures; i++)
		if (strcmp(lures[i].path, path) == 0)
			return &lures[i];
	return NULL;
}

int lure_marker_valid(const char *marker)
{
	return marker && strlen(marker) == LURE_MARKER_LEN &&
	       strspn(marker, "0123456789abcdef") == LURE_MARKER_LEN;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Each decoy looks like what a tool that reads it expects, so that an attacker takes it. */
int lure_decoy_text(const char *path, const char *marker, char *buf, size_t size)
{
	const char *b = base_name(path);
	int n;

	if (strcmp(b, "credentials") == 0)
		n = snprintf(buf, size,
			     "[default]\naws_access_key_id = AKIA%.16s\n"
			     "aws_secret_access_key = %s%s\nregion = us-east-1\n",
			     marker, marker, marker);
	else if (strcmp(b, "id_ed25519") == 0)
		n = snprintf(buf, size,
			     "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA%s\n"
			     "-----END OPENSSH PRIVATE KEY-----\n",
			     marker);
	else if (strcmp(b, ".netrc") == 0)
		n = snprintf(buf, size, "machine git.internal.example login deploy password %s\n",
			     marker);
	else if (strcmp(b, ".git-credentials") == 0)
		n = snprintf(buf, size, "https://deploy:%s@git.internal.example\n", marker);
	else if (strcmp(b, "config.json") == 0)
		n = snprintf(buf, size,
			     "{\"auths\":{\"registry.internal.example\":{\"auth\":\"%s\"}}}\n",
			     marker);
	else
		n = snprintf(buf, size, "eyJhbGciOiJSUzI1NiJ9.%s.%s\n", marker, marker);
	return n < 0 || (size_t)n >= size ? -ENOSPC : n;
}

/* What a value of variable name starts with, so that it looks like what the name promises. */
static const char *decoy_env_prefix(const char *name)
{
	if (strstr(name, "AWS_ACCESS_KEY"))
		return "AKIA";
	if (strstr(name, "GITHUB") || strncmp(name, "GH_", 3) == 0)
		return "ghp_";
	if (strstr(name, "OPENAI") || strstr(name, "ANTHROPIC"))
		return "sk-";
	return "";
}

int lure_credential_decoy(const char *name, const char *env, const char *marker, char *buf,
			  size_t size)
{
	static const char hex[] = "0123456789abcdef";
	uint8_t d[SHA256_DIGEST_SIZE];
	char seed[128], tag[17];
	int n;

	n = snprintf(seed, sizeof(seed), "firebreak-credential:%s:%s", name, marker);
	if (n < 0 || (size_t)n >= sizeof(seed))
		return -ENOSPC;
	sha256_digest(seed, (size_t)n, d);
	for (size_t i = 0; i < 8; i++) {
		tag[2 * i] = hex[d[i] >> 4];
		tag[2 * i + 1] = hex[d[i] & 15];
	}
	tag[16] = '\0';
	n = snprintf(buf, size, "%s%s%s", decoy_env_prefix(env ? env : ""), marker, tag);
	return n < 0 || (size_t)n >= size ? -ENOSPC : n;
}

int lure_decoy_env_text(const char *name, const char *marker, char *buf, size_t size)
{
	int n;

	if (strstr(name, "AWS_ACCESS_KEY"))
		n = snprintf(buf, size, "AKIA%s", marker);
	else if (strstr(name, "GITHUB") || strncmp(name, "GH_", 3) == 0)
		n = snprintf(buf, size, "ghp_%s%.16s", marker, marker);
	else if (strstr(name, "OPENAI") || strstr(name, "ANTHROPIC"))
		n = snprintf(buf, size, "sk-%s%s", marker, marker);
	else
		n = snprintf(buf, size, "%s%s", marker, marker);
	return n < 0 || (size_t)n >= size ? -ENOSPC : n;
}

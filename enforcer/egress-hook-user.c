#include "egress-hook-user.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "egress-hook.h"
#include "egress-hook.skel.h"
#include "egress.h"
#include "log.h"
#include "macro.h"
#include "policy/policy.h"

static int quiet_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf's own chatter: warnings only, through our log. */
	if (level == LIBBPF_WARN && log_max_level >= LOG_LEVEL_WARN)
		return vfprintf(stderr, fmt, ap);
	return 0;
}

/* (CIDR, protocol, port) entries, each with the rules whose CIDR covers it (LPM returns one). */
static int fill_cidrs(struct egress_hook *skel, const struct policy *p)
{
	size_t count = policy_egress_count(p);

	for (size_t i = 0; i < count; i++) {
		const struct policy_egress_rule *e = policy_egress(p, i);

		for (size_t j = 0; e->cidr && j < e->n_ports; j++) {
			uint64_t rules = 0;

			/* Every rule (this one included) whose CIDR contains this one, same port.
			 */
			for (size_t o = 0; o < count; o++) {
				const struct policy_egress_rule *c = policy_egress(p, o);
				int covers = c->cidr && c->family == e->family &&
					     c->protocol == e->protocol && c->prefix <= e->prefix;

				for (unsigned b = 0; covers && b < c->prefix; b++)
					if ((c->addr[b / 8] ^ e->addr[b / 8]) & (0x80 >> (b % 8)))
						covers = 0;
				for (size_t q = 0; covers && q < c->n_ports; q++)
					if (c->ports[q] == e->ports[j])
						rules |= 1ULL << o;
			}
			if (e->family == AF_INET) {
				struct egress_hook_key4 k = { .prefixlen = 32 + e->prefix,
							      .proto = (__u8)e->protocol,
							      .port = htons(e->ports[j]) };
				memcpy(&k.addr, e->addr, 4);
				if (bpf_map__update_elem(skel->maps.cidr4, &k, sizeof(k), &rules,
							 sizeof(rules), BPF_ANY) < 0)
					return -errno;
			} else {
				struct egress_hook_key6 k = { .prefixlen = 32 + e->prefix,
							      .proto = (__u8)e->protocol,
							      .port = htons(e->ports[j]) };
				memcpy(k.addr, e->addr, 16);
				if (bpf_map__update_elem(skel->maps.cidr6, &k, sizeof(k), &rules,
							 sizeof(rules), BPF_ANY) < 0)
					return -errno;
			}
		}
	}
	return 0;
}

static int fill_hostports(struct egress_hook *skel, const struct policy *p)
{
	for (size_t i = 0; i < policy_egress_count(p); i++) {
		const struct policy_egress_rule *e = policy_egress(p, i);

		for (size_t j = 0; e->host && j < e->n_ports; j++) {
			struct egress_hook_hostport k = { .proto = (__u8)e->protocol,
							  .port = htons(e->ports[j]) };
			uint64_t rules = 0;

			/* Other host rules on the same (protocol, port) share the entry. */
			bpf_map__lookup_elem(skel->maps.hostports, &k, sizeof(k), &rules,
					     sizeof(rules), 0);
			rules |= 1ULL << i;
			if (bpf_map__update_elem(skel->maps.hostports, &k, sizeof(k), &rules,
						 sizeof(rules), BPF_ANY) < 0)
				return -errno;
		}
	}
	return 0;
}

static int fill_tools(struct egress_hook *skel, const struct policy *p, unsigned k)
{
	struct egress_hook_config cfg = { 0 };
	struct egress_link l;
	__u32 zero = 0;

	for (size_t t = 0; t < policy_tool_count(p) && t < EGRESS_HOOK_TOOLS_MAX; t++) {
		struct egress_hook_tool v = { .rules = policy_tool_egress(p, t) };
		char src4[32], src6[64];
		__u32 idx = (__u32)t;

		egress_tool_addrs(k, (unsigned)t, src4, sizeof(src4), src6, sizeof(src6));
		if (inet_pton(AF_INET, src4, &v.src4) != 1 ||
		    inet_pton(AF_INET6, src6, v.src6) != 1)
			return -EINVAL;
		if (bpf_map__update_elem(skel->maps.tools, &idx, sizeof(idx), &v, sizeof(v),
					 BPF_ANY) < 0)
			return -errno;
	}
	egress_link_of(k, &l);
	if (inet_pton(AF_INET, l.gate4, &cfg.gate4) != 1 ||
	    inet_pton(AF_INET6, l.gate6, cfg.gate6) != 1)
		return -EINVAL;
	return bpf_map__update_elem(skel->maps.hook_config, &zero, sizeof(zero), &cfg, sizeof(cfg),
				    BPF_ANY) < 0
		       ? -errno
		       : 0;
}

int egress_hook_install(const char *cgroup_dir, const struct policy *p, unsigned k)
{
	static const enum bpf_attach_type types[] = { BPF_CGROUP_INET4_CONNECT,
						      BPF_CGROUP_INET6_CONNECT,
						      BPF_CGROUP_UDP4_SENDMSG,
						      BPF_CGROUP_UDP6_SENDMSG };
	struct egress_hook *skel;
	struct bpf_program *progs[4];
	_cleanup_close_ int cg = -1;
	int r;

	libbpf_set_print(quiet_libbpf);
	cg = open(cgroup_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg < 0)
		return log_errno(-errno, "egress hooks: %s", cgroup_dir);
	skel = egress_hook__open_and_load();
	if (!skel)
		return log_errno(-errno, "egress hooks: load");
	progs[0] = skel->progs.egress_connect4;
	progs[1] = skel->progs.egress_connect6;
	progs[2] = skel->progs.egress_sendmsg4;
	progs[3] = skel->progs.egress_sendmsg6;
	if ((r = fill_tools(skel, p, k)) < 0 || (r = fill_cidrs(skel, p)) < 0 ||
	    (r = fill_hostports(skel, p)) < 0) {
		log_errno(r, "egress hooks: fill the maps");
		goto out;
	}
	/* Attached the classic way, not by a bpf_link: the cgroup holds them (and their maps)
	 * after we exit, until it is removed; exec finds them again by querying the cgroup.
	 * ALLOW_MULTI lets the monitor's socket observers run after them (they read the verdict;
	 * verdicts are ANDed, so no later program can undo a refusal). */
	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		if (bpf_prog_attach(bpf_program__fd(progs[i]), cg, types[i], BPF_F_ALLOW_MULTI) <
		    0) {
			r = log_errno(-errno, "egress hooks: attach to %s", cgroup_dir);
			goto out;
		}
	}
	r = 0;
out:
	egress_hook__destroy(skel);
	return r;
}

/* The step_tool map of the program with id prog_id, or -ENOENT if it has none. */
static int step_map_of(__u32 prog_id)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info), map_ids[16];
	int prog = bpf_prog_get_fd_by_id(prog_id), r;

	if (prog < 0)
		return -errno;
	info.nr_map_ids = ARRAY_SIZE(map_ids);
	info.map_ids = (__u64)(unsigned long)map_ids;
	r = bpf_obj_get_info_by_fd(prog, &info, &len) < 0 ? -errno : 0;
	close(prog);
	if (r < 0)
		return r;
	for (__u32 i = 0; i < info.nr_map_ids && i < ARRAY_SIZE(map_ids); i++) {
		struct bpf_map_info mi = { 0 };
		__u32 mlen = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(map_ids[i]);

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &mi, &mlen) == 0 &&
		    strcmp(mi.name, "step_tool") == 0)
			return fd;
		close(fd);
	}
	return -ENOENT;
}

/*
 * Finds the step_tool map of the hooks attached to cg, through the connect4 programs (ours and,
 * after it, the monitor's observers).
 */
static int find_step_map(int cg)
{
	__u32 ids[16], count = ARRAY_SIZE(ids);

	if (bpf_prog_query(cg, BPF_CGROUP_INET4_CONNECT, 0, NULL, ids, &count) < 0)
		return -errno;
	for (__u32 i = 0; i < count && i < ARRAY_SIZE(ids); i++) {
		int fd = step_map_of(ids[i]);

		if (fd >= 0)
			return fd;
	}
	return -ENOENT;
}

int egress_hook_step(const char *cgroup_dir, uint64_t step_cgid, int tool)
{
	_cleanup_close_ int cg = open(cgroup_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int map = -1;
	__u32 idx = (__u32)tool;

	if (cg < 0)
		return -errno;
	map = find_step_map(cg);
	if (map < 0)
		return map;
	if (tool < 0)
		return bpf_map_delete_elem(map, &step_cgid) < 0 && errno != ENOENT ? -errno : 0;
	return bpf_map_update_elem(map, &step_cgid, &idx, BPF_ANY) < 0 ? -errno : 0;
}

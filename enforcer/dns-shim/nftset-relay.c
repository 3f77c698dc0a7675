/*
 * Preloaded into the DNS gate's jailed dnsmasq, in place of libnftables: dnsmasq's --nftset asks
 * libnftables to add each answer's address to a set, which takes CAP_NET_ADMIN in the gate, and
 * the jailed dnsmasq has no capability at all. These four functions (the only libnftables symbols
 * dnsmasq 2.90 imports) turn each "add element FAMILY TABLE dnsF_RULE { ADDR }" command into one
 * typed request to the gate's keeper (at DNS_WIRE_SOCK_JAIL_PATH), and wait for the keeper's
 * answer, so that the address is in the set before dnsmasq sends the answer to the sandbox (no race
 * with its connect).
 *
 * dnsmasq will not start --nftset without CAP_NET_ADMIN (it would need it to do nft itself), so
 * capget here also says the process has it: it is the keeper that has it, and acts on its behalf.
 *
 * Its constructor also closes the one door the jail's seccomp filter leaves open for dnsmasq to
 * start at all: execve. From here on, nothing in this process can exec anything.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "../egress-dns-wire.h"

#if defined(__x86_64__)
#define SHIM_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SHIM_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "the DNS shim's execve filter knows x86_64 and aarch64 only"
#endif

struct nft_ctx;

/* libnftables' declarations, as dnsmasq calls them (its header is not needed for four). */
struct nft_ctx *nft_ctx_new(unsigned int flags);
int nft_ctx_buffer_error(struct nft_ctx *ctx);
const char *nft_ctx_get_error_buffer(struct nft_ctx *ctx);
int nft_run_cmd_from_buffer(struct nft_ctx *ctx, const char *buf);
int capget(cap_user_header_t hdr, cap_user_data_t data);

static char shim_error[160];
static int shim_ctx; /* what nft_ctx_new hands out: only its address matters */
static int shim_fd = -1;

/* execve and execveat answer EPERM; every other call is left to the jail's own filter. */
__attribute__((constructor)) static void shim_no_exec(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SHIM_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execve, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execveat, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	/* The jail set no_new_privs (which this needs); a process it cannot filter must not run. */
	if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		_exit(125);
}

/* The kernel's answer, with CAP_NET_ADMIN added for this process's own sets (see above). */
int capget(cap_user_header_t hdr, cap_user_data_t data)
{
	long r = syscall(__NR_capget, hdr, data);

	if (r == 0 && data && (hdr->pid == 0 || hdr->pid == getpid())) {
		data[0].effective |= 1U << CAP_NET_ADMIN;
		data[0].permitted |= 1U << CAP_NET_ADMIN;
	}
	return (int)r;
}

struct nft_ctx *nft_ctx_new(unsigned int flags)
{
	(void)flags;
	return (struct nft_ctx *)&shim_ctx;
}

int nft_ctx_buffer_error(struct nft_ctx *ctx)
{
	(void)ctx;
	return 0;
}

const char *nft_ctx_get_error_buffer(struct nft_ctx *ctx)
{
	(void)ctx;
	return shim_error;
}

/* Reads "add element FAMILY TABLE dnsF_RULE { ADDR }" into a request; 0 or -EINVAL. */
static int shim_parse(const char *cmd, struct dns_wire_request *req)
{
	char family[16], table[64], set[64], addr[64];
	unsigned fam, rule;
	char tail;

	if (sscanf(cmd, "add element %15s %63s %63s { %63[^ }] }", family, table, set, addr) != 4)
		return -EINVAL;
	if (sscanf(set, "dns%u_%u%c", &fam, &rule, &tail) != 2 || (fam != 4 && fam != 6) ||
	    rule > UINT16_MAX)
		return -EINVAL;
	memset(req, 0, sizeof(*req));
	req->op = DNS_WIRE_ADD;
	req->family = (uint8_t)fam;
	req->rule = (uint16_t)rule;
	if (inet_pton(fam == 4 ? AF_INET : AF_INET6, addr, req->addr) != 1)
		return -EINVAL;
	return 0;
}

/* The keeper, connected on first use: dnsmasq closes every fd it did not open itself. */
static int shim_keeper(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = DNS_WIRE_SOCK_JAIL_PATH };

	if (shim_fd >= 0)
		return shim_fd;
	shim_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (shim_fd >= 0 && connect(shim_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(shim_fd);
		shim_fd = -1;
	}
	return shim_fd;
}

int nft_run_cmd_from_buffer(struct nft_ctx *ctx, const char *buf)
{
	struct dns_wire_request req;
	uint8_t answer = DNS_WIRE_REFUSED;

	(void)ctx;
	if (shim_parse(buf, &req) < 0) {
		snprintf(shim_error, sizeof(shim_error), "firebreak: not an address to add: %.100s",
			 buf);
		return -1;
	}
	if (shim_keeper() < 0 ||
	    send(shim_fd, &req, sizeof(req), MSG_NOSIGNAL) != (ssize_t)sizeof(req) ||
	    recv(shim_fd, &answer, 1, 0) != 1) {
		snprintf(shim_error, sizeof(shim_error), "firebreak: the gate's keeper is gone: %s",
			 strerror(errno));
		return -1;
	}
	if (answer != DNS_WIRE_OK) {
		snprintf(shim_error, sizeof(shim_error), "firebreak: the keeper refused %.100s",
			 buf);
		return -1;
	}
	return 0;
}

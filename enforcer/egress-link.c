#include "egress-link.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>
#include <netlink/route/route.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"

/* libnl reports its own error numbers; the kernel's errno is what we pass up. */
static int nl_to_errno(int err)
{
	switch (-err) {
	case NLE_EXIST:
		return -EEXIST;
	case NLE_NOMEM:
		return -ENOMEM;
	case NLE_PERM:
		return -EPERM;
	case NLE_NODEV:
	case NLE_OBJ_NOTFOUND:
		return -ENODEV;
	case NLE_INVAL:
		return -EINVAL;
	case NLE_BUSY:
		return -EBUSY;
	default:
		return -EIO;
	}
}

static struct nl_sock *open_socket(void)
{
	struct nl_sock *sk = nl_socket_alloc();

	if (!sk)
		return NULL;
	if (nl_connect(sk, NETLINK_ROUTE) < 0) {
		nl_socket_free(sk);
		return NULL;
	}
	return sk;
}

int link_veth_create(const char *name, const char *peer_name, int peer_nsfd)
{
	struct nl_sock *sk = open_socket();
	struct rtnl_link *link, *peer;
	int r;

	if (!sk)
		return -EIO;
	link = rtnl_link_veth_alloc();
	if (!link) {
		nl_socket_free(sk);
		return -ENOMEM;
	}
	rtnl_link_set_name(link, name);
	peer = rtnl_link_veth_get_peer(link);
	rtnl_link_set_name(peer, peer_name);
	rtnl_link_set_ns_fd(peer, peer_nsfd);
	rtnl_link_put(peer);
	r = rtnl_link_add(sk, link, NLM_F_CREATE | NLM_F_EXCL);
	rtnl_link_veth_release(link);
	nl_socket_free(sk);
	if (r < 0)
		return log_error("veth %s/%s: %s", name, peer_name, nl_geterror(r)), nl_to_errno(r);
	return 0;
}

int link_delete(const char *name)
{
	struct nl_sock *sk;
	struct rtnl_link *link;
	int r;

	if (if_nametoindex(name) == 0)
		return -ENODEV;
	sk = open_socket();
	if (!sk)
		return -EIO;
	link = rtnl_link_alloc();
	if (!link) {
		nl_socket_free(sk);
		return -ENOMEM;
	}
	rtnl_link_set_name(link, name);
	r = rtnl_link_delete(sk, link);
	rtnl_link_put(link);
	nl_socket_free(sk);
	return r < 0 ? nl_to_errno(r) : 0;
}

int link_add_address(const char *name, const char *cidr)
{
	unsigned idx = if_nametoindex(name);
	struct nl_sock *sk;
	struct rtnl_addr *a;
	struct nl_addr *local = NULL;
	int r;

	if (idx == 0)
		return -ENODEV;
	if (nl_addr_parse(cidr, strchr(cidr, ':') ? AF_INET6 : AF_INET, &local) < 0)
		return -EINVAL;
	sk = open_socket();
	a = rtnl_addr_alloc();
	if (!sk || !a) {
		r = -ENOMEM;
		goto out;
	}
	rtnl_addr_set_ifindex(a, (int)idx);
	rtnl_addr_set_local(a, local);
	/* No duplicate address detection: the link is ours alone, and DAD would leave IPv6
	 * tentative for a second after create returns. */
	rtnl_addr_set_flags(a, IFA_F_NODAD);
	r = rtnl_addr_add(sk, a, 0);
	if (r < 0) {
		log_error("address %s on %s: %s", cidr, name, nl_geterror(r));
		r = nl_to_errno(r);
	}
out:
	if (a)
		rtnl_addr_put(a);
	nl_addr_put(local);
	if (sk)
		nl_socket_free(sk);
	return r;
}

int link_up(const char *name)
{
	unsigned idx = if_nametoindex(name);
	struct nl_sock *sk;
	struct rtnl_link *orig, *change;
	int r;

	if (idx == 0)
		return -ENODEV;
	sk = open_socket();
	orig = rtnl_link_alloc();
	change = rtnl_link_alloc();
	if (!sk || !orig || !change) {
		r = -ENOMEM;
		goto out;
	}
	rtnl_link_set_ifindex(orig, (int)idx);
	rtnl_link_set_flags(change, IFF_UP);
	r = rtnl_link_change(sk, orig, change, 0);
	r = r < 0 ? nl_to_errno(r) : 0;
out:
	if (orig)
		rtnl_link_put(orig);
	if (change)
		rtnl_link_put(change);
	if (sk)
		nl_socket_free(sk);
	return r;
}

int link_add_default_route(const char *name, const char *gateway)
{
	unsigned idx = if_nametoindex(name);
	int family = strchr(gateway, ':') ? AF_INET6 : AF_INET;
	struct nl_addr *dst = NULL, *gw = NULL;
	struct rtnl_route *rt = NULL;
	struct rtnl_nexthop *nh;
	struct nl_sock *sk = NULL;
	int r;

	if (idx == 0)
		return -ENODEV;
	if (nl_addr_parse(family == AF_INET ? "0.0.0.0/0" : "::/0", family, &dst) < 0 ||
	    nl_addr_parse(gateway, family, &gw) < 0) {
		r = -EINVAL;
		goto out;
	}
	sk = open_socket();
	rt = rtnl_route_alloc();
	nh = rtnl_route_nh_alloc();
	if (!sk || !rt || !nh) {
		r = -ENOMEM;
		goto out;
	}
	rtnl_route_set_family(rt, (uint8_t)family);
	rtnl_route_set_dst(rt, dst);
	rtnl_route_nh_set_ifindex(nh, (int)idx);
	rtnl_route_nh_set_gateway(nh, gw);
	rtnl_route_add_nexthop(rt, nh);
	r = rtnl_route_add(sk, rt, NLM_F_CREATE);
	if (r < 0) {
		log_error("default route via %s on %s: %s", gateway, name, nl_geterror(r));
		r = nl_to_errno(r);
	}
out:
	if (rt)
		rtnl_route_put(rt);
	nl_addr_put(dst);
	nl_addr_put(gw);
	if (sk)
		nl_socket_free(sk);
	return r;
}

int link_sysctl(const char *path, const char *value)
{
	char full[256];
	_cleanup_close_ int fd = -1;
	size_t len = strlen(value);

	snprintf(full, sizeof(full), "/proc/sys/%s", path);
	fd = open(full, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return write(fd, value, len) == (ssize_t)len ? 0 : -errno;
}

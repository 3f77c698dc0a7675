#include "nflog-pcap.h"

#include <errno.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <pcap/pcap.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "netns-thread.h"
#include "macro.h"

#define NFULA_PAYLOAD 9
#define NFULA_PREFIX 10
#define NFLOG_RCVBUF (16 << 20)
/*
 * The kernel batches logged packets into one netlink message (up to ~4 KiB), and libpcap sizes
 * its read buffer from the snapshot length: a short snaplen truncated the batches, losing most
 * packets of a flood and garbling the rest (measured: 1,428 of 10,000 read). 64 KiB holds any.
 */
#define NFLOG_SNAPLEN 65535

struct nflog_reader {
	pcap_t *pcap;
	ino_t netns_ino;
	void (*cb)(const struct nflog_packet *p, void *data);
	void *data;
	uint64_t *unparsed;
};

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static int parse_ip(const uint8_t *ip, size_t len, struct nflog_packet *p)
{
	size_t hl;

	if (len < 1)
		return -EINVAL;
	if ((ip[0] >> 4) == 4) {
		if (len < 20 || (hl = (size_t)(ip[0] & 0xf) * 4) < 20 || hl > len)
			return -EINVAL;
		p->family = AF_INET;
		p->proto = ip[9];
		memcpy(p->src, ip + 12, 4);
		memcpy(p->dst, ip + 16, 4);
	} else if ((ip[0] >> 4) == 6) {
		/* Extension headers are not walked: the gate sees what the sandbox sent, and a
		 * packet with them is recorded with that next-header value and no ports. */
		if (len < 40)
			return -EINVAL;
		hl = 40;
		p->family = AF_INET6;
		p->proto = ip[6];
		memcpy(p->src, ip + 8, 16);
		memcpy(p->dst, ip + 24, 16);
	} else {
		return -EINVAL;
	}
	if ((p->proto == IPPROTO_TCP || p->proto == IPPROTO_UDP) && len >= hl + 4) {
		p->sport = be16(ip + hl);
		p->dport = be16(ip + hl + 2);
	} else if ((p->proto == IPPROTO_ICMP || p->proto == IPPROTO_ICMPV6) && len > hl) {
		p->dport = ip[hl];
	}
	return 0;
}

int nflog_parse(const uint8_t *frame, size_t len, struct nflog_packet *ret)
{
	size_t off = 4;
	int have_payload = 0;

	memset(ret, 0, sizeof(*ret));
	if (len < 4)
		return -EINVAL;
	/* TLVs: length (including this 4-byte header) and type in host order, padded to 4. */
	while (off + 4 <= len) {
		uint16_t tlen, type;

		memcpy(&tlen, frame + off, 2);
		memcpy(&type, frame + off + 2, 2);
		if (tlen < 4 || off + tlen > len)
			return -EINVAL;
		type &= 0x7fff;
		if (type == NFULA_PREFIX) {
			size_t n = strnlen((const char *)frame + off + 4, tlen - 4u);

			if (n >= sizeof(ret->prefix))
				n = sizeof(ret->prefix) - 1;
			memcpy(ret->prefix, frame + off + 4, n);
		} else if (type == NFULA_PAYLOAD) {
			if (parse_ip(frame + off + 4, tlen - 4u, ret) < 0)
				return -EINVAL;
			have_payload = 1;
		}
		off += ((size_t)tlen + 3) & ~(size_t)3;
	}
	return have_payload ? 0 : -EINVAL;
}

/*
 * The kernel holds logged packets until it has a batch (100) or a second has passed; a trickle of
 * denials would reach the monitor a second late. libpcap does not set the timeout, so it is set
 * here, on libpcap's own socket (the group's instance answers only to the socket bound to it).
 */
static int set_flush_timeout(int fd, unsigned group, uint32_t centiseconds)
{
	struct {
		struct nlmsghdr nlh;
		struct nfgenmsg nfg;
		struct nlattr nla;
		uint32_t timeout;
	} req = {
		.nlh = { .nlmsg_len = sizeof(req),
			 .nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG,
			 .nlmsg_flags = NLM_F_REQUEST },
		.nfg = { .nfgen_family = AF_UNSPEC,
			 .version = NFNETLINK_V0,
			 .res_id = htons((uint16_t)group) },
		.nla = { .nla_len = sizeof(struct nlattr) + sizeof(uint32_t),
			 .nla_type = NFULA_CFG_TIMEOUT },
		.timeout = htonl(centiseconds),
	};
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };

	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	return 0;
}

int nflog_open(const char *netns_path, unsigned group, struct nflog_reader **ret)
{
	char dev[32], err[PCAP_ERRBUF_SIZE] = "";
	struct nflog_reader *r = calloc(1, sizeof(*r));
	int home, rc = 0;

	if (!r)
		return -ENOMEM;
	snprintf(dev, sizeof(dev), "nflog:%u", group);
	if ((home = netns_enter(netns_path, &r->netns_ino)) < 0) {
		free(r);
		return home;
	}
	if (!(r->pcap = pcap_create(dev, err)) || pcap_set_snaplen(r->pcap, NFLOG_SNAPLEN) != 0 ||
	    pcap_set_buffer_size(r->pcap, NFLOG_RCVBUF) != 0 ||
	    pcap_set_immediate_mode(r->pcap, 1) != 0 || pcap_activate(r->pcap) < 0 ||
	    pcap_setnonblock(r->pcap, 1, err) < 0) {
		log_error("libpcap %s: %s", dev, r->pcap ? pcap_geterr(r->pcap) : err);
		rc = -EIO;
	} else {
		/* libpcap's buffer size is capped by rmem_max; a flood of denied packets needs room
		 * (an overflow is counted by libpcap, but not how many packets it cost). */
		int size = NFLOG_RCVBUF;

		(void)setsockopt(pcap_get_selectable_fd(r->pcap), SOL_SOCKET, SO_RCVBUFFORCE, &size,
				 sizeof(size));
		if ((rc = set_flush_timeout(pcap_get_selectable_fd(r->pcap), group, 10)) < 0)
			log_warn_errno(rc, "NFLOG group %u: flush timeout", group);
		rc = 0;
	}
	/* Back home whatever happened: the daemon must never stay in the gate's namespace. */
	netns_leave(home);
	if (rc < 0) {
		nflog_close(r);
		return rc;
	}
	*ret = r;
	return 0;
}

void nflog_close(struct nflog_reader *r)
{
	if (!r)
		return;
	if (r->pcap)
		pcap_close(r->pcap);
	free(r);
}

int nflog_fd(struct nflog_reader *r)
{
	return pcap_get_selectable_fd(r->pcap);
}

ino_t nflog_netns_ino(struct nflog_reader *r)
{
	return r->netns_ino;
}

static void on_frame(u_char *user, const struct pcap_pkthdr *h, const u_char *bytes)
{
	struct nflog_reader *r = (struct nflog_reader *)user;
	struct nflog_packet p;

	if (nflog_parse(bytes, h->caplen, &p) < 0) {
		(*r->unparsed)++;
		return;
	}
	p.ts = (int64_t)h->ts.tv_sec * 1000000000LL + (int64_t)h->ts.tv_usec * 1000LL;
	r->cb(&p, r->data);
}

int nflog_read(struct nflog_reader *r, void (*cb)(const struct nflog_packet *p, void *data),
	       void *data, uint64_t *unparsed)
{
	struct pollfd pfd = { .fd = pcap_get_selectable_fd(r->pcap), .events = POLLIN };
	int n, total = 0;

	r->cb = cb;
	r->data = data;
	r->unparsed = unparsed;
	/* libpcap's NFLOG reader reports EAGAIN as an error: read only what poll says is there. */
	while (poll(&pfd, 1, 0) > 0) {
		if ((n = pcap_dispatch(r->pcap, 1024, on_frame, (u_char *)r)) < 0) {
			log_warn("libpcap: %s", pcap_geterr(r->pcap));
			return -EIO;
		}
		total += n;
	}
	return total;
}

uint64_t nflog_kernel_drops(struct nflog_reader *r)
{
	struct pcap_stat s;

	if (pcap_stats(r->pcap, &s) < 0)
		return 0;
	return s.ps_drop;
}

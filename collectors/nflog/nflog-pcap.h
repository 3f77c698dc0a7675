/*
 * The gate's denied packets, read with libpcap from NFLOG ("nflog:GROUP") in the gate's network
 * namespace. NFLOG sockets belong to the namespace they were made in, so the handle is opened
 * there (setns and back, on the caller's thread) and keeps reading it from the host.
 */
#ifndef FB_NFLOG_PCAP_H
#define FB_NFLOG_PCAP_H

#include <stdint.h>
#include <sys/types.h>

struct nflog_packet {
	int64_t ts;	 /* ns since the epoch */
	char prefix[64]; /* the rule's log prefix, "firebreak:NAME " */
	uint8_t family;	 /* AF_INET or AF_INET6 */
	uint8_t proto;	 /* IPPROTO_* */
	uint8_t src[16], dst[16];
	uint16_t sport, dport; /* TCP/UDP ports; ICMP: type in dport */
};

struct nflog_reader;

/*
 * Opens NFLOG group in the network namespace at netns_path; 0 and *ret, or -errno (the pcap
 * error is logged).
 */
int nflog_open(const char *netns_path, unsigned group, struct nflog_reader **ret);

void nflog_close(struct nflog_reader *r);

/* The fd to poll; readable when packets wait. */
int nflog_fd(struct nflog_reader *r);

/* The namespace's inode it was opened in (to notice that the gate was made anew). */
ino_t nflog_netns_ino(struct nflog_reader *r);

/*
 * Reads every packet waiting and calls cb for each; returns how many, or -EIO. Packets that do not
 * parse are counted in *unparsed.
 */
int nflog_read(struct nflog_reader *r, void (*cb)(const struct nflog_packet *p, void *data),
	       void *data, uint64_t *unparsed);

/* Packets the kernel could not hand over (socket full), as libpcap counts them. */
uint64_t nflog_kernel_drops(struct nflog_reader *r);

/* Parses one DLT_NFLOG frame (exported for the unit test); 0 or -EINVAL. */
int nflog_parse(const uint8_t *frame, size_t len, struct nflog_packet *ret);

#endif

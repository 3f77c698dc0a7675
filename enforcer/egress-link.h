/* Links, addresses and routes through rtnetlink (libnl-route-3), inside the current netns. */
#ifndef FB_EGRESS_LINK_H
#define FB_EGRESS_LINK_H

/* Creates veth name (here) with peer peer_name in the netns peer_nsfd; 0 or -errno. */
int link_veth_create(const char *name, const char *peer_name, int peer_nsfd);

/* Deletes link name here; 0, -ENODEV, or -errno. */
int link_delete(const char *name);

/* Adds address cidr ("10.199.0.5/30", "fd66:6272:fb:1::1/64") to link name, no DAD; 0 or -errno. */
int link_add_address(const char *name, const char *cidr);

/* Sets link name up; 0 or -errno. */
int link_up(const char *name);

/* Adds a default route via gateway (IPv4 or IPv6) on link name; 0 or -errno. */
int link_add_default_route(const char *name, const char *gateway);

/* Writes value to /proc/sys/PATH (of the current netns); 0 or -errno. */
int link_sysctl(const char *path, const char *value);

#endif

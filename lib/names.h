/*
 * What Firebreak names on a host and both halves must agree on (DESIGN.md, "Naming on the
 * machine"): the enforcer creates these, the monitor finds them.
 */
#ifndef FB_NAMES_H
#define FB_NAMES_H

/* Named network namespaces, where iproute2 keeps them (so `ip netns` shows ours). */
#define NETNS_DIR "/run/netns"

/* The gate's network namespace: every sandbox's only link leads there (enforcer/egress.h). */
#define EGRESS_GATE_NETNS "firebreak-gate"

#endif

/*
 * Lure rules: what touched the sandbox's decoys and tripwires (lib/lures.h, collectors/lure/), a
 * container runtime's socket asked for, and the decoys' marker seen leaving. Nothing honest
 * reaches any of them, so each is critical: the default kills.
 */
#include <stdio.h>
#include <string.h>

#include "detect-internal.h"
#include "macro.h"

/*
 * The decoy every HTTP client library opens on its own (requests and pip look in ~/.netrc for a
 * login on every request): its open is recorded, not judged; its marker leaving still is.
 */
static int decoy_read_honestly(const char *path)
{
	return strcmp(path, LURE_HOME "/.netrc") == 0;
}

static size_t decoy(const struct event *ev, struct detect_verdict *out)
{
	char path[256];

	if (!event_field_str(ev, "path", path, sizeof(path)) || decoy_read_honestly(path))
		return 0;
	detect_verdict_init(out, ev, RULE_CREDENTIAL_DECOY, DETECT_CRITICAL);
	snprintf(out->reason, sizeof(out->reason), "the decoy credential %.180s was opened", path);
	return 1;
}

/* A refused open of a tripwire: a write to a tunable, cgroup or account file; any open of a
 * device, of init's /proc entries or of a system secret. */
static size_t tripwire(const struct event *ev, struct detect_verdict *out)
{
	char path[256], lure[16], op[16];

	if (!event_field_str(ev, "op", op, sizeof(op)))
		strscpy(op, sizeof(op), "open");
	if (!event_field_true(ev, "refused"))
		return 0; /* a read of a tunable or a cgroup file: recorded */
	if (!event_field_str(ev, "path", path, sizeof(path)))
		strscpy(path, sizeof(path), "?");
	if (!event_field_str(ev, "lure", lure, sizeof(lure)))
		strscpy(lure, sizeof(lure), "?");
	detect_verdict_init(out, ev, RULE_ESCAPE_TRIPWIRE, DETECT_CRITICAL);
	snprintf(out->reason, sizeof(out->reason), "%s of the %s %.160s refused (a tripwire)", op,
		 strcmp(lure, "device") == 0	? "device"
		 : strcmp(lure, "cgroup") == 0	? "cgroup control file"
		 : strcmp(lure, "process") == 0 ? "sandbox init's"
		 : strcmp(lure, "system") == 0	? "account file"
		 : strcmp(lure, "secret") == 0	? "system secret"
						: "kernel tunable",
		 path);
	return 1;
}

/* Container runtimes' API sockets: whoever speaks to one runs containers as root on the host. */
static int runtime_socket(const char *path)
{
	static const char *const names[] = {
		"docker.sock",	"containerd.sock", "crio.sock",	       "podman.sock",
		"kubelet.sock", "dockershim.sock", "cri-dockerd.sock", "buildkitd.sock",
	};
	static const char *const parts[] = { "containerd-shim", "/run/containerd/", "/run/docker/",
					     "/lxd/unix.socket" };
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strcmp(base, names[i]) == 0)
			return 1;
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++)
		if (strstr(path, parts[i]))
			return 1;
	return 0;
}

static size_t unix_socket(const struct event *ev, struct detect_verdict *out)
{
	char path[256];

	if (!event_field_str(ev, "path", path, sizeof(path)) || !runtime_socket(path))
		return 0;
	detect_verdict_init(out, ev, RULE_ESCAPE_RUNTIME_SOCKET, DETECT_CRITICAL);
	snprintf(out->reason, sizeof(out->reason), "a container runtime's socket asked for: %.180s",
		 path);
	return 1;
}

/* The marker in what leaves or is handed on: a program's arguments, a name asked of DNS. */
static size_t marker_left(const struct detect_state *st, const struct event *ev,
			  struct detect_verdict *out)
{
	const char *key = strcmp(ev->kind, "proc.exec") == 0   ? "argv"
			  : strcmp(ev->kind, "dns.query") == 0 ? "name"
							       : NULL;

	if (!key || !event_field_holds(ev, key, st->marker))
		return 0;
	detect_verdict_init(out, ev, RULE_EXFIL_DECOY_MARKER, DETECT_CRITICAL);
	snprintf(out->reason, sizeof(out->reason),
		 "the decoys' marker in a %s's %s: a decoy's content is being sent out", ev->kind,
		 key);
	return 1;
}

size_t detect_rules_lure(struct detect_state *st, const struct event *ev,
			 struct detect_verdict *out, size_t max)
{
	if (max == 0)
		return 0;
	if (strcmp(ev->kind, "lure.decoy") == 0)
		return decoy(ev, out);
	if (strcmp(ev->kind, "lure.tripwire") == 0)
		return tripwire(ev, out);
	if (strcmp(ev->kind, "net.unix") == 0)
		return unix_socket(ev, out);
	if (st->marker[0])
		return marker_left(st, ev, out);
	return 0;
}

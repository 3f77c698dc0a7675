/*
 * L7 proxy rules: what the gate's proxy refused (collectors/http/). The proxy has already stopped
 * the request; the verdict says someone in the sandbox tried. A request carrying the decoys'
 * marker is a decoy's content being sent out: nothing honest holds it, so it is critical and
 * kills by default, like the other decoy rules (rules-lure.c). The proxy ending while its
 * sandbox lives leaves the sandbox's HTTP(S) refused (fail closed), so it only alerts: nothing
 * gets out, but a crashed squid may have been attacked.
 */
#include <stdio.h>
#include <string.h>

#include "detect-internal.h"
#include "macro.h"

static size_t decoy_sent(const struct event *ev, struct detect_verdict *out)
{
	char method[32], host[128];

	if (!event_field_str(ev, "method", method, sizeof(method)))
		strscpy(method, sizeof(method), "?");
	if (!event_field_str(ev, "host", host, sizeof(host)))
		strscpy(host, sizeof(host), "?");
	detect_verdict_init(out, ev, RULE_EXFIL_DECOY_HTTP, DETECT_CRITICAL);
	snprintf(out->reason, sizeof(out->reason),
		 "the decoys' marker in an HTTP request (%.31s to %.120s): a decoy credential is "
		 "being sent out",
		 method, host);
	return 1;
}

static size_t refused(const struct event *ev, struct detect_verdict *out)
{
	char method[32], host[128], reason[16], rule[64];

	if (!event_field_str(ev, "method", method, sizeof(method)))
		strscpy(method, sizeof(method), "?");
	if (!event_field_str(ev, "host", host, sizeof(host)))
		strscpy(host, sizeof(host), "?");
	if (!event_field_str(ev, "reason", reason, sizeof(reason)))
		strscpy(reason, sizeof(reason), "?");
	detect_verdict_init(out, ev, RULE_HTTP_REFUSED, DETECT_MEDIUM);
	if (strcmp(reason, "rule") == 0 && event_field_str(ev, "refused_rule", rule, sizeof(rule)))
		snprintf(out->reason, sizeof(out->reason),
			 "the L7 proxy refused %.31s to %.100s: past rule %.63s's http limits",
			 method, host, rule);
	else
		snprintf(out->reason, sizeof(out->reason),
			 "the L7 proxy refused %.31s to %.120s: %s", method, host,
			 strcmp(reason, "host") == 0  ? "no rule allows this host"
			 : strcmp(reason, "sni") == 0 ? "TLS name unknown or fronted"
						      : reason);
	return 1;
}

static size_t proxy_down(const struct event *ev, struct detect_verdict *out)
{
	detect_verdict_init(out, ev, RULE_EGRESS_PROXY_DOWN, DETECT_MEDIUM);
	snprintf(out->reason, sizeof(out->reason),
		 "the sandbox's L7 proxy ended while the sandbox ran: its HTTP and HTTPS egress is "
		 "refused from now on (fail closed)");
	return 1;
}

size_t detect_rules_http(struct detect_state *st, const struct event *ev,
			 struct detect_verdict *out, size_t max)
{
	size_t n = 0;

	if (ev->source != EVENT_SOURCE_PROXY)
		return 0;
	if (strcmp(ev->kind, "proxy.down") == 0)
		return max ? proxy_down(ev, out) : 0;
	if (strcmp(ev->kind, "http.refused") != 0)
		return 0;
	/* A decoy's request is refused too: both verdicts, the critical one first. */
	if (n < max && event_field_true(ev, "decoy"))
		n += decoy_sent(ev, out + n);
	if (n < max)
		n += refused(ev, out + n);
	return n;
}

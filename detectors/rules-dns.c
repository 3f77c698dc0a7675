/*
 * DNS rules: a tunnel through the sandbox's resolver. Data smuggled out in names shows as long or
 * random-looking labels, as many distinct names under one parent domain, or as bursts of TXT and
 * NULL queries (the record types that carry data back in). Each query is noted in a ring; a
 * verdict is reported at most once per window.
 */
#include <stdio.h>
#include <string.h>

#include "detect-internal.h"
#include "macro.h"

/* c * log2(c) for c = 0..63, so a label's entropy needs no libm: H = (T(n) - sum T(c_i)) / n. */
static const double clog2c[DNS_LABEL_MAX + 1] = {
	0.000000,   0.000000,	2.000000,   4.754888,	8.000000,   11.609640,	15.509775,
	19.651484,  24.000000,	28.529325,  33.219281,	38.053748,  43.019550,	48.105716,
	53.302969,  58.603359,	64.000000,  69.486868,	75.058650,  80.710623,	86.438562,
	92.238666,  98.107496,	104.041925, 110.039100, 116.096405, 122.211433, 128.381963,
	134.605938, 140.881449, 147.206718, 153.580086, 160.000000, 166.465006, 172.973737,
	179.524906, 186.117300, 192.749775, 199.421246, 206.130687, 212.877124, 219.659632,
	226.477332, 233.329384, 240.214991, 247.133389, 254.083850, 261.065676, 268.078200,
	275.120782, 282.192809, 289.293692, 296.422865, 303.579784, 310.763925, 317.974784,
	325.211876, 332.474731, 339.762898, 347.075940, 354.413436, 361.774978, 369.160171,
	376.568635,
};

/* A label's entropy in bits per character (its text, n <= DNS_LABEL_MAX). */
static double label_entropy(const char *s, size_t n)
{
	unsigned count[256] = { 0 };
	double sum = 0;

	for (size_t i = 0; i < n; i++)
		count[(unsigned char)s[i]]++;
	for (size_t c = 0; c < 256; c++)
		sum += clog2c[count[c]];
	return n ? (clog2c[n] - sum) / (double)n : 0;
}

/* Whether name has a label of DETECT_DNS_RANDOM_MIN characters or more that looks random. */
static int random_label(const char *name)
{
	for (const char *p = name; *p;) {
		size_t n = strcspn(p, ".");

		if (n >= DETECT_DNS_RANDOM_MIN && n <= DNS_LABEL_MAX &&
		    label_entropy(p, n) > DETECT_DNS_RANDOM_BITS)
			return 1;
		p += n + (p[n] == '.');
	}
	return 0;
}

/* The parent domain of name: its last two labels ("exfil.test" of "x.y.exfil.test"). */
static const char *parent_of(const char *name)
{
	size_t n = strlen(name);
	int dots = 0;

	while (n > 0 && name[n - 1] == '.') /* a trailing root dot */
		n--;
	for (size_t i = n; i-- > 0;)
		if (name[i] == '.' && ++dots == 2)
			return name + i + 1;
	return name;
}

static void note_query(struct detect_state *st, const struct event *ev, const char *name,
		       unsigned flags)
{
	struct detect_dns_query *q;

	if (st->dns_n < DETECT_DNS_MAX)
		q = &st->dns[(st->dns_head + st->dns_n++) % DETECT_DNS_MAX];
	else { /* full: the oldest goes */
		q = &st->dns[st->dns_head];
		st->dns_head = (st->dns_head + 1) % DETECT_DNS_MAX;
	}
	q->ts = ev->ts;
	q->id = ev->id;
	q->name = detect_name_hash(name);
	q->parent = detect_name_hash(parent_of(name));
	q->flags = flags;
}

/* What the window before now holds of parent's queries: suspicious ones, distinct names, and
 * TXT or NULL queries (of any parent); the ids of the matching ones, newest kept. */
struct dns_window {
	unsigned suspicious, distinct, data;
};

static void window(const struct detect_state *st, int64_t now, uint64_t parent,
		   struct dns_window *w)
{
	uint64_t seen[DETECT_DNS_MAX];

	memset(w, 0, sizeof(*w));
	for (size_t i = st->dns_n; i-- > 0;) {
		const struct detect_dns_query *q = &st->dns[(st->dns_head + i) % DETECT_DNS_MAX];
		unsigned j;

		if (now - q->ts > st->cfg.dns_window_ns)
			break;
		w->data += !!(q->flags & DETECT_DNS_DATA);
		if (q->parent != parent)
			continue;
		w->suspicious += !!(q->flags & DETECT_DNS_SUSPICIOUS);
		for (j = 0; j < w->distinct && seen[j] != q->name; j++)
			;
		if (j == w->distinct)
			seen[w->distinct++] = q->name;
	}
}

/* The ids of the last queries (at most DETECT_IDS_MAX) with any of flags, or of parent. */
static void window_ids(const struct detect_state *st, int64_t now, uint64_t parent, unsigned flags,
		       struct detect_verdict *v)
{
	int64_t ids[DETECT_IDS_MAX];
	size_t k = 0;

	for (size_t i = st->dns_n; i-- > 0 && k < DETECT_IDS_MAX;) {
		const struct detect_dns_query *q = &st->dns[(st->dns_head + i) % DETECT_DNS_MAX];

		if (now - q->ts > st->cfg.dns_window_ns)
			break;
		if ((flags && (q->flags & flags)) || (!flags && q->parent == parent))
			ids[k++] = q->id;
	}
	v->n_ids = 0;
	while (k > 0)
		v->event_ids[v->n_ids++] = ids[--k];
}

size_t detect_rules_dns(struct detect_state *st, const struct event *ev, struct detect_verdict *out,
			size_t max)
{
	char name[DETECT_DNS_NAME_MAX], type[16] = "";
	int64_t longest = 0;
	long long secs = (long long)(st->cfg.dns_window_ns / 1000000000);
	unsigned flags = 0;
	struct dns_window w;
	uint64_t parent;

	if (max == 0 || strcmp(ev->kind, "dns.query") != 0 ||
	    !event_field_str(ev, "name", name, sizeof(name)))
		return 0;
	event_field_str(ev, "type", type, sizeof(type));
	event_field_int(ev, "longest_label", &longest);
	if (longest > st->cfg.dns_label_max || random_label(name))
		flags |= DETECT_DNS_SUSPICIOUS;
	if (strcmp(type, "TXT") == 0 || strcmp(type, "NULL") == 0)
		flags |= DETECT_DNS_DATA;
	note_query(st, ev, name, flags);
	parent = detect_name_hash(parent_of(name));
	window(st, ev->ts, parent, &w);
	if (ev->ts < st->dns_quiet_until)
		return 0;
	detect_verdict_init(&out[0], ev, RULE_DNS_TUNNEL, DETECT_HIGH);
	if (w.suspicious >= DETECT_DNS_SUSPICIOUS_MIN) {
		window_ids(st, ev->ts, parent, DETECT_DNS_SUSPICIOUS, &out[0]);
		snprintf(out[0].reason, sizeof(out[0].reason),
			 "%u queries with long or random-looking labels under %s within %lld s "
			 "(this one: a %lld-character label)",
			 w.suspicious, parent_of(name), secs, (long long)longest);
	} else if (w.distinct >= st->cfg.dns_names_max) {
		window_ids(st, ev->ts, parent, 0, &out[0]);
		snprintf(out[0].reason, sizeof(out[0].reason),
			 "%u distinct names under %s within %lld s", w.distinct, parent_of(name),
			 secs);
	} else if (w.data >= st->cfg.dns_txt_max) {
		window_ids(st, ev->ts, parent, DETECT_DNS_DATA, &out[0]);
		snprintf(out[0].reason, sizeof(out[0].reason),
			 "%u TXT or NULL queries within %lld s (this one: %.80s)", w.data, secs,
			 name);
	} else {
		return 0;
	}
	st->dns_quiet_until = ev->ts + st->cfg.dns_window_ns;
	return 1;
}

#!/bin/bash
# The network test world: a network namespace holding the fake services an egress test aims at
# (cloud metadata, a C2, an allowlisted registry, a DNS authority for *.test), reachable only from
# namespaces attached to it (the enforcer's gate, or a client made here). It has no default route
# and no link to the host's network namespace; nothing here touches the host's own addresses,
# routes or nftables ruleset. See README.md for the topology and how a test uses it.
#
# Usage:
#   world.sh up [-t SECONDS] DIR         build the world, start its services (each exits on its
#                                        own after SECONDS, default 600), wait until each answers
#   world.sh down DIR                    stop what DIR records, delete the namespaces (idempotent)
#   world.sh client-up DIR N             netns firebreak-world-cN with a veth to the world only
#   world.sh client-down DIR N           delete it
#   world.sh capture-start [-i IFACE] DIR NAME [FILTER]
#                                        count packets arriving in the world on IFACE
#                                        (default fb-gate-out) that match the pcap FILTER
#   world.sh capture-stop DIR NAME       stop it; prints the number of packets captured
#   world.sh capture-dests DIR NAME      "COUNT DESTINATION" per destination in that capture
#   world.sh contacts DIR SERVICE        the contact log of metadata, c2, registry, api, badcert
#                                        or dns
#   world.sh gc                          remove a world a crashed run left (no DIR needed)
set -eu

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=(/usr/bin/python3 -B -E -s)

WORLD_NS=firebreak-world-net
PROBE_NS=firebreak-world-probe
PROBE_IF=fb-wprobe0		# the probe's end, in $PROBE_NS
PROBE_WORLD_IF=fb-wprobe1	# its peer, in $WORLD_NS
GATE_IF=fb-gate-out		# the gate's outside link; the enforcer moves it into $WORLD_NS

METADATA4=169.254.169.254
METADATA6=fd00:ec2::254
C2=203.0.113.66
REGISTRY=198.51.100.7
API=198.51.100.8	# api.model.test (and front.test): HTTPS, a certificate of the world's CA
BADCERT=198.51.100.9	# badcert.test: HTTPS, a self-signed certificate
DNS=198.51.100.53
SERVICE_ADDRS4="$METADATA4 $C2 $REGISTRY $API $BADCERT $DNS"

# Client links: client N (1..62) has 10.198.254.4N+2/30 (world end .4N+1) and
# fd66:6272:fe:N::2/64 (world end ::1); the probe has 10.198.253.2/30 and fd66:6272:fe:ff::2/64.
# None overlaps the gate's own ranges (10.199.0.0/16, fd66:6272:fb::/48, 10.198.255.252/30).
PROBE_WORLD4=10.198.253.1
PROBE4=10.198.253.2
PROBE_WORLD6=fd66:6272:fe:ff::1
PROBE6=fd66:6272:fe:ff::2
CLIENT_MAX=62

# Packets that are link housekeeping, not traffic: never counted by a capture.
CAPTURE_NOISE='arp or (ip6 multicast) or (icmp6 and (ip6[40] == 135 or ip6[40] == 136))'
CAPTURE_TIMEOUT=3600	# a capture nobody stops ends on its own
CAPTURE_SNAPLEN=256	# bytes kept per packet: the headers
CAPTURE_BUFFER_KB=8192	# kernel capture buffer; a capture that overflows it fails at stop
READY_TIMEOUT=10	# seconds each service may take to answer at start

die() {
	echo "world.sh: $*" >&2
	exit 1
}

# must WHAT COMMAND...: runs the command; on failure dies naming WHAT and the command's output.
must() {
	local what=$1 out
	shift
	if ! out=$("$@" 2>&1); then
		die "$what: '$*' failed${out:+: $out}"
	fi
}

usage() {
	sed -n '/^# Usage:/,/^set -eu/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
	exit 2
}

netns_exists() {
	ip netns list | awk '{ print $1 }' | grep -qx -- "$1"
}

# set_dir DIR: the state directory every subcommand but gc works in.
set_dir() {
	[ -n "${1:-}" ] || usage
	DIR=$1
	RUN=$DIR/run
	LOGS=$DIR/logs
	CAPS=$DIR/capture
	TLS=$DIR/tls
}

require_root_and_tools() {
	[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
	local t
	for t in ip tcpdump dnsmasq timeout setsid ps /usr/bin/python3; do
		command -v "$t" >/dev/null || die "$t is not installed"
	done
}

# ---- processes: each recorded as "PID STARTTIME" in $RUN/NAME.pid, stopped by that pid only

# proc_start_time PID: the process's start time (clock ticks since boot); fails if it is gone or
# a zombie.
proc_start_time() {
	local stat fields
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	read -r -a fields <<<"${stat##*) }"
	[ "${fields[0]}" != Z ] || return 1
	echo "${fields[19]}"
}

group_alive() {
	ps -e -o pgid=,stat= | awk -v g="$1" '$1 == g && $2 !~ /^Z/ { n++ } END { exit !n }'
}

# close_fds: in a subshell about to exec a service, so it holds none of the caller's pipes.
close_fds() {
	local fd
	for fd in "/proc/$BASHPID/fd/"*; do
		fd=${fd##*/}
		if [ "$fd" -gt 2 ]; then
			eval "exec $fd>&-" 2>/dev/null || true
		fi
	done
	return 0
}

# launch NAME ERRFILE COMMAND...: starts the command in $WORLD_NS as the leader of its own session
# (so stopping it can take its children too), detached from the caller's fds, and records it.
launch() {
	local name=$1 err=$2 pid start
	shift 2
	(
		close_fds
		exec setsid ip netns exec "$WORLD_NS" "$@" </dev/null >>"$err" 2>&1
	) &
	pid=$!
	start=$(proc_start_time "$pid") || die "$name exited at once: $(tail -n 5 "$err")"
	echo "$pid $start" >"$RUN/$name.pid"
}

# stop_recorded PIDFILE: stops the process group it names if its leader is still the process we
# started (same pid and start time), TERM then KILL after 5 s; removes the record.
stop_recorded() {
	local f=$1 pid start now
	if ! read -r pid start <"$f" 2>/dev/null || [ -z "${start:-}" ]; then
		rm -f "$f"
		return 0
	fi
	now=$(proc_start_time "$pid") || now=gone
	if [ "$now" = "$start" ]; then
		kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
	elif ! group_alive "$pid"; then
		rm -f "$f"
		return 0
	fi
	# The leader may be gone while children it forked (dnsmasq's TCP workers) remain.
	for _ in $(seq 50); do
		group_alive "$pid" || break
		sleep 0.1
	done
	if group_alive "$pid"; then
		echo "world.sh: process group $pid ignored SIGTERM; sending SIGKILL" >&2
		kill -KILL -- "-$pid" 2>/dev/null || true
		sleep 0.2
	fi
	rm -f "$f"
}

# ---- namespaces: each recorded in $RUN/netns before it is created, so down finds partial work

record_netns() {
	grep -qx -- "$1" "$RUN/netns" 2>/dev/null || echo "$1" >>"$RUN/netns"
}

unrecord_netns() {
	if [ -f "$RUN/netns" ]; then
		grep -vx -- "$1" "$RUN/netns" >"$RUN/netns.new" || true
		mv "$RUN/netns.new" "$RUN/netns"
	fi
}

delete_netns() {
	if netns_exists "$1"; then
		must "delete netns $1" ip netns del "$1"
	fi
	unrecord_netns "$1"
}

# attach NS CLIENT_IF WORLD_IF WORLD4 CLIENT4 WORLD6 CLIENT6: a new netns NS whose only link is a
# veth to the world (created inside the world, its peer straight in NS: neither end is ever in
# the host's namespace), with routes to the service addresses only (no default route).
attach() {
	local ns=$1 cif=$2 wif=$3 w4=$4 c4=$5 w6=$6 c6=$7 a
	netns_exists "$ns" && die "netns $ns already exists (a crashed run? world.sh gc removes it)"
	record_netns "$ns"
	must "create netns $ns" ip netns add "$ns"
	must "bring up lo in $ns" ip -n "$ns" link set lo up
	must "create veth $wif-$cif" \
		ip -n "$WORLD_NS" link add "$wif" type veth peer name "$cif" netns "$ns"
	must "address $wif" ip -n "$WORLD_NS" addr add "$w4/30" dev "$wif"
	must "address $wif" ip -n "$WORLD_NS" addr add "$w6/64" dev "$wif" nodad
	must "bring up $wif" ip -n "$WORLD_NS" link set "$wif" up
	must "address $cif" ip -n "$ns" addr add "$c4/30" dev "$cif"
	must "address $cif" ip -n "$ns" addr add "$c6/64" dev "$cif" nodad
	must "bring up $cif" ip -n "$ns" link set "$cif" up
	for a in $SERVICE_ADDRS4; do
		must "route to $a in $ns" ip -n "$ns" route add "$a/32" via "$w4" dev "$cif"
	done
	must "route to $METADATA6 in $ns" ip -n "$ns" -6 route add "$METADATA6/128" via "$w6" dev "$cif"
}

# ---- up

# ready WHAT EXPECTED COMMAND...: runs the command in the probe netns until its output contains
# EXPECTED, for at most READY_TIMEOUT s; dies with the last output and the services' errors.
ready() {
	local what=$1 expect=$2 out="" deadline=$((SECONDS + READY_TIMEOUT))
	shift 2
	while [ $SECONDS -lt $deadline ]; do
		if out=$(ip netns exec "$PROBE_NS" "$@" 2>&1) && [[ $out == *"$expect"* ]]; then
			return 0
		fi
		sleep 0.1
	done
	die "$what did not answer within $READY_TIMEOUT s (last: ${out:-nothing})"
}

probe_services() {
	local c=("${PY[@]}" "$HERE/client.py" --timeout 1)
	attach "$PROBE_NS" "$PROBE_IF" "$PROBE_WORLD_IF" "$PROBE_WORLD4" "$PROBE4" "$PROBE_WORLD6" "$PROBE6"
	ready "metadata (IPv4)" firebreak-world-role \
		"${c[@]}" http "http://$METADATA4/latest/meta-data/iam/security-credentials/"
	ready "metadata (IPv6)" firebreak-world-role \
		"${c[@]}" http "http://[$METADATA6]/latest/meta-data/iam/security-credentials/"
	ready "c2 tcp/443" "firebreak-world c2" "${c[@]}" tcp "$C2" 443 probe
	ready "c2 tcp/4444" "firebreak-world c2" "${c[@]}" tcp "$C2" 4444 probe
	ready "c2 udp/53" "firebreak-world c2" "${c[@]}" udp "$C2" 53 probe
	ready "registry :80" 'href="/simple/demo/"' "${c[@]}" http "http://$REGISTRY/simple/"
	ready "registry :443" 'href="/simple/demo/"' "${c[@]}" http "http://$REGISTRY:443/simple/"
	ready "api :443" '"method": "GET"' curl -sS -m 1 --cacert "$TLS/world-ca.pem" \
		--resolve "api.model.test:443:$API" https://api.model.test/ready
	ready "badcert :443" '"method": "GET"' curl -sS -m 1 -k \
		--resolve "badcert.test:443:$BADCERT" https://badcert.test/ready
	ready "dns (udp)" "NOERROR $REGISTRY" "${c[@]}" dns "$DNS" registry.test
	ready "dns (tcp)" "NOERROR $REGISTRY" "${c[@]}" dns "$DNS" registry.test --tcp
	delete_netns "$PROBE_NS"
}

# The world's TLS: a CA of its own (TLS/world-ca.pem: what a proxy in front of the world must
# trust), api.model.test's certificate from it (also naming front.test: one server, two names,
# as on a CDN, for a domain-fronting test), and badcert.test's, self-signed.
make_tls() {
	local o=(openssl req -batch -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 -days 2)
	mkdir -p "$TLS" || die "cannot create $TLS"
	must "the world's CA" "${o[@]}" -x509 -keyout "$TLS/world-ca.key" -out "$TLS/world-ca.pem" \
		-subj "/CN=firebreak test world CA" -addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign"
	must "api.model.test's key" "${o[@]}" -keyout "$TLS/api.key" -out "$TLS/api.csr" \
		-subj "/CN=api.model.test"
	printf 'subjectAltName=DNS:api.model.test,DNS:front.test\n' >"$TLS/api.ext"
	must "api.model.test's certificate" openssl x509 -req -in "$TLS/api.csr" -days 2 \
		-CA "$TLS/world-ca.pem" -CAkey "$TLS/world-ca.key" -CAcreateserial \
		-extfile "$TLS/api.ext" -out "$TLS/api.pem"
	must "badcert.test's certificate" "${o[@]}" -x509 -keyout "$TLS/badcert.key" \
		-out "$TLS/badcert.pem" -subj "/CN=badcert.test" \
		-addext "subjectAltName=DNS:badcert.test"
}

start_services() {
	local t=$1
	launch metadata "$LOGS/metadata.err" "${PY[@]}" "$HERE/metadata.py" \
		--log "$LOGS/metadata.log" --timeout "$t" \
		--listen "$METADATA4:80" --listen "[$METADATA6]:80"
	launch c2 "$LOGS/c2.err" "${PY[@]}" "$HERE/c2.py" --log "$LOGS/c2.log" --timeout "$t" \
		--tcp "$C2:443" --tcp "$C2:4444" --udp "$C2:53"
	launch registry "$LOGS/registry.err" "${PY[@]}" "$HERE/registry.py" \
		--log "$LOGS/registry.log" --timeout "$t" --listen "$REGISTRY:80" --listen "$REGISTRY:443"
	launch api "$LOGS/api.err" "${PY[@]}" "$HERE/api.py" --log "$LOGS/api.log" --timeout "$t" \
		--listen "$API:443" --cert "$TLS/api.pem" --key "$TLS/api.key" --name api
	launch badcert "$LOGS/badcert.err" "${PY[@]}" "$HERE/api.py" --log "$LOGS/badcert.log" \
		--timeout "$t" --listen "$BADCERT:443" --cert "$TLS/badcert.pem" \
		--key "$TLS/badcert.key" --name badcert
	# dnsmasq has no lifetime of its own: timeout(1) gives it one. local-ttl makes the answers
	# cacheable (the gate's nft sets expire with the TTL); local=/test/ answers NXDOMAIN for any
	# other *.test name instead of trying to forward it.
	launch dns "$LOGS/dns.err" timeout --kill-after=5 "$t" dnsmasq --keep-in-foreground \
		--conf-file=/dev/null --no-resolv --no-hosts --bind-interfaces \
		--listen-address="$DNS" --port=53 --user=root --group=root --local-ttl=300 \
		--local=/test/ --address=/registry.test/"$REGISTRY" \
		--address=/docs.test/"$REGISTRY" --address=/exfil.test/"$C2" \
		--address=/api.model.test/"$API" --address=/front.test/"$API" \
		--address=/badcert.test/"$BADCERT" \
		--log-queries --log-facility="$LOGS/dns.log" --pid-file="$RUN/dnsmasq.pid"
}

on_up_exit() {
	local rc=$?
	set +e
	[ $rc -eq 0 ] && return
	local e
	for e in "$LOGS"/*.err; do
		[ -s "$e" ] && { echo "--- $e"; tail -n 5 "$e"; } >&2
	done
	echo "world.sh: up failed; taking down what it built" >&2
	do_down >&2
	exit $rc
}

cmd_up() {
	local t=600 a
	OPTIND=1
	while getopts t: opt; do
		case $opt in
		t) t=$OPTARG ;;
		*) usage ;;
		esac
	done
	shift $((OPTIND - 1))
	[ $# -eq 1 ] || usage
	[[ $t =~ ^[1-9][0-9]*$ ]] || die "-t wants a number of seconds, not '$t'"
	set_dir "$1"
	require_root_and_tools
	netns_exists "$WORLD_NS" &&
		die "netns $WORLD_NS already exists: another world is up, or a crashed run left one (world.sh gc removes it)"
	if [ -s "$RUN/netns" ] || ls "$RUN"/*.pid >/dev/null 2>&1; then
		die "$DIR already records a world: run 'world.sh down $DIR' or use a fresh directory"
	fi
	mkdir -p "$RUN" "$LOGS" "$CAPS" || die "cannot create $DIR"
	trap on_up_exit EXIT

	record_netns "$WORLD_NS"
	must "create netns $WORLD_NS" ip netns add "$WORLD_NS"
	must "bring up lo" ip -n "$WORLD_NS" link set lo up
	for a in $SERVICE_ADDRS4; do
		must "address $a" ip -n "$WORLD_NS" addr add "$a/32" dev lo
	done
	must "address $METADATA6" ip -n "$WORLD_NS" addr add "$METADATA6/128" dev lo nodad
	# The world is a leaf: it never forwards (no client reaches another, or the gate, through it)
	# and never takes a route from a router advertisement.
	must "disable forwarding" ip netns exec "$WORLD_NS" sysctl -q -w net.ipv4.ip_forward=0 \
		net.ipv6.conf.all.forwarding=0 net.ipv6.conf.default.accept_ra=0
	[ -z "$(ip -n "$WORLD_NS" route show default)$(ip -n "$WORLD_NS" -6 route show default)" ] ||
		die "$WORLD_NS has a default route"

	make_tls
	start_services "$t"
	probe_services
	trap - EXIT
	echo "world up in $WORLD_NS (state in $DIR; services end on their own in $t s)"
}

# ---- down

do_down() {
	local f ns
	for f in "$RUN"/capture-*.pid "$RUN"/*.pid; do
		[ -e "$f" ] || continue
		[ "$f" = "$RUN/dnsmasq.pid" ] && continue # written by dnsmasq itself, not a record
		stop_recorded "$f"
	done
	rm -f "$RUN/dnsmasq.pid"
	if [ -f "$RUN/netns" ]; then
		# Clients and the probe first, the world last (tac: the reverse of creation).
		for ns in $(tac "$RUN/netns"); do
			delete_netns "$ns"
		done
		rm -f "$RUN/netns"
	fi
}

cmd_down() {
	[ $# -eq 1 ] || usage
	set_dir "$1"
	if [ ! -d "$RUN" ]; then
		echo "world.sh: $DIR records no world; nothing to do"
		return 0
	fi
	do_down
	echo "world down"
}

# ---- clients

client_names() {
	if ! [[ $1 =~ ^[1-9][0-9]*$ ]] || [ "$1" -gt $CLIENT_MAX ]; then
		die "client number must be 1..$CLIENT_MAX"
	fi
	CLIENT_NS=firebreak-world-c$1
	CLIENT_IF=fb-wc$1-0
	CLIENT_WORLD_IF=fb-wc$1-1
	CLIENT_WORLD4=10.198.254.$((4 * $1 + 1))
	CLIENT4=10.198.254.$((4 * $1 + 2))
	CLIENT_WORLD6=fd66:6272:fe:$1::1
	CLIENT6=fd66:6272:fe:$1::2
}

cmd_client_up() {
	[ $# -eq 2 ] || usage
	set_dir "$1"
	client_names "$2"
	if ! netns_exists "$WORLD_NS" || [ ! -f "$RUN/netns" ]; then
		die "no world recorded in $DIR (world.sh up first)"
	fi
	attach "$CLIENT_NS" "$CLIENT_IF" "$CLIENT_WORLD_IF" "$CLIENT_WORLD4" "$CLIENT4" \
		"$CLIENT_WORLD6" "$CLIENT6"
	echo "$CLIENT_NS $CLIENT_IF $CLIENT4 $CLIENT6 (world end $CLIENT_WORLD_IF)"
}

cmd_client_down() {
	[ $# -eq 2 ] || usage
	set_dir "$1"
	client_names "$2"
	delete_netns "$CLIENT_NS"
}

# ---- captures

capture_names() {
	[[ ${1:-} =~ ^[A-Za-z0-9_-]+$ ]] || die "capture name must be letters, digits, _ or -"
	CAP_PID=$RUN/capture-$1.pid
	CAP_PCAP=$CAPS/$1.pcap
	CAP_ERR=$CAPS/$1.err
	CAP_TXT=$CAPS/$1.txt
}

cmd_capture_start() {
	local iface=$GATE_IF filter mac
	OPTIND=1
	while getopts i: opt; do
		case $opt in
		i) iface=$OPTARG ;;
		*) usage ;;
		esac
	done
	shift $((OPTIND - 1))
	[ $# -eq 2 ] || [ $# -eq 3 ] || usage
	set_dir "$1"
	capture_names "$2"
	netns_exists "$WORLD_NS" || die "no world is up"
	ip -n "$WORLD_NS" link show dev "$iface" >/dev/null 2>&1 ||
		die "no interface $iface in $WORLD_NS (for $GATE_IF: is the gate up, with gate_outside_netns = $WORLD_NS?)"
	[ ! -e "$CAP_PID" ] || die "capture $2 is already running"
	mac=$(ip -n "$WORLD_NS" -o link show dev "$iface" | sed -n 's/.* link\/ether \([0-9a-f:]*\) .*/\1/p')
	[ -n "$mac" ] || die "no Ethernet address on $iface"
	# What the world sends leaves with its own MAC: the kernel's filter drops it, so replies never
	# fill the capture buffer (pcap's "inbound" would do the same, but libpcap 1.10 loses a packet
	# with it).
	filter="not ether src $mac and not ($CAPTURE_NOISE)${3:+ and ($3)}"
	must "capture filter '$filter'" tcpdump -d "$filter"
	rm -f "$CAP_PCAP" "$CAP_ERR" "$CAP_TXT"
	# -Q in: what arrives in the world only. Headers are all a count needs (-s); -U and
	# --immediate-mode: every packet reaches the file at once, none waits in a buffer at stop.
	launch "capture-$2" "$CAP_ERR" timeout "$CAPTURE_TIMEOUT" tcpdump -i "$iface" -Q in -nn \
		-s "$CAPTURE_SNAPLEN" -B "$CAPTURE_BUFFER_KB" -U --immediate-mode -Z root \
		-w "$CAP_PCAP" -- "$filter"
	for _ in $(seq 100); do
		grep -q "listening on" "$CAP_ERR" 2>/dev/null && return 0
		if ! group_alive "$(cut -d' ' -f1 "$CAP_PID")"; then
			rm -f "$CAP_PID"
			die "tcpdump on $iface exited: $(cat "$CAP_ERR")"
		fi
		sleep 0.05
	done
	stop_recorded "$CAP_PID"
	die "tcpdump on $iface did not start within 5 s: $(cat "$CAP_ERR")"
}

# pcap_text: $CAP_TXT gets one line per packet of $CAP_PCAP (tcpdump's continuation lines, which
# start with a blank, are left out).
pcap_text() {
	tcpdump -r "$CAP_PCAP" -nn >"$CAP_TXT.all" 2>"$CAP_ERR.read" ||
		die "read $CAP_PCAP: $(cat "$CAP_ERR.read")"
	grep '^[0-9]' "$CAP_TXT.all" >"$CAP_TXT" || true
	rm -f "$CAP_TXT.all"
}

cmd_capture_stop() {
	local n captured received dropped
	[ $# -eq 2 ] || usage
	set_dir "$1"
	capture_names "$2"
	[ -e "$CAP_PID" ] || die "no capture $2 is running"
	# A packet sent just now may still be between the sender's veth and the tap: let it land.
	sleep 0.2
	stop_recorded "$CAP_PID"
	captured=$(sed -n 's/^\([0-9]*\) packets\{0,1\} captured$/\1/p' "$CAP_ERR")
	received=$(sed -n 's/^\([0-9]*\) packets\{0,1\} received by filter$/\1/p' "$CAP_ERR")
	dropped=$(sed -n 's/^\([0-9]*\) packets\{0,1\} dropped by kernel$/\1/p' "$CAP_ERR")
	[ -n "$captured" ] || die "tcpdump printed no statistics: $(cat "$CAP_ERR")"
	# Every packet the kernel's filter took must be in the file: none dropped for want of buffer,
	# none left unread at stop.
	[ "$dropped" = 0 ] || die "the kernel dropped $dropped packets: the count is not exact"
	[ "$received" = "$captured" ] ||
		die "tcpdump took $received packets but wrote $captured: the count is not exact"
	pcap_text
	n=$(wc -l <"$CAP_TXT")
	[ "$n" = "$captured" ] || die "$CAP_PCAP holds $n packets but tcpdump captured $captured"
	echo "$n"
}

cmd_capture_dests() {
	[ $# -eq 2 ] || usage
	set_dir "$1"
	capture_names "$2"
	[ -f "$CAP_PCAP" ] || die "no capture $2 in $DIR"
	# "... IP 10.198.255.253.41234 > 203.0.113.66.443: Flags [S] ...": the word after ">".
	pcap_text
	awk '{ d = "-"; for (i = 1; i < NF; i++) if ($i == ">") { d = $(i + 1); break }
		sub(/:$/, "", d); print d }' "$CAP_TXT" | sort | uniq -c | sort -rn
}

# ---- contact logs

cmd_contacts() {
	local log
	[ $# -eq 2 ] || usage
	set_dir "$1"
	case $2 in
	metadata | c2 | registry | api | badcert | dns) log=$LOGS/$2.log ;;
	*) die "no service '$2' (metadata, c2, registry, api, badcert, dns)" ;;
	esac
	[ -f "$log" ] || die "no $2 log in $DIR (is the world up?)"
	# world.sh's own readiness probe is no contact of the test's: leave it out.
	if [ "$2" = dns ]; then
		grep -F 'query[' "$log" | grep -v -e " from $PROBE4\$" -e " from $PROBE6\$" || true
	else
		grep -v -e "\"src\":\"$PROBE4\"" -e "\"src\":\"$PROBE6\"" "$log" || true
	fi
}

# ---- gc: no DIR survived (a crashed test removed it), so go by name

cmd_gc() {
	local ns pids
	require_root_and_tools
	for ns in $(ip netns list | awk '{ print $1 }' | grep '^firebreak-world-' || true); do
		# Only the world's services and its clients' commands run in these namespaces.
		mapfile -t pids < <(ip netns pids "$ns" 2>/dev/null || true)
		if [ ${#pids[@]} -gt 0 ]; then
			kill -TERM "${pids[@]}" 2>/dev/null || true
			sleep 1
			mapfile -t pids < <(ip netns pids "$ns" 2>/dev/null || true)
			[ ${#pids[@]} -eq 0 ] || kill -KILL "${pids[@]}" 2>/dev/null || true
		fi
		must "delete netns $ns" ip netns del "$ns"
		echo "removed $ns"
	done
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
up) cmd_up "$@" ;;
down) cmd_down "$@" ;;
client-up) cmd_client_up "$@" ;;
client-down) cmd_client_down "$@" ;;
capture-start) cmd_capture_start "$@" ;;
capture-stop) cmd_capture_stop "$@" ;;
capture-dests) cmd_capture_dests "$@" ;;
contacts) cmd_contacts "$@" ;;
gc) cmd_gc "$@" ;;
*) usage ;;
esac

# Firebreak: one top-level Makefile in the libbpf-bootstrap shape. Output goes to build/.
#   make          build firebreakd and firebreak (installs missing Debian packages first)
#   make test     unit tests (cmocka, then under ASan+UBSan), fuzz-smoke, integration tests (root)
#   make demo     the main job end to end on a temporary state dir
#   make bench    benchmarks (not part of test)
#   make mutation-smoke  switch rules off one at a time; the suite must fail for each (root)
#   make format   clang-format every .c and .h
#   make check    the layout's include rules and the format (make test runs it first)
#   make fuzz     each libFuzzer harness for FUZZ_SECONDS under ASan and UBSan (docs/fuzzing.md)
#   make unit-asan  the unit tests built with ASan and UBSan (make test runs it, and fuzz-smoke)
.DELETE_ON_ERROR:
.SUFFIXES:
.SECONDARY:

# The one list of Debian packages the build, the tests and the demo need. libclang-rt-14-dev is
# clang's libFuzzer and sanitizer runtimes (make fuzz), only recommended by Debian 12's clang.
PACKAGES := gcc make pkg-config clang libclang-rt-14-dev llvm bpftool libbpf-dev libelf-dev zlib1g-dev \
	libaudit-dev libpcap-dev libsqlite3-dev sqlite3 libmicrohttpd-dev libcmocka-dev \
	libjansson-dev libseccomp-dev libssl-dev bubblewrap python3 python3-pytest python3-pip git curl \
	iproute2 util-linux procps nftables dnsmasq-base tcpdump libnl-3-dev openssl squid-openssl \
	libnl-route-3-dev prometheus chromium clang-format python3-venv zip unzip xz-utils \
	c-icap libicapapi-dev

BUILD    := build
CC       ?= gcc
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wformat=2 \
	    -Wmissing-prototypes -Wstrict-prototypes -fno-strict-aliasing -D_GNU_SOURCE \
	    -fstack-protector-strong -D_FORTIFY_SOURCE=2 -MMD -MP -Ilib -I. -I$(BUILD)
LDFLAGS  ?=
LIBS     := -lsqlite3 -ljansson -lbpf -lelf -lz -laudit -lseccomp -lpcap -lmicrohttpd -lpthread

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# The layout (docs/architecture.md): the base library is lib/, policy/, store/ and detectors/ (the
# detectors are in it so that replay runs the very code the daemon ran); firebreakd adds the
# collectors and monitor/ with its wings; firebreak adds cli/ and enforcer/.
LIB_SRC     := $(wildcard lib/*.c policy/*.c store/*.c detectors/*.c)
MONITOR_SRC := $(wildcard monitor/*.c monitor/http/*.c monitor/export/*.c) \
	       $(filter-out %.bpf.c,$(wildcard collectors/*.c collectors/*/*.c))
CLI_SRC     := $(wildcard cli/*.c)
ENFORCER_SRC := $(filter-out %.bpf.c,$(wildcard enforcer/*.c))
BPF_SRC     := $(wildcard enforcer/*.bpf.c collectors/*/*.bpf.c)
BPF_SKEL    := $(BPF_SRC:%.bpf.c=$(BUILD)/%.skel.h)
SCHEMA_SQL  := $(sort $(wildcard schema/[0-9]*.sql))

LIB_OBJ     := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/schema.o
MONITOR_OBJ := $(MONITOR_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ     := $(CLI_SRC:%.c=$(BUILD)/%.o)
ENFORCER_OBJ := $(ENFORCER_SRC:%.c=$(BUILD)/%.o)

UNIT_SRC    := $(wildcard tests/unit/test_*.c)
UNIT_BIN    := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
PROBE_SRC   := $(wildcard tests/probe/*.c)
PROBE_BIN   := $(PROBE_SRC:tests/probe/%.c=$(BUILD)/probe/%)
BENCH_SRC   := $(wildcard bench/*.c)
BENCH_BIN   := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

.PHONY: all deps test check unit unit-asan integration mutation-smoke demo bench format clean fuzz fuzz-smoke fuzz-seeds
all: deps $(BUILD)/firebreakd $(BUILD)/firebreak $(BUILD)/firebreak-nftset.so $(BUILD)/firebreak-icap.so

# Installs whatever is missing from PACKAGES, so a fresh Debian 12 machine needs nothing else.
deps:
	@missing=$$(for p in $(PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' \
			|| echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "  DEPS     installing:" $$missing; \
		if [ "$$(id -u)" != 0 ]; then echo "run as root to install:" $$missing >&2; exit 1; fi; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

$(BUILD)/schema.c: $(SCHEMA_SQL) schema/embed.sh
	@mkdir -p $(@D)
	$(call msg,SCHEMA,$@)
	$(Q)sh schema/embed.sh $@ $(SCHEMA_SQL)

# eBPF: the kernel's types from its BTF, each NAME.bpf.c compiled for the BPF target, and a
# libbpf skeleton NAME.skel.h its user side includes (all under build/, never in git).
$(BUILD)/vmlinux.h:
	@mkdir -p $(@D)
	$(call msg,BTF,$@)
	$(Q)bpftool btf dump file /sys/kernel/btf/vmlinux format c >$@

# -MMD -MP here too: a record header shared by the two sides rebuilds both when it changes.
$(BUILD)/%.bpf.o: %.bpf.c $(BUILD)/vmlinux.h
	@mkdir -p $(@D)
	$(call msg,BPF,$@)
	$(Q)clang -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror -MMD -MP -I$(BUILD) -I$(<D) -I. \
		-c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)bpftool gen skeleton $< name $(subst -,_,$(notdir $*)) >$@

# Order only: on a first build the skeletons must exist before anything that includes one is
# compiled; after that, each object's dependency file says which skeleton it really includes.
$(ENFORCER_OBJ) $(MONITOR_OBJ): | $(BPF_SKEL)

# A file's generated skeleton is found in its own folder under build/.
$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -I$(BUILD)/$(<D) -c $< -o $@

$(BUILD)/schema.o: $(BUILD)/schema.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libfirebreak.a: $(LIB_OBJ)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/firebreakd: $(MONITOR_OBJ) $(BUILD)/libfirebreak.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LIBS) -o $@

# firebreak is linked static-pie: every tool call starts one, and the dynamic loader's work for
# sqlite3, jansson and libseccomp was ~0.45 ms of each `firebreak exec` (bench/bench_exec).
# (The linker's notes about dlopen and NSS lookups concern SQLite's extension loading and
# libnl's name lookups, which we never use: addresses are numeric.)
STATIC_LIBS := -l:libsqlite3.a -l:libjansson.a -l:libseccomp.a -l:libnl-route-3.a -l:libnl-3.a \
	-l:libbpf.a -l:libelf.a -l:libcrypto.a -l:libz.a -lm -lpthread -ldl
$(BUILD)/firebreak: $(CLI_OBJ) $(ENFORCER_OBJ) $(BUILD)/libfirebreak.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -static-pie $^ $(STATIC_LIBS) -o $@ 2>$(BUILD)/link.log; \
		status=$$?; grep -v -e 'statically linked applications' -e ': in function' \
		$(BUILD)/link.log >&2; exit $$status

$(ENFORCER_OBJ): CFLAGS += -I/usr/include/libnl3

# The DNS gate's nft shim, preloaded into the jailed dnsmasq (enforcer/egress-dns-jail.h): a
# shared object with nothing of the project's but its wire. It has no symbol versions, so the
# loader lets it stand for libnftables' and glibc's versioned ones.
$(BUILD)/firebreak-nftset.so: enforcer/dns-shim/nftset-relay.c enforcer/egress-dns-wire.h
	$(call msg,SHIM,$@)
	$(Q)$(CC) $(CFLAGS) -fPIC -shared $< -o $@

# The gate's ICAP service, a c-icap module loaded by the jailed c-icap (enforcer/egress-icap.h):
# c-icap's API and the wire header only, built with c-icap's own flags (its headers are not
# -Wextra clean, so they are system headers here).
ICAP_CFLAGS := $(filter-out -I/usr/include/c_icap,$(shell c-icap-config --cflags 2>/dev/null)) \
	-isystem /usr/include/c_icap
$(BUILD)/firebreak-icap.so: enforcer/icap-service/firebreak-icap.c enforcer/egress-icap-wire.h
	@mkdir -p $(@D)
	$(call msg,ICAP,$@)
	$(Q)$(CC) $(CFLAGS) $(ICAP_CFLAGS) -fPIC -shared $< -licapapi -o $@

# Unit tests link the shared library and, where they test the daemon's parts, its objects
# (everything in monitor/ but main.o).
MONITOR_PARTS := $(filter-out $(BUILD)/monitor/main.o,$(MONITOR_OBJ))

$(BUILD)/tests/%: tests/unit/%.c $(MONITOR_PARTS) $(BUILD)/libfirebreak.a
	@mkdir -p $(@D)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS) $< $(MONITOR_PARTS) $(BUILD)/libfirebreak.a $(LIBS) -lcmocka -o $@

$(BUILD)/bench/%: bench/%.c $(MONITOR_PARTS) $(BUILD)/libfirebreak.a
	@mkdir -p $(@D)
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(CFLAGS) $< $(MONITOR_PARTS) $(BUILD)/libfirebreak.a $(LIBS) -o $@

# Programs the integration tests run inside sandboxes (attack probes); plain C, no project code.
$(BUILD)/probe/%: tests/probe/%.c
	@mkdir -p $(@D)
	$(call msg,PROBE,$@)
	$(Q)$(CC) -O1 -g -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter $< -o $@

unit: all $(UNIT_BIN)
	@sh tests/run-unit.sh $(UNIT_BIN)

# Runs a program in the DNS gate's jail, built by the enforcer's own code (tests/integration/84-*).
$(BUILD)/tests/dns-jail-exec: tests/integration/dns-jail-exec.c $(BUILD)/enforcer/egress-dns-jail.o \
		$(BUILD)/enforcer/gate-jail.o $(BUILD)/enforcer/netns.o $(BUILD)/libfirebreak.a
	@mkdir -p $(@D)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS) -Ienforcer $< $(BUILD)/enforcer/egress-dns-jail.o \
		$(BUILD)/enforcer/gate-jail.o $(BUILD)/enforcer/netns.o $(BUILD)/libfirebreak.a $(LIBS) -o $@


# The unit tests once more, built with AddressSanitizer and UndefinedBehaviorSanitizer over
# objects of their own (build/asan/): the first report stops the test that made it.
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_CFLAGS = $(filter-out -D_FORTIFY_SOURCE=2,$(CFLAGS)) -U_FORTIFY_SOURCE $(SAN_FLAGS)
SAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ASAN_LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/asan/%.o) $(BUILD)/asan/schema.o
ASAN_MONITOR_PARTS := $(MONITOR_PARTS:$(BUILD)/%=$(BUILD)/asan/%)
ASAN_UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/asan/tests/%)

$(ASAN_MONITOR_PARTS): | $(BPF_SKEL)

$(BUILD)/asan/%.o: %.c
	@mkdir -p $(@D)
	$(call msg,CC-ASAN,$@)
	$(Q)$(CC) $(SAN_CFLAGS) -I$(BUILD)/$(<D) -c $< -o $@

$(BUILD)/asan/schema.o: $(BUILD)/schema.c
	@mkdir -p $(@D)
	$(call msg,CC-ASAN,$@)
	$(Q)$(CC) $(SAN_CFLAGS) -c $< -o $@

$(BUILD)/asan/libfirebreak.a: $(ASAN_LIB_OBJ)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/asan/tests/%: tests/unit/%.c $(ASAN_MONITOR_PARTS) $(BUILD)/asan/libfirebreak.a
	@mkdir -p $(@D)
	$(call msg,TEST-ASAN,$@)
	$(Q)$(CC) $(SAN_CFLAGS) $< $(ASAN_MONITOR_PARTS) $(BUILD)/asan/libfirebreak.a $(LIBS) \
		-lcmocka -o $@

unit-asan: all $(ASAN_UNIT_BIN)
	@$(SAN_ENV) sh tests/run-unit.sh $(ASAN_UNIT_BIN)

# Fuzzing (docs/fuzzing.md): each fuzz/fuzz-NAME.c is a libFuzzer harness over the production
# parsers, compiled by clang with the sanitizers into objects of their own (build/fuzz/obj/), its
# seeds in fuzz/corpus/NAME/. `make fuzz` runs each for FUZZ_SECONDS; `make fuzz-smoke`, which
# make test runs, each for FUZZ_SMOKE_SECONDS. Either fails if any harness finds a crash.
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 15
FUZZ_CC := clang
# clang warns of libseccomp's own SCMP_A0() macros (a compound literal naming one field).
FUZZ_CFLAGS = $(filter-out -O2,$(SAN_CFLAGS)) -O1 -gline-tables-only -Wno-missing-field-initializers
FUZZ_SRC := $(wildcard fuzz/fuzz-*.c)
FUZZ_BIN := $(FUZZ_SRC:fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/fuzz/obj/%.o) $(BUILD)/fuzz/obj/schema.o
# Of the daemon, only its pure parsers: the rest needs a kernel and a server.
FUZZ_MONITOR_OBJ := $(BUILD)/fuzz/obj/monitor/http/http-query.o \
		    $(BUILD)/fuzz/obj/collectors/http/http-parse.o

$(BUILD)/fuzz/obj/%.o: %.c
	@mkdir -p $(@D)
	$(call msg,CC-FUZZ,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -I$(BUILD)/$(<D) -c $< -o $@

$(BUILD)/fuzz/obj/schema.o: $(BUILD)/schema.c
	@mkdir -p $(@D)
	$(call msg,CC-FUZZ,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(BUILD)/fuzz/libfirebreak.a: $(FUZZ_LIB_OBJ)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/fuzz/monitor.a: $(FUZZ_MONITOR_OBJ)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/fuzz/%: fuzz/%.c fuzz/fuzz.h $(BUILD)/fuzz/monitor.a $(BUILD)/fuzz/libfirebreak.a
	@mkdir -p $(@D)
	$(call msg,FUZZ,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(BUILD)/fuzz/monitor.a \
		$(BUILD)/fuzz/libfirebreak.a $(LIBS) -o $@

# The bundle harness's seed, a real bundle of the example trace and policy (fuzz/seed-bundle.c).
$(BUILD)/fuzz/seed-bundle: fuzz/seed-bundle.c $(BUILD)/libfirebreak.a
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(BUILD)/libfirebreak.a $(LIBS) -o $@

fuzz-seeds: $(BUILD)/fuzz/seed-bundle
	@mkdir -p fuzz/corpus/bundle
	@$< fuzz/corpus/bundle/seed-example examples/policy.json examples/agent-trace.jsonl

fuzz: deps $(FUZZ_BIN)
	@sh fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_BIN)

fuzz-smoke: deps $(FUZZ_BIN)
	@sh fuzz/run.sh $(FUZZ_SMOKE_SECONDS) $(FUZZ_BIN)

integration: all $(PROBE_BIN) $(BUILD)/tests/dns-jail-exec
	@sh tests/run-integration.sh

# The house's rules, before anything is built: each folder includes only what it may
# (docs/architecture.md), and every .c and .h is as clang-format writes it.
check: deps
	@python3 tests/check-includes.py
	@sh tests/check-format.sh
	@python3 tests/check-docs.py

test: check unit unit-asan fuzz-smoke integration

# Not part of test: each of a few rules switched off in a scratch copy of the tree must fail the
# tests that guard it (tests/mutation-smoke.sh; takes the integration lock itself, per test run).
mutation-smoke: all $(PROBE_BIN)
	@bash tests/mutation-smoke.sh

demo: all
	@bash examples/demo.sh

bench: all $(BENCH_BIN)
	@sh bench/run.sh

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

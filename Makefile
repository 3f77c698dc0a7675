# Firebreak: one top-level Makefile in the libbpf-bootstrap shape. Output goes to build/.
#   make          build firebreakd and firebreak (installs missing Debian packages first)
#   make test     unit tests (cmocka) and integration tests on the real kernel (root)
#   make demo     the main job end to end on a temporary state dir
#   make bench    benchmarks (not part of test)
#   make mutation-smoke  switch rules off one at a time; the suite must fail for each (root)
#   make format   clang-format every .c and .h
#   make check    the layout's include rules and the format (make test runs it first)
.DELETE_ON_ERROR:
.SUFFIXES:
.SECONDARY:

# The one list of Debian packages the build, the tests and the demo need.
PACKAGES := gcc make pkg-config clang llvm bpftool libbpf-dev libelf-dev zlib1g-dev \
	libaudit-dev libpcap-dev libsqlite3-dev sqlite3 libmicrohttpd-dev libcmocka-dev \
	libjansson-dev libseccomp-dev bubblewrap python3 python3-pytest python3-pip git curl \
	iproute2 util-linux procps nftables dnsmasq-base tcpdump libnl-3-dev \
	libnl-route-3-dev prometheus chromium clang-format python3-venv zip unzip xz-utils

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

.PHONY: all deps test check unit integration mutation-smoke demo bench format clean
all: deps $(BUILD)/firebreakd $(BUILD)/firebreak

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
	$(Q)clang -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror -MMD -MP -I$(BUILD) -I$(<D) \
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
	-l:libbpf.a -l:libelf.a -l:libz.a -lm -lpthread
$(BUILD)/firebreak: $(CLI_OBJ) $(ENFORCER_OBJ) $(BUILD)/libfirebreak.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -static-pie $^ $(STATIC_LIBS) -o $@ 2>$(BUILD)/link.log; \
		status=$$?; grep -v -e 'statically linked applications' -e ': in function' \
		$(BUILD)/link.log >&2; exit $$status

$(ENFORCER_OBJ): CFLAGS += -I/usr/include/libnl3

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

integration: all $(PROBE_BIN)
	@sh tests/run-integration.sh

# The house's rules, before anything is built: each folder includes only what it may
# (docs/architecture.md), and every .c and .h is as clang-format writes it.
check: deps
	@python3 tests/check-includes.py
	@sh tests/check-format.sh

test: check unit integration

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

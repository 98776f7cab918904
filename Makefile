# skillbox - one GNU Makefile. Local overrides go in config.mak (not committed).
#
#   make [ARCH=x86_64|aarch64|armv7|mips|mipsel|riscv64] [BOARD=name] [V=1]
#   make test        unit + end-to-end tests, native
#   make test-cross  the same suites for every other arch under qemu-user
#                    (each into build/ARCH/test.log; -j2: two at once)
#   make test-boot   armv7, aarch64, mipsel booted in Debian's kernels under qemu-system
#   make size        stripped size per arch and what each library adds
#   make size-check  every binary within its budget and 4 KiB of its baseline
#   make fuzz        short bounded fuzzing of the parsers (clang libFuzzer)
#   make check       banned calls and cppcheck
#   make bench       skillbox against an @openai/agents agent: tables, chart in build/bench
#   make bench-short every step of the bench once, small counts (about a minute; CI)
#   make run         build, validate and list the bundled skills
#   make install     DESTDIR=dir: binary and bundled skills into a rootfs
#   make package     .ipk, .apk (OpenWrt) and .deb in build/ARCH/pkg

ARCH		?= x86_64
BOARD		?= $(ARCH)
SKILLBOX_TOOLS	?= /opt/skillbox
CROSS_ARCHES	= aarch64 armv7 mips mipsel riscv64
ALL_ARCHES	= x86_64 $(CROSS_ARCHES)
VERSION		= 0.1.0
MUSL_VERSION	?= 1.2.3
# The build date is the last commit's, so rebuilds are reproducible.
BUILD_DATE	:= $(shell git log -1 --format=%cd --date=format:%Y-%m-%d 2>/dev/null || date -u +%Y-%m-%d)
BUILD_EPOCH	:= $(shell git log -1 --format=%ct 2>/dev/null || date +%s)
pin_version	= $(shell sed -n 's/^version=\([^-+]*\).*/\1/p' vendor/$(1)/pin)

include board/$(BOARD)/board.mak
-include config.mak

# Compile-time features (README, "Features and their cost"). Every board
# builds every one; an integrator may leave one out (make MCP=0), or all
# of them (make FEATURES=0, then e.g. ORCH=1 to add one back).
FEATURES	?= 1
# HTTPS in serve (tls_cert, tls_key)
SERVE_TLS	?= $(FEATURES)
# orchestration skills: oskill.md, LightSOPLang plans, loop sessions
ORCH		?= $(FEATURES)
# hooks: commands and HTTP endpoints that allow or deny steps
HOOKS		?= $(FEATURES)
# the MCP client: MCP servers' tools on stdio, in the sandbox
MCP		?= $(FEATURES)
# evals (skillbox eval) and the response cache
EVAL		?= $(FEATURES)
# sessions kept on flash: persist.*, skillbox state
PERSIST		?= $(FEATURES)
# the job board: skillbox jobs, schedules, run-due, its HTTP API
JOBS		?= $(FEATURES)
# crews: a .skilled_crew.yaml as the configuration
CREW		?= $(FEATURES)
# the fleet: serve as an MQTT device, skillbox fleet (needs JOBS)
FLEET		?= $(FEATURES)
SWITCHES	= SERVE_TLS ORCH HOOKS MCP EVAL PERSIST JOBS CREW FLEET

ifeq ($(origin CC),default)
CC		= $(MUSL_CC)
# A toolchain tools/setup built (its wrapper named by path) is new after a
# rebuild, or after a board moved to it: every object is made again then.
CC_DEP		:= $(wildcard $(MUSL_CC))
endif
ifeq ($(origin AR),default)
AR		= $(CROSS_COMPILE)ar
endif
STRIP		?= $(CROSS_COMPILE)strip
READELF		?= $(CROSS_COMPILE)readelf

B		= build/$(BOARD)
VS		= build/vendor
BIN		= $(B)/skillbox

OPT		?= -Os
# Link-time optimisation: about 15% smaller. LTO=0 turns it off.
LTO		?= 1
ifeq ($(LTO),1)
OPT		+= -flto=auto
LTOLD		= -flto=auto
endif
# Debian's compilers make position-independent code by default; a static
# executable has a fixed address, so that code only costs (armv7: 5%).
BASEFLAGS	= -std=c11 -D_GNU_SOURCE $(OPT) -ffunction-sections -fdata-sections \
		  -fno-asynchronous-unwind-tables -fno-unwind-tables -fno-pie \
		  $(CPUFLAGS)
CWARN		= -Wall -Wextra -Wundef -Wshadow -Wstrict-prototypes -Wno-unused-parameter
ifeq ($(CI),true)
CWARN		+= -Werror
endif
CFLAGS		?=
CPPFLAGS	+= -DSKILLBOX_VERSION='"$(VERSION)"' -DSKILLBOX_ARCH='"$(ARCH)"' \
		   -DSKILLBOX_BOARD='"$(BOARD)"' -I$(B)/gen -Isrc
LDFLAGS		+= $(LTOLD) -static -no-pie -Wl,--gc-sections -Wl,-z,norelro -Wl,-z,noseparate-code \
		   -Wl,--build-id=none
LDLIBS		= $(B)/vendor/libfyaml.a $(B)/vendor/libbearssl.a -lm

ifeq ($(V),1)
Q =
else
Q = @
endif

SRCS		:= $(wildcard src/*/*.c)
OBJS		:= $(SRCS:src/%.c=$(B)/obj/%.o)
LIBOBJS		:= $(filter-out $(B)/obj/cmd/main.o,$(OBJS))
# The applets of features left out have no help text either.
CMDS_OFF	:= $(if $(filter 0,$(MCP)),src/cmd/cmd_mcp.c) \
		   $(if $(filter 0,$(EVAL)),src/cmd/cmd_eval.c) \
		   $(if $(filter 0,$(PERSIST)),src/cmd/cmd_state.c) \
		   $(if $(filter 0,$(JOBS)),src/cmd/cmd_jobs.c) \
		   $(if $(filter 0,$(FLEET)),src/cmd/cmd_fleet.c)
CMDS		:= $(filter-out $(CMDS_OFF),$(wildcard src/cmd/cmd_*.c))
# and their lines in the other applets' help ("[EVAL] ..." in tools/mkhelp.sh)
SWITCHES_OFF	:= $(foreach s,$(SWITCHES),$(if $(filter 0,$($(s))),$(s)))
UNIT_SRCS	:= $(wildcard tests/unit/*.c)
UNIT_OBJS	:= $(UNIT_SRCS:tests/unit/%.c=$(B)/unit/%.o)
SETUP_OK	= build/.setup-ok
VENDOR_OK	= $(VS)/bearssl/.skillbox-ok $(VS)/libfyaml/.skillbox-ok $(VS)/jsmn/.skillbox-ok

# The vendored headers are visible only to the module that wraps them.
$(B)/obj/fmt/json.o: CPPFLAGS += -DJSMN_STATIC -isystem $(VS)/jsmn
$(B)/obj/fmt/fm.o $(B)/obj/cmd/cmd_version.o: CPPFLAGS += -isystem $(VS)/libfyaml/include
$(B)/obj/net/tls.o $(B)/obj/cmd/cmd_version.o $(B)/unit/test_tls.o: CPPFLAGS += \
	-isystem $(VS)/bearssl/inc
$(B)/obj/net/tls.o: CPPFLAGS += -DSKILLBOX_BUILD_EPOCH=$(BUILD_EPOCH)LL
$(B)/obj/cmd/cmd_version.o: CPPFLAGS += -DSKILLBOX_BUILD_DATE='"$(BUILD_DATE)"' \
	-DMUSL_VERSION='"$(MUSL_VERSION)"' -DJSMN_VERSION='"$(call pin_version,jsmn)"' \
	-DBEARSSL_VERSION='"$(call pin_version,bearssl)"'

.PHONY: FORCE all run install package test test-unit test-e2e test-busybox test-cross test-boot size size-check size-baseline \
	fuzz check bench bench-short clean distclean setup vendor

all: $(BIN)

# tools/setup installs toolchains and emulators; run it only when a check
# says something is missing, so a set-up machine does no apt work.
$(SETUP_OK): tools/setup
	$(Q)tools/setup --check 2>/dev/null || tools/setup
	$(Q)mkdir -p build && touch $@
setup:
	tools/setup

$(VS)/%/.skillbox-ok: vendor/%/pin $(wildcard vendor/*/*.patch vendor/*/*.in) | $(SETUP_OK)
	$(Q)tools/vendor-fetch vendor/$* $(VS)
vendor: $(VENDOR_OK)

$(B)/vendor/libbearssl.a $(B)/vendor/libfyaml.a: $(VENDOR_OK) tools/vendor.mk $(CC_DEP)
	$(Q)$(MAKE) --no-print-directory -f tools/vendor.mk OUT=$(B)/vendor VS=$(VS) \
	    CC="$(CC)" CC_DEP="$(CC_DEP)" AR="$(AR)" CFLAGS="$(BASEFLAGS) $(CFLAGS)" \
	    Q=$(Q) $@
	$(Q)touch $@

$(B)/gen/help.h: $(CMDS) tools/mkhelp.sh $(B)/gen/config.h
	@mkdir -p $(@D)
	$(Q)OFF="$(SWITCHES_OFF)" sh tools/mkhelp.sh $(CMDS) >$@.tmp && mv $@.tmp $@

# The help texts, packed (tools/lzpack.c, built for this machine).
HOSTCC		?= cc
build/host/lzpack: tools/lzpack.c
	@mkdir -p $(@D)
	$(Q)$(HOSTCC) -O2 -Wall -o $@ tools/lzpack.c
$(B)/gen/helpz.h: $(CMDS) tools/mkhelp.sh build/host/lzpack $(B)/gen/config.h
	@mkdir -p $(@D)
	$(Q)OFF="$(SWITCHES_OFF)" sh tools/mkhelp.sh --text $(CMDS) | build/host/lzpack help_lz >$@.tmp && \
	    mv $@.tmp $@
# The built-in tools' texts, packed the same way.
build/host/mktooldefs: tools/mktooldefs.c src/tool/tool_defs.h src/tool/tool.h
	@mkdir -p $(@D)
	$(Q)$(HOSTCC) -O2 -Wall -D_GNU_SOURCE -Isrc -o $@ tools/mktooldefs.c
$(B)/gen/tooldefs_lz.h: build/host/mktooldefs build/host/lzpack
	@mkdir -p $(@D)
	$(Q)build/host/mktooldefs | build/host/lzpack tool_lz >$@.tmp && mv $@.tmp $@

# The web page, embedded.
$(B)/gen/web.h: src/web/index.html tools/mkweb.sh
	@mkdir -p $(@D)
	$(Q)sh tools/mkweb.sh src/web/index.html >$@.tmp && mv $@.tmp $@

# The feature switches as a header (tools/mkconfig.sh), rewritten only when
# one changes, so that the objects using them are rebuilt then.
$(B)/gen/config.h: FORCE
	@mkdir -p $(@D)
	$(Q)sh tools/mkconfig.sh $(foreach s,$(SWITCHES),$(s)=$($(s))) >$@.tmp && \
	    { cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@; }
FORCE:

# Generated headers come first; -MMD then knows which object reads which.
GEN		= $(B)/gen/help.h $(B)/gen/helpz.h $(B)/gen/config.h $(B)/gen/web.h \
		  $(B)/gen/tooldefs_lz.h
$(B)/obj/%.o: src/%.c $(CC_DEP) | $(VENDOR_OK) $(GEN)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASEFLAGS) $(CWARN) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BIN): $(OBJS) $(B)/vendor/libbearssl.a $(B)/vendor/libfyaml.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(BASEFLAGS) $(CFLAGS) $(LDFLAGS) -Wl,-Map,$@.map -o $@.full $(OBJS) $(LDLIBS)
	$(Q)$(STRIP) -s -R .comment -o $@ $@.full

# The main job: one real turn with the bundled skills. Offline (no model)
# unless a provider is set: SKILLBOX_PROVIDER, SKILLBOX_MODEL,
# SKILLBOX_BASE_URL and the provider's key (OPENAI_API_KEY, ...), or a
# skillbox.yaml named by SKILLBOX_CONFIG.
PROMPT		?= what is using my disk?
run: $(BIN)
	$(BIN) skills validate skills
	SKILLBOX_SKILLS=$(CURDIR)/skills $(BIN) run --no-log "$(PROMPT)"

# Into a firmware image or a staging folder: make install DESTDIR=rootfs-dir
PREFIX		?= /usr
install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/skillbox/skills
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/skillbox
	cp -R skills/. $(DESTDIR)$(PREFIX)/share/skillbox/skills/

# OpenWrt .ipk and .apk and a Debian .deb of the binary, the bundled skills
# and the files in rootfs/ (tools/package.sh).
package: $(BIN)
	$(Q)VERSION=$(VERSION) sh tools/package.sh $(ARCH) $(BIN) $(B)/pkg

# Unit tests: one static binary with every module but main.c.
$(B)/unit/%.o: tests/unit/%.c $(CC_DEP) | $(VENDOR_OK) $(GEN)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) -Itests/unit $(BASEFLAGS) $(CWARN) $(CFLAGS) -MMD -MP -c -o $@ $<

$(B)/unit/suites.h: $(UNIT_SRCS) tools/mkunits.sh
	@mkdir -p $(@D)
	$(Q)sh tools/mkunits.sh $(UNIT_SRCS) >$@.tmp && mv $@.tmp $@
$(B)/unit/unit.o: $(B)/unit/suites.h
$(B)/unit/unit.o: CPPFLAGS += -I$(B)/unit

$(B)/unit-tests: $(UNIT_OBJS) $(LIBOBJS) $(B)/vendor/libbearssl.a $(B)/vendor/libfyaml.a
	$(Q)$(CC) $(BASEFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(UNIT_OBJS) $(LIBOBJS) $(LDLIBS)

# The MQTT link's client for tests/e2e/mqtt_link.test, against mosquitto.
$(B)/tests/%.o: tests/e2e/%.c $(CC_DEP) | $(VENDOR_OK) $(GEN)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(BASEFLAGS) $(CWARN) $(CFLAGS) -MMD -MP -c -o $@ $<
$(B)/mqttc: $(B)/tests/mqttc.o $(LIBOBJS) $(B)/vendor/libbearssl.a $(B)/vendor/libfyaml.a
	$(Q)$(CC) $(BASEFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(B)/tests/mqttc.o $(LIBOBJS) $(LDLIBS)

test: $(BIN) $(B)/unit-tests $(B)/mqttc
	$(Q)BIN=$(BIN) UNIT=$(B)/unit-tests MQTTC=$(B)/mqttc RUNNER="$(RUNNER)" ARCH=$(ARCH) \
	    READELF=$(READELF) sh tests/run $(TESTS)

# Each arch into its own log, printed whole when it ends. With -j2 two
# arches run at once (a suite under qemu waits more than it computes).
# The scripts of both run as uid 65534 and share its process count
# (RLIMIT_NPROC is per user), so the suite that uses it up, sandbox, runs
# alone (SUITE_LOCK, tests/run).
test-cross: $(CROSS_ARCHES:%=test-cross-%)
test-cross-%:
	$(Q)mkdir -p build/$*; rc=0; \
	SUITE_LOCK=$(CURDIR)/build/.suite-lock \
	$(MAKE) --no-print-directory ARCH=$* test >build/$*/test.log 2>&1 || rc=$$?; \
	echo "== $* (exit $$rc)"; cat build/$*/test.log; exit $$rc

# Each arch booted in a real Linux kernel, Debian's, under qemu-system
# (tools/boot.sh; tools/setup downloads the kernels): the sandbox's
# Landlock, seccomp and namespaces, which qemu-user cannot show.
BOOT_ARCHES	= armv7 aarch64 mipsel
test-boot: $(SETUP_OK)
	$(Q)for a in $(BOOT_ARCHES); do \
	    $(MAKE) --no-print-directory ARCH=$$a all || exit 1; \
	done
	$(Q)sh tests/boot $(BOOT_ARCHES)

size: $(foreach a,$(ALL_ARCHES),size-$(a))
	$(Q)sh tools/sizes.sh $(ALL_ARCHES)
size-%:
	$(Q)$(MAKE) --no-print-directory ARCH=$* all
	$(Q)$(MAKE) --no-print-directory ARCH=$* B=build/$*-nolto LTO=0 all
# The gate needs only the LTO builds (the parts come from the others).
size-check: $(foreach a,$(ALL_ARCHES),size-lto-$(a))
	$(Q)sh tools/sizes.sh --check $(ALL_ARCHES)
size-lto-%:
	$(Q)$(MAKE) --no-print-directory ARCH=$* all
# After a deliberate growth (or a saving): the new sizes become the ratchet.
size-baseline: $(foreach a,$(ALL_ARCHES),size-lto-$(a))
	$(Q)sh tools/sizes.sh --baseline $(ALL_ARCHES)

fuzz:
	$(Q)$(MAKE) --no-print-directory -f tools/fuzz.mk FUZZ_TIME=$(or $(FUZZ_TIME),20)

# Side by side with an agent on @openai/agents (installed by the bench with
# npm), same mock LLM; prints Markdown tables, writes build/bench/.
bench: $(BIN) $(SETUP_OK)
	$(Q)MAKE="$(MAKE)" tools/bench/run $(BIN)
# Every step once with the smallest counts: fails when one does, or when
# a table is missing. No timing is checked.
bench-short: $(BIN) $(SETUP_OK)
	$(Q)MAKE="$(MAKE)" tools/bench/run --short $(BIN)

check:
	$(Q)sh tools/checksrc src/*/*.c src/*/*.h
	$(Q)cppcheck -q --error-exitcode=1 --enable=warning,portability \
	    --inline-suppr -D__GNUC__ -Isrc src/*/*.c

clean:
	rm -rf build/$(BOARD)
distclean:
	rm -rf build

-include $(OBJS:.o=.d) $(UNIT_OBJS:.o=.d) $(wildcard $(B)/tests/*.d)

# tools/fuzz.mk - bounded fuzzing of the parsers with clang's libFuzzer
# (called by `make fuzz`; run from the repository root).
#
#   make -f tools/fuzz.mk [FUZZ_TIME=20] [FUZZERS="json fm skill sse http llm tls plan ere httpd cron mqtt"]
#   make -f tools/fuzz.mk build          only build the harnesses
#   make -f tools/fuzz.mk clean          drop the builds and grown corpora
#
# Each harness is built with ASan and UBSan into build/fuzz/fuzz_NAME, then
# runs for FUZZ_TIME seconds over build/fuzz/corpus-NAME, which starts as a
# copy of tests/fuzz/corpus/NAME/ and keeps what the runs find. A crash
# stops make with a non-zero status and leaves the input in
# build/fuzz/crash-NAME-*; replay it with `build/fuzz/fuzz_NAME FILE`.
# Built against glibc, not musl: -DMEM_NO_LIBC keeps arena.c from
# replacing malloc, which ASan owns.

# all, whatever rule comes first below (a prerequisite line such as
# fuzz_httpd's must not become what `make fuzz` does)
.DEFAULT_GOAL	:= all

FUZZ_TIME	?= 20
FUZZERS		?= json fm skill sse http llm tls plan ere httpd cron mqtt
FUZZ_CC		?= clang
VS		?= build/vendor
O		= build/fuzz

SAN		= address,undefined
# Undefined behaviour in our code stops the run like a crash; in libfyaml
# (not ours to fix) it is only reported.
FUZZ_CFLAGS	= -g -O1 -fsanitize=fuzzer,$(SAN) -fno-sanitize-recover=undefined \
		  -DMEM_NO_LIBC -D_GNU_SOURCE -Isrc -I$(O)/gen
LIB_CFLAGS	= -g -O1 -fsanitize=fuzzer-no-link,$(SAN) -D_GNU_SOURCE -w
# -entropic=0: with libfyaml's ~66k counters, clang 14's entropic schedule
# spends most of the time in its own bookkeeping (fm: 130 vs 2300 exec/s).
FUZZ_RUN	= -max_total_time=$(FUZZ_TIME) -max_len=8192 -timeout=10 \
		  -rss_limit_mb=1024 -entropic=0 -print_final_stats=1

FY_INC		= -I$(VS)/libfyaml/include
FY_SRCS		:= $(wildcard $(VS)/libfyaml/src/lib/*.c) $(VS)/libfyaml/src/xxhash/xxhash.c
FY_OBJS		:= $(FY_SRCS:$(VS)/libfyaml/src/%.c=$(O)/libfyaml/%.o)
FY_LIB		= $(O)/libfyaml.a
VENDOR_OK	= $(VS)/libfyaml/.skillbox-ok $(VS)/jsmn/.skillbox-ok \
		  $(VS)/bearssl/.skillbox-ok
# BearSSL only links the transport half of llm.c; built plain.
BEAR_SRCS	:= $(shell find $(VS)/bearssl/src -name '*.c' 2>/dev/null | sort)
BEAR_OBJS	:= $(BEAR_SRCS:$(VS)/bearssl/src/%.c=$(O)/bearssl/%.o)
BEAR_LIB	= $(O)/libbearssl.a
HDRS		:= $(wildcard src/*/*.h)

# Per harness: its sources, extra flags and libraries.
json_SRCS	= tests/fuzz/fuzz_json.c src/fmt/json.c src/base/str.c src/base/arena.c
json_FLAGS	= -DJSMN_STATIC -I$(VS)/jsmn
fm_SRCS		= tests/fuzz/fuzz_fm.c src/fmt/fm.c src/base/str.c src/base/arena.c
fm_FLAGS	= $(FY_INC)
fm_LIBS		= $(FY_LIB)
skill_SRCS	= tests/fuzz/fuzz_skill.c src/skill/skill.c src/skill/skill_parse.c \
		  src/fmt/fm.c src/base/str.c src/base/arena.c \
		  src/skill/hook.c src/skill/mcp_spec.c src/net/http.c
skill_FLAGS	= $(FY_INC)
skill_LIBS	= $(FY_LIB)
sse_SRCS	= tests/fuzz/fuzz_sse.c src/fmt/sse.c src/base/str.c src/base/arena.c
http_SRCS	= tests/fuzz/fuzz_http.c src/net/http.c src/base/str.c src/base/arena.c
plan_SRCS	= tests/fuzz/fuzz_plan.c src/fmt/plan.c src/base/str.c src/base/arena.c
ere_SRCS	= tests/fuzz/fuzz_ere.c src/base/ere.c src/base/arena.c src/base/str.c
ere_FLAGS	= -I$(O)/musl-inc
ere_LIBS	= $(MUSL_RE_LIB)
cron_SRCS	= tests/fuzz/fuzz_cron.c src/fmt/schedule.c src/base/str.c src/base/arena.c
mqtt_SRCS	= tests/fuzz/fuzz_mqtt.c src/net/mqtt.c src/base/str.c src/base/arena.c
llm_SRCS	= tests/fuzz/fuzz_llm.c src/llm/llm.c src/llm/llm_openai.c \
		  src/llm/llm_responses.c src/llm/llm_anthropic.c src/llm/llm_ollama.c \
		  src/fmt/sse.c src/fmt/json.c src/base/str.c src/base/arena.c src/base/log.c \
		  src/net/http.c src/net/net.c src/net/tls.c \
		  src/llm/cache.c src/base/sha256.c src/base/fsafe.c src/session/slog.c
llm_FLAGS	= -DJSMN_STATIC -I$(VS)/jsmn -isystem $(VS)/bearssl/inc \
		  -DSKILLBOX_VERSION='"fuzz"' -DSKILLBOX_BUILD_EPOCH=0LL
llm_LIBS	= $(BEAR_LIB)
tls_SRCS	= tests/fuzz/fuzz_tls.c src/net/tls.c src/net/net.c src/base/str.c src/base/arena.c
tls_FLAGS	= -isystem $(VS)/bearssl/inc -DSKILLBOX_BUILD_EPOCH=0LL
tls_LIBS	= $(BEAR_LIB)
# The server's request reading (src/serve/httpd.c, included by the harness).
httpd_SRCS	= tests/fuzz/fuzz_httpd.c src/net/http.c src/net/tls.c src/net/net.c \
		  src/fmt/json.c src/base/str.c src/base/arena.c src/base/log.c
httpd_FLAGS	= -DJSMN_STATIC -I$(VS)/jsmn -isystem $(VS)/bearssl/inc \
		  -DSKILLBOX_VERSION='"fuzz"' -DSKILLBOX_BUILD_EPOCH=0LL
httpd_LIBS	= $(BEAR_LIB)
$(O)/fuzz_httpd: src/serve/httpd.c
# fuzz_ere's oracle: musl's regcomp/regexec (the C library the binary
# links, and POSIX where glibc is not), from Debian's musl source package
# as tools/setup fetches it. Its names are renamed by a regex.h made from
# musl's (musl_regcomp ...) so that they live beside glibc's; mbtowc is the
# harness's, musl's C locale (a byte a character), which glibc's is not.
MUSL_VER	:= $(shell sed -n 's/^MUSL_VER=//p' tools/setup)
MUSL_SHA	:= $(shell sed -n 's/^MUSL_SHA=//p' tools/setup)
MUSL		= $(O)/musl
MUSL_RE_OBJS	= $(O)/musl-re/regcomp.o $(O)/musl-re/regexec.o $(O)/musl-re/tre-mem.o
MUSL_RE_LIB	= $(O)/libmusl_re.a

# Seeds for tls: two certificates of the system bundle, one as PEM text
# (first byte even) and one as DER for the harness to wrap (odd).
CA_BUNDLE	= /etc/ssl/certs/ca-certificates.crt

.PHONY: all build clean $(FUZZERS:%=run-%)
.SECONDARY:

all: $(FUZZERS:%=run-%)
build: $(FUZZERS:%=$(O)/fuzz_%)
clean:
	rm -rf $(O)

# The corpus keeps growing between runs; the seeds are copied in each time.
$(FUZZERS:%=run-%): run-%: $(O)/fuzz_%
	@mkdir -p $(O)/corpus-$*
	@if [ -d tests/fuzz/corpus/$* ]; then cp tests/fuzz/corpus/$*/* $(O)/corpus-$*/; fi
	@if [ $* = tls ] && [ -f $(CA_BUNDLE) ]; then \
	    { printf '\0'; sed -n '1,/END CERT/p' $(CA_BUNDLE); } >$(O)/corpus-tls/seed-pem; \
	    { printf '\1'; sed -n '/BEGIN CERT/,/END CERT/p' $(CA_BUNDLE) | \
	      awk '/BEGIN/{n++} n==2' | openssl x509 -outform DER; } >$(O)/corpus-tls/seed-der; fi
	@echo "  FUZZ    $* for $(FUZZ_TIME)s"
	$(O)/fuzz_$* $(FUZZ_RUN) -artifact_prefix=$(O)/crash-$*- $(O)/corpus-$*

.SECONDEXPANSION:
$(O)/fuzz_%: $$($$*_SRCS) $$($$*_LIBS) $(HDRS) tools/fuzz.mk $(O)/gen/config.h
	@mkdir -p $(@D)
	@echo "  CC      $@"
	$(FUZZ_CC) $(FUZZ_CFLAGS) $($*_FLAGS) -o $@ $($*_SRCS) $($*_LIBS) -lm

# Every feature in (the Makefile writes the same header per build).
$(O)/gen/config.h: tools/fuzz.mk tools/mkconfig.sh
	@mkdir -p $(@D)
	@sh tools/mkconfig.sh SERVE_TLS=1 ORCH=1 HOOKS=1 MCP=1 EVAL=1 PERSIST=1 \
	    JOBS=1 CREW=1 FLEET=0 >$@

$(BEAR_LIB): $(BEAR_OBJS)
	@rm -f $@ && ar rcs $@ $^
$(O)/bearssl/%.o: $(VS)/bearssl/src/%.c
	@mkdir -p $(@D)
	@$(FUZZ_CC) -O1 -w -I$(VS)/bearssl/inc -I$(VS)/bearssl/src -c -o $@ $<

$(MUSL)/.ok: tools/setup
	@rm -rf $(MUSL) $(O)/musl-deb && mkdir -p $(O)/musl-deb $(MUSL)
	@echo "  FETCH   musl $(MUSL_VER) (apt-get source)"
	@cd $(O)/musl-deb && apt-get source --download-only -qq musl=$(MUSL_VER) >/dev/null
	@cd $(O)/musl-deb && echo "$(MUSL_SHA)  musl_$(firstword $(subst -, ,$(MUSL_VER))).orig.tar.gz" | sha256sum -c - >/dev/null
	@tar xzf $(O)/musl-deb/musl_$(firstword $(subst -, ,$(MUSL_VER))).orig.tar.gz -C $(MUSL) --strip-components=1
	@touch $@
$(O)/musl-inc/regex.h: $(MUSL)/.ok
	@mkdir -p $(@D)
	@{ printf '#define regcomp musl_regcomp\n#define regexec musl_regexec\n'; \
	   printf '#define regfree musl_regfree\n#include <stddef.h>\n'; \
	   printf 'typedef long regoff_t;\n'; \
	   sed -e '/<features.h>/d' -e '/__NEED_/d' -e '/<bits\/alltypes.h>/d' \
	       $(MUSL)/include/regex.h; } >$@
$(MUSL_RE_LIB): $(MUSL_RE_OBJS)
	@rm -f $@ && ar rcs $@ $^
$(O)/musl-re/%.o: $(O)/musl-inc/regex.h
	@mkdir -p $(@D)
	@echo "  CC      $@"
	@$(FUZZ_CC) $(LIB_CFLAGS) -I$(O)/musl-inc -Dhidden= -Dmbtowc=musl_mbtowc \
	    -c -o $@ $(MUSL)/src/regex/$*.c

# libfyaml once, instrumented but not linked with the fuzzer's main.
$(FY_LIB): $(FY_OBJS)
	@rm -f $@ && ar rcs $@ $^
$(O)/libfyaml/%.o: $(VS)/libfyaml/src/%.c $(VS)/libfyaml/.skillbox-ok tools/fuzz.mk
	@mkdir -p $(@D)
	@echo "  CC      $@"
	@$(FUZZ_CC) $(LIB_CFLAGS) -std=gnu11 -DHAVE_CONFIG_H -I$(VS)/libfyaml \
	    $(FY_INC) -I$(VS)/libfyaml/src/lib -I$(VS)/libfyaml/src/xxhash \
	    -c -o $@ $<

# The vendored sources must be unpacked before the globs above are read:
# making this included file runs `make vendor` when needed, and make then
# starts over with the sources in place.
include $(O)/vendor.d
$(O)/vendor.d: $(VENDOR_OK)
	@mkdir -p $(@D) && echo "# vendor sources unpacked" >$@
$(VENDOR_OK):
	$(MAKE) --no-print-directory vendor

# tools/vendor.mk - builds the vendored libraries from their fetched sources
# with our flags (called by the Makefile; globs see the unpacked trees).
# Upstream warnings are not ours to fix: -w.

BEAR_SRCS	:= $(shell find $(VS)/bearssl/src -name '*.c' | sort)
FY_SRCS		:= $(wildcard $(VS)/libfyaml/src/lib/*.c) $(VS)/libfyaml/src/xxhash/xxhash.c
BEAR_OBJS	:= $(BEAR_SRCS:$(VS)/bearssl/src/%.c=$(OUT)/bearssl/%.o)
FY_OBJS		:= $(FY_SRCS:$(VS)/libfyaml/src/%.c=$(OUT)/libfyaml/%.o)

$(OUT)/libbearssl.a: $(BEAR_OBJS)
	$(Q)rm -f $@ && $(AR) rcs $@ $^
$(OUT)/libfyaml.a: $(FY_OBJS)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# Every object depends on the tree's stamp: a new patch or config.h
# rebuilds the library (tar keeps the old mtimes of untouched files). And
# on CC_DEP, the compiler when tools/setup built it (Makefile).
$(OUT)/bearssl/%.o: $(VS)/bearssl/src/%.c $(VS)/bearssl/.skillbox-ok $(CC_DEP)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -w -I$(VS)/bearssl/inc -I$(VS)/bearssl/src -c -o $@ $<
$(OUT)/libfyaml/%.o: $(VS)/libfyaml/src/%.c $(VS)/libfyaml/.skillbox-ok $(CC_DEP)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -std=gnu11 -w -DHAVE_CONFIG_H -I$(VS)/libfyaml \
	    -I$(VS)/libfyaml/include -I$(VS)/libfyaml/src/lib \
	    -I$(VS)/libfyaml/src/xxhash -c -o $@ $<

# test/fuzz/fuzz.mk: the libFuzzer harnesses test/fuzz/fuzz_*.c, built with clang
# (-fsanitize=fuzzer plus ASan and UBSan; test/deps.sh installs clang and its runtime,
# libclang-rt-14-dev). The top Makefile includes it (test/*/*.mk):
#   make BUILD=build/x fuzz-build   every harness: $(BUILD)/fuzz/fuzz_<name>
#   make BUILD=build/x fuzz         each for FUZZ_SECONDS (20) from its seeds (test/fuzz/run.sh)
#   make BUILD=build/x fuzz-smoke   each for FUZZ_SMOKE_SECONDS (2): crashes, leaks and asserts
#                                   on the seeds and near them; `make test FUZZ_SMOKE=1` runs
#                                   it after the unit tests (test/run-tests.sh)
#   make fuzz FUZZERS=k8s_watch FUZZ_SECONDS=600    one harness, longer
# A new test/fuzz/fuzz_<name>.c needs no edit here, only its seed directory in run.sh.
#
# The code under test is compiled once more, instrumented, into $(BUILD)/fuzz/obj and
# archived; each harness links the archive, so it takes only the modules it calls.

FUZZ_CC            ?= clang
FUZZ_SECONDS       ?= 20
FUZZ_SMOKE_SECONDS ?= 2
FUZZ_SAN           := -fsanitize=address,undefined -fno-sanitize-recover=undefined
# `=`, not `:=`: PKG_CFLAGS is read at recipe time, after the deps check (top Makefile).
FUZZ_CFLAGS         = -g -O1 -std=c11 -D_GNU_SOURCE $(WARN) $(FUZZ_SAN) -I. $(PKG_CFLAGS) -MMD -MP
FUZZ_SRC           := $(sort $(wildcard test/fuzz/fuzz_*.c))
FUZZERS            ?= $(FUZZ_SRC:test/fuzz/fuzz_%.c=%)
FUZZ_BINS          := $(FUZZERS:%=$(BUILD)/fuzz/fuzz_%)
# What the harnesses may call: lib/ (and its sub-libraries), api/ and the instance manager
# (which includes api/). A harness of controller/ code would add $(CTRL_SRC).
FUZZ_LIB_SRC       := $(LIB_SRC) $(API_SRC) $(INST_SRC)
FUZZ_LIB           := $(BUILD)/fuzz/libfuzz-target.a

$(BUILD)/fuzz/obj/%.o: %.c | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	@echo "  FUZZCC $<"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_LIB): $(FUZZ_LIB_SRC:%.c=$(BUILD)/fuzz/obj/%.o)
	@rm -f $@
	@ar rcs $@ $^

$(BUILD)/fuzz/fuzz_%: $(BUILD)/fuzz/obj/test/fuzz/fuzz_%.o $(FUZZ_LIB)
	@echo "  FUZZ  $@"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $^ -o $@ $(PKG_LIBS) -lpthread -lm

.PHONY: fuzz-build fuzz-smoke
fuzz-build: $(FUZZ_BINS)

fuzz: $(FUZZ_BINS)
	@bash test/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_BINS)

fuzz-smoke: $(FUZZ_BINS)
	@RESULTS=$(BUILD)/test-results bash test/fuzz/run.sh $(FUZZ_SMOKE_SECONDS) $(FUZZ_BINS)

# `make test FUZZ_SMOKE=1` builds the harnesses and test/run-tests.sh runs the smoke after
# the unit tests. Off by default: from a fresh build it adds about 35 s (25 s of CPU to
# compile the instrumented code, then 4 x 2 s), more than `make test` should grow by.
ifeq ($(FUZZ_SMOKE),1)
test: $(FUZZ_BINS)
export FUZZ_BINS FUZZ_SMOKE_SECONDS
endif

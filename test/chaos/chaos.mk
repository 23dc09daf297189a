# test/chaos/chaos.mk: chaos-writer (the client that writes through failovers and verifies
# that no acknowledged write was lost) and the side-by-side peer benchmarks. The top
# Makefile includes it (test/*/*.mk):
#   make BUILD=build/x build/x/chaos-writer
#   make BUILD=build/x bench-peers          (Sentinel, Redis Cluster, FAILOVER: test/bench/peers.sh)
#   bash test/chaos/short.sh                (one Sentinel kill + verify, ~10 s; `make test` hook)
# The unit tests test/unit/test_chaos_*.c link the pure modules listed in CHAOS_PURE_OBJ.

CHAOS_SRC      := $(sort $(wildcard test/chaos/*.c))
CHAOS_OBJ      := $(CHAOS_SRC:%.c=$(BUILD)/%.o)
CHAOS_PURE_OBJ := $(addprefix $(BUILD)/test/chaos/,chaos_log.o chaos_verify.o chaos_io.o)
CHAOS_LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)

$(BUILD)/chaos-writer: $(CHAOS_OBJ) $(CHAOS_LIB_OBJ)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	@$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# The unit tests of the pure verdicts (the pattern rule in the Makefile links them; these
# lines only add the objects they need).
$(BUILD)/test/test_chaos_log: $(CHAOS_PURE_OBJ)
$(BUILD)/test/test_chaos_verify: $(CHAOS_PURE_OBJ)
$(BUILD)/test/test_chaos_resolve: $(CHAOS_PURE_OBJ) $(BUILD)/test/chaos/chaos_resolve.o

.PHONY: bench-peers chaos-short
bench-peers: $(BUILD)/chaos-writer
	@CHAOS_WRITER=$(abspath $(BUILD)/chaos-writer) BENCH_OUT=$(BUILD)/bench bash test/bench/peers.sh
	@CHAOS_WRITER=$(abspath $(BUILD)/chaos-writer) BENCH_OUT=$(BUILD)/bench bash test/bench/results.sh
bench: bench-peers

chaos-short: $(BUILD)/chaos-writer
	@CHAOS_WRITER=$(abspath $(BUILD)/chaos-writer) RESULTS=$(BUILD)/test-results bash test/chaos/short.sh

# `make test` builds the writer so test/chaos/short.sh (run by the test scripts) finds it.
test: $(BUILD)/chaos-writer
export CHAOS_WRITER ?= $(abspath $(BUILD)/chaos-writer)

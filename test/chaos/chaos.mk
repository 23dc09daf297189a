# test/chaos/chaos.mk: chaos-writer (the client that writes through failovers and verifies
# that no acknowledged write was lost) and the chaos suites that use it. The top Makefile
# includes it (test/*/*.mk):
#   make BUILD=build/x build/x/chaos-writer
#   make BUILD=build/x chaos-short      test/chaos/short.sh: one Sentinel kill + verify, ~15 s
#                                       (`make test` runs it through test/run-tests.sh)
#   make BUILD=build/x chaos            test/chaos/scenarios.sh: the fault matrix on the local
#                                       environment, CHAOS_RUNS (3) runs each; CHAOS_SCENARIOS
# The unit tests test/unit/test_chaos_*.c link the pure modules listed in CHAOS_PURE_OBJ.
# The peer benchmarks that use chaos-writer (bench-peers) are test/bench/bench.mk's.

CHAOS_SRC      := $(sort $(wildcard test/chaos/*.c))
CHAOS_OBJ      := $(CHAOS_SRC:%.c=$(BUILD)/%.o)
CHAOS_PURE_OBJ := $(addprefix $(BUILD)/test/chaos/,chaos_log.o chaos_verify.o chaos_io.o)
CHAOS_LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
CHAOS_RUNS     ?= 3
# What scenarios.sh starts: the operator and the node agent (test/env), the writer.
CHAOS_TOOLS    := $(BUILD)/chaos-writer $(BUILD)/redis-operator $(BUILD)/nodeagent \
	$(BUILD)/controller-it-writer

$(BUILD)/chaos-writer: $(CHAOS_OBJ) $(CHAOS_LIB_OBJ)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	@$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# The unit tests of the pure verdicts (the pattern rule in the Makefile links them; these
# lines only add the objects they need).
$(BUILD)/test/test_chaos_log: $(CHAOS_PURE_OBJ)
$(BUILD)/test/test_chaos_verify: $(CHAOS_PURE_OBJ)
$(BUILD)/test/test_chaos_resolve: $(CHAOS_PURE_OBJ) $(BUILD)/test/chaos/chaos_resolve.o

.PHONY: chaos chaos-short
chaos-short: $(BUILD)/chaos-writer
	@CHAOS_WRITER=$(abspath $(BUILD)/chaos-writer) RESULTS=$(BUILD)/test-results bash test/chaos/short.sh

chaos: $(CHAOS_TOOLS)
	@BUILD=$(BUILD) CHAOS_RUNS=$(CHAOS_RUNS) RESULTS=$(BUILD)/test-results bash test/chaos/scenarios.sh

# `make test` builds the writer so test/chaos/short.sh (run by the test scripts) finds it.
test: $(BUILD)/chaos-writer
export CHAOS_WRITER ?= $(abspath $(BUILD)/chaos-writer)

# test/integration/k8s/k8s.mk: build rules for the lib/k8s integration test binary, the
# lib/k8s fuzz harnesses and the informer-cache benchmark; the top-level Makefile
# includes it (test/integration/*/*.mk):
#   make BUILD=build/x build/x/test/k8s-it     (bash test/integration/k8s-client.sh runs it)
#   make BUILD=build/x fuzz-k8s                 (part of `make fuzz`)
#   make BUILD=build/x bench-k8s                (part of `make bench`)
# Only lib/ objects are linked (not controller/ or instance/).

K8S_LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
K8S_IT_SRC  := $(sort $(wildcard test/integration/k8s/*.c))
K8S_IT_OBJ  := $(K8S_IT_SRC:%.c=$(BUILD)/%.o)

$(BUILD)/test/k8s-it: $(K8S_IT_OBJ) $(K8S_LIB_OBJ)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	@$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

.PHONY: k8s-it fuzz-k8s bench-k8s
k8s-it: $(BUILD)/test/k8s-it
	@BUILD=$(BUILD) bash test/integration/k8s-client.sh

# --- fuzzing: libFuzzer + ASan + UBSan, each harness for FUZZ_SECONDS -------------------
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 20
# `=`, not `:=`: PKG_CFLAGS is read at recipe time, after the deps check (top Makefile).
FUZZ_CFLAGS  = -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -I. $(PKG_CFLAGS)
K8S_FUZZ_LIB := $(filter-out lib/valkey/%,$(LIB_SRC))
K8S_FUZZ     := $(BUILD)/fuzz/fuzz_k8s_watch $(BUILD)/fuzz/fuzz_k8s_kubeconfig

$(BUILD)/fuzz/fuzz_k8s_%: test/fuzz/fuzz_k8s_%.c $(K8S_FUZZ_LIB) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	@echo "  FUZZ  $@"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) $^ -o $@ $(PKG_LIBS) -lpthread -lm

fuzz-k8s: $(K8S_FUZZ)
	@for f in $(K8S_FUZZ); do \
		n=$$(basename $$f); mkdir -p $(BUILD)/fuzz/corpus-$$n; \
		seeds=; [ $$n = fuzz_k8s_watch ] && seeds=test/data/k8s_watch; \
		[ $$n = fuzz_k8s_kubeconfig ] && seeds=test/data/k8s_config; \
		echo "fuzz: $$n for $(FUZZ_SECONDS) s"; \
		$$f -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -print_final_stats=1 \
			$(BUILD)/fuzz/corpus-$$n $$seeds </dev/null 2>$(BUILD)/fuzz/$$n.log || \
			{ tail -40 $(BUILD)/fuzz/$$n.log; exit 1; }; \
		grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb)' \
			$(BUILD)/fuzz/$$n.log; \
	done
fuzz: fuzz-k8s

# --- benchmark ------------------------------------------------------------------------------
$(BUILD)/bench/k8s_cache_bench: $(BUILD)/test/bench/k8s_cache_bench.o $(K8S_LIB_OBJ)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	@$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

bench-k8s: $(BUILD)/bench/k8s_cache_bench
	@$(BUILD)/bench/k8s_cache_bench
bench: bench-k8s

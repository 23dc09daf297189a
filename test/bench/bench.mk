# test/bench/bench.mk: the benchmarks (test/bench/README.md). The top Makefile includes it
# (test/*/*.mk); `make bench` runs every one and then regenerates docs/benchmarks.md.
#   make BUILD=build/x bench-peers      test/bench/peers.sh: Sentinel, Redis Cluster, FAILOVER
#                                       on this machine with chaos-writer (test/chaos/chaos.mk)
#   make BUILD=build/x bench-k8s        the lib/k8s informer cache (k8s_cache_bench.c; prints)
#   make BUILD=build/x bench-operator   test/bench/operator.sh → $(BUILD)/bench/operator.json,
#                                       merged into results.json (+ ratios), docs regenerated
#   make BUILD=build/x bench-footprint  test/bench/footprint.sh → $(BUILD)/bench/footprint.json
#                                       (the controller with 0, 100, 1,000 clusters on a light
#                                       node agent; BENCH_FOOTPRINT_*), merged, docs regenerated
#   make BUILD=build/x bench-backup     test/bench/backup.sh → $(BUILD)/bench/backup.json (1 GiB
#                                       backed up from a replica to S3 and Azure, BGSAVE, RSS,
#                                       restore, write p99; BENCH_BACKUP_*), merged over the
#                                       committed docs/benchmarks.json, docs regenerated
#   make BUILD=build/x bench-docs       docs/benchmarks.md (+ benchmarks.json, PNGs) from $(BUILD)/bench/results.json
#   make bench-plots                    the PNGs again from docs/benchmarks.json (they are not committed)
# BENCH_RUNS, BENCH_SWITCHOVER_RUNS, BENCH_CONTROLLER_N pass through the environment.

BENCH_TOOLS := $(BUILD)/chaos-writer $(BUILD)/redis-operator $(BUILD)/nodeagent $(BUILD)/controller-it-writer

.PHONY: bench-operator bench-footprint bench-docs bench-plots bench-peers bench-k8s bench-backup
bench-operator: $(BENCH_TOOLS)
	@BUILD=$(BUILD) BENCH_OUT=$(BUILD)/bench CHAOS_WRITER=$(abspath $(BUILD)/chaos-writer) bash test/bench/operator.sh
	@bash test/bench/docs.sh $(BUILD)/bench/results.json docs/benchmarks.md

# Creating 1,000 clusters takes a while on 2 cores (see test/bench/README.md).
bench-footprint: $(BUILD)/redis-operator $(BUILD)/nodeagent $(BUILD)/chaos-writer
	@BUILD=$(BUILD) BENCH_OUT=$(BUILD)/bench bash test/bench/footprint.sh
	@CHAOS_WRITER=$(abspath $(BUILD)/chaos-writer) BENCH_OUT=$(BUILD)/bench bash test/bench/results.sh >/dev/null
	@bash test/bench/ratios.sh $(BUILD)/bench >/dev/null
	@bash test/bench/docs.sh $(BUILD)/bench/results.json docs/benchmarks.md

# The PNGs of docs/benchmarks.md from the committed docs/benchmarks.json (not committed).
bench-plots:
	@bash test/bench/plot.sh docs/benchmarks.json docs

bench-docs:
	@CHAOS_WRITER=$(abspath $(BUILD)/chaos-writer) BENCH_OUT=$(BUILD)/bench bash test/bench/results.sh >/dev/null
	@bash test/bench/ratios.sh $(BUILD)/bench
	@bash test/bench/docs.sh $(BUILD)/bench/results.json docs/benchmarks.md

bench: bench-operator bench-footprint bench-docs
# Under `make bench` the page is written last, from every fragment; the footprint runs
# after the operator benchmark (both use the environment heavily).
ifneq ($(filter bench,$(MAKECMDGOALS)),)
bench-docs: bench-operator bench-footprint bench-peers
bench-footprint: bench-operator
endif

bench-peers: $(BUILD)/chaos-writer
	@CHAOS_WRITER=$(abspath $(BUILD)/chaos-writer) BENCH_OUT=$(BUILD)/bench bash test/bench/peers.sh
	@CHAOS_WRITER=$(abspath $(BUILD)/chaos-writer) BENCH_OUT=$(BUILD)/bench bash test/bench/results.sh
bench: bench-peers

# Backup and restore of BENCH_BACKUP_MB (1024) MiB; the other figures of the page come from
# the committed docs/benchmarks.json when this build dir has not measured them.
bench-backup: $(BUILD)/redis-operator $(BUILD)/chaos-writer $(BUILD)/test/objtool
	@BUILD=$(BUILD) BENCH_OUT=$(BUILD)/bench bash test/bench/backup.sh
	@CHAOS_WRITER=$(abspath $(BUILD)/chaos-writer) BENCH_OUT=$(BUILD)/bench BENCH_BASE=docs/benchmarks.json bash test/bench/results.sh >/dev/null
	@bash test/bench/docs.sh $(BUILD)/bench/results.json docs/benchmarks.md
bench: bench-backup
ifneq ($(filter bench,$(MAKECMDGOALS)),)
bench-docs: bench-backup
bench-backup: bench-footprint
endif

# The informer cache's cost per object and per event; links lib/ only.
$(BUILD)/bench/k8s_cache_bench: $(BUILD)/test/bench/k8s_cache_bench.o $(LIB_SRC:%.c=$(BUILD)/%.o)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	@$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# The heap the controller's cache holds of one kind (footprint.sh, BENCH_FOOTPRINT_BREAKDOWN=1).
$(BUILD)/bench/cache_bytes: $(BUILD)/test/bench/cache_bytes.o $(CORE_OBJ)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	@$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

bench-k8s: $(BUILD)/bench/k8s_cache_bench
	@$(BUILD)/bench/k8s_cache_bench
bench: bench-k8s

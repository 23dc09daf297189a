# test/integration/k8s/k8s.mk: the lib/k8s integration test binary; the top-level Makefile
# includes it (test/integration/*/*.mk):
#   make BUILD=build/x build/x/test/k8s-it     (bash test/integration/k8s-client.sh runs it)
#   make BUILD=build/x k8s-it                   (builds it and runs k8s-client.sh)
# Only lib/ objects are linked (not controller/ or instance/), and api/resources.o for the
# RedisCluster descriptor the tests create. The lib/k8s fuzzers are test/fuzz/fuzz.mk's,
# the informer-cache benchmark test/bench/bench.mk's.

K8S_LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/api/resources.o
K8S_IT_SRC  := $(sort $(wildcard test/integration/k8s/*.c))
K8S_IT_OBJ  := $(K8S_IT_SRC:%.c=$(BUILD)/%.o)

$(BUILD)/test/k8s-it: $(K8S_IT_OBJ) $(K8S_LIB_OBJ)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	@$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

.PHONY: k8s-it
k8s-it: $(BUILD)/test/k8s-it
	@BUILD=$(BUILD) bash test/integration/k8s-client.sh

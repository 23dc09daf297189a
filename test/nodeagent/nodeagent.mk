# test/nodeagent/nodeagent.mk: the test node agent (the kubelet of the local environment).
# The top Makefile includes it (after CORE_OBJ and TEST_BINS are defined):
#     include $(wildcard test/*/*.mk ...)
#
# NODEAGENT_RT_SRC is the runtime half (no Kubernetes API code); NODEAGENT_SRC is every
# non-test source of the agent, the API half and its main() included once they exist.

NODEAGENT_TEST_SRC := $(wildcard test/nodeagent/test_*.c)
NODEAGENT_SRC      := $(filter-out $(NODEAGENT_TEST_SRC),$(wildcard test/nodeagent/*.c))
NODEAGENT_RT_SRC   := $(addprefix test/nodeagent/,faults.c imagemap.c mounts.c ociimage.c \
	probe.c runtime.c sandbox.c spawn.c spec.c)
NODEAGENT_OBJ      := $(NODEAGENT_SRC:%.c=$(BUILD)/%.o)
NODEAGENT_RT_OBJ   := $(NODEAGENT_RT_SRC:%.c=$(BUILD)/%.o)
# lib/, and api/resources.o: the light mode reads RedisClusters (light.c).
NODEAGENT_LIB_OBJ  := $(filter $(BUILD)/lib/% $(BUILD)/api/resources.o,$(CORE_OBJ))

$(BUILD)/test/nodeagent/test_%.o: CFLAGS += $(CHECK_CFLAGS)

# Runs as root: network namespaces, veths on ro-br0 (made if missing), cgroups, mounts.
$(BUILD)/nodeagent-runtime-test: $(BUILD)/test/nodeagent/test_runtime.o $(NODEAGENT_RT_OBJ) \
		$(NODEAGENT_LIB_OBJ)
	@echo "  LINK  $@"
	@$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(CHECK_LIBS) $(LDLIBS)

# The daemon (the API half: main.c node.c pods.c podsync.c pvc.c volumes.c ctl.c, light.c
# and the simulator sim*.c, plus the runtime). Needs at run time: root, iproute2 (`ip`), curl (httpGet probes), iptables (loss
# fault), tc (delay fault, needs netem), cgroup v1 freezer, overlayfs, and
# test/nodeagent/images.conf (rt_config.images) with OPERATOR_BIN set.
NODEAGENT_API_OBJ := $(filter-out $(BUILD)/test/nodeagent/main.o,$(NODEAGENT_OBJ))

# The light mode's simulator (sim*.c) speaks TLS through GnuTLS, libmicrohttpd's own. Read
# when a link needs it, like the top Makefile's flags (pkg_flags: a missing module stops make).
NODEAGENT_TLS_LIBS = $(eval NODEAGENT_TLS_LIBS := $(call pkg_flags,--libs,gnutls))$(NODEAGENT_TLS_LIBS)

$(BUILD)/nodeagent: $(NODEAGENT_OBJ) $(NODEAGENT_LIB_OBJ)
	@echo "  LINK  $@"
	@$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS) $(NODEAGENT_TLS_LIBS)

# Pure parts of the API half (translation, status, volume contents and writer, ctl parsing,
# Node/Lease/PV objects): no root, no API server.
$(BUILD)/nodeagent-api-test: $(BUILD)/test/nodeagent/test_api.o $(NODEAGENT_API_OBJ) \
		$(NODEAGENT_LIB_OBJ)
	@echo "  LINK  $@"
	@$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(CHECK_LIBS) $(LDLIBS) $(NODEAGENT_TLS_LIBS)
TEST_BINS += $(BUILD)/nodeagent-api-test

# test/env/up.sh starts the agent (NODEAGENT_BIN, default build/nodeagent) once the control
# plane is ready; test/run-integration.sh calls up.sh after `make test` built things.
env-up demo: $(BUILD)/nodeagent
test: $(BUILD)/nodeagent
integration: $(BUILD)/nodeagent
export NODEAGENT_BIN := $(abspath $(BUILD)/nodeagent)

# Run by `make test` with the unit layer (CI runs as root).
TEST_BINS += $(BUILD)/nodeagent-runtime-test

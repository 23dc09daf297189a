# test/integration/controller/controller.mk: helper programs of test/integration/controller.sh.
# The top Makefile includes this fragment (test/integration/*/*.mk).
#   controller-it-writer: writes through failovers with WAIT 1 and counts lost writes.

$(BUILD)/controller-it-writer: test/integration/controller/writer.c | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	@echo "  CC    $<"
	@$(CC) $(filter-out -MMD -MP,$(CFLAGS)) $(LDFLAGS) $< -o $@ $(call pkg_flags,--libs,hiredict hiredict_ssl)

integration: $(BUILD)/controller-it-writer
test: $(BUILD)/controller-it-writer

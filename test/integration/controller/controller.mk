# test/integration/controller/controller.mk: helper programs of test/integration/controller.sh.
# The top Makefile includes this fragment (test/integration/*/*.mk).
#   controller-it-writer: writes through failovers with WAIT 1 and counts lost writes.

$(BUILD)/controller-it-writer: test/integration/controller/writer.c
	@mkdir -p $(dir $@)
	@echo "  CC    $<"
	@$(CC) $(filter-out -MMD -MP,$(CFLAGS)) $(LDFLAGS) $< -o $@ $(shell pkg-config --libs hiredis)

integration: $(BUILD)/controller-it-writer
test: $(BUILD)/controller-it-writer

# test/integration/objstore/objstore.mk: the lib/objstore integration driver; the top-level
# Makefile includes it (test/integration/*/*.mk):
#   make BUILD=build/x build/x/test/objstore-it   (bash test/integration/objstore.sh runs it)
# Only lib/ objects are linked.

OBJSTORE_IT_SRC := $(sort $(wildcard test/integration/objstore/*.c))
OBJSTORE_IT_OBJ := $(OBJSTORE_IT_SRC:%.c=$(BUILD)/%.o)

$(BUILD)/test/objstore-it: $(OBJSTORE_IT_OBJ) $(LIB_SRC:%.c=$(BUILD)/%.o)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	@$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

.PHONY: objstore-it
objstore-it: $(BUILD)/test/objstore-it
	@BUILD=$(BUILD) bash test/integration/objstore.sh

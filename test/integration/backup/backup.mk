# test/integration/backup/backup.mk: objtool, the object-store client of the instance's
# backup checks (test/integration/instance/backup_checks.sh); the top-level Makefile
# includes it. Only lib/ objects are linked.

OBJTOOL_OBJ := $(BUILD)/test/integration/backup/objtool.o

$(BUILD)/test/objtool: $(OBJTOOL_OBJ) $(LIB_SRC:%.c=$(BUILD)/%.o)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	@$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

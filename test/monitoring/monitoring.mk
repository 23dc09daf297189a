# test/monitoring: the monitoring package's checks and the runbook check (no cluster
# needed, seconds), and the Prometheus e2e (the local environment).
#   make monitoring-check   rules.sh (promtool check/test rules) and dashboard.sh
#   make runbook-check      runbook-check.sh: structure, alert <-> runbook links, every
#                           kubectl and kubectl redis command parses, every metric exists
#   make monitoring-it      prometheus-e2e.sh: a real Prometheus scraping a cluster
.PHONY: monitoring-check runbook-check monitoring-it
$(BUILD)/test/plugin-parse: $(BUILD)/test/monitoring/plugin_parse.o $(PLUGIN_OBJ) \
		$(LIB_SRC:%.c=$(BUILD)/%.o) $(API_SRC:%.c=$(BUILD)/%.o)
	@mkdir -p $(dir $@)
	@$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)
monitoring-check:
	@RESULTS=$(BUILD)/test-results BUILD=$(BUILD) bash test/monitoring/rules.sh
	@RESULTS=$(BUILD)/test-results BUILD=$(BUILD) bash test/monitoring/dashboard.sh
runbook-check: $(BUILD)/test/plugin-parse
	@RESULTS=$(BUILD)/test-results BUILD=$(BUILD) bash test/monitoring/runbook-check.sh
monitoring-it: $(BUILD)/redis-operator
	@RESULTS=$(BUILD)/test-results BUILD=$(BUILD) bash test/monitoring/prometheus-e2e.sh

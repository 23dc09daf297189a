# test/plugin: the kubectl-redis e2e (plugin.sh) on the local environment.
.PHONY: plugin-it
plugin-it: $(BUILD)/redis-operator $(BUILD)/kubectl-redis
	@RESULTS=$(BUILD)/test-results BUILD=$(BUILD) bash test/plugin/plugin.sh

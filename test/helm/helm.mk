# test/helm/helm.mk: the helm CLI the chart is tested with (test/helm/build.sh: built from
# the Go module proxy once per version, cached outside the repository). The top Makefile
# includes this fragment; `make env-build` builds helm too, so a fresh machine has it.
.PHONY: helm
helm:
	@bash test/helm/build.sh
env-build: helm

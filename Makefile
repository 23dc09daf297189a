# redis-operator — one non-recursive Makefile. `make help` lists the targets.
#
# Sources are found by wildcard: a new lib/foo.c or test/unit/test_foo.c needs no edit
# here. Objects go to build/ (out of tree). DEVELOPER=1 adds -Werror (CI sets it).

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.0.0-dev)
COMMIT  ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
BUILD   ?= build
CC      ?= cc

# pkg-config modules: the operator's, and each module's Debian package (test/deps.sh).
PKGS     := libcurl jansson libmicrohttpd hiredict hiredict_ssl openssl yaml-0.1 zlib
PKG_DEBS := libcurl:libcurl4-openssl-dev jansson:libjansson-dev libmicrohttpd:libmicrohttpd-dev \
	hiredict:libhiredict-dev hiredict_ssl:libhiredict-dev openssl:libssl-dev yaml-0.1:libyaml-dev zlib:zlib1g-dev check:check gnutls:libgnutls28-dev
# The flags are read when a recipe first needs them, never while this file is parsed: on a
# fresh machine `make demo` and `make test` install the -dev packages (deps) and then build
# in the same run. Every compile waits for $(BUILD)/.deps-ok (below), which names a missing
# module and its package; should pkg-config still fail, make stops with the same message
# rather than build with an empty flag. Each variable asks pkg-config once per make.
pkg_check = bash test/pkg-check.sh $(foreach m,$1,$(or $(filter $m:%,$(PKG_DEBS)),$m:?))
pkg_flags = $(shell pkg-config $1 $2 2>/dev/null)$(if $(filter 0,$(.SHELLSTATUS)),,$(error \
	$(or $(shell $(call pkg_check,$2) 2>&1),pkg-config $1 $2 failed)))
PKG_CFLAGS   = $(eval PKG_CFLAGS := $(call pkg_flags,--cflags,$(PKGS)))$(PKG_CFLAGS)
PKG_LIBS     = $(eval PKG_LIBS := $(call pkg_flags,--libs,$(PKGS)))$(PKG_LIBS)
CHECK_CFLAGS = $(eval CHECK_CFLAGS := $(call pkg_flags,--cflags,check))$(CHECK_CFLAGS)
CHECK_LIBS   = $(eval CHECK_LIBS := $(call pkg_flags,--libs,check))$(CHECK_LIBS)

WARN := -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes \
	-Wvla -Wwrite-strings -Wno-missing-field-initializers
HARDEN ?= -D_FORTIFY_SOURCE=2 -fstack-protector-strong -fPIE
OPT ?= -O2 -g
CFLAGS ?=
CFLAGS_USER := $(value CFLAGS)
CFLAGS += -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) $(HARDEN) -I. $(PKG_CFLAGS) -MMD -MP
ifeq ($(DEVELOPER),1)
CFLAGS += -Werror
endif
LDFLAGS += -pie -Wl,-z,relro,-z,now
# copy-binary puts the libraries beside the binary: RPATH (not RUNPATH, which the
# libraries' own dependencies would not see) $ORIGIN/lib finds them in any image.
LDFLAGS += -Wl,--disable-new-dtags,-rpath,'$$ORIGIN/lib'
LDLIBS  += $(PKG_LIBS) -lpthread -lm

LIB_SRC  := $(sort $(wildcard lib/*.c lib/engine/*.c lib/k8s/*.c lib/objstore/*.c lib/valkey/*.c))
API_SRC  := $(sort $(wildcard api/*.c))
CTRL_SRC := $(sort $(wildcard controller/*.c))
INST_SRC := $(sort $(wildcard instance/*.c))
CORE_SRC := $(LIB_SRC) $(API_SRC) $(CTRL_SRC) $(INST_SRC)
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o)
# kubectl-redis (plugin/): lib/ and api/ only, no role code (test/lint-includes.sh).
PLUGIN_SRC := $(sort $(wildcard plugin/*.c))
PLUGIN_OBJ := $(filter-out $(BUILD)/plugin/main.o,$(PLUGIN_SRC:%.c=$(BUILD)/%.o))
MAIN_OBJ := $(BUILD)/cmd/main.o
UNIT_SRC := $(sort $(wildcard test/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:test/unit/%.c=$(BUILD)/test/%)
UNIT_HELPER_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(filter-out $(UNIT_SRC),$(wildcard test/unit/*.c)))
.DEFAULT_GOAL := all
# Check binaries that `make test` runs; fragments below may add theirs.
TEST_BINS := $(UNIT_BIN)
# Fragments of test tools that live beside their sources (node agent, integration tests).
include $(sort $(wildcard test/*/*.mk test/integration/*/*.mk))
HEADERS  := $(sort $(wildcard lib/*.h lib/engine/*.h lib/k8s/*.h lib/objstore/*.h lib/valkey/*.h api/*.h controller/*.h instance/*.h plugin/*.h))

.PHONY: all help deps test unit asan valgrind vg-run lint fmt fmt-check hdr-check clean demo \
	env-build env-up env-down integration bench chaos fuzz image print-link
all: $(BUILD)/redis-operator $(BUILD)/kubectl-redis

help:
	@echo "make deps       install every Debian package the build, tests and demo need"
	@echo "make            build $(BUILD)/redis-operator"
	@echo "make test       deps + build + run every test layer (unit, integration)"
	@echo "make demo       deps + build + local Kubernetes + operator + a sample cluster"
	@echo "make asan       unit tests under ASan+UBSan;  make valgrind: under valgrind"
	@echo "make lint       clang-tidy, cppcheck, banned functions;  make fmt / fmt-check"
	@echo "make env-build  build (or reuse) the local control plane;  env-up / env-down"
	@echo "make image      the operator's OCI image: $(BUILD)/image/redis-operator-oci.tar"
	@echo "make fuzz       the libFuzzer harnesses (fuzz-smoke: 2 s each);  chaos, bench"
	@echo "                every test target, what it needs and takes: test/README.md"

# A CFLAGS from the environment is exported, so make expands it, flags and all, for every
# recipe: deps, which runs before the packages exist, gets the user's value alone.
# The binary's objects and libraries, for a test that links them its own way (copy-binary).
print-link:
	@echo $(MAIN_OBJ) $(CORE_OBJ) $(LDLIBS)

deps: CFLAGS = $(CFLAGS_USER)
deps:
	bash test/deps.sh

# Every compile waits for this check (order-only: it never makes anything rebuild). It
# runs on every make, in milliseconds. `make demo` and `make test` run deps before it
# (test/deps.sh returns at once when every package is there), so before any compile,
# with -j too. A stamp, not a goal: rules use `| $(BUILD)/.deps-ok`.
$(BUILD)/.deps-ok: FORCE $(if $(filter demo test,$(MAKECMDGOALS)),deps)
	@mkdir -p $(BUILD)
	@$(call pkg_check,$(PKGS))
	@touch $@

$(BUILD)/%.o: %.c | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	@echo "  CC    $<"
	@$(CC) $(CFLAGS) -c $< -o $@

# The version header is rewritten only when its text changes, so a new commit
# rebuilds main.o and nothing else.
$(BUILD)/version.h: FORCE | $(BUILD)/.deps-ok
	@mkdir -p $(BUILD)
	@printf '#define RO_VERSION "%s"\n#define RO_COMMIT "%s"\n' "$(VERSION)" "$(COMMIT)" > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(MAIN_OBJ): $(BUILD)/version.h
$(MAIN_OBJ): CFLAGS += -I$(BUILD)
.PHONY: FORCE
FORCE:
.SECONDARY:

$(BUILD)/test/unit/%.o: test/unit/%.c | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	@echo "  CC    $<"
	@$(CC) $(CFLAGS) $(CHECK_CFLAGS) -c $< -o $@

$(BUILD)/redis-operator: $(MAIN_OBJ) $(CORE_OBJ)
	@echo "  LINK  $@"
	@$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/kubectl-redis: $(BUILD)/plugin/main.o $(PLUGIN_OBJ) $(LIB_SRC:%.c=$(BUILD)/%.o) $(API_SRC:%.c=$(BUILD)/%.o)
	@echo "  LINK  $@"
	@$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# The plugin's unit tests link its objects, lib/ and api/, no role code (the shorter
# stem wins over the rule below).
$(BUILD)/test/test_plugin_%: $(BUILD)/test/unit/test_plugin_%.o $(UNIT_HELPER_OBJ) $(PLUGIN_OBJ) \
		$(LIB_SRC:%.c=$(BUILD)/%.o) $(API_SRC:%.c=$(BUILD)/%.o)
	@mkdir -p $(dir $@)
	@$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(CHECK_LIBS) $(LDLIBS)

$(BUILD)/test/test_%: $(BUILD)/test/unit/test_%.o $(UNIT_HELPER_OBJ) $(CORE_OBJ)
	@mkdir -p $(dir $@)
	@$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(CHECK_LIBS) $(LDLIBS)

# --- tests -------------------------------------------------------------------
unit: $(TEST_BINS) $(BUILD)/redis-operator
	@RESULTS=$(BUILD)/test-results bash test/run-unit.sh $(TEST_BINS)

integration: all
	@RESULTS=$(BUILD)/test-results bash test/run-integration.sh

test: all $(TEST_BINS) $(BUILD)/test/plugin-parse
	@RESULTS=$(BUILD)/test-results BUILD=$(BUILD) bash test/run-tests.sh $(TEST_BINS)

asan:
	$(MAKE) BUILD=build/asan OPT="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
		LDFLAGS="-fsanitize=address,undefined" unit

# Its own build without _FORTIFY_SOURCE: valgrind reports the fortified memmove
# (__memcpy_chk) as an overlapping memcpy.
valgrind:
	$(MAKE) BUILD=build/valgrind HARDEN="-fstack-protector-strong -fPIE" vg-run
vg-run: $(UNIT_BIN)
	@RESULTS=$(BUILD)/test-results VALGRIND=1 bash test/run-unit.sh $(UNIT_BIN)

# --- checks ------------------------------------------------------------------
TIDY_CHECKS := -*,clang-analyzer-*,-clang-analyzer-security.insecureAPI.*,-clang-analyzer-valist.*,\
	-clang-analyzer-optin.performance.Padding,bugprone-*,\
	-bugprone-easily-swappable-parameters,-bugprone-reserved-identifier,-bugprone-assignment-in-if-condition,\
	-bugprone-narrowing-conversions,-bugprone-implicit-widening-of-multiplication-result
BANNED := sprintf|vsprintf|strcpy|strcat|strtok|atoi|atol|atoll|gets|sscanf
lint: hdr-check $(BUILD)/version.h | $(BUILD)/.deps-ok
	@bash test/lint.sh "$(BANNED)" $(CORE_SRC) $(PLUGIN_SRC) cmd/main.c
	clang-tidy --quiet --warnings-as-errors='*' --checks='$(TIDY_CHECKS)' $(CORE_SRC) $(PLUGIN_SRC) cmd/main.c -- \
		$(filter-out -MMD -MP,$(CFLAGS)) -I$(BUILD)
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability --inline-suppr \
		--suppress=missingIncludeSystem -I. -I$(BUILD) $(CORE_SRC) $(PLUGIN_SRC) cmd/main.c

hdr-check: | $(BUILD)/.deps-ok
	@mkdir -p $(BUILD)/hdr
	@for h in $(HEADERS); do \
		echo "#include \"$$h\"" | $(CC) $(filter-out -MMD -MP,$(CFLAGS)) -x c -c - -o $(BUILD)/hdr/check.o || exit 1; \
	done; echo "hdr-check: $(words $(HEADERS)) headers compile alone"

FMT_SRC = $(shell git ls-files '*.c' '*.h')
fmt:
	clang-format -i $(FMT_SRC)
fmt-check:
	@clang-format --dry-run -Werror $(FMT_SRC) && echo "fmt-check: $(words $(FMT_SRC)) files clean"

# --- local Kubernetes environment -------------------------------------------
env-build:
	@bash test/env/build.sh
env-up: all
	@bash test/env/up.sh
env-down:
	@bash test/env/down.sh

demo: deps all image
	@IMAGE_OCI='$(abspath $(IMAGE_OCI))' IMAGE_REF='$(IMAGE_NAME):$(IMAGE_TAG)' bash test/demo.sh

# --- image -------------------------------------------------------------------
# The operator's OCI image (image/build.sh): an OCI image layout, tarred, made by umoci
# (built once from the Go module proxy into the cache by image/tool.sh). Reproducible: the
# same commit gives the same manifest digest. The tag is config/manager's, so that
# `kubectl apply -k config/default` names this image. Expanded only by the recipe.
IMAGE_NAME        ?= redis-operator
IMAGE_TAG         ?= $(shell sed -n 's/^ *newTag: *//p' config/manager/kustomization.yaml)
IMAGE_VERSION     ?= $(VERSION)
IMAGE_REVISION    ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
IMAGE_SOURCE      ?= $(or $(shell git config --get remote.origin.url 2>/dev/null),https://github.com/redis-operator/redis-operator)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
IMAGE_OCI         := $(BUILD)/image/redis-operator-oci.tar
image: $(BUILD)/redis-operator
	@IMAGE_NAME='$(IMAGE_NAME)' IMAGE_TAG='$(IMAGE_TAG)' IMAGE_VERSION='$(IMAGE_VERSION)' \
		IMAGE_REVISION='$(IMAGE_REVISION)' IMAGE_SOURCE='$(IMAGE_SOURCE)' \
		SOURCE_DATE_EPOCH='$(SOURCE_DATE_EPOCH)' bash image/build.sh $< $(IMAGE_OCI)

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name "*.d" 2>/dev/null)

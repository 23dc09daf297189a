# Sourced by test/integration/instance.sh (after lib.sh): customer ACL users against the
# operator's restrictions (instance/acl.h), on one engine per call.
#
#   acl_lockdown ENGINE CLUSTER
#
# A one-instance cluster whose spec.users hold every grant the CRD and the manager let
# through: two users, "app" and "Redis-Operator" (user names are case-sensitive, so
# that is another user). Each must get NOPERM for ACL, CONFIG, REPLICAOF, SLAVEOF,
# SHUTDOWN, MODULE, FAILOVER, CLIENT KILL/PAUSE of the operator, also inside MULTI, and
# must not authenticate as redis-operator; DEBUG is refused by the server before the
# ACL is read (enable-debug-command is the operator's), and SYNC/PSYNC would stream, so
# those are proved with ACL DRYRUN. Checked twice: users from the rendered redis.conf at
# boot, then the same users applied live by POST /v1/config (ACL SETUSER). The rules
# that would bypass the deny list (selectors, keywords in another case) are refused by
# /v1/config with the field named, and nothing is applied.

# Every grant a customer may write (the deny list comes after them): the CRD accepts
# them (test/data/api/cases/edge-user-rules-allowed.yaml) and redis 7.0 / valkey 8.0
# accept them in one ACL SETUSER.
ACL_GRANTS='"allcommands","AllCommands","+@all","+@admin","+@dangerous","+acl","+ACL|SETUSER",
"+config","+Config|Set","+client","+client|kill","+client|pause","+client|unpause",
"+client|no-evict","+replicaof","+slaveof","+shutdown","+debug","+module","+failover","+sync",
"+psync","+select|0","resetkeys","%RW~*","resetchannels","allchannels","clearselectors",
"skip-sanitize-payload"'
ACL_GRANTS=$(tr -d '\n' <<<"$ACL_GRANTS")

# Commands a customer must not run, one per line: as the user, NOPERM expected.
acl_forbidden() {
  cat <<'T'
ACL SETUSER redis-operator on
ACL DELUSER redis-operator
ACL LIST
CONFIG GET maxclients
CONFIG SET maxclients 10000
REPLICAOF NO ONE
SLAVEOF NO ONE
SHUTDOWN ABORT
MODULE LIST
FAILOVER ABORT
CLIENT KILL USER redis-operator
CLIENT KILL TYPE normal
CLIENT PAUSE 1 WRITE
CLIENT UNPAUSE
CLIENT NO-EVICT on
T
}
# The same decision asked of the ACL itself (as the operator: ACL DRYRUN USER CMD…),
# for what the user cannot be made to run directly.
acl_dryrun_forbidden() {
  cat <<'T'
DEBUG SLEEP 0
MODULE LOAD /nonexistent.so
SYNC
PSYNC ? -1
T
}

# Rules /v1/config must refuse ("RULES|index|reason"): each is a bypass on the server.
acl_bypasses() {
  cat <<'T'
["+@all","(+@all)"]|1|a selector
["(+@all","~*)"]|0|a selector
["~*","(~*","+config)"]|1|a selector
["+@all","NoPass"]|1|lets any password in
["+@all","NOPASS"]|1|lets any password in
["+@all","RESETPASS"]|1|removes the passwords
["+@all","Reset"]|1|resets the user
["+@all","On"]|1|sets the on/off state
["+@all","OFF"]|1|sets the on/off state
["+get (+@all)"]|0|one rule per element
T
}

acl_users_body() { # → the /v1/config body with both users and every grant
  echo "{\"users\":[{\"name\":\"app\",\"rules\":[$ACL_GRANTS]},{\"name\":\"Redis-Operator\",\"rules\":[$ACL_GRANTS]}]}"
}

# acl_denied NAME USER PASS: every forbidden command is refused for USER.
acl_denied() {
  local n=$1 u=$2 pw=$3 cmd out cmds
  [ "$(ucli "$n" "$u" "$pw" PING)" = PONG ] || { echo "$u cannot log in"; return 1; }
  mapfile -t cmds < <(acl_forbidden)
  for cmd in "${cmds[@]}"; do
    # shellcheck disable=SC2086 # one word per argument
    out=$(ucli "$n" "$u" "$pw" $cmd 2>&1)
    grep -q '^NOPERM' <<<"$out" || { echo "$u: $cmd: $out"; return 1; }
  done
  out=$(ucli "$n" "$u" "$pw" DEBUG SLEEP 0 2>&1)
  grep -qE '^(NOPERM|ERR DEBUG command not allowed)' <<<"$out" || { echo "$u: DEBUG: $out"; return 1; }
  mapfile -t cmds < <(acl_dryrun_forbidden)
  for cmd in "${cmds[@]}"; do
    # shellcheck disable=SC2086
    out=$(rcli "$n" ACL DRYRUN "$u" $cmd 2>&1)
    grep -q 'has no permissions to run' <<<"$out" || { echo "ACL DRYRUN $u $cmd: $out"; return 1; }
  done
  out=$(printf 'MULTI\nCONFIG GET maxclients\nACL SETUSER redis-operator on\nEXEC\n' | ucli "$n" "$u" "$pw" 2>&1)
  [ "$(grep -c '^NOPERM' <<<"$out")" = 2 ] && grep -q '^EXECABORT' <<<"$out" ||
    { echo "$u: MULTI: $out"; return 1; }
  for out in "$(ucli "$n" "$u" "$pw" AUTH redis-operator "$pw" 2>&1)" \
    "$(ucli "$n" "$u" "$pw" AUTH redis-operator "" 2>&1)" \
    "$(ucli "$n" "$u" "$pw" HELLO 3 AUTH redis-operator "$pw" 2>&1)"; do
    grep -q '^WRONGPASS' <<<"$out" || { echo "$u: AUTH as redis-operator: $out"; return 1; }
  done
  ucli "$n" "$u" "$pw" CLIENT INFO | grep -q " user=$u " || { echo "$u: CLIENT INFO"; return 1; }
}

# The operator's user is untouched and no customer user has a selector.
acl_operator_intact() { # NAME
  local n=$1
  [ "$(rcli "$n" PING)" = PONG ] || return 1
  rcli "$n" ACL LIST | grep -q '^user redis-operator on .*+@all$' || { rcli "$n" ACL LIST; return 1; }
  ! rcli "$n" ACL LIST | grep -v '^user redis-operator ' | grep -q '(' || { rcli "$n" ACL LIST; return 1; }
  [ "$(rcli "$n" ACL USERS | tr '\n' ' ')" = "Redis-Operator app default redis-operator " ] ||
    { rcli "$n" ACL USERS; return 1; }
}

acl_bypass_refused() { # NAME
  local n=$1 rules idx why out line lines
  mapfile -t lines < <(acl_bypasses)
  for line in "${lines[@]}"; do
    IFS='|' read -r rules idx why <<<"$line"
    out=$(post "$n" config "{\"users\":[{\"name\":\"x\",\"rules\":$rules}]}")
    if [ "${out%% *}" != 400 ]; then
      echo "$rules: $out"
      # say what the accepted rules gave away (x's password file exists)
      ucli "$n" x x-pw ACL SETUSER redis-operator on 2>&1 | sed 's/^/  ACL SETUSER as x: /'
      ucli "$n" x x-pw CONFIG GET maxclients 2>&1 | tr '\n' ' ' | sed 's/^/  CONFIG GET as x: /'
      return 1
    fi
    grep -qF "users[0].rules[$idx]: not allowed: $why" <<<"$out" || { echo "$rules: $out"; return 1; }
  done
  ! rcli "$n" ACL USERS | grep -qx x || { echo "a refused config was applied"; return 1; }
}

acl_lockdown() { # ENGINE CLUSTER
  local e=$1 c=$2 n=$2-1 u
  kretry apply -f - <<Y || return 1
apiVersion: redis.io/v1
kind: RedisCluster
metadata: {name: $c}
spec:
  instances: 1
  engine: $e
  storage: {type: emptyDir}
  failover: {leaseDuration: 4s, renewDeadline: 2s, renewPeriod: 500ms, switchoverTimeout: 5s}
  users:
  - {name: app, rules: [$ACL_GRANTS], passwordSecrets: [{name: app-pw}]}
  - {name: Redis-Operator, rules: [$ACL_GRANTS], passwordSecrets: [{name: ro-pw}]}
Y
  set_primary "$c" "$n" >/dev/null
  mkpod "$n" "$c" >/dev/null
  for u in app Redis-Operator x; do
    mkdir -p "$W/$n/users/$u" && printf '%s' "$u-pw" >"$W/$n/users/$u/password"
  done
  start_mgr "$n" "$c"
  poll 20 ready "$n" || { st "$n"; return 1; }
  # users from redis.conf, rendered at boot
  poll 10 eq PONG ucli "$n" app app-pw PING || { echo "app cannot log in"; return 1; }
  acl_denied "$n" app app-pw && acl_denied "$n" Redis-Operator Redis-Operator-pw || return 1
  acl_operator_intact "$n" || return 1
  # the same users applied live (ACL SETUSER), then every bypass refused
  post_ok "$n" config "$(acl_users_body)" || { post "$n" config "$(acl_users_body)"; return 1; }
  acl_denied "$n" app app-pw && acl_denied "$n" Redis-Operator Redis-Operator-pw || return 1
  acl_bypass_refused "$n" || return 1
  acl_operator_intact "$n" || return 1
  [ "$(stop_mgr "$n")" = 0 ]
}

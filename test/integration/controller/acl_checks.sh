# Sourced by test/integration/controller.sh: spec.aclConfigSecret, the ACL file of a Secret
# (key acl) whose users exist on every data pod, follow the Secret live (no restart), and
# cannot redefine the operator's users or spec.users' (api/acl_file.h,
# instance/acl_apply.c, controller/acl_config.c).

# acl_put NS TEXT: the Secret acl-file holds TEXT under the key acl
acl_put() {
  printf '%s' "$2" >"$W/acl-$1"
  $K -n "$1" create secret generic acl-file --from-file=acl="$W/acl-$1" --dry-run=client -o yaml |
    $K -n "$1" apply -f - >/dev/null
}
# acl_as NS NAME USER PASSWORD ARGS...: one command as USER on every data pod, the answers one a line
acl_as() {
  local ns=$1 name=$2 user=$3 pw=$4 ip; shift 4
  for ip in $(pod_ips $ns $name); do
    timeout 3 redis-cli -h "$ip" --user "$user" --pass "$pw" --no-auth-warning "$@" 2>&1 | head -1
  done
}
# acl_all NS NAME WANT USER PASSWORD ARGS...: every pod answers WANT (an ERE the answer starts with)
acl_all() {
  local ns=$1 name=$2 want=$3 a; shift 3
  a=$(acl_as $ns $name "$@")
  [ -n "$a" ] && ! printf '%s\n' "$a" | grep -Eqv "^($want)"
}
acl_msg() { rc "$1" "$2" '{.status.conditions[?(@.type=="AclConfigAccepted")].message}'; }
# the data pods' uids and server pids: a restart changes one of them
acl_print() {
  local p
  for p in $($K -n "$1" get pods -l "redis.io/cluster=$2" -o name | sort); do
    echo "$($K -n "$1" get "$p" -o jsonpath='{.metadata.uid}') $(server_hostpid "$1" "${p#pod/}")"
  done
}

# The file's users on every pod with their rules and the deny list after them; a change of
# the Secret (a rule changed, a line added, one removed) reaches every pod live; a refused
# file (a spec.users name, the operator's user in upper case) changes nothing, and the
# condition and a Warning Event name the Secret, the line and why, never a password.
t_acl_config() {
  local ns=$RUN-acl t0 before
  newns $ns
  acl_put $ns "user reader on >rpw ~r:* +get +exists
user admin on >apw ~* &* +@all
"
  $K -n $ns create secret generic app-pw --from-literal=password=app-pw >/dev/null
  mkcluster $ns acl 2 "  aclConfigSecret: {name: acl-file}
  users: [{name: app, enabled: true, rules: [\"+ping\"], passwordSecrets: [{name: app-pw}]}]"
  poll 120 ready $ns acl || fail "not Ready: $(rc $ns acl '{.status.phase} {.status.phaseReason}')"
  [ "$(cond $ns acl AclConfigAccepted)" = True ] || fail "condition: $(acl_msg $ns acl)"
  [ -z "$(rc $ns acl '{.status.conditions[?(@.type=="UnsupportedFields")].status}')" ] ||
    fail "aclConfigSecret still reported unsupported"
  poll 30 acl_all $ns acl 0 reader rpw EXISTS r:1 ||
    fail "reader cannot read r:1: $(acl_as $ns acl reader rpw EXISTS r:1); users: $(opcli $ns acl "$(primary $ns acl)" ACL USERS | tr '\n' ' ')"
  acl_all $ns acl NOPERM reader rpw SET r:1 v || fail "reader may SET: $(acl_as $ns acl reader rpw SET r:1 v)"
  acl_all $ns acl NOPERM reader rpw EXISTS other || fail "reader may read outside ~r:*"
  acl_all $ns acl NOPERM admin apw CONFIG GET maxmemory || fail "admin (+@all) may run CONFIG: the deny list is not last"
  acl_all $ns acl NOPERM admin apw ACL LIST || fail "admin (+@all) may run ACL"
  acl_all $ns acl 'OK|READONLY' admin apw SET k v || fail "admin cannot SET: $(acl_as $ns acl admin apw SET k v)"
  before=$(acl_print $ns acl)
  # live: reader may SET now, admin's line removed, a new user
  t0=$(ms)
  acl_put $ns "user reader on >rpw ~r:* +get +exists +set
user newbie on >npw +ping
"
  poll 60 acl_all $ns acl PONG newbie npw PING || fail "newbie not defined after the change: $(acl_as $ns acl newbie npw PING)"
  poll 10 acl_all $ns acl 'OK|READONLY' reader rpw SET r:1 v || fail "reader's new rule not applied"
  poll 10 acl_all $ns acl "AUTH failed" admin apw PING || fail "admin's line removed, the user stays: $(acl_as $ns acl admin apw PING)"
  note "ACL file changed: every pod follows it $(( $(ms) - t0 )) ms after the Secret update"
  [ "$(acl_print $ns acl)" = "$before" ] || fail "a pod or server restarted for an ACL file change"
  # refused: a spec.users name on line 3; nothing of the file applies (no newbie2)
  acl_put $ns "user reader on >rpw ~r:* +get +exists +set
user newbie2 on >n2pw +ping
user app on >hunter2 ~* +@all
"
  poll 30 eval '[ "$(cond '$ns' acl AclConfigAccepted)" = False ]' || fail "refused file: condition $(acl_msg $ns acl)"
  case "$(acl_msg $ns acl)" in *"Secret acl-file"*"line 3: user app is defined by spec.users"*) ;; *) fail "message: $(acl_msg $ns acl)" ;; esac
  poll 10 eval "$K -n $ns get events.events.k8s.io -o jsonpath='{range .items[?(@.reason==\"AclConfigRefused\")]}{.type} {.note}{\"\\n\"}{end}' | grep -q '^Warning .*line 3'" ||
    fail "no AclConfigRefused Warning naming line 3"
  sleep 6 # the managers' secret poll (2s) and the kubelet's refresh, several times over
  acl_all $ns acl "AUTH failed" newbie2 n2pw PING || fail "a refused file was half applied: newbie2 exists"
  acl_all $ns acl PONG newbie npw PING || fail "the users applied before did not stay"
  ! $K -n $ns get rediscluster acl -o yaml | grep -q hunter2 || fail "a password of the file in the status"
  ! $K -n $ns get events.events.k8s.io -o yaml | grep -q hunter2 || fail "a password of the file in an Event"
  # the operator's user in upper case is the operator's too
  acl_put $ns "user reader on >rpw ~r:* +get +exists
USER REDIS-OPERATOR ON NOPASS ~* +@ALL
"
  poll 30 eval 'case "$(acl_msg '$ns' acl)" in *"line 2: user REDIS-OPERATOR belongs to the operator"*) true ;; *) false ;; esac' ||
    fail "upper-case operator user: $(acl_msg $ns acl)"
  [ "$(opcli $ns acl "$(primary $ns acl)" PING)" = PONG ] || fail "the operator's user broken"
  # accepted again: the condition turns True, the file applies
  acl_put $ns "user reader on >rpw ~r:* +get +exists
"
  poll 30 eval '[ "$(cond '$ns' acl AclConfigAccepted)" = True ]' || fail "accepted again: $(acl_msg $ns acl)"
  poll 30 acl_all $ns acl "AUTH failed" newbie npw PING || fail "newbie's line removed, the user stays"
  acl_all $ns acl NOPERM reader rpw SET r:1 v || fail "reader may still SET"
  # a rule only the server refuses (an unknown command): the controller's parser accepts
  # the file, each manager's scratch-user check refuses all of it (no newbie3)
  acl_put $ns "user reader on >rpw ~r:* +get +exists +set
user newbie3 on >n3pw +ping
user bad on >bpw +nosuchcommand
"
  sleep 8
  acl_all $ns acl "AUTH failed" newbie3 n3pw PING ||
    fail "a file the server refuses was half applied: newbie3's answers: $(acl_as $ns acl newbie3 n3pw PING | tr '\n' '|')"
  acl_all $ns acl "AUTH failed" bad bpw PING ||
    fail "the refused line's user exists: $(acl_as $ns acl bad bpw PING | tr '\n' '|')"
  acl_all $ns acl NOPERM reader rpw SET r:1 v || fail "reader changed by a refused file"
  [ "$(acl_print $ns acl)" = "$before" ] || fail "a pod or server restarted"
}

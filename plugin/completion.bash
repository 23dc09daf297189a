# bash completion for the kubectl-redis command: verbs, then clusters, then pods (or
# on/off, json/yaml, files), in the namespace of a -n/--namespace on the line.
#   . plugin/completion.bash
# (`kubectl redis <TAB>` goes through kubectl's own plugin completion, which wants a
# kubectl_complete-redis executable: not provided.)
# The verb list is checked against the plugin's verb table by test_plugin_args.
_kubectl_redis_verbs="status switchover promote hibernate restart reload approve fence unfence backup report logs"
_kubectl_redis_flags="--namespace -n --kubeconfig --context --help"

# The words that are not flags or flag values, and -n's value, of the line so far.
_kubectl_redis_words() {
	local i w
	_kr_args=() _kr_ns=()
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case "$w" in
		-n | --namespace) _kr_ns=(-n "${COMP_WORDS[i+1]:-}"); i=$((i + 1)) ;;
		--namespace=*) _kr_ns=(-n "${w#*=}") ;;
		--kubeconfig | --context | -o | --output | --name) i=$((i + 1)) ;;
		-*) ;;
		*) _kr_args+=("$w") ;;
		esac
	done
}

_kubectl_redis() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} verb
	_kubectl_redis_words
	verb=${_kr_args[0]:-}
	case "$prev" in
	-n | --namespace)
		mapfile -t COMPREPLY < <(compgen -W "$(kubectl get namespaces -o name 2>/dev/null | sed 's|^namespace/||')" -- "$cur")
		return ;;
	-o | --output)
		if [ "$verb" = status ]; then
			mapfile -t COMPREPLY < <(compgen -W "json yaml" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		fi
		return ;;
	--kubeconfig)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return ;;
	esac
	case ${#_kr_args[@]} in
	0) mapfile -t COMPREPLY < <(compgen -W "$_kubectl_redis_verbs $_kubectl_redis_flags" -- "$cur") ;;
	1) mapfile -t COMPREPLY < <(compgen -W "$(kubectl "${_kr_ns[@]}" get redisclusters -o name 2>/dev/null | sed 's|^.*/||')" -- "$cur") ;;
	*)
		if [ "$verb" = hibernate ]; then
			mapfile -t COMPREPLY < <(compgen -W "on off" -- "$cur")
		elif [ "$verb" = restart ] || [ "$verb" = switchover ] || [ "$verb" = promote ]; then
			mapfile -t COMPREPLY < <(compgen -W "$(kubectl "${_kr_ns[@]}" get pods -l redis.io/cluster="${_kr_args[1]}" -o name 2>/dev/null | sed 's|^pod/||')" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "$(kubectl "${_kr_ns[@]}" get pods -l redis.io/cluster="${_kr_args[1]}" -o name 2>/dev/null | sed 's|^pod/||') all" -- "$cur")
		fi ;;
	esac
}
complete -F _kubectl_redis kubectl-redis

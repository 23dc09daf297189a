/*
 * spec: the pod spec as the runtime keeps it. rt_pod_create validates the caller's spec
 * (names safe in paths and interface-free, mounts naming volumes, absolute paths, sane
 * probes), then deep-copies it so the caller may free its own; probes get Kubernetes'
 * defaults on the way. Also here: a container's argv and environment, built by the
 * Kubernetes rules from the spec and the image map.
 *
 * Strings and vectors are heap-allocated; vectors (argv, env) are NULL-terminated.
 */
#include "runtime_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imagemap.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/err.h"

#define UID_MAX_LEN      128
#define NAME_MAX_LEN     63 /* a container name is a DNS label */
#define DEFAULT_PATH_ENV "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* --- vectors ------------------------------------------------------------------------------- */

struct strv {
	char **v;
	size_t n;
};

static void strv_push(struct strv *s, char *str)
{
	s->v = xreallocarray(s->v, s->n + 2, sizeof(*s->v));
	s->v[s->n++] = str;
	s->v[s->n] = NULL;
}

static void strv_push_all(struct strv *s, char *const *v)
{
	for (; v && *v; v++)
		strv_push(s, xstrdup(*v));
}

void rt_strv_free(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}

static char **strv_dup(char *const *v)
{
	struct strv s = { NULL, 0 };

	if (!v)
		return NULL;
	strv_push_all(&s, v);
	if (!s.v)
		s.v = xcalloc(1, sizeof(*s.v));
	return s.v;
}

static char *sdup(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

/* --- copy and release ------------------------------------------------------------------------- */

static void probe_copy(struct rt_probe *d, const struct rt_probe *s)
{
	*d = *s;
	d->path = sdup(s->path);
	d->exec_argv = strv_dup(s->exec_argv);
	rt_probe_defaults(d);
}

static void container_copy(struct rt_container *d, const struct rt_container *s)
{
	*d = *s;
	d->name = sdup(s->name);
	d->image = sdup(s->image);
	d->command = strv_dup(s->command);
	d->args = strv_dup(s->args);
	d->working_dir = sdup(s->working_dir);
	d->pre_stop_exec = strv_dup(s->pre_stop_exec);
	d->env = s->n_env ? xcalloc(s->n_env, sizeof(*d->env)) : NULL;
	for (size_t i = 0; i < s->n_env; i++) {
		d->env[i].name = sdup(s->env[i].name);
		d->env[i].value = sdup(s->env[i].value ? s->env[i].value : "");
	}
	d->mounts = s->n_mounts ? xcalloc(s->n_mounts, sizeof(*d->mounts)) : NULL;
	for (size_t i = 0; i < s->n_mounts; i++) {
		d->mounts[i] = s->mounts[i];
		d->mounts[i].volume = sdup(s->mounts[i].volume);
		d->mounts[i].mount_path = sdup(s->mounts[i].mount_path);
		d->mounts[i].sub_path = sdup(s->mounts[i].sub_path);
	}
	probe_copy(&d->startup, &s->startup);
	probe_copy(&d->liveness, &s->liveness);
	probe_copy(&d->readiness, &s->readiness);
}

static struct rt_container *containers_copy(const struct rt_container *s, size_t n)
{
	struct rt_container *d = n ? xcalloc(n, sizeof(*d)) : NULL;

	for (size_t i = 0; i < n; i++)
		container_copy(&d[i], &s[i]);
	return d;
}

void rt_spec_copy(struct rt_pod_spec *d, const struct rt_pod_spec *s)
{
	*d = *s;
	d->uid = sdup(s->uid);
	d->ns = sdup(s->ns);
	d->name = sdup(s->name);
	d->volumes = s->n_volumes ? xcalloc(s->n_volumes, sizeof(*d->volumes)) : NULL;
	for (size_t i = 0; i < s->n_volumes; i++) {
		d->volumes[i] = s->volumes[i];
		d->volumes[i].name = sdup(s->volumes[i].name);
		d->volumes[i].host_path = sdup(s->volumes[i].host_path);
	}
	d->init = containers_copy(s->init, s->n_init);
	d->containers = containers_copy(s->containers, s->n_containers);
}

static void probe_release(struct rt_probe *p)
{
	free(p->path);
	rt_strv_free(p->exec_argv);
}

static void container_release(struct rt_container *c)
{
	free(c->name);
	free(c->image);
	rt_strv_free(c->command);
	rt_strv_free(c->args);
	free(c->working_dir);
	rt_strv_free(c->pre_stop_exec);
	for (size_t i = 0; i < c->n_env; i++) {
		free(c->env[i].name);
		free(c->env[i].value);
	}
	free(c->env);
	for (size_t i = 0; i < c->n_mounts; i++) {
		free(c->mounts[i].volume);
		free(c->mounts[i].mount_path);
		free(c->mounts[i].sub_path);
	}
	free(c->mounts);
	probe_release(&c->startup);
	probe_release(&c->liveness);
	probe_release(&c->readiness);
}

void rt_pod_spec_release(struct rt_pod_spec *s)
{
	if (!s)
		return;
	free(s->uid);
	free(s->ns);
	free(s->name);
	for (size_t i = 0; i < s->n_volumes; i++) {
		free(s->volumes[i].name);
		free(s->volumes[i].host_path);
	}
	free(s->volumes);
	for (size_t i = 0; i < s->n_init; i++)
		container_release(&s->init[i]);
	free(s->init);
	for (size_t i = 0; i < s->n_containers; i++)
		container_release(&s->containers[i]);
	free(s->containers);
	memset(s, 0, sizeof(*s));
}

/* --- validation ------------------------------------------------------------------------------- */

static bool uid_is_valid(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n > UID_MAX_LEN || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

static bool name_is_valid(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n > NAME_MAX_LEN || s[0] == '-' || s[n - 1] == '-')
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == n;
}

static bool is_abs(const char *p)
{
	return p && p[0] == '/';
}

static int probe_validate(const struct rt_probe *p, const char *where, const char *which,
                          struct err *e)
{
	bool needs_port = p->kind == RT_PROBE_HTTP || p->kind == RT_PROBE_TCP;

	if (p->kind < RT_PROBE_NONE || p->kind > RT_PROBE_EXEC)
		return err_set(e, -EINVAL, "%s.%s: unknown probe kind %d", where, which, p->kind);
	if (needs_port && (p->port < 1 || p->port > 65535))
		return err_set(e, -EINVAL, "%s.%s.port: %d is not in 1..65535", where, which,
		               p->port);
	if (p->kind == RT_PROBE_EXEC && (!p->exec_argv || !p->exec_argv[0]))
		return err_set(e, -EINVAL, "%s.%s.exec.command: empty", where, which);
	return 0;
}

static const struct rt_volume *volume_named(const struct rt_pod_spec *s, const char *name)
{
	for (size_t i = 0; name && i < s->n_volumes; i++)
		if (!strcmp(s->volumes[i].name, name))
			return &s->volumes[i];
	return NULL;
}

static int mounts_validate(const struct rt_pod_spec *s, const struct rt_container *c,
                           const char *where, struct err *e)
{
	for (size_t i = 0; i < c->n_mounts; i++) {
		const struct rt_mount *m = &c->mounts[i];

		if (!volume_named(s, m->volume))
			return err_set(e, -EINVAL, "%s.volumeMounts[%zu].name: no volume %s", where,
			               i, m->volume ? m->volume : "(null)");
		if (!is_abs(m->mount_path))
			return err_set(e, -EINVAL,
			               "%s.volumeMounts[%zu].mountPath: must be absolute", where,
			               i);
		if (m->sub_path && !rt_sub_path_is_valid(m->sub_path))
			return err_set(e, -EINVAL,
			               "%s.volumeMounts[%zu].subPath: must be relative, without ..",
			               where, i);
	}
	return 0;
}

/* Container names must be unique across init and regular containers. */
static bool name_taken(const struct rt_pod_spec *s, const struct rt_container *c)
{
	for (size_t i = 0; i < s->n_init; i++)
		if (&s->init[i] != c && !strcmp(s->init[i].name, c->name))
			return true;
	for (size_t i = 0; i < s->n_containers; i++)
		if (&s->containers[i] != c && !strcmp(s->containers[i].name, c->name))
			return true;
	return false;
}

static int container_validate(const struct rt_pod_spec *s, const struct rt_container *c,
                              const char *where, struct err *e)
{
	int rc;

	if (!name_is_valid(c->name))
		return err_set(e, -EINVAL, "%s.name: must be a DNS label", where);
	if (name_taken(s, c))
		return err_set(e, -EINVAL, "%s.name: %s is used twice", where, c->name);
	if (!c->image || !c->image[0])
		return err_set(e, -EINVAL, "%s.image: empty", where);
	if (c->working_dir && !is_abs(c->working_dir))
		return err_set(e, -EINVAL, "%s.workingDir: must be absolute", where);
	for (size_t i = 0; i < c->n_env; i++)
		if (!c->env[i].name || !c->env[i].name[0] || strchr(c->env[i].name, '='))
			return err_set(e, -EINVAL, "%s.env[%zu].name: empty or has '='", where, i);
	if ((rc = mounts_validate(s, c, where, e)) ||
	    (rc = probe_validate(&c->startup, where, "startupProbe", e)) ||
	    (rc = probe_validate(&c->liveness, where, "livenessProbe", e)) ||
	    (rc = probe_validate(&c->readiness, where, "readinessProbe", e)))
		return rc;
	return 0;
}

static int volumes_validate(const struct rt_pod_spec *s, struct err *e)
{
	for (size_t i = 0; i < s->n_volumes; i++) {
		const struct rt_volume *v = &s->volumes[i];

		if (!v->name || !v->name[0] || volume_named(s, v->name) != v)
			return err_set(e, -EINVAL, "spec.volumes[%zu].name: empty or used twice",
			               i);
		if (v->kind != RT_VOL_DIR || !is_abs(v->host_path))
			return err_set(e, -EINVAL, "spec.volumes[%zu]: wants an absolute host dir",
			               i);
	}
	return 0;
}

int rt_spec_validate(const struct rt_pod_spec *s, struct err *e)
{
	char where[64];
	int rc;

	if (!uid_is_valid(s->uid))
		return err_set(e, -EINVAL, "metadata.uid: empty, too long or not [A-Za-z0-9._-]");
	if (!s->name || !s->name[0] || !s->ns || !s->ns[0])
		return err_set(e, -EINVAL, "metadata: name and namespace are required");
	if (s->n_containers == 0)
		return err_set(e, -EINVAL, "spec.containers: at least one is required");
	if (s->restart_policy < RT_RESTART_ALWAYS || s->restart_policy > RT_RESTART_NEVER ||
	    s->grace_period_s < 0)
		return err_set(e, -EINVAL, "spec: bad restartPolicy or grace period");
	if ((rc = volumes_validate(s, e)))
		return rc;
	for (size_t i = 0; i < s->n_init; i++) {
		snprintf(where, sizeof(where), "spec.initContainers[%zu]", i);
		if ((rc = container_validate(s, &s->init[i], where, e)))
			return rc;
	}
	for (size_t i = 0; i < s->n_containers; i++) {
		snprintf(where, sizeof(where), "spec.containers[%zu]", i);
		if ((rc = container_validate(s, &s->containers[i], where, e)))
			return rc;
	}
	return 0;
}

/* --- argv and environment --------------------------------------------------------------------- */

static const char *env_lookup(char *const *envp, const char *name, size_t len)
{
	for (; envp && *envp; envp++)
		if (!strncmp(*envp, name, len) && (*envp)[len] == '=')
			return *envp + len + 1;
	return NULL;
}

char *rt_expand(const char *s, char *const *envp)
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);

	while (*s) {
		const char *close, *val;

		if (s[0] != '$' || !s[1]) {
			buf_append_char(&b, *s++);
			continue;
		}
		if (s[1] != '(') { /* "$$" is "$"; "$x" stays */
			buf_append(&b, s, s[1] == '$' ? 1 : 2);
			s += 2;
			continue;
		}
		close = strchr(s + 2, ')');
		if (!close) { /* unterminated: the rest is literal */
			buf_append_str(&b, s);
			break;
		}
		val = env_lookup(envp, s + 2, (size_t)(close - s - 2));
		if (val && close > s + 2)
			buf_append_str(&b, val);
		else
			buf_append(&b, s, (size_t)(close - s + 1));
		s = close + 1;
	}
	return buf_detach(&b, NULL);
}

/* Sets NAME=value in s, replacing an earlier NAME. */
static void env_set(struct strv *s, const char *name, const char *value)
{
	size_t len = strlen(name);
	char *entry = xasprintf("%s=%s", name, value);

	for (size_t i = 0; i < s->n; i++) {
		if (!strncmp(s->v[i], name, len) && s->v[i][len] == '=') {
			free(s->v[i]);
			s->v[i] = entry;
			return;
		}
	}
	strv_push(s, entry);
}

char **rt_build_env(const struct rt_pod *pod, const struct rt_ctr *c)
{
	struct strv s = { NULL, 0 };

	strv_push(&s, xstrdup(DEFAULT_PATH_ENV));
	for (char **p = c->image ? c->image->env : NULL; p && *p; p++) {
		char *eq = strchr(*p, '=');
		char *name = xstrndup(*p, (size_t)(eq - *p));

		env_set(&s, name, eq + 1);
		free(name);
	}
	env_set(&s, "HOSTNAME", pod->spec.name);
	env_set(&s, "HOME", c->spec->run_as_user > 0 ? "/" : "/root");
	for (size_t i = 0; i < c->spec->n_env; i++) {
		char *val = rt_expand(c->spec->env[i].value, s.v);

		env_set(&s, c->spec->env[i].name, val);
		free(val);
	}
	return s.v;
}

int rt_build_argv(const struct rt_ctr *c, char *const *envp, char ***out, struct err *e)
{
	const struct imagemap_entry *img = c->image;
	struct strv s = { NULL, 0 };

	if (c->spec->command) {
		for (char **p = c->spec->command; *p; p++)
			strv_push(&s, rt_expand(*p, envp));
	} else if (img) {
		strv_push_all(&s, img->entrypoint);
	}
	if (c->spec->args) {
		for (char **p = c->spec->args; *p; p++)
			strv_push(&s, rt_expand(*p, envp));
	} else if (!c->spec->command && img) {
		strv_push_all(&s, img->cmd);
	}
	if (!s.n)
		return err_set(e, -EINVAL,
		               "no command specified (neither the container nor image %s has one)",
		               c->spec->image);
	*out = s.v;
	return 0;
}

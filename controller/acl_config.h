/*
 * acl_config: spec.aclConfigSecret as the controller sees it. The instance managers
 * apply the file (instance/acl_apply.c); the controller reads the same Secret, checks it
 * with the same parser (api/acl_file.h) and reports the verdict on the cluster: the
 * condition CTL_COND_ACL_CONFIG (only when the field is set: True, accepted; False, the
 * Secret or key missing or a line refused, naming the Secret, the line and the reason)
 * and a Warning Event CTL_REASON_ACL_REFUSED whenever a refusal's message changes. A
 * refused file is applied by no manager: the users it defined last stay as they were.
 */
#ifndef REDIS_OPERATOR_CONTROLLER_ACL_CONFIG_H
#define REDIS_OPERATOR_CONTROLLER_ACL_CONFIG_H

#include <stdbool.h>

#include "api/rediscluster.h"
#include "controller/actions.h"
#include "controller/view.h"
#include "lib/k8s/client.h"

#define CTL_COND_ACL_CONFIG    "AclConfigAccepted"
#define CTL_REASON_ACL_REFUSED "AclConfigRefused"
#define CTL_REASON_ACL_OK      "AclConfigAccepted"
/* The user's Secret is in no cache and its changes wake no reconcile: while the field is
 * set, the cluster is looked at again this often, so the verdict follows the Secret. */
#define CTL_ACL_CONFIG_RECHECK_MS 10000

/*
 * Reads spec.aclConfigSecret's Secret now and checks its key acl: NULL when the field is
 * unset, else a malloc'd verdict in *msg with *ok (accepted: how many users it defines;
 * refused: the Secret, "line N: why"). Never quotes a rule. API errors other than a
 * missing Secret: NULL (nothing is reported until it can be read).
 */
char *ctl_acl_config_check(struct k8s_client *kube, const struct api_redis_cluster *rc, bool *ok);
/* The Warning Event for a refusal the cluster's status does not show yet; a requeue
 * after CTL_ACL_CONFIG_RECHECK_MS while the field is set. */
void ctl_acl_config_event(const struct ctl_view *v, struct ctl_plan *p);

#endif

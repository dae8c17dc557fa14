/*
 * The names the enforcer shares with the objects of a cluster, in one place: the five
 * gpureclaim.io/ annotation and label keys it reads and writes, and the namespaces it never
 * acts in unless told otherwise. Users type these names into kubectl and manifests, and the
 * action engine, the Kubernetes backend, `restore`, the webhook texts and the RBAC check all
 * read them; defined once here, none of those modules includes another only for a string.
 * docs/action-lifecycle.md says what each annotation means to a workload's owner.
 */
#ifndef GPURECLAIM_ANNOT_H
#define GPURECLAIM_ANNOT_H

/* Label (or annotation) `gpureclaim.io/exempt=true` on a workload or any object of its owner
   chain: never acted on (act.h). */
#define ANNOT_EXEMPT "gpureclaim.io/exempt"

/* An owner's request for time, `gpureclaim.io/keep-until: <RFC 3339>` (keep.h). */
#define ANNOT_KEEP_UNTIL "gpureclaim.io/keep-until"

/* The notice the engine leaves on the object it will act on, as JSON (notice.h). */
#define ANNOT_NOTICE "gpureclaim.io/reclaim-notice"

/* The replica count a scale to zero recorded before it, which `restore` scales back to
   (kube_scale_to_zero, kube.h). */
#define ANNOT_REPLICAS_BEFORE "gpureclaim.io/replicas-before-reclaim"

/* Written by `restore` on the object it brought back: when it did (RFC 3339). */
#define ANNOT_RESTORED_AT "gpureclaim.io/restored-at"

/* --enforce.protected-namespaces' default: nothing in these is ever acted on (act.h, perm.h). */
#define ANNOT_PROTECTED_DEFAULT "kube-system,kube-public,kube-node-lease,gpureclaim"

#endif

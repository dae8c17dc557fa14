/*
 * GPU pressure as the cluster reports it: whether something waits for a GPU resource, read
 * from the Kubernetes answers that say so (the scheduler's PodScheduled=False/Unschedulable
 * message of Pending pods and their requests; Kueue's QuotaReserved=False message of
 * Workloads held for quota), and the one comparison of resource names used for it and by
 * decide.c.
 *
 * Why a comparison of its own: kube-state-metrics writes extended resources sanitized
 * (`amd.com/gpu` -> `amd_com_gpu`, docs/decision-semantics.md §9.1) while the scheduler, Kueue,
 * pod specs and gpureclaim's exporter keep the raw name, so every place a rule's resource
 * meets a name from the API compares the two after the same sanitizing. Two raw names that
 * sanitize alike (`amd.com/gpu`, `amd_com/gpu`, `amd.com_gpu`) cannot be told apart that way:
 * when an answer holds more than one, or one that is not the rule's own raw name, which one
 * the rule means is unknown, and nothing is confirmed (the principle: in doubt, keep).
 *
 * Pure: no I/O; kube.c lists the objects and hands the answers here, act_kube.c decides what
 * an answer means for an action, fuzz/fuzz_pressure.c reaches every parser.
 */
#ifndef GPURECLAIM_PRESSURE_H
#define GPURECLAIM_PRESSURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Prometheus' label-name sanitizing as kube-state-metrics applies it to resource names:
 * every byte outside [A-Za-z0-9_] becomes '_'. `out` holds at most len - 1 bytes (the rest
 * is cut) and is always terminated.
 */
void pressure_sanitize(const char *in, char *out, size_t len);

/* Whether `a` and `b` are the same resource name after pressure_sanitize (no length limit). */
bool pressure_same(const char *a, const char *b);

/* Whether `name` is already in sanitized form ("amd_com_gpu"): it then names no raw name. */
bool pressure_is_sanitized(const char *name);

#define PRESSURE_NAMES_MAX 4
#define PRESSURE_NAME_MAX  320 /* a qualified resource name: 253 prefix, '/', 63 name */

/*
 * What one list answer says about `resource`. `names` are the distinct raw names met in
 * the evidence counted (messages and requests) that read as `resource` once sanitized, in
 * the order met (at most PRESSURE_NAMES_MAX kept; `nnames` counts on). `ambiguous` is set
 * when those names, with `resource` itself when it is a raw name, are more than one: then
 * `count` and `requested` are 0 (pressure_ambiguity says why).
 */
struct pressure_demand {
    size_t count;      /* Pending pods or Kueue Workloads waiting for the resource */
    int64_t requested; /* Pending pods: the sum of their effective requests of it */
    char names[PRESSURE_NAMES_MAX][PRESSURE_NAME_MAX];
    size_t nnames;
    bool ambiguous;
};

/*
 * A PodList: the pods that wait for `resource` according to the scheduler (phase Pending, not
 * terminating, PodScheduled False with reason Unschedulable and a message naming
 * "Insufficient <name>" for a name that is `resource` after sanitizing), and the sum of their
 * effective requests of it: max(sum over containers, largest init container), each container's
 * requests (limits when it has no request) of every key that is `resource` after
 * sanitizing. 0, or -1 with a message ('items[N]: ...') and an empty result.
 */
int pressure_parse_pending(const char *body, size_t len, const char *resource,
                           struct pressure_demand *out, char *err, size_t errlen);

/*
 * A Kueue WorkloadList: how many Workloads wait for quota of `resource`: a condition
 * QuotaReserved False whose message says "insufficient unused quota for <name> in flavor "
 * (Kueue's wording) for a name that is `resource` after sanitizing, and none of: QuotaReserved
 * True, Finished True, spec.active false, a deletionTimestamp, or a uid, controller owner uid
 * or kueue.x-k8s.io/job-uid label among `skip_uids` (the reclaim candidate's own chain: its
 * own Workload is no demand). The same list at kueue.x-k8s.io v1beta1 and v1beta2: these
 * fields did not change. 0, or -1 with a message and an empty result.
 */
int pressure_parse_kueue(const char *body, size_t len, const char *resource,
                         const char *const *skip_uids, size_t nskip, struct pressure_demand *out,
                         char *err, size_t errlen);

/*
 * Why an ambiguous demand confirms nothing, for the audit line: "'amd_com_gpu' is more than
 * one resource once sanitized ('amd.com/gpu', 'amd_com/gpu'): which one the rule means is
 * unknown".
 */
void pressure_ambiguity(const struct pressure_demand *d, const char *resource, char *out,
                        size_t len);

#endif

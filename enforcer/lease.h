/*
 * Leader election on a coordination.k8s.io/v1 Lease, in the manner of client-go's
 * leaderelection package, so that two or more enforcer replicas run and exactly one acts.
 *
 * Every replica evaluates; only the one holding the Lease sends notices and acts. The holder
 * renews the Lease every retry period; a replica that cannot renew within the renew deadline
 * stops being the leader at once, by its own monotonic clock, before any other replica can
 * take the Lease over (another one waits a whole lease duration after it last saw the Lease
 * change, and the lease duration is longer than the renew deadline). Updates carry the
 * resourceVersion that was read, so of two replicas that race, one gets 409 Conflict and
 * loses. On a clean shutdown the leader releases the Lease (empty holder, duration 1 s), as
 * client-go's ReleaseOnCancel does, so a standby takes over within a retry period.
 *
 * The decision of one attempt (lease_next) is a pure function, tested as a table; the loop
 * around it runs in its own thread with its own Kubernetes client.
 */
#ifndef GPURECLAIM_LEASE_H
#define GPURECLAIM_LEASE_H

#include <stdbool.h>
#include <stddef.h>

#include "expo.h"
#include "kube.h"

struct lease_cfg {
    const char *ns;        /* namespace of the Lease */
    const char *name;      /* Lease name */
    const char *identity;  /* holderIdentity: the pod name */
    double lease_duration; /* seconds (client-go default 15) */
    double renew_deadline; /* seconds (default 10); < lease_duration */
    double retry_period;   /* seconds (default 2); < renew_deadline */
    /* The longest a call of the action engine may take (--kube.timeout): a call may start
       only while it will end before any other replica can take the Lease over. */
    double call_timeout;
};

/* The spec of a Lease as read from or written to the API. Times are Unix seconds. */
struct lease_record {
    char holder[256];    /* "" when released or never held */
    double duration;     /* leaseDurationSeconds */
    double acquire_time; /* NaN when absent */
    double renew_time;   /* NaN when absent */
    long transitions;    /* leaseTransitions */
    char resource_version[64];
};

/* What the elector remembers between attempts (client-go's observedRecord/observedTime). */
struct lease_state {
    bool have_observed;
    struct lease_record observed;
    double observed_mono; /* monotonic time when `observed` was last seen to change */
};

enum lease_op {
    LEASE_OP_NONE,   /* someone else holds a live lease: wait */
    LEASE_OP_CREATE, /* no Lease exists: create one naming us */
    LEASE_OP_UPDATE, /* take over an expired or released lease, or renew ours */
};

/*
 * One acquire-or-renew attempt. `found` says whether the GET found the Lease (`cur` then
 * holds it). Updates `st` as client-go does (a changed record restarts the expiry clock) and
 * fills `next` with the record to write for CREATE / UPDATE (resourceVersion copied from
 * `cur`). `wall` is the wall clock for the Lease's times, `mono` the monotonic clock.
 */
enum lease_op lease_next(const struct lease_cfg *cfg, struct lease_state *st, bool found,
                         const struct lease_record *cur, double wall, double mono,
                         struct lease_record *next);

/* Parse a Lease object. Returns 0, or -1 with a message. */
int lease_parse(const char *body, size_t len, struct lease_record *out, char *err, size_t errlen);
/* The JSON of a Lease named by cfg with spec `r` (and metadata.resourceVersion when set). */
char *lease_json(const struct lease_cfg *cfg, const struct lease_record *r);

struct lease;

/*
 * Start electing in a background thread with client `k` (taken over; it must not be shared
 * with another thread). Returns NULL with a message for an invalid configuration.
 */
struct lease *lease_start(const struct lease_cfg *cfg, struct kube *k, char *err, size_t errlen);
/* Stop the thread; when leader, release the Lease first (bounded by the client's timeout). */
void lease_stop(struct lease *l);
/*
 * True while this replica holds the Lease and renewed it less than the renew deadline ago.
 * Checked before every mutating call, not only at the start of a cycle.
 */
bool lease_is_leader(struct lease *l);
/* lease_is_leader with a void * argument, for act_set_gate and kube_cfg.gate. */
bool lease_gate(void *lease);
/* gpureclaim_enforcer_leader and the election counters. */
void lease_metrics(struct lease *l, struct expo *e);

#endif

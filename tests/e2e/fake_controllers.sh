#!/bin/sh
# The fake API server's controllers (tests/fakes/fake_kube_ctl.h) behave as the real ones do
# where it matters to the enforcer: acting on a child that a known controller reconciles is
# undone, acting on the owner holds. fake_kube serves data/fake_controllers/cluster.json (a Kubeflow
# Notebook, a KServe InferenceService, a RayCluster, a JobSet, a TrainJob, each with its
# children, and a bare pod) and each step writes with curl, then reads the state back:
#   Notebook        scale its StatefulSet to 0 -> back at 1; annotate the Notebook
#                   kubeflow-resource-stopped -> StatefulSet at 0, and a direct scale to 1 is
#                   put back to 0; annotation removed -> 1
#   InferenceService scale its Deployment to 0 -> back at minReplicas (autoscalerClass none);
#                   serving.kserve.io/stop "true" -> Deployment, ReplicaSet and pod deleted;
#                   stop removed -> Deployment created again (new uid, 1 replica)
#   RayCluster      spec.suspend true -> its head and worker pods deleted, the bare pod stays
#   JobSet          spec.suspend true -> the pod of its Job deleted
#   TrainJob        spec.suspend true -> its JobSet suspended -> that JobSet's pod deleted
# and data/fake_controllers/platforms.json (the platforms of issue 24, docs/workload-kinds.md):
#   LLMInferenceService serving.kserve.io/stop "true" -> Deployment and pod deleted; stop
#                   removed -> Deployment created again; then deleted -> created again (new uid)
#   TFJob           a pod deleted -> created again; spec.runPolicy.suspend true -> pod deleted;
#                   false -> pod created again
#   MPIJob          spec.runPolicy.suspend true -> worker and launcher pods deleted
#   AppWrapper      spec.suspend true -> its component (a PyTorchJob) and its pod deleted;
#                   false -> the component created again
#   Volcano Job     a pod deleted -> created again; a Command AbortJob -> taken (gone), phase
#                   Aborted, pod deleted; a Command for another kind is left alone, and one
#                   of the same name again is 409 AlreadyExists; ResumeJob -> Running, pod back
. "$(dirname "$0")/../lib.sh"

DATA=$TOP/tests/e2e/data/fake_controllers
KUBE_FAKE=$(fake_bin fake_kube)
require python3 curl "$KUBE_FAKE"

mkdir -p "$TMP/data"
cp "$DATA/cluster.json" "$DATA/platforms.json" "$TMP/data/"
# fake_kube: the fake itself is under test here (its models of Kubeflow, KServe, KubeRay, JobSet and
# Trainer controllers, not run on the real cluster)
start_fake_http "$TMP/kube.out" "$KUBE_FAKE" --data "$TMP/data" --log "$TMP/requests" ||
    { fail start "$(cat "$TMP/kube.out")"; exit 1; }
K=$FAKE_URL

# patch PATH JSON: a merge patch; fails unless answered 200.
patch() {
    _code=$(curl -s -o "$TMP/answer" -w '%{http_code}' -X PATCH \
        -H 'Content-Type: application/merge-patch+json' --data "$2" "$K$1")
    [ "$_code" = 200 ] || { echo "PATCH $1: $_code $(cat "$TMP/answer")" >&2; return 1; }
}

# field PATH EXPR: EXPR (Python, on the object `o`) of the object at PATH; "404" when absent.
field() {
    _code=$(curl -s -o "$TMP/obj" -w '%{http_code}' "$K$1")
    [ "$_code" = 200 ] || { echo "$_code"; return 0; }
    python3 -c 'import json, sys
o = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$TMP/obj" "$2"
}

# is NAME PATH EXPR WANT: PASS when field PATH EXPR prints WANT.
is() {
    _got=$(field "$2" "$3")
    if [ "$_got" = "$4" ]; then pass "$1"; else fail "$1" "got '$_got', want '$4'"; fi
}

NS=/apis/apps/v1/namespaces/ml
CORE=/api/v1/namespaces/ml
REPLICAS='o["spec"].get("replicas")'

# --- Kubeflow Notebook -------------------------------------------------------------------------
NB=/apis/kubeflow.org/v1/namespaces/ml/notebooks/alice
check nb-scale-child patch $NS/statefulsets/alice/scale '{"spec":{"replicas":0}}'
is nb-child-scale-undone $NS/statefulsets/alice "$REPLICAS" 1
check nb-annotate-owner patch $NB \
    '{"metadata":{"annotations":{"kubeflow-resource-stopped":"2023-11-14T22:13:20Z"}}}'
is nb-owner-stop-holds $NS/statefulsets/alice "$REPLICAS" 0
check nb-scale-child-up patch $NS/statefulsets/alice/scale '{"spec":{"replicas":1}}'
is nb-child-scale-up-undone $NS/statefulsets/alice "$REPLICAS" 0
is nb-scale-subresource-agrees $NS/statefulsets/alice/scale 'o["spec"].get("replicas", 0)' 0
check nb-start patch $NB '{"metadata":{"annotations":{"kubeflow-resource-stopped":null}}}'
is nb-started $NS/statefulsets/alice "$REPLICAS" 1
is nb-rv-moved $NS/statefulsets/alice 'o["metadata"]["resourceVersion"] != "500"' True

# --- KServe InferenceService -------------------------------------------------------------------
ISVC=/apis/serving.kserve.io/v1beta1/namespaces/ml/inferenceservices/llm
check isvc-scale-child patch $NS/deployments/llm-predictor/scale '{"spec":{"replicas":0}}'
is isvc-child-scale-undone $NS/deployments/llm-predictor "$REPLICAS" 1
OLD_UID=$(field $NS/deployments/llm-predictor 'o["metadata"]["uid"]')
check isvc-stop patch $ISVC '{"metadata":{"annotations":{"serving.kserve.io/stop":"true"}}}'
is isvc-stop-deletes-deployment $NS/deployments/llm-predictor '0' 404
is isvc-stop-deletes-replicaset $NS/replicasets/llm-predictor-7d9f8c '0' 404
is isvc-stop-deletes-pod $CORE/pods/llm-predictor-7d9f8c-x2x4q '0' 404
check isvc-stop-false-is-start patch $ISVC \
    '{"metadata":{"annotations":{"serving.kserve.io/stop":"false"}}}'
is isvc-started $NS/deployments/llm-predictor "$REPLICAS" 1
is isvc-started-new-uid $NS/deployments/llm-predictor "o['metadata']['uid'] != '$OLD_UID'" True
check isvc-stop-again patch $ISVC '{"metadata":{"annotations":{"serving.kserve.io/stop":"TRUE"}}}'
is isvc-stop-case-insensitive $NS/deployments/llm-predictor '0' 404
check isvc-start-by-removal patch $ISVC '{"metadata":{"annotations":{"serving.kserve.io/stop":null}}}'
is isvc-started-again $NS/deployments/llm-predictor "$REPLICAS" 1

# --- suspend: RayCluster, JobSet, TrainJob -----------------------------------------------------
is ray-pods-before $CORE/pods/rc-head-8m5vk '"ok"' ok
check ray-suspend patch /apis/ray.io/v1/namespaces/ml/rayclusters/rc '{"spec":{"suspend":true}}'
is ray-head-deleted $CORE/pods/rc-head-8m5vk '0' 404
is ray-worker-deleted $CORE/pods/rc-gpu-worker-q7w2p '0' 404
is ray-cluster-kept /apis/ray.io/v1/namespaces/ml/rayclusters/rc 'o["spec"]["suspend"]' True
is unrelated-pod-kept $CORE/pods/scratch 'o["metadata"]["name"]' scratch

check js-suspend patch /apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets/js \
    '{"spec":{"suspend":true}}'
is js-pod-deleted $CORE/pods/js-workers-0-0-b8f4d '0' 404
is tj-pod-before $CORE/pods/tj-node-0-0-k4m9s '"ok"' ok
check tj-suspend patch /apis/trainer.kubeflow.org/v1alpha1/namespaces/ml/trainjobs/tj \
    '{"spec":{"suspend":true}}'
is tj-jobset-suspended /apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets/tj \
    'o["spec"]["suspend"]' True
is tj-pod-deleted $CORE/pods/tj-node-0-0-k4m9s '0' 404
is scratch-still-kept $CORE/pods/scratch 'o["metadata"]["name"]' scratch

# --- the platforms of issue 24 ---------------------------------------------------------------
# del PATH: a DELETE; fails unless answered 200.
del() {
    _code=$(curl -s -o "$TMP/answer" -w '%{http_code}' -X DELETE "$K$1")
    [ "$_code" = 200 ] || { echo "DELETE $1: $_code $(cat "$TMP/answer")" >&2; return 1; }
}
# post PATH JSON: a POST; prints the HTTP status.
post() {
    curl -s -o "$TMP/answer" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
        --data "$2" "$K$1"
}
UID_OF='o["metadata"]["uid"]'

LLM=/apis/serving.kserve.io/v1alpha2/namespaces/ml/llminferenceservices/qwen
check llm-stop patch $LLM '{"metadata":{"annotations":{"serving.kserve.io/stop":"true"}}}'
is llm-stop-deletes-deployment $NS/deployments/qwen-kserve '0' 404
is llm-stop-deletes-pod $CORE/pods/qwen-kserve-7c9d4-p2x8z '0' 404
check llm-start patch $LLM '{"metadata":{"annotations":{"serving.kserve.io/stop":null}}}'
is llm-started $NS/deployments/qwen-kserve "$REPLICAS" 1
OLD_UID=$(field $NS/deployments/qwen-kserve "$UID_OF")
check llm-delete-child del $NS/deployments/qwen-kserve
is llm-child-created-again $NS/deployments/qwen-kserve "$UID_OF != '$OLD_UID'" True

TF=/apis/kubeflow.org/v1/namespaces/ml/tfjobs/tf
OLD_UID=$(field $CORE/pods/tf-worker-0 "$UID_OF")
check tf-delete-pod del $CORE/pods/tf-worker-0
is tf-pod-created-again $CORE/pods/tf-worker-0 "$UID_OF != '$OLD_UID'" True
check tf-suspend patch $TF '{"spec":{"runPolicy":{"suspend":true}}}'
is tf-pod-deleted $CORE/pods/tf-worker-0 '0' 404
check tf-resume patch $TF '{"spec":{"runPolicy":{"suspend":false}}}'
is tf-pod-back $CORE/pods/tf-worker-0 'o["metadata"]["name"]' tf-worker-0

check mpi-suspend patch /apis/kubeflow.org/v2beta1/namespaces/ml/mpijobs/mpi \
    '{"spec":{"runPolicy":{"suspend":true}}}'
is mpi-worker-deleted $CORE/pods/mpi-worker-0 '0' 404
is mpi-launcher-pod-deleted $CORE/pods/mpi-launcher-h5k2q '0' 404

AW=/apis/workload.codeflare.dev/v1beta2/namespaces/ml/appwrappers/aw
PTJ=/apis/kubeflow.org/v1/namespaces/ml/pytorchjobs/aw-ptj
check aw-suspend patch $AW '{"spec":{"suspend":true}}'
is aw-component-deleted $PTJ '0' 404
is aw-pod-deleted $CORE/pods/aw-ptj-master-0 '0' 404
check aw-resume patch $AW '{"spec":{"suspend":false}}'
is aw-component-back $PTJ 'o["metadata"]["name"]' aw-ptj

VJ=/apis/batch.volcano.sh/v1alpha1/namespaces/ml/jobs/vj
CMDS=/apis/bus.volcano.sh/v1alpha1/namespaces/ml/commands
VJ_UID=$(field $VJ "$UID_OF")
OLD_UID=$(field $CORE/pods/vj-worker-0 "$UID_OF")
check vj-delete-pod del $CORE/pods/vj-worker-0
is vj-pod-created-again $CORE/pods/vj-worker-0 "$UID_OF != '$OLD_UID'" True
# command NAME ACTION APIVERSION: a Command as vcctl makes it, targeting vj as APIVERSION Job
command() {
    echo '{"apiVersion":"bus.volcano.sh/v1alpha1","kind":"Command","metadata":{"name":"'"$1"'",
"namespace":"ml"},"action":"'"$2"'","target":{"apiVersion":"'"$3"'","kind":"Job","name":"vj",
"uid":"'"$VJ_UID"'","controller":true}}'
}
check vj-abort test "$(post $CMDS "$(command vj-abortjob AbortJob batch.volcano.sh/v1alpha1)")" = 201
is vj-command-taken $CMDS/vj-abortjob '0' 404
is vj-aborted $VJ 'o["status"]["state"]["phase"]' Aborted
is vj-pod-deleted $CORE/pods/vj-worker-0 '0' 404
check vj-other-command test "$(post $CMDS "$(command other AbortJob batch/v1)")" = 201
is vj-other-command-left $CMDS/other 'o["action"]' AbortJob
check vj-same-name-409 test "$(post $CMDS "$(command other AbortJob batch/v1)")" = 409
check vj-same-name-says grep -q 'AlreadyExists' "$TMP/answer"
check vj-resume test "$(post $CMDS "$(command vj-resumejob ResumeJob batch.volcano.sh/v1alpha1)")" = 201
is vj-running $VJ 'o["status"]["state"]["phase"]' Running
is vj-pod-back $CORE/pods/vj-worker-0 'o["metadata"]["name"]' vj-worker-0
is vj-spec-unchanged $VJ 'o["metadata"]["generation"]' 1

finish

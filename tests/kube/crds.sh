#!/bin/sh
# The upstream CustomResourceDefinitions of the workload kinds (enforcer/kinds.c), read from
# their projects' Go modules through the Go module proxy, and the controllers that can be built
# from those modules and run out of cluster (JobSet, LeaderWorkerSet, KubeRay). Nothing is committed: the
# module zips land in Go's module cache (outside the work tree, keyed by version), the built
# controllers under the kube cache beside tests/kube/build.sh's binaries, keyed by version.
#
# Why modules and not release downloads: the machines reach the module proxy only. A module
# zip carries the project's config/ (kubebuilder's CRD bases) and charts/ or manifests/, the
# YAML the project's own install applies. Where the proxy refuses a module (the table in
# docs/real-cluster.md, "CRDs"), the kind is left out and said so.
#
# Usage: sh tests/kube/crds.sh [-q] [--controllers]   (KUBE_CRDS_CONTROLLERS="jobset lws kuberay")
# Prints one line per CRD file, "MODULE VERSION PATH-IN-MODULE FILE", and with --controllers
# one line per controller, "controller NAME MODULE VERSION BINARY" (building it the first
# time; its time is printed on stderr). Every version is pinned here, overridable by env.
set -eu
JOBSET_VERSION=${JOBSET_VERSION:-v0.10.1}
LWS_VERSION=${LWS_VERSION:-v0.7.0}
KUEUE_VERSION=${KUEUE_VERSION:-v0.17.0}
KUBERAY_VERSION=${KUBERAY_VERSION:-v1.5.0}
KSERVE_VERSION=${KSERVE_VERSION:-v0.16.0}
KNATIVE_VERSION=${KNATIVE_VERSION:-v0.51.0}
TRAINER_VERSION=${TRAINER_VERSION:-v2.0.0}
TRAINING_OPERATOR_VERSION=${TRAINING_OPERATOR_VERSION:-v1.9.2}
MPI_OPERATOR_VERSION=${MPI_OPERATOR_VERSION:-v0.7.0}
APPWRAPPER_VERSION=${APPWRAPPER_VERSION:-v1.1.2}
ARGO_VERSION=${ARGO_VERSION:-v3.6.5}
CACHE=${GPURECLAIM_CACHE:-$HOME/.cache/gpureclaim}/kube
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
quiet="" controllers=""
for a in "$@"; do
    case $a in
    -q) quiet=-q ;;
    --controllers) controllers=yes ;;
    *) echo "usage: crds.sh [-q] [--controllers]" >&2; exit 2 ;;
    esac
done
say() { [ "$quiet" = -q ] || echo "kube-crds: $*" >&2; }
die() { echo "kube-crds: $*" >&2; exit 1; }
command -v go >/dev/null 2>&1 || die "'go' not found"
mkdir -p "$CACHE"

# moddir MODULE VERSION: the module's directory in Go's module cache (downloaded if need be).
moddir() {
    _j=$(cd "$CACHE" && go mod download -json "$1@$2" 2>&1) || true
    _d=$(echo "$_j" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
    [ -n "$_d" ] && [ -d "$_d" ] || die "cannot download '$1@$2': $(echo "$_j" |
        sed -n 's/^[[:space:]]*"Error": "\(.*\)",*$/\1/p')"
    echo "$_d"
}

# crds MODULE VERSION PATH...: one line per CRD file.
crds() {
    _m=$1 _v=$2
    shift 2
    _dir=$(moddir "$_m" "$_v")
    for _p in "$@"; do
        [ -f "$_dir/$_p" ] || die "no '$_p' in '$_m@$_v'"
        echo "$_m $_v $_p $_dir/$_p"
    done
}

crds sigs.k8s.io/jobset "$JOBSET_VERSION" config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml
crds sigs.k8s.io/lws "$LWS_VERSION" config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml
kb=config/components/crd/bases
crds sigs.k8s.io/kueue "$KUEUE_VERSION" $kb/kueue.x-k8s.io_workloads.yaml \
    $kb/kueue.x-k8s.io_localqueues.yaml $kb/kueue.x-k8s.io_clusterqueues.yaml \
    $kb/kueue.x-k8s.io_resourceflavors.yaml
rb=config/crd/bases
crds github.com/ray-project/kuberay/ray-operator "$KUBERAY_VERSION" $rb/ray.io_rayclusters.yaml \
    $rb/ray.io_rayjobs.yaml $rb/ray.io_rayservices.yaml
crds github.com/kserve/kserve "$KSERVE_VERSION" \
    config/crd/full/serving.kserve.io_inferenceservices.yaml \
    config/crd/full/llmisvc/serving.kserve.io_llminferenceservices.yaml
kn=config/core/300-resources
crds knative.dev/serving "$KNATIVE_VERSION" $kn/service.yaml $kn/configuration.yaml $kn/revision.yaml
crds github.com/kubeflow/trainer/v2 "$TRAINER_VERSION" \
    manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml
# Not the training operator's mpijobs.kubeflow.org (v1): the same CRD name as mpi-operator's
# v2beta1, the one the MPIJob row names (docs/workload-kinds.md#mpijob).
tb=manifests/base/crds
crds github.com/kubeflow/training-operator "$TRAINING_OPERATOR_VERSION" \
    $tb/kubeflow.org_pytorchjobs.yaml $tb/kubeflow.org_tfjobs.yaml $tb/kubeflow.org_xgboostjobs.yaml \
    $tb/kubeflow.org_paddlejobs.yaml $tb/kubeflow.org_jaxjobs.yaml
crds github.com/kubeflow/mpi-operator "$MPI_OPERATOR_VERSION" manifests/base/kubeflow.org_mpijobs.yaml
crds github.com/project-codeflare/appwrapper "$APPWRAPPER_VERSION" \
    config/crd/bases/workload.codeflare.dev_appwrappers.yaml
# the minimal CRDs, the ones Argo's own install applies (manifests/base/crds/kustomization.yaml)
crds github.com/argoproj/argo-workflows/v3 "$ARGO_VERSION" \
    manifests/base/crds/minimal/argoproj.io_workflows.yaml \
    manifests/base/crds/minimal/argoproj.io_cronworkflows.yaml

[ -n "$controllers" ] || exit 0

# One build at a time per cache (as build.sh).
if command -v flock >/dev/null 2>&1; then
    exec 9>"$CACHE/.lock-crds"
    flock 9
fi
# controller NAME MODULE VERSION PKG: PKG of MODULE@VERSION built from a wrapper module (as
# build.sh's build_wrapped), cached in $CACHE/NAME-VERSION/bin.
controller() {
    _dir=$CACHE/$1-$3
    _bin=$_dir/bin/$1-controller
    if [ ! -x "$_bin" ]; then
        _t0=$(date +%s)
        rm -rf "$_dir/src" && mkdir -p "$_dir/src" "$_dir/bin"
        say "building $2@$3 (cold: minutes on 2 cores)"
        printf 'module gpureclaim.test/%s\n\ngo 1.25\n\nrequire %s %s\n\ntool %s\n' \
            "$1" "$2" "$3" "$4" >"$_dir/src/go.mod"
        (cd "$_dir/src" && go mod tidy) || die "go mod tidy failed for the $1 wrapper in '$_dir/src'"
        (cd "$_dir/src" && nice -n 10 go build -trimpath -ldflags "-s -w" -o "$_bin" "$4") ||
            die "go build of '$4' ($2@$3) failed"
        say "built $1-controller $3 in $(($(date +%s) - _t0)) s"
    fi
    echo "controller $1 $2 $3 $_bin"
}
# KUBE_CRDS_CONTROLLERS: which of them (default all three)
for c in ${KUBE_CRDS_CONTROLLERS:-jobset lws kuberay}; do
    case $c in
    jobset) controller jobset sigs.k8s.io/jobset "$JOBSET_VERSION" sigs.k8s.io/jobset ;;
    lws) controller lws sigs.k8s.io/lws "$LWS_VERSION" sigs.k8s.io/lws/cmd ;;
    kuberay)
        controller kuberay github.com/ray-project/kuberay/ray-operator "$KUBERAY_VERSION" \
            github.com/ray-project/kuberay/ray-operator
        ;;
    *) die "no controller '$c' (jobset, lws, kuberay)" ;;
    esac
done

/*
 * Tests for the /proc/<pid>/cgroup parser: a table of real-world path shapes, grouped by
 * runtime and cgroup driver, each group citing where the shape was seen. Container ids and
 * pod UIDs are the ones printed in those sources where they were complete; the rest are
 * made up (sha256 / uuid5 of a label) in the same shape.
 */
#include "cgroup.c"

#include "test.h"
#include "util.h"

/* expected values; NULL = must be unknown */
struct cgcase {
    const char *name;
    const char *text;
    int rc;
    const char *container_id;
    const char *pod_uid;
    enum cgroup_runtime runtime;
    enum cgroup_qos qos;
    bool conmon;
    unsigned layout;
};

#define V1     CGROUP_LAYOUT_V1
#define V2     CGROUP_LAYOUT_V2
#define CTD    CGROUP_RUNTIME_CONTAINERD
#define CRIO   CGROUP_RUNTIME_CRIO
#define DOCKER CGROUP_RUNTIME_DOCKER
#define PODMAN CGROUP_RUNTIME_PODMAN
#define NORT   CGROUP_RUNTIME_NONE
#define UNK    CGROUP_RUNTIME_UNKNOWN
#define G      CGROUP_QOS_GUARANTEED
#define BU     CGROUP_QOS_BURSTABLE
#define BE     CGROUP_QOS_BESTEFFORT
#define NOQ    CGROUP_QOS_UNKNOWN

#define ID_TKE  "9e073649debeec6d511391c9ec7627ee67ce3a3fb508b0fa0437a97f8e58ba98"
#define ID_KTR  "afc114c69e71f18166abd63715398d7daa763c69a6454f71157272ab0bdca783"
#define ID_ELA  "0f99ad5f45163ed14ab8eaf92ed34bb4a631d007f8755a7d79be614bcb0df0ef"
#define ID_OTL  "ee4b20e90ac7f42a10bd004d05646b13d8ab5e2c5e7cbc01abf8006bac016459"
#define ID_STA  "79fedb3bd23ca77c9d9ccb41909038316f713df22b54b7d942b71d3812e7c74e"
#define ID_TRL  "f75aff467357c5d0ddd47cb7ad87ed38746e018992586ff66198a5c11218f634"
#define ID_K2   "851c75dad6ad8ce6a5d9b9129a4eb1645f7c6e5ba8406b12d50377b665737072"
#define ID_NET  "09d185410c4e25236cc24717f881589bb0978b24eafd101624e627a4dd8d3439"
#define ID_RNC  "5eed917563583925ffdbd40a64efb2aaffe58638e57add8becaf460fe74f5b1c"
#define ID_NRI  "468f848e2ebec7203ed55748d08337851af589ac42eb551c572446a5c68fe631"
#define ID_NR2  "805b902ed98fdc1409c76e9aa94964787a904c80f46fc3ee74283509108f5e73"
#define ID_NR3  "0f2b016bbc95b352c2b4287b3b654cb234b95efdeea1b35a170a6ed572ac2692"
#define ID_CRF  "dc4b5f11a034ac50f4bf7a0f2396fce881f58dcb5b2fa5f0f74d5c2ad924c083"
#define ID_CSP  "2403ccfe427f1dc7b6120dccb9ac58c2f8456950380d587a9f33ea7f00dd303d"
#define ID_DSH  "c8b38413c88eefe063b8cd3f01c16be5e3bda9693a19a68a88807baca9feb937"
#define ID_QLT  "9687bac58d5c4d1606aa46af33d1a21c1d1652e0ac9fb3fc0fc86e3495f42869"
#define ID_PA   "b4cc4867d9fc1c8455f0ed62a35752997b4e9624968df8953d40f7f847719c81"
#define ID_PB   "e288465587f13f319ff25fc17b094d52dae48844cc00a8423a71839084db235c"
#define ID_PC   "f02fdc05ac57730a50baa0f590fff70b583f0867c8edc65945d648a3115aa8fd"
#define ID_NODE "7232fa5b7fe3f027d56d3feba41858ad7e5841fa3432d4b5b9f98c0186b6abbb"
#define ID_KIND "fc7d8b383769d2cf860a0ecc7ba74764d8dcb067512285e66f291c68419bd4b5"
#define ID_NERD "aa470170773aae4a69e6e0a509eb8c1f304140b1fea1a2d55ec93a07a78e497c"
#define ID_RL   "12b961af5feb3e9d39f93b2cefb9a1a944f18d02cca0cac2f04f5a982240605f"
#define ID_DKS  "f9b0078b5df596d2ea19010c001bbd009e651de2c57e8fb7e355f31eb9d3f739"

static const struct cgcase cases[] = {
    /*
     * kubelet systemd driver + containerd, cgroup v1: tkestack/vcuda-controller#19
     * (Guaranteed pod: kubepods-pod<uid>.slice directly under kubepods.slice).
     */
    {"ctd-systemd-v1-guaranteed",
     "12:hugetlb:/kubepods.slice/kubepods-pod019c1fe8_0d92_4aa0_b61c_4df58bdde71c.slice/"
     "cri-containerd-" ID_TKE ".scope\n"
     "11:blkio:/kubepods.slice/kubepods-pod019c1fe8_0d92_4aa0_b61c_4df58bdde71c.slice/"
     "cri-containerd-" ID_TKE ".scope\n"
     "1:name=systemd:/kubepods.slice/kubepods-pod019c1fe8_0d92_4aa0_b61c_4df58bdde71c.slice/"
     "cri-containerd-" ID_TKE ".scope\n",
     0, ID_TKE, "019c1fe8-0d92-4aa0-b61c-4df58bdde71c", CTD, G, false, V1},
    /* kubelet systemd driver + containerd, cgroup v2: iovisor/kubectl-trace#207 */
    {"ctd-systemd-v2-burstable",
     "0::/kubepods.slice/kubepods-burstable.slice/"
     "kubepods-burstable-pod40934a46_d409_4f4a_bb8b_1ec0b0436320.slice/cri-containerd-" ID_KTR
     ".scope\n",
     0, ID_KTR, "40934a46-d409-4f4a-bb8b-1ec0b0436320", CTD, BU, false, V2},
    /* netdata/netdata#4868 (a cgroup v2 tree listing) */
    {"ctd-systemd-v2-no-newline",
     "0::/kubepods.slice/kubepods-burstable.slice/"
     "kubepods-burstable-pod03f3f104_3215_44f2_9686_d4dd1f05a7ed.slice/cri-containerd-" ID_NET
     ".scope",
     0, ID_NET, "03f3f104-3215-44f2-9686-d4dd1f05a7ed", CTD, BU, false, V2},
    /*
     * containerd's "<slice>:cri-containerd:<id>" in v1 hierarchies systemd does not manage:
     * elastic/apm-agent-nodejs#3550, open-telemetry/opentelemetry-java#4507 (with and
     * without the /system.slice/containerd.service prefix), kubernetes/kubernetes#106515
     * (a static pod: 32-hex UID).
     */
    {"ctd-colon-form",
     "1:name=systemd:/system.slice/containerd.service/"
     "kubepods-burstable-podff49d0be_16b7_4a49_bb9e_8ec1f1f4e27f.slice:cri-containerd:" ID_ELA "\n",
     0, ID_ELA, "ff49d0be-16b7-4a49-bb9e-8ec1f1f4e27f", CTD, BU, false, V1},
    {"ctd-colon-form-mixed-prefix",
     "11:perf_event:/kubepods-besteffort-pod0125ec2f_b64a_4868_8f5b_94b56cbab864.slice:"
     "cri-containerd:" ID_OTL "\n"
     "10:blkio:/system.slice/containerd.service/"
     "kubepods-besteffort-pod0125ec2f_b64a_4868_8f5b_94b56cbab864.slice:cri-containerd:" ID_OTL
     "\n",
     0, ID_OTL, "0125ec2f-b64a-4868-8f5b-94b56cbab864", CTD, BE, false, V1},
    {"ctd-colon-form-static-pod",
     "1:name=systemd:/system.slice/containerd.service/"
     "kubepods-burstable-pod36b6d6be73b1065af369b3985edafa09.slice:cri-containerd:" ID_STA "\n",
     0, ID_STA, "36b6d6be73b1065af369b3985edafa09", CTD, BU, false, V1},
    /*
     * kubelet cgroupfs driver: bare container id, runtime not named: kinvolk/traceloop#34,
     * iovisor/kubectl-trace#207, cri-o/cri-o#811; Guaranteed pods sit directly under
     * kubepods (kubelet pkg/kubelet/cm qos_container_manager_linux.go).
     */
    {"cgroupfs-besteffort",
     "4:memory:/kubepods/besteffort/pod91a8fc3a-0ecf-48b4-81bf-78a7275d348c/" ID_TRL "\n"
     "1:name=systemd:/kubepods/besteffort/pod91a8fc3a-0ecf-48b4-81bf-78a7275d348c/" ID_TRL "\n",
     0, ID_TRL, "91a8fc3a-0ecf-48b4-81bf-78a7275d348c", UNK, BE, false, V1},
    {"cgroupfs-burstable-v2",
     "0::/kubepods/burstable/pod31dd0274-bb43-4975-bdbc-7e10047a23f8/" ID_K2 "\n", 0, ID_K2,
     "31dd0274-bb43-4975-bdbc-7e10047a23f8", UNK, BU, false, V2},
    {"cgroupfs-guaranteed", "0::/kubepods/poddd4a1465-6188-54a2-b781-b6de4d9497e0/" ID_K2 "\n", 0,
     ID_K2, "dd4a1465-6188-54a2-b781-b6de4d9497e0", UNK, G, false, V2},
    {"cgroupfs-pod-cgroup-only", "0::/kubepods/burstable/pod31dd0274-bb43-4975-bdbc-7e10047a23f8\n",
     0, NULL, "31dd0274-bb43-4975-bdbc-7e10047a23f8", NORT, BU, false, V2},
    /*
     * CRI-O: systemd scopes crio-<id>.scope (opencontainers/runc#4620, with a "files:/" root
     * line); the sandbox cgroup without ".scope" and the "<slice>:crio:<id>" form
     * (containerd/nri#227); crio-conmon-<id> monitors (cri-o/cri-o#811: "Prefix is crio- for
     * containers and crio-conmon- for monitor process scopes"); cgroupfs crio-<id> and
     * crio-conmon-<id> (cri-o/cri-o#5511).
     */
    {"crio-systemd-v1",
     "13:freezer:/kubepods.slice/kubepods-burstable.slice/"
     "kubepods-burstable-poda5c1f8d5_1919_434d_add7_4afaafdaef89.slice/crio-" ID_RNC ".scope\n"
     "11:files:/\n"
     "1:name=systemd:/kubepods.slice/kubepods-burstable.slice/"
     "kubepods-burstable-poda5c1f8d5_1919_434d_add7_4afaafdaef89.slice/crio-" ID_RNC ".scope\n",
     0, ID_RNC, "a5c1f8d5-1919-434d-add7-4afaafdaef89", CRIO, BU, false, V1},
    {"crio-systemd-v2-sandbox",
     "0::/kubepods.slice/kubepods-burstable.slice/"
     "kubepods-burstable-pod35550f44_f691_427e_b57d_ab6127d2cb65.slice/crio-" ID_NRI "\n",
     0, ID_NRI, "35550f44-f691-427e-b57d-ab6127d2cb65", CRIO, BU, false, V2},
    {"crio-colon-form",
     "1:name=systemd:/kubepods-burstable-pod35550f44_f691_427e_b57d_ab6127d2cb65.slice:crio:" ID_NR2
     "\n",
     0, ID_NR2, "35550f44-f691-427e-b57d-ab6127d2cb65", CRIO, BU, false, V1},
    {"crio-conmon-scope",
     "0::/kubepods.slice/kubepods-besteffort.slice/"
     "kubepods-besteffort-pod38186edb_96bd_4383_baf7_3b4edf3b5937.slice/crio-conmon-" ID_NR3
     ".scope\n",
     0, NULL, "38186edb-96bd-4383-baf7-3b4edf3b5937", NORT, BE, true, V2},
    {"crio-cgroupfs",
     "0::/kubepods/burstable/pod44e2e33e-776b-4284-a647-4bd959899c91/crio-" ID_CRF "\n", 0, ID_CRF,
     "44e2e33e-776b-4284-a647-4bd959899c91", CRIO, BU, false, V2},
    {"crio-cgroupfs-conmon",
     "0::/kubepods/burstable/pod44e2e33e-776b-4284-a647-4bd959899c91/crio-conmon-" ID_CRF "\n", 0,
     NULL, "44e2e33e-776b-4284-a647-4bd959899c91", NORT, BU, true, V2},
    /*
     * docker: cgroupfs /docker/<id> with a hybrid v2 line naming another cgroup
     * (ctrsploit/ctrsploit#280); systemd docker-<id>.scope (containerd nerdctl/podman docs,
     * minikube with the systemd driver); dockershim under kubepods (kinvolk/traceloop#34);
     * dockerd itself.
     */
    {"docker-cgroupfs-hybrid",
     "12:net_cls,net_prio:/docker/" ID_CSP "\n"
     "10:rdma:/\n"
     "8:memory:/docker/" ID_CSP "\n"
     "1:name=systemd:/docker/" ID_CSP "\n"
     "0::/system.slice/containerd.service\n",
     0, ID_CSP, NULL, DOCKER, NOQ, false, V1 | V2},
    {"docker-systemd-v2", "0::/system.slice/docker-" ID_DKS ".scope\n", 0, ID_DKS, NULL, DOCKER,
     NOQ, false, V2},
    {"dockershim-systemd-kubepods",
     "1:name=systemd:/kubepods.slice/kubepods-besteffort.slice/"
     "kubepods-besteffort-pod5759a1ae_36ca_48a8_b20a_b0b5c8a90fb8.slice/docker-" ID_DSH ".scope\n",
     0, ID_DSH, "5759a1ae-36ca-48a8-b20a-b0b5c8a90fb8", DOCKER, BE, false, V1},
    {"dockerd-itself", "0::/system.slice/docker.service\n", 0, NULL, NULL, NORT, NOQ, false, V2},
    /*
     * podman (containers/podman: libpod-<id>.scope and libpod-conmon-<id>.scope unit names,
     * cgroupfs "/libpod_parent/conmon" in its cgroup tests; rootless under user@.service;
     * quadlet --cgroups=split puts the payload in libpod-payload-<id> and conmon in
     * "runtime", which is not recognised; pods in machine-libpod_pod_<id>.slice).
     */
    {"podman-systemd", "0::/machine.slice/libpod-" ID_PA ".scope\n", 0, ID_PA, NULL, PODMAN, NOQ,
     false, V2},
    {"podman-systemd-conmon", "0::/machine.slice/libpod-conmon-" ID_PA ".scope\n", 0, NULL, NULL,
     NORT, NOQ, true, V2},
    {"podman-cgroupfs", "0::/libpod_parent/libpod-" ID_PB "\n", 0, ID_PB, NULL, PODMAN, NOQ, false,
     V2},
    {"podman-cgroupfs-conmon", "0::/libpod_parent/conmon\n", 0, NULL, NULL, NORT, NOQ, true, V2},
    {"podman-rootless-split",
     "0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID_RL
     ".scope/container\n",
     0, ID_RL, NULL, PODMAN, NOQ, false, V2},
    {"podman-quadlet-payload", "0::/system.slice/nginx.service/libpod-payload-" ID_QLT "\n", 0,
     ID_QLT, NULL, PODMAN, NOQ, false, V2},
    {"podman-quadlet-runtime", "0::/system.slice/nginx.service/runtime\n", 0, NULL, NULL, NORT, NOQ,
     false, V2},
    {"podman-pod", "0::/machine.slice/machine-libpod_pod_" ID_PC ".slice/libpod-" ID_PB ".scope\n",
     0, ID_PB, NULL, PODMAN, NOQ, false, V2},
    /*
     * kind (Kubernetes in docker) and other nesting: grafana/beyla#468 ("0::/docker/<hex>/
     * kubelet.slice/kubelet-kubepods.slice/..." and "0::/../cri-containerd-<id>.scope" from
     * a private cgroup namespace); kind's cgroupfs variant and the node's own kubelet.
     */
    {"kind-systemd",
     "0::/docker/" ID_NODE "/kubelet.slice/kubelet-kubepods.slice/"
     "kubelet-kubepods-besteffort.slice/"
     "kubelet-kubepods-besteffort-poda5e7ac85_7b9c_5fa7_b991_e36c9aae9911.slice/"
     "cri-containerd-" ID_KIND ".scope\n",
     0, ID_KIND, "a5e7ac85-7b9c-5fa7-b991-e36c9aae9911", CTD, BE, false, V2},
    {"kind-cgroupfs",
     "0::/docker/" ID_NODE "/kubepods/burstable/poda5e7ac85-7b9c-5fa7-b991-e36c9aae9911/" ID_KIND
     "\n",
     0, ID_KIND, "a5e7ac85-7b9c-5fa7-b991-e36c9aae9911", UNK, BU, false, V2},
    {"kind-node-kubelet", "0::/system.slice/docker-" ID_NODE ".scope/kubelet.slice\n", 0, ID_NODE,
     NULL, DOCKER, NOQ, false, V2},
    {"kind-pod-without-container",
     "0::/docker/" ID_NODE "/kubepods/burstable/poda5e7ac85-7b9c-5fa7-b991-e36c9aae9911\n", 0, NULL,
     "a5e7ac85-7b9c-5fa7-b991-e36c9aae9911", NORT, BU, false, V2},
    {"cgroupns-relative", "0::/../cri-containerd-" ID_KIND ".scope\n", 0, ID_KIND, NULL, CTD, NOQ,
     false, V2},
    /* nerdctl (containerd without Kubernetes) with the systemd driver */
    {"nerdctl-systemd", "0::/system.slice/nerdctl-" ID_NERD ".scope\n", 0, ID_NERD, NULL, CTD, NOQ,
     false, V2},
    /* not containers */
    {"host-session", "0::/user.slice/user-1000.slice/session-3.scope\n", 0, NULL, NULL, NORT, NOQ,
     false, V2},
    {"init-scope", "0::/init.scope\n", 0, NULL, NULL, NORT, NOQ, false, V2},
    {"v1-root-only", "12:memory:/\n11:cpu,cpuacct:/\n1:name=systemd:/init.scope\n", 0, NULL, NULL,
     NORT, NOQ, false, V1},
    /* near misses: never guess */
    {"id-65-chars", "0::/system.slice/docker-" ID_NODE "a.scope\n", 0, NULL, NULL, NORT, NOQ, false,
     V2},
    {"id-63-hex", "0::/docker/7232fa5b7fe3f027d56d3feba41858ad7e5841fa3432d4b5b9f98c0186b6abb\n", 0,
     NULL, NULL, NORT, NOQ, false, V2},
    {"id-upper-case",
     "0::/docker/7232FA5B7FE3F027D56D3FEBA41858AD7E5841FA3432D4B5B9F98C0186B6ABBB\n", 0, NULL, NULL,
     NORT, NOQ, false, V2},
    {"pod-uid-bad-shape",
     "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod40934a46_d409.slice/"
     "cri-containerd-" ID_KTR ".scope\n",
     0, ID_KTR, NULL, CTD, NOQ, false, V2},
    {"pod-uid-upper-case-normalised",
     "0::/kubepods/burstable/pod31DD0274-BB43-4975-BDBC-7E10047A23F8/" ID_K2 "\n", 0, ID_K2,
     "31dd0274-bb43-4975-bdbc-7e10047a23f8", UNK, BU, false, V2},
    {"pod-uid-bad-separator", "0::/kubepods/burstable/pod31dd0274.bb43.4975.bdbc.7e10047a23f8\n", 0,
     NULL, NULL, NORT, NOQ, false, V2},
    {"pod-without-kubepods", "0::/system.slice/pod31dd0274-bb43-4975-bdbc-7e10047a23f8\n", 0, NULL,
     NULL, NORT, NOQ, false, V2},
    {"one-malformed-line", "garbage\n0::/docker/" ID_NODE "\n", 0, ID_NODE, NULL, DOCKER, NOQ,
     false, V2},
    {"empty", "", -1, NULL, NULL, NORT, NOQ, false, 0},
    {"all-malformed", "hello\n:x:/a\n1:cpu\n1:cpu:relative\nx1:cpu:/\n", -1, NULL, NULL, NORT, NOQ,
     false, 0},
};

TEST(shape_table)
{
    TEST_CHECK(ARRAY_LEN(cases) >= 25);
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const struct cgcase *c = &cases[i];
        struct cgroup_owner o;
        int rc = cgroup_parse(c->text, strlen(c->text), &o);
        bool ok =
            rc == c->rc && o.layout == c->layout && o.runtime == c->runtime && o.qos == c->qos &&
            o.conmon == c->conmon && o.has_container_id == (c->container_id != NULL) &&
            o.has_pod_uid == (c->pod_uid != NULL) && o.in_kubernetes == (c->pod_uid != NULL) &&
            (!c->container_id || strcmp(o.container_id, c->container_id) == 0) &&
            (!c->pod_uid || strcmp(o.pod_uid, c->pod_uid) == 0);
        if (!ok) {
            fprintf(stderr,
                    "case '%s': rc %d layout %u runtime %s qos %s conmon %d id '%s' (%d) "
                    "pod '%s' (%d) k8s %d\n",
                    c->name, rc, o.layout, cgroup_runtime_name(o.runtime), cgroup_qos_name(o.qos),
                    o.conmon, o.container_id, o.has_container_id, o.pod_uid, o.has_pod_uid,
                    o.in_kubernetes);
            TEST_CHECK(0);
        }
    }
}

TEST(malformed_count_and_len)
{
    struct cgroup_owner o;
    const char *text = "garbage\n0::/docker/" ID_NODE "\n\n1:cpu\n";
    TEST_CHECK_INT(cgroup_parse(text, strlen(text), &o), 0);
    TEST_CHECK_INT(o.malformed, 2);
    /* stop at len: the id is cut to 63 digits, so it is not an id */
    const char *cut = "0::/docker/" ID_NODE;
    TEST_CHECK_INT(cgroup_parse(cut, strlen(cut) - 1, &o), 0);
    TEST_CHECK(!o.has_container_id);
}

TEST(names)
{
    TEST_CHECK_STR(cgroup_runtime_name(CGROUP_RUNTIME_CONTAINERD), "containerd");
    TEST_CHECK_STR(cgroup_runtime_name(CGROUP_RUNTIME_CRIO), "cri-o");
    TEST_CHECK_STR(cgroup_runtime_name(CGROUP_RUNTIME_NONE), "none");
    TEST_CHECK_STR(cgroup_runtime_name((enum cgroup_runtime)99), "unknown");
    TEST_CHECK_STR(cgroup_qos_name(CGROUP_QOS_BESTEFFORT), "BestEffort");
    TEST_CHECK_STR(cgroup_qos_name(CGROUP_QOS_GUARANTEED), "Guaranteed");
    TEST_CHECK_STR(cgroup_qos_name(CGROUP_QOS_UNKNOWN), "unknown");
}

int main(void)
{
    RUN(shape_table);
    RUN(malformed_count_and_len);
    RUN(names);
    return test_done();
}

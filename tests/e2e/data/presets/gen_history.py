#!/usr/bin/env python3
"""Backfill history for tests/e2e/presets.sh, shaped as the real exporters write it.

usage: gen_history.py history OUT.om     2 h of samples every 30 s ending at END, OpenMetrics
       gen_history.py expect NAME        the decisions preset NAME must make at END (JSON)

NVIDIA dcgm-exporter series (NVIDIA/dcgm-exporter d5e5f510a1b6b393f39a43293ccd9dc985defc79,
internal/pkg/rendermetrics/render_metrics.go and internal/pkg/transformation/const.go): labels
gpu, UUID, pci_bus_id, device, modelName, GPU_I_PROFILE and GPU_I_ID on MIG instances,
hostname, DCGM_FI_DRIVER_VERSION, then container, namespace, pod, pod_uid; a device without a
pod has them empty. DCGM_FI_PROF_GR_ENGINE_ACTIVE is a ratio, DCGM_FI_DEV_GPU_UTIL a percent
that reads 0 on MIG instances. AMD device-metrics-exporter series (ROCm/device-metrics-
exporter afd0fe81cfb1a36cf15e79edb057e92adb197946, gpuagent_gpu_metrics.go): gpu_gfx_activity
in percent with gpu_id, gpu_uuid, gpu_partition_id ("NA" unpartitioned), the partition types,
card_*, hostname, pod, namespace, container; on a CPX GPU only partition 0 has it. Pods and
demand come from kube-state-metrics (resource names sanitised: nvidia_com_gpu,
nvidia_com_mig_1g_10gb, amd_com_gpu).

Workloads (the reason is what the enforcer reports for a kept one):
  dcgm  ml/nv-idle     whole GPU, GR_ENGINE_ACTIVE 0.02                     reclaim
        ml/nv-busy     whole GPU, 0.65                                      keep active
        ml/mig-busy    MIG 1g.10gb: GR_ENGINE_ACTIVE 0.55, GPU_UTIL 0       keep active
        ml/mig-idle    MIG 1g.10gb on the same GPU, 0.0                     reclaim
        ml/nv-lost     idle, but the exporter lost its pod labels 20 min ago keep stale
        ml/nv-nodcp    a T4 without profiling metrics: only GPU_UTIL 0      keep no_data
        pending: one pod wants nvidia_com_gpu, one nvidia_com_mig_1g_10gb
  amd   rocm/amd-idle  unpartitioned, 1 %                                   reclaim
        rocm/amd-busy  unpartitioned, 85 %                                  keep active
        rocm/cpx-p0    CPX partition 0, 0 % (XCP 0's value, not its own)    keep no_data
        rocm/cpx-p1    CPX partition 1: no activity at all                  keep no_data
        rocm/amd-lost  idle, the exporter lost its pod labels 20 min ago    keep stale
        pending: one pod wants amd_com_gpu
"""
import json
import sys

END = 1700000000
START = END - 7200
STEP = 30
LOST_AT = END - 1200
DRIVER = "550.54.15"


def lbl(d):
    return ",".join('%s="%s"' % (k, v) for k, v in d.items())


def dcgm(gpu, uuid, host, model, pod, mig=None):
    d = {"gpu": str(gpu), "UUID": uuid, "pci_bus_id": "00000000:%02X:00.0" % (7 + gpu),
         "device": "nvidia%d" % gpu, "modelName": model}
    if mig:
        d["GPU_I_PROFILE"], d["GPU_I_ID"] = mig
    d["hostname"] = host
    d["DCGM_FI_DRIVER_VERSION"] = DRIVER
    d.update({"container": "main" if pod else "", "namespace": "ml" if pod else "",
              "pod": pod or "", "pod_uid": ""})
    return d


H100 = "NVIDIA H100 80GB HBM3"
A100 = "NVIDIA A100-SXM4-80GB"
# (pod, labels, GR_ENGINE_ACTIVE or None, GPU_UTIL, lost pod labels at LOST_AT)
DCGM = [
    ("nv-idle", dcgm(0, "GPU-11111111-aaaa-4000-8000-000000000001", "gpu-n1", H100, "nv-idle"), 0.02, 3, False),
    ("nv-busy", dcgm(1, "GPU-11111111-aaaa-4000-8000-000000000002", "gpu-n1", H100, "nv-busy"), 0.65, 90, False),
    ("mig-busy", dcgm(0, "GPU-22222222-bbbb-4000-8000-000000000001", "gpu-n2", A100, "mig-busy", ("1g.10gb", "7")), 0.55, 0, False),
    ("mig-idle", dcgm(0, "GPU-22222222-bbbb-4000-8000-000000000001", "gpu-n2", A100, "mig-idle", ("1g.10gb", "8")), 0.0, 0, False),
    ("nv-lost", dcgm(2, "GPU-11111111-aaaa-4000-8000-000000000003", "gpu-n1", H100, "nv-lost"), 0.01, 1, True),
    ("nv-nodcp", dcgm(0, "GPU-33333333-cccc-4000-8000-000000000001", "gpu-n3", "Tesla T4", "nv-nodcp"), None, 0, False),
    (None, dcgm(3, "GPU-11111111-aaaa-4000-8000-000000000004", "gpu-n1", H100, None), 0.0, 0, False),
]

AMD_STATIC = {"card_model": "MI300X", "card_series": "AMD Instinct MI300X OAM",
              "card_vendor": "Advanced Micro Devices, Inc. [AMD/ATI]", "cluster_name": "",
              "deployment_mode": "baremetal", "driver_version": "6.10.5",
              "gpu_memory_partition_type": "nps1", "job_id": "", "job_partition": "",
              "job_user": "", "serial_number": "692251001234"}


def amd(host, gpu_id, part, ptype, pod):
    d = dict(AMD_STATIC)
    d.update({"gpu_id": str(gpu_id), "gpu_uuid": "%s-%d" % (host, gpu_id),
              "gpu_partition_id": part, "gpu_compute_partition_type": ptype, "hostname": host,
              "namespace": "rocm" if pod else "", "pod": pod or "",
              "container": "main" if pod else ""})
    return d


# (pod, labels, gfx percent or None, lost pod labels at LOST_AT)
AMD = [
    ("amd-idle", amd("mi-n1", 0, "NA", "spx", "amd-idle"), 1, False),
    ("amd-busy", amd("mi-n1", 1, "NA", "spx", "amd-busy"), 85, False),
    ("amd-lost", amd("mi-n1", 2, "NA", "spx", "amd-lost"), 1, True),
    ("cpx-p0", amd("mi-n2", 0, "0", "cpx", "cpx-p0"), 0, False),
    ("cpx-p1", amd("mi-n2", 1, "1", "cpx", "cpx-p1"), None, False),
]

# kube-state-metrics: (namespace, pod, resource, count, phase, unschedulable)
KSM = [("ml", p, "nvidia_com_mig_1g_10gb" if p.startswith("mig") else "nvidia_com_gpu", 1,
        "Running", 0) for p, *_ in DCGM if p] + \
      [("rocm", p, "amd_com_gpu", 1, "Running", 0) for p, *_ in AMD] + [
    ("ml", "nv-waiting", "nvidia_com_gpu", 1, "Pending", 1),
    ("ml", "mig-waiting", "nvidia_com_mig_1g_10gb", 1, "Pending", 1),
    ("rocm", "amd-waiting", "amd_com_gpu", 1, "Pending", 1),
]

EXPECT = {
    "dcgm-exporter": {"nv-idle": ("reclaim", "idle"), "nv-busy": ("keep", "active"),
                      "mig-busy": ("keep", "active"), "mig-idle": ("reclaim", "idle"),
                      "nv-lost": ("keep", "stale"), "nv-nodcp": ("keep", "no_data")},
    "amd-device-metrics-exporter": {"amd-idle": ("reclaim", "idle"),
                                    "amd-busy": ("keep", "active"),
                                    "amd-lost": ("keep", "stale"),
                                    "cpx-p0": ("keep", "no_data"),
                                    "cpx-p1": ("keep", "no_data")},
}


def times():
    return range(START, END + 1, STEP)


def fmt(v):
    return repr(float(v))


def history(out):
    def family(name, rows):
        out.write("# TYPE %s gauge\n" % name)
        for labels, value, lost in rows:
            for t in times():
                ls = labels
                if lost and t >= LOST_AT:
                    ls = dict(labels, pod="", namespace="", container="")
                out.write("%s{%s} %s %d\n" % (name, lbl(ls), fmt(value), t))

    family("DCGM_FI_PROF_GR_ENGINE_ACTIVE", [(l, v, lost) for _, l, v, _, lost in DCGM if v is not None])
    family("DCGM_FI_DEV_GPU_UTIL", [(l, u, lost) for _, l, _, u, lost in DCGM])
    family("gpu_gfx_activity", [(l, v, lost) for _, l, v, lost in AMD if v is not None])
    family("gpu_used_vram", [(l, 2048, lost) for _, l, _, lost in AMD])
    base = {}
    out.write("# TYPE kube_pod_container_resource_requests gauge\n")
    for i, (ns, pod, res, n, phase, unsched) in enumerate(KSM):
        uid = "00000000-0000-4000-8000-%012d" % i
        base[(ns, pod)] = uid
        node = "" if unsched else "node-%d" % (i % 3)
        for t in times():
            out.write('kube_pod_container_resource_requests{namespace="%s",pod="%s",uid="%s",'
                      'container="main",node="%s",resource="%s",unit="integer"} %d %d\n'
                      % (ns, pod, uid, node, res, n, t))
    out.write("# TYPE kube_pod_status_phase gauge\n")
    for ns, pod, res, n, phase, unsched in KSM:
        for p in ("Pending", "Running", "Succeeded", "Failed", "Unknown"):
            for t in times():
                out.write('kube_pod_status_phase{namespace="%s",pod="%s",uid="%s",phase="%s"} %d %d\n'
                          % (ns, pod, base[(ns, pod)], p, 1 if p == phase else 0, t))
    out.write("# TYPE kube_pod_status_unschedulable gauge\n")
    for ns, pod, res, n, phase, unsched in KSM:
        if unsched:
            for t in times():
                out.write('kube_pod_status_unschedulable{namespace="%s",pod="%s",uid="%s"} 1 %d\n'
                          % (ns, pod, base[(ns, pod)], t))
    out.write("# EOF\n")


if __name__ == "__main__":
    if sys.argv[1] == "history":
        with open(sys.argv[2], "w") as f:
            history(f)
    elif sys.argv[1] == "expect":
        print(json.dumps({p: list(v) for p, v in EXPECT[sys.argv[2]].items()}))
    else:
        sys.exit("usage: gen_history.py history OUT.om | expect NAME")

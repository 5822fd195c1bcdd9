"""The nodes and network `estimate --gpus N` times a workload on, so that it shares `plan`'s layout model.

`plan` knows each offer's node (GPUs per instance) and network; `estimate` names only a GPU and a count. Until
issue 41's second pass it timed N GPUs as one node of N over NVLink, so 2,048 H800 exchanged every token of
DeepSeek-V3's all-to-all over NVLink (1.45x of the published GPU-hours) while `plan` sent it over 256 nodes' EFA
(2.27x). Now a count above the largest instance of that GPU in the catalog is split into such nodes, joined by
the fastest network the catalog lists for that node (else for a node of the same architecture and size: the H800
sells nowhere in the catalog, so it takes the H100's p5.48xlarge, 3,200 Gbps EFA; DeepSeek's own H800 nodes had
8 x 400 Gbps InfiniBand, the same line rate per node).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pricing.catalog import Catalog, GpuSpec
from pricing.errors import InputError

DEFAULT_NODE_GPUS = 8  # an HGX/DGX board; the fewest GPUs a node is taken to hold


@dataclass(frozen=True)
class EstimateCluster:
    """GPUs per node, nodes, the network between them (line rate and fabric) and where it came from."""

    per_node: int
    nodes: int
    gbps: float | None = None
    fabric: str = "unknown"
    basis: str = ""
    ram_gb: float | None = None  # host RAM of such a node (the least the catalog lists), for optimizer offload


def _node_ram(catalog: Catalog, key: str, per_node: int) -> float | None:
    """The least RAM (GiB) the catalog lists for a node of ``per_node`` x ``key``: offload is searched only where any
    such node holds it; None where no such instance is listed (offload is then not searched)."""
    rams = [float(r.mem_gb) for r in catalog.instances if r.gpu == key and int(r.gpu_count) == per_node and r.mem_gb]
    return min(rams) if rams else None


def _node_gpus(spec: GpuSpec, catalog: Catalog) -> int:
    # up to 8 GPUs stay one machine, as a bought box of them would be, even where clouds sell fewer in one instance
    counts = [int(r.gpu_count) for r in catalog.instances if r.gpu == spec.key and r.gpu_count >= 1]
    return max([*counts, DEFAULT_NODE_GPUS])


def _fastest_network(catalog: Catalog, keys: set[str], per_node: int) -> tuple[float, str, str] | None:
    best: tuple[float, str, str] | None = None
    for r in catalog.instances:
        if r.gpu not in keys or int(r.gpu_count) != per_node:
            continue
        net = catalog.network(r.provider, r.instance_type)
        if net is not None and net.gbps is not None and (best is None or net.gbps > best[0]):
            best = (net.gbps, str(net.fabric), f"{r.provider} {r.instance_type}")
    return best


def estimate_cluster(spec: GpuSpec, gpus: int, catalog: Catalog) -> EstimateCluster:
    """One node of ``gpus`` up to 8 or the catalog's largest instance of the GPU; else nodes of that size with the
    fastest network the catalog lists for such a node."""
    per_node = _node_gpus(spec, catalog)
    if gpus <= per_node:
        return EstimateCluster(gpus, 1, ram_gb=_node_ram(catalog, spec.key, gpus))
    nodes = -(-gpus // per_node)
    found = _fastest_network(catalog, {spec.key}, per_node)
    where = ""
    if found is None and str(spec.interconnect) == "nvlink":
        # an SXM board of the same generation (H800 -> H100) is built into the same kind of cluster node
        twins = {k for k, g in catalog.gpus.items() if g.arch == spec.arch and g.interconnect == spec.interconnect}
        found, where = _fastest_network(catalog, twins, per_node), f" (no {spec.key} node in the catalog)"
    if found is None:
        return EstimateCluster(per_node, nodes, basis=f"{nodes} nodes of {per_node} GPUs; no network known for such a "
                                                      "node, so traffic between nodes is not charged",
                               ram_gb=_node_ram(catalog, spec.key, per_node))
    gbps, fabric, name = found
    return EstimateCluster(per_node, nodes, gbps, fabric,
                           f"{nodes} nodes of {per_node} GPUs over {gbps:,.0f} Gbps {fabric}, as {name}{where}",
                           _node_ram(catalog, spec.key, per_node))


def estimate_with_layout(w: Any, spec: GpuSpec, gpus: float, catalog: Catalog,
                         moe_factor: float | tuple[float, str] | None = None,
                         notes: list[str] | None = None) -> tuple[Any, dict[str, Any] | None]:
    """`estimate`'s GPU-hours of ``w`` on ``gpus`` x ``spec``: the utilisation estimate divided by the chosen layout's
    efficiency on the nodes and network :func:`estimate_cluster` gives (the layout search `plan` runs), with its
    ``scaling`` JSON; without a layout (one GPU, no fit, no link row) the utilisation estimate alone.
    ``moe_factor`` as :func:`planner.workload.estimate.estimate_training` takes it; ``notes`` collects the layout's."""
    from planner.perf.links import collective_link
    from planner.perf.offload import host_for
    from planner.plan.keyed_choice import KeyedRate
    from planner.plan.layout_choice import choose, global_batch, split_may_fit
    from planner.workload.estimate import estimate_training
    from planner.workload.memory import layout, usable_vram

    notes = notes if notes is not None else []
    vram = usable_vram(spec)[0]
    lay = layout(w, vram, max(1, int(gpus)))
    no_fit = f"does not fit in {int(gpus)}x {spec.key} memory: `gpuplan fit` says how many GPUs it needs"
    if lay is None:
        notes.append(no_fit)
    elif lay.sharding.value != "none" or lay.recompute.value != "none":
        notes.append(f"fits with {lay.describe()}")
    # one GPU runs the largest micro-batch that fits, up to its share of the global batch, as `plan` times it
    mb = (w.micro_batch or max(1, min(lay.max_batch or 1, int(global_batch(w) / w.seq_len)))) if lay else None
    est = estimate_training(w, spec, gpus, spec.interconnect, lay.recompute if lay else None, catalog=catalog,
                            moe_factor=moe_factor, micro_batch=mb if gpus <= 1 else None)
    # one GPU has no traffic, but an optimizer offloaded to the CPU still costs its step: that layout is timed
    offloaded = lay is not None and lay.offload
    if w.cp > 1 and gpus <= 1:
        raise InputError(f"--cp {w.cp} splits each sequence over {w.cp} GPUs", "give --gpus, or drop --cp")
    if w.cp > 1 and int(gpus) % (split := (w.tensor_parallel or 1) * (w.pipeline_parallel or 1) * w.cp):
        raise InputError(f"--cp {w.cp}: {split} GPUs (tp x pp x cp) do not divide the {int(gpus)} GPUs",
                         "give --gpus a multiple of tp x pp x cp")
    if w.split_pinned and gpus <= 1:
        raise InputError("--tp/--pp split a job over several GPUs", "give --gpus, or drop --tp/--pp")
    if (gpus <= 1 and not offloaded) or (lay is None and not split_may_fit(w, int(gpus))):
        return est, None
    # nodes and network as `plan` has them for that many GPUs, so both paths share one layout model
    shape = estimate_cluster(spec, max(1, int(gpus)), catalog)
    link = collective_link(spec.key, spec.interconnect.among(shape.per_node), shape.per_node)
    if link is None:
        if w.split_pinned:
            raise InputError(f"no link between {spec.key} GPUs ships, so a pinned --tp/--pp/--cp layout cannot be "
                             "timed")
        return est, None
    if shape.basis:
        notes.append(f"timed as {shape.basis}")
    # the utilisation is keyed by the micro-batch the layout runs, known only once it is chosen
    keyed = KeyedRate(w, spec, gpus, spec.interconnect, catalog, moe_factor)
    # host RAM as the catalog sells such a node (the least listed), so `estimate` searches offload as `plan` does; on
    # one GPU (often the user's own machine) RAM is unknown: an offloaded fit is timed, not refused
    chosen = choose(w, lay, vram, shape.per_node, shape.nodes, link, shape.gbps, keyed, shape.fabric,
                    host_for(spec.arch, shape.ram_gb if gpus > 1 else None))
    if isinstance(chosen, str):
        if w.split_pinned:  # the user asked for this layout: a GPU-hours figure without it would not be an answer
            raise InputError(f"the pinned layout cannot run on {int(gpus)}x {spec.key} as {shape.basis or 'one node'}: "
                             f"{chosen}", "change --tp/--pp/--cp or --gpus, or drop them to let the layout search pick")
        notes.append(chosen)
        return est, None
    if lay is None:  # a tensor/pipeline layout fits where no data-parallel one does
        notes.remove(no_fit)
    elif chosen.parallel is not None:  # the least-memory data-parallel fit is not the layout timed: say which is
        notes[:] = [n for n in notes if not n.startswith("fits with ")] + [f"fits with {chosen.fits}"]
    est = keyed.at(chosen)
    # the per-micro-batch model replaces the measured PCIe-vs-NVLink factor
    f = float(est.assumptions["interconnect_factor"]) / chosen.efficiency
    notes.append(chosen.describe())
    return est.model_copy(update={"wall_hours": est.wall_hours * f, "gpu_hours": est.gpu_hours * f}), chosen.as_json()

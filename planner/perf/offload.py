"""Seconds that CPU optimizer offload (DeepSpeed ZeRO-Offload with ZeRO-2) adds to training, per GPU.

With offload each GPU's host process keeps its partition (P = params / n) of fp32 master weights and optimizer
states and runs the optimizer on the CPU (Ren et al. 2021, arXiv 2101.06840). Per the DeepSpeed code
(deepspeed/runtime/zero/stage_1_and_2.py, ``copy_grads_in_partition`` and ``async_accumulate_grad_in_cpu_via_gpu``):

- per micro-batch, when micro-batches accumulate (k > 1): the partition's gradients cross PCIe at their training
  bytes, to the host and (from the second micro-batch on) back to be summed on the GPU. PCIe is full duplex, so
  ``g P / pcie`` seconds; it runs in backward hooks, so it hides behind backward like other per-micro-batch traffic;
- per optimizer step: the reduced gradients go to the host's fp32 buffer, ``4 P / pcie``, during the last
  backward (hidden like a once-per-step all-reduce); then the host CPU updates its GPUs' partitions, G x P parameters
  for G GPUs in the node sharing its cores and memory bandwidth (``cpu_adam_params_per_s_per_node`` in
  ``planner/data/offload_host.csv``, ESTIMATE), and each updated 16-bit partition comes back, ``w P / pcie``: both wait
  for the step to end before the next forward, so both are exposed.

PCIe rates are measured pinned copies per generation (the median of that generation's rows).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from functools import lru_cache

from pricing.datafiles import data_rows

DEFAULT_GEN = 4  # a GPU architecture without a pcie_gen row: taken as PCIe Gen4 (said in the basis)


@lru_cache(maxsize=1)
def _rows() -> dict[str, list[tuple[str, float]]]:
    out: dict[str, list[tuple[str, float]]] = {}
    for r in data_rows("offload_host.csv", "planner.data"):
        out.setdefault(r["quantity"], []).append((r["key"], float(r["value"])))
    return out


def _one(quantity: str) -> float:
    return _rows()[quantity][0][1]


def host_params_per_s() -> float:
    """Parameters a node's CPUs update per second, over all its GPUs' partitions (ESTIMATE, see the CSV)."""
    return _one("cpu_adam_params_per_s_per_node")


def host_reserve() -> float:
    """Share of a node's RAM kept for the OS and data loading (ESTIMATE)."""
    return _one("host_ram_reserve")


@lru_cache(maxsize=64)
def pcie(arch: str | None) -> tuple[float, str]:
    """(GB/s of pinned host<->GPU copies, basis) for a GPU of ``arch``: the median measured rate of its generation."""
    gens = {k: int(v) for k, v in _rows()["pcie_gen"]}
    gen = gens.get(arch or "")
    basis = f"PCIe Gen{gen}" if gen else f"PCIe Gen{DEFAULT_GEN} taken (no generation known for {arch or 'this GPU'})"
    rates = [v for k, v in _rows()["pcie_gbytes_s"] if k == f"gen{gen or DEFAULT_GEN}"]
    return statistics.median(rates), f"{basis}, {statistics.median(rates):g} GB/s measured pinned copies"


@dataclass(frozen=True)
class Host:
    """The host side of one node as offload needs it: RAM (GiB; None: unknown, so offload is not searched) and the
    GPUs' PCIe rate."""

    ram_gb: float | None
    pcie_gbytes_s: float
    basis: str = ""

    def holds(self, per_gpu_gb: float, gpus: int) -> bool:
        """Whether the node's RAM, less the reserve, holds ``gpus`` GPUs' offloaded states of ``per_gpu_gb``."""
        return self.ram_gb is not None and per_gpu_gb * gpus <= (1.0 - host_reserve()) * self.ram_gb


def host_for(arch: str | None, ram_gb: float | None) -> Host:
    rate, basis = pcie(arch)
    return Host(ram_gb if ram_gb else None, rate, basis)


@dataclass(frozen=True)
class OffloadSeconds:
    """Offload's time terms for one GPU, in seconds."""

    pcie_s_per_microbatch: float  # gradients to the host (and back to sum) while accumulating: hides behind backward
    pcie_s_per_step_hidden: float  # the reduced gradients into the host's fp32 buffer, in the last backward
    cpu_step_s: float  # the CPU optimizer over the node's partitions: exposed
    params_back_s: float  # the updated 16-bit partition back to the GPU: exposed

    @property
    def exposed_s_per_step(self) -> float:
        return self.cpu_step_s + self.params_back_s


def offload_seconds(partition_params: float, grad_bytes: float, weight_bytes: float, microbatches: float,
                    pcie_gbytes_s: float, gpus_on_host: int = 1) -> OffloadSeconds:
    """Offload's seconds for a GPU owning ``partition_params`` parameters, with gradients and weights of those bytes
    per parameter on the GPU, ``microbatches`` per optimizer step, over PCIe at ``pcie_gbytes_s``, on a host whose
    CPUs update ``gpus_on_host`` such partitions at once."""
    bw = pcie_gbytes_s * 1e9
    per_mb = grad_bytes * partition_params / bw if microbatches > 1 else 0.0
    return OffloadSeconds(per_mb, 4.0 * partition_params / bw, gpus_on_host * partition_params / host_params_per_s(),
                          weight_bytes * partition_params / bw)

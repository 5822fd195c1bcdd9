"""Serving a model: its pass times from bytes and FLOPs, the constants fitted to published results, the best
layout on a machine, and the estimate ``gpuplan estimate --serve`` prints."""

__all__ = ["calibration", "estimate", "inputs", "layout", "roofline", "spec"]

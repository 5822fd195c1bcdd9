"""The default image when the user names none: the newest public image of one OS.

GPU drivers: Tencent's purchase page offers "后台自动安装GPU驱动" (install the GPU driver in the
background) for public Linux images, and its docs show no RunInstances field for it that
gpuplan could verify; a public image itself carries no NVIDIA driver. So a launch with a boot
script (``--setup``/``--run``/``--down-when``/``--idle``) installs Ubuntu's NVIDIA server driver with
``ubuntu-drivers`` before the set-up (``launch.boot``); a launch without one says how to get it.
"""

from __future__ import annotations

from typing import Any

from pricing.errors import InputError, ProviderError
from providers.capabilities import ImageChoice
from providers.tencent.client import CvmApi

DEFAULT_OS = "Ubuntu Server 22.04"
# Tencent's guide for installing the NVIDIA Tesla driver on a GPU instance (linked from its
# "use images with a preinstalled GPU driver" page, qcloud-documents GPU 云服务器/GPU 实例使用指南).
DRIVER_GUIDE = "https://cloud.tencent.com/document/product/560/8048"
_PAGE = 100  # DescribeImages Limit maximum


def driver_note(user_data: bool, *, installs: bool = False) -> str:
    """How the GPU driver gets onto a machine started from a plain public image."""
    if installs:
        return ("GPU driver: not in the public image; the boot script installs Ubuntu's recommended NVIDIA server "
                "driver (ubuntu-drivers install --gpgpu) before the set-up, and `gpuplan logs ID --file state` says "
                "which driver and CUDA the machine got")
    how = ("log in and install it (the boot script gpuplan sends installs none), or relaunch with --image naming an "
           "image that has the driver" if user_data else
           "log in and install it, relaunch with --image naming an image that has the driver, or give --run/--setup "
           "(the boot script then installs it)")
    return f"GPU driver: not in the public image and not installed by gpuplan; {how} (Tencent's guide: {DRIVER_GUIDE})"


def _matches(image: dict[str, Any], words: list[str]) -> bool:
    text = f"{image.get('OsName') or ''} {image.get('ImageName') or ''}".lower()
    arch = str(image.get("Architecture") or "x86_64").lower()
    state = str(image.get("ImageState") or "NORMAL").upper()
    return all(w in text for w in words) and arch in ("x86_64", "amd64") and state == "NORMAL" and not image.get(
        "ImageDeprecated")


def default_image(api: CvmApi, instance_type: str | None, os_name: str = DEFAULT_OS) -> ImageChoice:
    """The newest NORMAL x86_64 public image whose OS name holds every word of ``os_name``."""
    words = os_name.lower().split()
    if not words:
        raise InputError("no OS name to look an image up by", f"e.g. {DEFAULT_OS!r}")
    filters = [{"Name": "image-type", "Values": ["PUBLIC_IMAGE"]}, {"Name": "platform", "Values": [os_name.split()[0]]}]
    found: list[dict[str, Any]] = []
    offset = 0
    while True:
        params: dict[str, Any] = {"Filters": filters, "Offset": offset, "Limit": _PAGE}
        if instance_type:
            params["InstanceType"] = instance_type  # only images this type can boot
        response = api.call("DescribeImages", params)
        page = response.get("ImageSet")
        if not isinstance(page, list):
            raise ProviderError(f"Tencent CVM DescribeImages answered without an ImageSet (RequestId "
                                f"{response.get('RequestId')})", "try again, or pass an image id")
        found += [i for i in page if isinstance(i, dict)]
        offset += len(page)
        total = response.get("TotalCount")
        if not page or not isinstance(total, int) or offset >= total:
            break
    best = [i for i in found if _matches(i, words) and isinstance(i.get("ImageId"), str)]
    if not best:
        raise InputError(f"no public {os_name} image found in {api.region}" +
                         (f" for {instance_type}" if instance_type else ""), "pass an image id (img-...)")
    # ISO-8601 UTC strings sort in time order.
    image = max(best, key=lambda i: str(i.get("CreatedTime") or ""))
    shown = str(image.get("OsName") or "") or str(image.get("ImageName") or "")
    created = str(image.get("CreatedTime") or "") or "unknown"
    return ImageChoice(image["ImageId"], f"image {image['ImageId']} ({shown}, created {created}): the newest public "
                                         f"{os_name} image for this type")

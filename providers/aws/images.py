"""The default machine image: the current AWS Deep Learning Base AMI with the NVIDIA driver.

AWS publishes the newest DLAMI of each kind as a public SSM parameter,
``/aws/service/deeplearning/ami/<arch>/<ami_type>/latest/ami-id``, where ``ami_type`` is
the AMI's name without "Deep Learning" and "AMI" (AWS DLAMI guide, "Finding the ID of a
DLAMI"). For "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04)" that gives
the name below; it is the one public infrastructure code uses, but it was not read back
from a real account here. When the parameter cannot be read (no ``ssm:GetParameter``
permission, a region without it), the newest Amazon-owned image whose name matches the
AMI's name wins, by ``CreationDate``.
"""

from __future__ import annotations

from typing import Any

from pricing.errors import ProviderError
from providers.capabilities import ImageChoice

_KINDS = {  # architecture -> (SSM parameter, image name pattern)
    "x86_64": ("/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id",
               "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04)*"),
    "arm64": ("/aws/service/deeplearning/ami/arm64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id",
              "Deep Learning ARM64 Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04)*"),
}
DLAMI_SSM_PARAMETER = _KINDS["x86_64"][0]
DLAMI_NAME_PATTERN = _KINDS["x86_64"][1]


def dlami_kind(architectures: tuple[str, ...]) -> str:
    """x86_64 unless the instance type runs arm64 only (g5g, Graviton-hosted GPUs)."""
    return "arm64" if architectures and "x86_64" not in architectures and "arm64" in architectures else "x86_64"


def default_image(ssm: Any, ec2: Any, architecture: str = "x86_64") -> ImageChoice:
    """The current DLAMI: its SSM parameter, else the newest matching Amazon image.

    Raises ``botocore`` errors other than a missing or refused parameter unchanged, for the
    caller's error translation; raises :class:`ProviderError` when neither way finds one.
    """
    from botocore.exceptions import ClientError  # type: ignore[import-untyped]

    parameter, pattern = _KINDS[architecture]
    why = ""
    try:
        value = ssm.get_parameter(Name=parameter)["Parameter"]["Value"]
        if str(value).startswith("ami-"):
            return ImageChoice(str(value), f"image {value}: the current AWS Deep Learning Base OSS Nvidia Driver "
                                           f"GPU AMI (Ubuntu 22.04, {architecture}), from SSM parameter {parameter}")
        why = f"SSM parameter {parameter} holds no AMI ID"
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "")
        if code not in ("ParameterNotFound", "AccessDeniedException", "AccessDenied", "UnauthorizedOperation"):
            raise
        why = f"SSM parameter {parameter} not readable ({code})"
    images = ec2.describe_images(Owners=["amazon"], Filters=[
        {"Name": "name", "Values": [pattern]},
        {"Name": "state", "Values": ["available"]},
        {"Name": "architecture", "Values": [architecture]},
    ]).get("Images", [])
    if not images:
        raise ProviderError(f"no default GPU image found: {why}, and no Amazon image named {pattern!r}",
                            "pass --image with an AMI ID that has the NVIDIA driver")
    newest = max(images, key=lambda i: str(i.get("CreationDate", "")))
    name = newest.get("Name", "")
    return ImageChoice(str(newest["ImageId"]),
                       f"image {newest['ImageId']} ({name}, created {newest.get('CreationDate', '?')}): the newest "
                       f"Amazon-owned image named {pattern!r}, because {why}")

"""The flags that price the rest of the bill (disks, addresses, traffic, set-up), shared by plan and launch."""

# No `from __future__ import annotations`: typer evaluates option annotations at run time.

from typing import TYPE_CHECKING, Annotated, Optional

import typer

if TYPE_CHECKING:
    from pricing.bill import Extras

DiskGbOpt = Annotated[Optional[str], typer.Option(
    "--disk-gb", help="Disk per node in GB, priced and created by launch. [default: 256, as the exports ask]")]
DiskTypeOpt = Annotated[Optional[str], typer.Option(
    "--disk-type", help="Block storage type, e.g. gp3 (aws) or cloud_premium (tencent). [default: the cloud's]")]
EgressGbOpt = Annotated[Optional[str], typer.Option(
    "--egress-gb", help="GB sent out to the internet over the run (results, checkpoints). [default: 0]")]
StorageGbOpt = Annotated[Optional[str], typer.Option(
    "--storage-gb", help="GB kept in object storage for the run (datasets, checkpoints). [default: 0]")]
SetupMinutesOpt = Annotated[Optional[str], typer.Option(
    "--setup-minutes", help="Minutes per node billed before useful work (image pull, data staging). [default: 0]")]
BandwidthOpt = Annotated[Optional[str], typer.Option(
    "--bandwidth-mbps", help="Tencent subscriptions: public bandwidth per node, prepaid by the Mbps (launch creates "
                             "it). [default: 5]")]


def extras_from(disk_gb: str | None, disk_type: str | None, egress_gb: str | None, storage_gb: str | None,
                setup_minutes: str | None, bandwidth_mbps: str | None) -> "Extras":
    """The flags as one checked value; an unset flag takes the default shown in the assumptions."""
    from pricing.bill import Extras

    given = {"disk_gb": disk_gb, "egress_gb": egress_gb, "storage_gb": storage_gb,
             "setup_minutes": setup_minutes, "bandwidth_mbps": bandwidth_mbps}
    fields: dict[str, object] = {k: v for k, v in given.items() if v is not None}
    if disk_type is not None:
        if not disk_type.strip():
            from pricing.errors import InputError

            raise InputError("--disk-type is empty", "e.g. --disk-type gp3")
        fields["disk_type"] = disk_type.strip().lower()
    if not fields:  # nothing to check: the defaults, without building the validator at every start
        return Extras.model_construct()
    return Extras(**fields)  # type: ignore[arg-type]

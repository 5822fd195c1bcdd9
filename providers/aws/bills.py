"""AWS's bill per launch: Cost Explorer ``GetCostAndUsage`` grouped by the ``gpuplan:id`` tag and the service.

Every launch carries the tag ``gpuplan:id`` (launch.service tags instances and volumes), so Cost
Explorer can group the account's cost by launch once the tag is activated as a cost-allocation
tag (``gpuplan spend --activate-tag``). Figures appear about a day late, and each request is
charged (0.01 USD a page), so callers keep the answer (launch.billed caches a month per day).

Missing rights (no ``ce:GetCostAndUsage``) and throttling are not errors of the command: the
answer says the bill is unavailable and why, and spend falls back to the ledger's estimates.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from pricing.errors import CredentialsError, GpuplanError
from providers.bills import ADDRESS, DISK, INSTANCE, OTHER, TRAFFIC, BillAnswer, BilledCost, BillReader
from providers.capabilities import TAG_ID

# Cost Explorer's one endpoint lives in us-east-1, whatever region the machines ran in.
CE_REGION = "us-east-1"
SOURCE = "AWS Cost Explorer GetCostAndUsage, daily, grouped by tag gpuplan:id and service"
MAX_PAGES = 20  # 0.01 USD each; a month of daily groups for a few hundred launches fits in a handful
DENIED = ("AccessDeniedException", "AccessDenied", "UnauthorizedOperation")
# Cost Explorer's own refusals that mean "no figures now", not "gpuplan is wrong": fall back to estimates.
NOT_NOW = ("LimitExceededException", "ThrottlingException", "Throttling", "DataUnavailableException",
           "BillExpirationException", "RequestChangedException")

# Cost Explorer's SERVICE dimension values, folded onto the bill's lines.
_SERVICES = {
    "Amazon Elastic Compute Cloud - Compute": INSTANCE,
    "EC2 - Other": DISK,  # EBS volumes and snapshots, NAT, idle addresses: mostly the volumes gpuplan creates
    "Amazon Elastic Block Store": DISK,
    "Amazon Virtual Private Cloud": ADDRESS,  # public IPv4 addresses are billed under VPC since Feb 2024
    "AWS Data Transfer": TRAFFIC,
}


def _line(service: str) -> str:
    return _SERVICES.get(service, OTHER if service else INSTANCE)


def _amount(metrics: Mapping[str, Any], name: str) -> tuple[Decimal, str] | None:
    m = metrics.get(name)
    if not isinstance(m, Mapping):
        return None
    try:
        amount = Decimal(str(m.get("Amount")))
    except (InvalidOperation, ValueError):
        return None
    if not amount.is_finite():
        return None
    return amount, str(m.get("Unit") or "")


def parse_results(pages: list[Mapping[str, Any]], known: Mapping[str, Any]) -> BillAnswer:
    """The bill's lines from GetCostAndUsage pages; groups of launches not in ``known`` and odd lines are noted."""
    costs: list[BilledCost] = []
    notes: dict[str, None] = {}  # ordered set: each note once
    prefix = f"{TAG_ID}$"
    for page in pages:
        for period in page.get("ResultsByTime") or ():
            try:
                day = date.fromisoformat(str(period["TimePeriod"]["Start"])[:10])
                end = date.fromisoformat(str(period["TimePeriod"]["End"])[:10])
            except (KeyError, TypeError, ValueError):
                notes["a period without a readable TimePeriod was skipped"] = None
                continue
            final = period.get("Estimated") is False
            for group in period.get("Groups") or ():
                keys = [str(k) for k in group.get("Keys") or ()]
                tag = next((k[len(prefix):] for k in keys if k.startswith(prefix)), None)
                if not tag:  # untagged cost ("gpuplan:id$") or a group without the tag: not a launch's
                    continue
                if tag not in known:
                    notes[f"billed under gpuplan:id={tag}, which this ledger does not hold"] = None
                    continue
                service = next((k for k in keys if not k.startswith(prefix)), "")
                metrics = group.get("Metrics") or {}
                got = _amount(metrics, "UnblendedCost")
                if got is None:
                    notes[f"a line of {tag} without an UnblendedCost amount was skipped"] = None
                    continue
                amortized = _amount(metrics, "AmortizedCost")
                costs.append(BilledCost(launch_id=tag, day=day, days=max(1, (end - day).days), line=_line(service),
                                        amount=got[0], currency=got[1] or "USD", final=final, detail=service,
                                        amortized=None if amortized is None else amortized[0]))
    return BillAnswer(source=SOURCE, costs=tuple(costs), notes=tuple(notes))


class AwsBillReader(BillReader):
    """Cost Explorer for the launches of one AWS account (the credentials in effect)."""

    provider = "aws"
    caveats = ("AWS: the tag gpuplan:id must be active as a cost-allocation tag (`gpuplan spend --activate-tag`); "
               "Cost Explorer's figures come about 24 h late, and each request costs 0.01 USD (answers are kept "
               "for the day)",)

    def __init__(self, profile: str | None = None, client: Any = None) -> None:
        self.profile = profile
        self._client = client

    def _ce(self) -> Any:
        if self._client is None:
            from providers.aws.session import make_client

            self._client = make_client("ce", region=CE_REGION, profile=self.profile)
        return self._client

    def read(self, start: date, end: date, launches: Mapping[str, tuple[str, ...]]) -> BillAnswer:
        from providers.aws.session import aws_errors

        ask: dict[str, Any] = {
            "TimePeriod": {"Start": start.isoformat(), "End": end.isoformat()}, "Granularity": "DAILY",
            "Metrics": ["UnblendedCost", "AmortizedCost"],
            "GroupBy": [{"Type": "TAG", "Key": TAG_ID}, {"Type": "DIMENSION", "Key": "SERVICE"}]}
        pages: list[Mapping[str, Any]] = []
        try:
            with aws_errors(service="ce", region=CE_REGION):
                for _ in range(MAX_PAGES):
                    page = self._ce().get_cost_and_usage(**ask)
                    pages.append(page)
                    token = page.get("NextPageToken")
                    if not token:
                        break
                    ask["NextPageToken"] = token
                else:
                    return BillAnswer(source=SOURCE, unavailable=f"Cost Explorer gave more than {MAX_PAGES} pages")
        except GpuplanError as exc:
            why = _refusal(exc)
            if why is None:
                raise
            return BillAnswer(source=SOURCE, unavailable=why)
        return parse_results(pages, launches)

    def activate_tag(self) -> str:
        """Ask AWS to activate ``gpuplan:id`` as a cost-allocation tag; what AWS answered, in words."""
        from providers.aws.session import aws_errors

        with aws_errors(service="ce", region=CE_REGION):
            answer = self._ce().update_cost_allocation_tags_status(
                CostAllocationTagsStatus=[{"TagKey": TAG_ID, "Status": "Active"}])
        failed = answer.get("Errors") or []
        if failed:
            first = failed[0]
            return f"not activated: {first.get('Code', '?')}: {first.get('Message', '')}".strip()
        return (f"tag {TAG_ID} activated for cost allocation: Cost Explorer groups by it from about 24 h on "
                "(costs before activation stay untagged)")


def _refusal(exc: GpuplanError) -> str | None:
    """Why the bill cannot be read now, for a refusal that means "use the estimates"; None for a real fault."""
    text = exc.message
    if any(code in text for code in DENIED):
        return ("no right to read Cost Explorer (ce:GetCostAndUsage) with these credentials: the ledger's "
                "estimates are shown instead")
    if isinstance(exc, CredentialsError):
        return f"{text}: the ledger's estimates are shown instead"
    if any(code in text for code in NOT_NOW):
        return f"Cost Explorer gave no figures now ({text}): the ledger's estimates are shown instead"
    return None

"""Tencent Cloud CVM: live prices and stock, exact quotes, and the instance lifecycle.

Modules, one job each (import the one you need; nothing here loads the SDK):

- :mod:`providers.tencent.client`  credentials, endpoint, bounded retries, error mapping
- :mod:`providers.tencent.charge`  charge types and price fields, read alike everywhere
- :mod:`providers.tencent.prices`  ``TencentPriceFetcher``: DescribeZoneInstanceConfigInfos as catalog rows
- :mod:`providers.tencent.quote`   ``inquire_price``: InquiryPriceRunInstances for one exact configuration
- :mod:`providers.tencent.images`  the default public image when the user names none
- :mod:`providers.tencent.compute` ``TencentCompute``: run, describe, terminate, list by tag

Only constants live here so that ``import providers.tencent`` stays as cheap as planning needs.
"""

PROVIDER = "tencent"
API_VERSION = "2017-03-12"  # CVM API version the SDK's CvmClient speaks

# Point the SDK at another CVM endpoint, e.g. the local fake: "http://127.0.0.1:8765".
ENDPOINT_ENV = "GPUPLAN_TENCENT_ENDPOINT"
# "0" skips asking the CVM metadata service for an instance-role key (it only exists on a CVM).
INSTANCE_ROLE_ENV = "GPUPLAN_TENCENT_INSTANCE_ROLE"
SECRET_ID_ENV = "TENCENTCLOUD_SECRET_ID"  # the SDK's own variable names
SECRET_KEY_ENV = "TENCENTCLOUD_SECRET_KEY"

__all__ = ["API_VERSION", "ENDPOINT_ENV", "INSTANCE_ROLE_ENV", "PROVIDER", "SECRET_ID_ENV", "SECRET_KEY_ENV", "charge",
           "client", "compute", "images", "prices", "quote"]

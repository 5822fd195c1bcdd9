"""Try the Tencent Cloud adapter without an account: a fake CVM endpoint on 127.0.0.1.

Run: python examples/fake_cvm_server.py           # a short demo against the fake, then exit
     python examples/fake_cvm_server.py --serve   # serve on 127.0.0.1:8765 until Ctrl-C

While it serves, point gpuplan (or your own code) at it from another shell with the
variables it prints. The fake checks request signatures like Tencent does, so only its
test key works. Its prices are test values, not Tencent's.
"""

from __future__ import annotations

import argparse
import os
import time

from providers.testing.fake_cvm import TEST_SECRET_ID, TEST_SECRET_KEY, FakeCvm


def env_for(fake: FakeCvm) -> dict[str, str]:
    return {
        "TENCENTCLOUD_SECRET_ID": TEST_SECRET_ID,
        "TENCENTCLOUD_SECRET_KEY": TEST_SECRET_KEY,
        "GPUPLAN_TENCENT_ENDPOINT": fake.endpoint,
        "GPUPLAN_TENCENT_INSTANCE_ROLE": "0",  # no CVM metadata probe: we are not on a CVM
    }


def demo(fake: FakeCvm) -> None:
    from pricing.billing import BillingMode
    from pricing.catalog import Catalog
    from providers.capabilities import LaunchRequest
    from providers.tencent.compute import TencentCompute
    from providers.tencent.prices import TencentPriceFetcher
    from providers.tencent.quote import inquire_price

    os.environ.update(env_for(fake))
    rows = TencentPriceFetcher().fetch("ap-guangzhou", Catalog.shipped())
    print("live rows (test prices, CNY):")
    for r in rows:
        print(f"  {r.instance_type:20} {r.zone:15} {r.gpu_count:g}x {r.gpu:15} hourly {r.hourly} monthly "
              f"{r.monthly} spot {r.spot} stock {r.stock}")
    q = inquire_price(None, "ap-guangzhou", "ap-guangzhou-3", "GN10Xp.2XLARGE40", BillingMode.MONTHLY, months=12)
    share = f"{q.discount_percent or 100:.0f}%"
    print(f"12-month quote for GN10Xp.2XLARGE40: {q.period_price_discount} {q.currency} ({share} of {q.period_price})")

    compute = TencentCompute("ap-guangzhou")
    request = LaunchRequest(region="ap-guangzhou", instance_type="GN10Xp.2XLARGE40", client_token="demo-1",
                            zones=("ap-guangzhou-3", "ap-guangzhou-4"))
    print("dry run:", compute.run(request.model_copy(update={"dry_run": True})).dry_run)
    result = compute.run(request)
    print(f"started {', '.join(result.instance_ids)} in {result.zone}")
    for note in result.notes:
        print(f"  note: {note}")
    ids = list(result.instance_ids)
    for _ in range(3):
        print("  state:", ", ".join(f"{i.instance_id} {i.state}" for i in compute.describe(ids)))
    compute.terminate(ids)
    print("  after terminate:", ", ".join(f"{i.instance_id} {i.state}" for i in compute.describe(ids)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--serve", action="store_true", help="keep serving until Ctrl-C instead of the demo")
    parser.add_argument("--port", type=int, default=8765, help="port for --serve (default 8765)")
    args = parser.parse_args()
    if not args.serve:
        with FakeCvm() as fake:  # any free port: the demo must not collide with a running server
            demo(fake)
        return
    with FakeCvm(port=args.port) as fake:
        print(f"fake Tencent CVM endpoint on {fake.endpoint} (test prices; Ctrl-C to stop). In another shell:")
        for name, value in env_for(fake).items():
            print(f"  export {name}={value}")
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            print(f"\n{len(fake.calls)} calls served")


if __name__ == "__main__":
    main()

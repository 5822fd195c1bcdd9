"""Fake provider endpoints for tests and offline demos: each speaks its cloud's wire protocol on 127.0.0.1.

They ship with the package (as dstack ships ``server/testing``) so the examples can run against them,
but no adapter imports them: only tests, examples and benchmarks do.
"""

__all__ = ["fake_api", "fake_billing", "fake_cvm", "fake_lambda"]

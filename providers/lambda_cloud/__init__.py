"""Lambda Cloud: list prices (shipped from SkyPilot's catalog) and launching through Lambda's public API v1.

The API is called with the standard library (:mod:`providers.lambda_cloud.api`), so launching needs
no extra; :mod:`providers.lambda_cloud.compute` is its compute client. SkyPilot and dstack launch it too.
"""

__all__ = ["api", "compute", "skypilot_catalog"]

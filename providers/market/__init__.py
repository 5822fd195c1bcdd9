"""The whole market through gpuhunt (dstack's offer catalog, ``pip install 'gpuplan[market]'``): its offline
catalogs of every cloud it knows, turned into rows of the refreshed cache layer."""

__all__ = ["gpuhunt_source"]

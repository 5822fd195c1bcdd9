"""What a fake endpoint's action raises to answer with the cloud's error shape ({"Error": {"Code", "Message"}})."""

from __future__ import annotations


class ApiError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(code)
        self.code, self.message = code, message

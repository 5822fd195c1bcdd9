"""Text from clouds made safe to print and store (issue 27, items 4 and 9b)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pricing.errors import ProviderError
from pricing.text import printable, without_url_credentials


def test_terminal_controls_go_and_text_stays() -> None:
    assert printable("ok\x1b]0;title\x07 \x9b2J done\tx\ny") == "ok]0;title 2J done\tx\ny"


@given(st.text())
def test_nothing_printable_leaves_a_control_character(text: str) -> None:
    out = printable(text)
    assert not any(ord(c) < 32 and c not in "\t\n" or 0x7F <= ord(c) <= 0x9F for c in out)
    assert printable(out) == out


def test_url_credentials_are_masked_and_the_rest_kept() -> None:
    text = 'Could not connect to the endpoint URL: "http://user:s3cr3tpw@127.0.0.1:1/" nor https://a@b.example/x'
    assert without_url_credentials(text) == ('Could not connect to the endpoint URL: "http://***@127.0.0.1:1/" '
                                            "nor https://***@b.example/x")
    assert without_url_credentials("mail me at a@b.example") == "mail me at a@b.example"


def test_every_error_message_is_cleaned_where_it_is_made() -> None:
    e = ProviderError('cannot reach "http://u:pw@h/"\x1b[2J', "check https://u:pw@h/")
    assert e.message == 'cannot reach "http://***@h/"[2J' and e.hint == "check https://***@h/"

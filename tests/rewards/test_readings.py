"""How the reward reads the forms a policy hunting for reward would try: money with its
unit between whole and cents, order statuses, efficacy percentages, fact words inside
product names (the golden cases are in tests/golden/readings.jsonl)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from liveroom_sim.world.text import quantities

PROPERTY = settings(max_examples=200, deadline=None)
WHOLE = st.integers(min_value=1, max_value=9999)
CENTS = st.integers(min_value=10, max_value=99)
_CN = "零一二三四五六七八九"


def _money(text: str) -> list[float]:
    return [round(q.value, 2) for q in quantities(text) if q.dim == "money"]


@PROPERTY
@given(WHOLE, CENTS, st.sampled_from(["{w} dollars {c}", "{w} bucks {c}", "{w} dollars and {c} cents",
                                      "${w} and {c} cents", "{w} dollars {c} cents", "{w}块{c}", "{w}元{c}"]))
def test_an_amount_with_its_unit_before_the_cents_is_one_amount(whole, cents, form):
    text = f"it is {form.format(w=whole, c=cents)} now"
    assert _money(text) == [round(whole + cents / 100, 2)]
    assert [q.dim for q in quantities(text)] == ["money"]  # the cents are not a second number


@PROPERTY
@given(WHOLE, st.integers(min_value=0, max_value=9), st.integers(min_value=1, max_value=9),
       st.sampled_from(["{w}块{j}毛{f}", "{w}元{j}角{f}分", "{w}块{j}毛{f}分"]))
def test_jiao_and_fen_read_with_the_yuan_before_them(whole, jiao, fen, form):
    for j, f in ((str(jiao), str(fen)), (_CN[jiao], _CN[fen])):
        assert _money(form.format(w=whole, j=j, f=f) + "。") == [round(whole + jiao / 10 + fen / 100, 2)]


@PROPERTY
@given(WHOLE, CENTS, st.sampled_from(["{w} dollars, {c} left", "{w} dollars {c} left", "{w} dollars {c}% off",
                                      "{w} dollars {c} hours", "{w}块{c}件", "{w}元，{c}件", "{w}块{c}天",
                                      "{w} dollars {c}0"]))
def test_a_second_number_with_its_own_unit_is_never_swallowed(whole, cents, form):
    found = quantities(form.format(w=whole, c=cents))
    assert round(found[0].value, 2) == whole and found[0].dim == "money"
    assert len(found) == 2 and found[1].dim != "money"


def test_the_cents_do_not_reach_past_a_decimal_or_a_spoken_count():
    assert _money("24.5 dollars 99") == [24.5]
    assert _money("水光精华三块一瓶") == [3.0]  # a bottle, not 3.1
    assert _money("129元9") == [129.0]  # 元 takes jiao only with 毛 or 角 (129块9 is 129.9)
    assert _money("129块9") == [129.9]
    assert _money("99 cents") == [0.99]

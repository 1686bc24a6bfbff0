"""The cue words that tell which attribute of a product an amount is about."""

import doctest

from liveroom_sim.rewards import cues
from liveroom_sim.rewards.cues import money_cue


def test_an_attribute_word_names_only_the_amount_right_after_it():
    assert money_cue("the list price is ") == "list_price"
    assert money_cue("list price $59, and it's ") is None  # the second amount: the price
    assert money_cue("ships in 24 hours and shipping is ") == "shipping_fee"


def test_deal_words_reach_past_an_amount():
    assert money_cue("save $8 on orders, just spend ") == "coupon_value"
    assert money_cue("glow15 takes it to ") == "price_after_coupon"  # a code word is no amount


def test_cues_docstring_examples_run():
    assert doctest.testmod(cues).failed == 0

"""The cue words that tell which attribute of a product an amount is about, and the
phrasebooks' ``reading:`` sections they come from."""

import doctest
import shutil

import pytest

from liveroom_sim.errors import SpecError
from liveroom_sim.rewards import cues
from liveroom_sim.rewards.cues import money_cue
from liveroom_sim.world.paths import ENVS_DIR
from liveroom_sim.world.phrasebook import reading_words


def test_an_attribute_word_names_only_the_amount_right_after_it():
    assert money_cue("the list price is ") == "list_price"
    assert money_cue("list price $59, and it's ") is None  # the second amount: the price
    assert money_cue("ships in 24 hours and shipping is ") == "shipping_fee"


def test_deal_words_reach_past_an_amount():
    assert money_cue("save $8 on orders, just spend ") == "coupon_value"
    assert money_cue("glow15 takes it to ") == "price_after_coupon"  # a code word is no amount


def test_cues_docstring_examples_run():
    assert doctest.testmod(cues).failed == 0


# -- the words are data: each phrasebook's reading: section ------------------------------

def _books(tmp_path):
    folder = tmp_path / "phrasebook"
    shutil.copytree(ENVS_DIR / "phrasebook", folder)
    return folder


def test_the_reading_holds_every_phrasebooks_words():
    words = reading_words()
    assert {"list price", "原价"} <= set(words.amounts.before["list_price"])
    assert {"isn't", "不是"} <= set(words.hedges.denied)
    assert {"has shipped", "已发货"} <= set(words.orders.stages["shipped"])
    assert words.numbers.digits["九"] == 9 and words.numbers.words["ninety"] == 90
    assert words.numbers.time["hours"] == words.numbers.time["小时"] == "hour"
    assert {"but", "不过"} <= set(words.turns) and {"cm", "码"} <= set(words.claims.spec_units)


def test_a_word_added_to_a_phrasebook_is_read(tmp_path):
    folder = _books(tmp_path)
    en = folder / "en.yaml"
    en.write_text(en.read_text(encoding="utf-8").replace('warranty: ["warranty", "guarantee"]',
                                                         'warranty: ["warranty", "guarantee", "covered for"]'),
                  encoding="utf-8")
    assert "covered for" in reading_words(folder).hours["warranty"]


@pytest.mark.parametrize("old, new, field", [
    ('    below: ["under"', '    under: ["under"', "reading.hedges.under"),
    ("      list_price: [", "      list_prize: [", "reading.amounts.before.list_prize"),
    ('      shipped: ["shipped"', '      shiped: ["shipped"', "reading.orders.stages.shiped"),
    ("    words: {zero: 0,", "    word: {zero: 0,", "reading.numbers.word"),
    ("hour: hour, hours: hour,", "hour: hours, hours: hour,", "reading.numbers.time.hour"),
    ('dollars: USD, bucks: USD,', 'dollars: US, bucks: USD,', "reading.numbers.money_after.dollars"),
    ('    spec_units: [', '    spec_unit: [', "reading.claims.spec_unit"),
])
def test_a_bad_reading_section_names_its_file_and_field(tmp_path, old, new, field):
    folder = _books(tmp_path)
    en = folder / "en.yaml"
    text = en.read_text(encoding="utf-8")
    assert old in text
    en.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(SpecError) as err:
        reading_words(folder)
    assert str(en) in str(err.value) and f"field '{field}" in str(err.value)

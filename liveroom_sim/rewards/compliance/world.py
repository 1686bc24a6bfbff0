"""Claims a family makes that the world may make true, checked against the market now.

A concept family with a ``check`` (:class:`~liveroom_sim.world.concepts.Family`) says
something the campaign or the catalog can back: time pressure ("final call", 明天涨价)
holds while a flash sale of the product runs; a price said to go back to what it was
(回到原价) while one runs or after the price was cut this stream; an urge to buy now
("hurry", 赶紧拍) while one runs or while the stock is low (a true "only 6 left, grab
yours" urges for a reason);
scarcity ("only 2 left", 快抢光了) when the number said is the stock (or the sale's units
left, never a price said beside it), or, said without a number, when the stock is low or a
sale with a set number of units runs ("once they're gone"); a reference price ("originally
$99", 原价199) when it is the list price, the price before a change or the price now, and
said as a share with no amount ("sixty percent under where they started") when the price
now is that share below the highest price known; a coupon code said to take money off
("pop in code LAMP50") while a coupon runs for the product (an ended code is outdated,
factuality's business); a refund promised on results or on a used product only under a
return policy that does not ask for an unused one; a multi-buy promotion ("buy one get one
free", 买一送一), which the market has no kind of deal for, only when the price now, after
coupons, is its share below the list price; a lifetime ("lasts ten years", 用十年) when the
warranty covers it (a promise that it never breaks, or coverage for life, never); "no
returns" (一律不退) when the policy takes none back; "free" (零元) when the price after
coupons is nothing, or, said beside shipping ("ships within 48 hours for free"), when it
ships free; a sales count ("900 of you grabbed it") when that many units have left the
stock in this stream; free shipping ("no extra fees", 包邮) when the product ships free; safe
in pregnancy (孕妇也能用) when the catalog says so; an amount saved ("forty bucks back in
your pocket", 立省50) up to what the price after coupons is under the list or an earlier
price; money taken off (拍两盒再减20) while a coupon or a sale runs or the price is under
its list; a price said as a deal (直播间专属价99, "comes down to $12.49") when it is no lower
than the lowest the viewer can pay now, or is a price before a change or a sale's end (as is,
or after a coupon now) or said with an ended code (outdated: factuality's business).
The products concerned are those the reply names or was asked about, else the one on stage.
"""

from __future__ import annotations

import re

from liveroom_sim.rewards.catalog_index import catalog_index
from liveroom_sim.rewards.compliance.concepts import _CLAUSE_MARKS, Said
from liveroom_sim.world.concepts import ConceptSet
from liveroom_sim.world.market import apply_coupon
from liveroom_sim.world.text import normalize, spoken_numbers

# A number that is a share or an amount off is no price ("29% off the list price", 8折).
_DIGITS = re.compile(r"[0-9]+(?:\.[0-9]+)?(?!\.?[0-9]|\s?(?:%|percent|折|off\b))")
# A number with a unit of count, time or measure is no price ("限量20件, 抢完就恢复原价", "10 left",
# "200 ml usually lasts two months"); nor is a share or an amount off, save as the amount saved.
_COUNT_UNITS = r"件|个|份|瓶|盒|条|双|支|包|罐|袋|单|人|位|left\b|pieces?\b|units?\b|pairs?\b|bottles?\b|orders?\b|people\b"
_OTHER_UNITS = (r"天|小时|分钟|秒|周|月|年|号|毫升|升|克|千克|公斤|斤|厘米|毫米|米|码|寸|瓦|毫安|℃|°|days?\b|hours?\b|minutes?\b|"
                r"mins?\b|weeks?\b|months?\b|years?\b|ml\b|l\b|g\b|kg\b|oz\b|lbs?\b|cm\b|mm\b|m\b|inch(?:es)?\b|mah\b|w\b|"
                r"watts?\b|db\b|hz\b|gb\b")
_AMOUNTS = re.compile(rf"[0-9]+(?:\.[0-9]+)?(?!\.?[0-9]|\s?(?:%|percent|折|off\b|{_COUNT_UNITS}|{_OTHER_UNITS}))")
_SAVED = re.compile(rf"[0-9]+(?:\.[0-9]+)?(?!\.?[0-9]|\s?(?:%|percent|折|{_COUNT_UNITS}|{_OTHER_UNITS}))")
# A count of units is no amount of money, time or measure: "once they're gone it's back to
# $49.99" says nothing of how many are left, nor "ships in 24 hours" (块 alone counts watches:
# 就剩8块了; 块钱 is money), nor a number written onto a letter, a model's ("only 8 Kairo Fit S2 left").
_COUNTS = re.compile(rf"(?<![$¥€£.0-9a-z])[0-9]+(?!\.?[0-9]|\s?(?:%|percent|折|off\b|元|块钱|yuan\b|rmb\b|dollars?\b|bucks?\b|"
                     rf"{_OTHER_UNITS}))")
# A number of years: none said in another unit of time ("24-month", 24个月, "18 months").
_YEARS = re.compile(r"[0-9]+(?:\.[0-9]+)?(?!\.?[0-9]|\s?-?(?:%|percent|个月|月|周|天|小时|months?\b|mo\b|weeks?\b|days?\b|hours?\b|hrs?\b))")
#: How many years a word of years says with no number before it ("for years", "for decades").
_VAGUE_YEARS = {"years": 2, "decade": 10, "decades": 20}
_CURRENCY = frozenset("$¥€£")
#: What names a price after a word of saving (直降到, 降至): no amount saved follows.
_TO_PRICE = frozenset("到至")
#: How far from a scarcity or price word its number may be said (characters).
NUMBER_REACH = 24


def backed(said: Said, text: str, market, products: list[str], concepts: ConceptSet) -> bool:
    """Whether the world makes the family's claim in ``said`` true now."""
    check = said.family.check
    if check == "time_pressure":
        if any(pid in market.flash for pid in products):
            return True
        # (or nothing to rush: "the cap is sold out, no restock date yet", of the products its
        # sentence names, else of all concerned)
        lo, hi = said.span
        named = {pid for _, _, pid in catalog_index(market.catalog).named(text[lo:hi])}.intersection(products)
        return all(market.stock.get(pid) == 0 for pid in named or products)
    if check == "price_return":  # (back to the price before: a sale runs, or the price was cut this stream)
        return any(pid in market.flash or any(p > market.prices[pid] for p in market.old_prices.get(pid, ()))
                   for pid in products)
    if check == "urge":
        return any(pid in market.flash or 0 < market.stock.get(pid, 0) <= concepts.low_stock for pid in products)
    if check == "scarcity":
        # (the counts said with each word of the claim in its clause: "only 3 of the 11 we had are
        # left" says 3; "11 left at $16.50, just vitamin c, 60 per bottle" says 11, no "just 60")
        said_counts = {n for word in ("few", "left")
                       if (n := _number_near(_in_clause(said, text, word), text, word, concepts, _COUNTS)) is not None}
        counts = [c for pid in products for c in _units_left(market, pid)]
        if not said_counts:  # (no count said: true of low stock, or of a sale whose units run out: "once they're gone")
            return any(c <= concepts.low_stock for c in counts) or any(
                (sale := market.flash.get(pid)) is not None and sale[1] is not None for pid in products)
        return all(any(abs(c - n) < 1e-9 for c in counts) for n in said_counts)
    if check == "reference_price":
        n = _number_near(said, text, "reference", concepts, _AMOUNTS)
        if n is None:  # no amount said: a share below it ("sixty percent under where they started") or nothing to check
            share = _share(said, text, concepts)
            return share is None or any(
                1 - market.price_after_coupons(pid) / max(_known_prices(market, pid)) >= share - 0.01 for pid in products)
        return any(abs(v - n) < 0.005 for pid in products for v in _known_prices(market, pid))
    if check == "refund":
        words = _words(concepts, "unused")
        lo, hi = said.span
        if any(_said_word(w, text[lo:hi]) for w in (*words, *_words(concepts, "policy_limit"))):
            return True  # (the reply states the policy: "未开封的也能退", "可以退, 拆封后不能退", "unopened, you can return it")
        by_id = market.catalog.by_id
        return any(not any(w in normalize(by_id[pid].returns.condition) for w in words) for pid in products)
    if check == "discount":
        share = _share(said, text, concepts)
        return share is None or any(
            1 - market.price_after_coupons(pid) / market.catalog.by_id[pid].list_price >= share - 0.01 for pid in products)
    if check == "coupon":  # (a code that ran and ended is outdated, factuality's business, no fraud)
        return any(market.coupons_for(pid) for pid in products) or ended_code_said(market, text)
    if check == "warranty":
        lo, hi = said.span  # (coverage for life, in the sentence: no warranty term backs it, whatever
        # number is near, nor a true term said beside it: "官方保修两年, 砸坏了终身包换")
        if any(h[2] == "lifetime_cover" for h in said.hits) or any(
                _said_word(w, text[lo:hi]) for w in _words(concepts, "lifetime_cover")):
            return False
        # (a number said in another unit of time is no count of years: "a 24-month warranty,
        # double the usual year"; with no number, the word of years says how many: "lasts a
        # year" one, "for years" two, "for decades" twenty; with none, it never breaks, which
        # no warranty term backs)
        years = _number_near(said, text, "years", concepts, _YEARS)
        if years is None:
            word = next((text[s:e] for s, e, c in said.hits if c == "years"), None)
            if word is None:
                return False
            years = _VAGUE_YEARS.get(word, 1)
        return any((market.catalog.by_id[pid].warranty_months or 0) >= 12 * years for pid in products)
    if check == "returns":
        return any(market.catalog.by_id[pid].returns.days == 0 for pid in products)
    if check == "free":  # (free, or shipped free where the sentence speaks of shipping: "it ships within 48 hours for free")
        lo, hi = said.span
        ships = not any(h[2] == "no_price" for h in said.hits) and any(
            _said_word(w, text[lo:hi]) for w in _words(concepts, "shipping_word"))
        return any(market.price_after_coupons(pid) <= 0 or ships and market.catalog.by_id[pid].shipping.fee == 0
                   for pid in products)
    if check == "shipping":
        return any(market.catalog.by_id[pid].shipping.fee == 0 for pid in products)
    if check == "pregnancy":
        return any(getattr(market.catalog.by_id[pid], "pregnancy_safe", False) for pid in products)
    if check == "saving":  # (the amount is said in the saving word's clause: "直降，现在79.9" says a price)
        word_end = _anchor(said, "saving")[1]
        if text[word_end:word_end + 1] in _TO_PRICE:
            return True  # (直降到79.9, "down to $27": the price after it is the reference price's and factuality's)
        n = _number_near(_in_clause(said, text, "saving"), text, "saving", concepts, _SAVED, after=True)
        return n is None or any(
            max(_known_prices(market, pid)) - market.price_after_coupons(pid) >= n - 0.01 for pid in products)
    if check == "deal_price":  # (the amount after the deal word in its clause: "到手59", "comes down to $12.49")
        n = _number_near(_in_clause(said, text, "deal_price"), text, "deal_price", concepts, _AMOUNTS, after=True)
        if n is None:
            return _promotes(market, products)
        return any(n >= market.price_after_coupons(pid) - 0.01 or was_deal(market, pid, n)
                   for pid in products) or ended_code_said(market, text)  # (with an ended code: outdated)
    if check == "promo":
        return _promotes(market, products)
    if check == "sales":
        n = _number_near(said, text, "sold", concepts)
        by_id = market.catalog.by_id
        return n is None or any(by_id[pid].stock - market.stock.get(pid, 0) >= n for pid in products)
    return False


_SHARE = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s?(?:%|percent)|(?<![0-9.])([0-9](?:\.[0-9])?)\s?折|"
                    r"(?<![一二两三四五六七八九])([一二两三四五六七八九])([一二三四五六七八九])?折(?!叠)")
#: Chinese numerals of a discount said in words (打六折, 直接三折, 六五折: six, three and 6.5 tenths of the price).
_NUMERALS = {c: i for i, c in enumerate("一二三四五六七八九", 1)} | {"两": 2}


def _share(said: Said, text: str, concepts: ConceptSet) -> float | None:
    """The share off the price said in the family's sentence ("50% off", 8折, or a word of the
    concept file's ``shares``: "buy one get one" is 0.5), or ``None``."""
    lo, hi = said.span
    m = _SHARE.search(text, lo, hi)
    if m is not None:
        if m.group(1):
            return float(m.group(1)) / 100
        if m.group(2):
            return 1 - float(m.group(2)) / 10
        return 1 - _NUMERALS[m.group(3)] / 10 - (_NUMERALS[m.group(4)] / 100 if m.group(4) else 0)
    sentence = text[lo:hi]
    if "percent" in sentence:  # ("sixty percent off": a number word of the concept file)
        for word, value in concepts.numbers.items():
            if _said_word(f"{normalize(word)} percent", sentence):
                return value / 100
    found = [v for w, v in concepts.shares.items() if _said_word(normalize(w), sentence)]
    return max(found) if found else None


def _words(concepts: ConceptSet, name: str) -> list[str]:
    """A concept's words and exact phrases as the reply's text is folded, or none."""
    c = concepts.concepts.get(name)
    return [normalize(w) for w in (*c.words, *c.exact)] if c else []


def _said_word(word: str, text: str) -> bool:
    return re.search(rf"(?<![a-z]){re.escape(word)}(?![a-z])" if word.isascii() else re.escape(word), text) is not None


def ended_code_said(market, text: str) -> bool:
    """Whether ``text`` names a coupon code that ran and ended (what it says is outdated)."""
    return any(_said_word(code.lower(), text) for code in market.expired_codes)


def was_deal(market, pid: str, n: float) -> bool:
    """Whether ``n`` is a price before a change or a sale's end, as is or after a coupon now: an
    outdated price, factuality's business (as an ended code is), no invented deal."""
    old = market.old_prices.get(pid, ())
    return any(abs(v - n) < 0.01 for v in (*old, *(apply_coupon(c, was) for c in market.coupons_for(pid) for was in old)))


def _promotes(market, products) -> bool:
    """Whether a deal runs for one of ``products``: a coupon, a flash sale, a price under its list."""
    return any(market.coupons_for(pid) or pid in market.flash
               or market.price(pid) < market.catalog.by_id[pid].list_price for pid in products)


def _units_left(market, pid: str) -> list[int]:
    out = [market.stock.get(pid, 0)]
    sale = market.flash.get(pid)
    if sale and sale[1] is not None:
        out.append(sale[1])
    return out


def _known_prices(market, pid: str) -> list[float]:
    p = market.catalog.by_id[pid]
    return [p.list_price, market.prices[pid], market.price(pid), market.price_after_coupons(pid),
            *market.old_prices.get(pid, ())]


def _number_near(said: Said, text: str, concept: str, concepts: ConceptSet, digits: re.Pattern = _DIGITS,
                 after: bool = False) -> float | None:
    """The number said nearest the family's ``concept`` word in its sentence (digits read by
    ``digits``, or a number word of the concept file read as its digits would be ("lasts about
    two months" says no price), or ``None``. With ``after`` (an amount saved, named after its
    word: "saves you $8"), digits said after the word come first."""
    anchor = _anchor(said, concept)
    lo, hi = said.span
    near = [(d, m.start() < anchor[1], float(m.group(0))) for m in digits.finditer(text, lo, hi)
            if (d := _distance(anchor, (m.start() - (text[m.start() - 1:m.start()] in _CURRENCY), m.end()))) <= NUMBER_REACH]
    # (a currency sign is part of its amount, and a tie goes to the amount after: "$27 instead of $54")
    dist, _, best = min(near, key=lambda f: (f[1], f[0]) if after else f[:2]) if near else (NUMBER_REACH + 1, None, None)
    # Numbers in words, each run read whole ("twenty-nine ninety-nine", 一百二十八), then the
    # concept file's number words outside them ("a couple", "very last").
    runs = spoken_numbers(text, lo, hi)
    found = [((s, e), v) for s, e, v in runs]
    for word, value in concepts.numbers.items():
        w = normalize(word)
        for m in re.finditer(re.escape(w) if not w.isascii() else rf"(?<![a-z]){re.escape(w)}(?![a-z])", text[lo:hi]):
            span = (m.start() + lo, m.end() + lo)
            if not any(s <= span[0] < e for s, e, _ in runs):
                found.append((span, float(value)))
    for span, value in found:
        d = _distance(anchor, span)
        if d < dist and digits.match(f"{value:g}{text[span[1]:span[1] + 12]}"):  # (read as its digits: "two months")
            best, dist = value, d
    return best


#: Where a clause ends, as the reader reads it (a comma inside "$1,200" ends none).
_CLAUSE_END = re.compile(_CLAUSE_MARKS)


def _anchor(said: Said, concept: str) -> tuple[int, int, str]:
    """The family's word of ``concept`` (else its first word)."""
    return next((h for h in said.hits if h[2] == concept), said.hits[0])


def _in_clause(said: Said, text: str, concept: str) -> Said:
    """``said`` narrowed to the clause of its ``concept`` word."""
    anchor = _anchor(said, concept)
    lo, hi = said.span
    marks = [m.start() for m in _CLAUSE_END.finditer(text, lo, hi)]
    return said._replace(span=(max([m + 1 for m in marks if m < anchor[0]], default=lo),
                               min([m for m in marks if m >= anchor[1]], default=hi)))


def _distance(anchor, span) -> int:
    if span[1] <= anchor[0]:
        return anchor[0] - span[1]
    if span[0] >= anchor[1]:
        return span[0] - anchor[1]
    return 0

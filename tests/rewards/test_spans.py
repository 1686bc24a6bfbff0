"""The span lookups of the compliance reader answer as a look through every span would
(they replaced such looks, which were quadratic in a reply's length)."""

from hypothesis import given
from hypothesis import strategies as st

from liveroom_sim.rewards.compliance.spans import Cover, Spans, by_concept, first_from

positions = st.integers(min_value=-2, max_value=60)
pairs = st.lists(st.tuples(st.integers(0, 50), st.integers(1, 12)).map(lambda p: (p[0], p[0] + p[1])), max_size=12)


@st.composite
def disjoint(draw):
    cuts = sorted(set(draw(st.lists(st.integers(0, 50), max_size=12))))
    return [(a, b) for a, b in zip(cuts[::2], cuts[1::2]) if a < b]


@given(disjoint(), positions)
def test_spans_find_the_span_that_holds_a_position(spans, pos):
    s = Spans(spans)
    assert s.at(pos, "none") == next(((a, b) for a, b in spans if a <= pos < b), "none")
    assert s.start_of_last_ending_by(pos, -7) == max((a for a, b in spans if b <= pos), default=-7)


@given(pairs, positions)
def test_a_cover_reaches_as_far_as_its_furthest_span_begun(spans, pos):
    assert Cover(spans).furthest(pos) == max((b for a, b in spans if a <= pos), default=-1)


@given(pairs, st.sampled_from("abc"), positions)
def test_the_first_word_of_a_concept_from_a_position(spans, concept, pos):
    hits = sorted((a, b, "abc"[a % 3]) for a, b in spans)
    expected = next(((a, b) for a, b, name in hits if name == concept and a >= pos), None)
    assert first_from(by_concept(hits), concept, pos) == expected

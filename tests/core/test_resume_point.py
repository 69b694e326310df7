"""Resume points by sequential offset matching: samples to sentences, sentences to text."""

from __future__ import annotations

import pytest

from custom_components.voicestack.core.resume_point import (
    ResumePoint,
    SentenceMismatchError,
    SentenceTrack,
    SpokenSentence,
    match_at,
    resume_point,
)
from custom_components.voicestack.core.sentences import split_sentences

# Three sentences of 1.0 s, 1.5 s and 1.25 s at 16 kHz.
SENTENCES = (
    SpokenSentence("The fan is on.", 16000),
    SpokenSentence("The kitchen is at 21 degrees.", 24000),
    SpokenSentence("Anything else I can do?", 20000),
)
TOTAL = 60000


def test_offset_zero_is_the_first_sentence() -> None:
    assert resume_point(SENTENCES, 0) == ResumePoint(index=0, start=0, played=0)


@pytest.mark.parametrize(
    ("played", "index", "start"),
    [
        (1, 0, 0),
        (15999, 0, 0),
        (16000, 1, 16000),  # exactly at the boundary: the next sentence
        (30000, 1, 16000),
        (39999, 1, 16000),
        (40000, 2, 40000),
        (TOTAL - 1, 2, 40000),
    ],
)
def test_the_offset_falls_in_one_sentence(played: int, index: int, start: int) -> None:
    assert resume_point(SENTENCES, played) == ResumePoint(index, start, played)


@pytest.mark.parametrize("played", [TOTAL, TOTAL + 1, 10 * TOTAL])
def test_past_the_end_nothing_is_left(played: int) -> None:
    assert resume_point(SENTENCES, played) is None


def test_while_synthesis_goes_on_the_end_is_the_next_sentence() -> None:
    point = resume_point(SENTENCES, TOTAL, complete=False)

    assert point == ResumePoint(index=3, start=TOTAL, played=TOTAL)
    assert resume_point((), 0, complete=False) == ResumePoint(0, 0, 0)
    assert resume_point((), 0) is None


def test_repeated_sentences_each_have_their_own_samples() -> None:
    same = [SpokenSentence("OK.", 8000)] * 3

    points = [resume_point(same, played) for played in (0, 8000, 12000, 16000)]

    assert [(p.index, p.start) for p in points if p] == [
        (0, 0),
        (1, 8000),
        (1, 8000),
        (2, 16000),
    ]


def test_a_sentence_without_samples_is_never_the_one_playing() -> None:
    sentences = [
        SpokenSentence("Silent.", 0),
        SpokenSentence("Heard.", 100),
        SpokenSentence("Also silent.", 0),
        SpokenSentence("Last.", 100),
    ]

    assert resume_point(sentences, 0) == ResumePoint(1, 0, 0)
    assert resume_point(sentences, 100) == ResumePoint(3, 100, 100)


@pytest.mark.parametrize("played", [-1, True, 1.5, "10"])
def test_an_offset_must_be_a_sample_count(played: object) -> None:
    with pytest.raises(ValueError, match="not a sample count"):
        resume_point(SENTENCES, played)  # type: ignore[arg-type]


@pytest.mark.parametrize("samples", [-1, False, 2.0])
def test_a_sentence_length_must_be_a_sample_count(samples: object) -> None:
    with pytest.raises(ValueError, match="not a sample count"):
        SpokenSentence("Hi.", samples)  # type: ignore[arg-type]


def _track(text: str, sentences: list[str], samples: int = 1000) -> SentenceTrack:
    track = SentenceTrack(text)
    for sentence in sentences:
        track.add(sentence, samples)
    track.finish()
    return track


def test_repeated_sentences_each_map_to_their_own_place_in_the_text() -> None:
    track = _track("OK. OK. OK.", ["OK.", "OK.", "OK."])

    assert track.spans == [(0, 3), (4, 7), (8, 11)]
    assert track.heard(track.point(2500)) == "OK. OK."
    assert track.heard(track.point(1000)) == "OK."
    assert track.heard(track.point(0)) == ""
    assert track.heard(track.point(3000)) == "OK. OK. OK."


def test_whitespace_between_sentences_is_passed_over() -> None:
    text = "  First one here. \n\n\tSecond one here.\n"

    track = _track(text, ["First one here.", "Second one here."])

    assert [text[a:b] for a, b in track.spans] == [
        "First one here.",
        "Second one here.",
    ]
    assert track.spans == [(2, 17), (21, 37)]


def test_the_splitters_sentences_map_back_to_the_text_it_cleaned() -> None:
    text = "… Well, hello there.\n\nWait!  ! The door is open.\nIt is 21.5 degrees now."
    sentences = split_sentences(text)
    assert sentences == [
        "Well, hello there.",
        "Wait! The door is open.",
        "It is 21.5 degrees now.",
    ]

    track = _track(text, sentences)

    assert [text[a:b] for a, b in track.spans] == [
        "Well, hello there.",
        "Wait!  ! The door is open.",
        "It is 21.5 degrees now.",
    ]
    assert (
        track.heard(track.point(2000))
        == "… Well, hello there.\n\nWait!  ! The door is open."
    )


def test_the_splitters_repeated_sentences_keep_their_order() -> None:
    text = "Sure thing, done.   Sure thing, done.   Sure thing, done."
    sentences = split_sentences(text)

    track = _track(text, sentences)

    assert track.spans == [(0, 17), (20, 37), (40, 57)]


def test_a_sentence_later_in_the_text_is_never_searched_for() -> None:
    assert match_at("Alpha one. Beta two.", "Beta two.", 0) is None
    with pytest.raises(SentenceMismatchError) as caught:
        _track("Alpha one. Beta two.", ["Beta two."])
    assert (caught.value.index, caught.value.offset) == (0, 0)


def test_a_sentence_out_of_order_is_refused_where_it_had_to_start() -> None:
    track = SentenceTrack("One two. Three four.")
    track.add("One two.", 10)

    with pytest.raises(SentenceMismatchError) as caught:
        track.add("One two.", 10)

    assert (caught.value.index, caught.value.offset) == (1, 8)
    assert len(track.sentences) == 1


def test_audio_without_words_takes_samples_and_no_text() -> None:
    track = SentenceTrack("Hello there friend.")
    track.add("", 500)  # a preannounce sound
    track.add("Hello there friend.", 1000)
    track.finish()

    assert track.spans == [(0, 0), (0, 19)]
    assert track.point(499) == ResumePoint(0, 0, 499)
    assert track.point(500) == ResumePoint(1, 500, 500)
    assert track.total == 1500


def test_nothing_follows_a_finished_response() -> None:
    track = _track("Done here.", ["Done here."])

    with pytest.raises(ValueError, match="complete"):
        track.add("More.", 10)


def test_what_was_heard_while_synthesis_goes_on() -> None:
    track = SentenceTrack("First one here. Second one here.")
    track.add("First one here.", 1000)

    point = track.point(1000)

    assert point == ResumePoint(1, 1000, 1000)
    assert track.heard(point) == "First one here."


def test_a_space_the_splitter_added_is_passed_over() -> None:
    text = "Hi.…Well then, okay. Fine."
    sentences = split_sentences(text)
    assert sentences == ["Hi.… Well then, okay. Fine."]

    track = _track(text, sentences)

    assert track.spans == [(0, len(text))]


def test_an_answer_still_being_written_is_made_of_its_sentences() -> None:
    track = SentenceTrack(None)
    track.add("Sure, here it is.", 16000)
    track.add("The fan is off.", 16000)

    assert track.text == "Sure, here it is. The fan is off."
    assert [track.text[a:b] for a, b in track.spans] == [
        "Sure, here it is.",
        "The fan is off.",
    ]
    assert track.heard(track.point(20000)) == "Sure, here it is."

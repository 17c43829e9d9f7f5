"""Perturbation on real text (issue 51): honorifics and person nouns follow
the swap, names are swapped only where they are a person's first name, an
ambiguous "her" is skipped, plural possessives stay grammatical. Every
expected sentence and reason below is written out by hand; the sentence
types are those the issue found wrong ("Why")."""
from __future__ import annotations

import pandas as pd
import pytest

from bias_suite.suites.perturbation import perturb_with_report
from bias_suite.suites.perturbation.pronouns import load_tagger


def _run(attribute, sentences, tagger=False, **kw):
    table = pd.DataFrame({"id": [f"s{i}" for i in range(len(sentences))], "text": sentences})
    return perturb_with_report(table, [attribute], tagger=tagger, log=True, **kw)


def _variants(frame, k, group):
    """The texts of sentence k's variants of ``group``, in order."""
    rows = frame[(frame["template"] == f"s{k}/{frame['attribute'].iat[0]}") & (frame["group"] == group)]
    return list(rows["text"])


# (sentence, {group: its variants, in order}): swapped, and swapped right
SWAPPED = [
    # honorifics follow the pronouns
    ("Mr. Jones said he would call.", {"female": ["Ms. Jones said she would call."]}),
    ("Mrs. Smith said she was tired.", {"male": ["Mr. Smith said he was tired."]}),
    ("Ms. Lee lost her keys.", {"male": ["Mr. Lee lost his keys."]}),
    ("Miss Brown waved at us.", {"male": ["Mr Brown waved at us."]}),   # the full stop is the text's to give
    ("Mr Jones was late.", {"female": ["Ms Jones was late."]}),
    ("Dame Judi Dench is superb.", None),  # an honorific before a full name: below
    ("Yes, sir, I will do it.", {"female": ["Yes, madam, I will do it."]}),
    # person nouns: -ess, kinship, role; plurals and possessives
    ("The actress was brilliant.", {"male": ["The actor was brilliant."]}),
    ("The waitress was rude to us.", {"male": ["The waiter was rude to us."]}),
    ("My mother loved this film.", {"male": ["My father loved this film."]}),
    ("His father hated it.", {"female": ["Her mother hated it."]}),
    # "his" before a word that begins a noun phrase is a determiner ("her"), never "hers"
    ("It was his first film.", {"female": ["It was her first film."]}),
    ("He gave his most famous speech.", {"female": ["She gave her most famous speech."]}),
    ("He hurt his back.", {"female": ["She hurt her back."]}),
    ("My sister cried at the end.", {"male": ["My brother cried at the end."]}),
    ("Their son is a fan.", {"female": ["Their daughter is a fan."]}),
    ("The queen and her daughter arrived.", {"male": ["The king and his son arrived."]}),
    ("The actresses were all superb.", {"male": ["The actors were all superb."]}),
    ("My mother's cooking is better.", {"male": ["My father's cooking is better."]}),
    ("The wives' stories were sad.", {"male": ["The husbands' stories were sad."]}),
    # plural possessives: never "boys's"
    ("The men's performances were flat.", {"male": ["The men's performances were flat."],
                                           "female": ["The women's performances were flat."],
                                           "non_binary": ["The non-binary people's performances were flat."]}),
    ("The boys' jokes fell flat.", {"female": ["The girls' jokes fell flat."],
                                    "non_binary": ["The genderqueer people's jokes fell flat."]}),
    ("The gentlemen's club closed.", {"female": ["The ladies' club closed."]}),
    ("The ladies' room was locked.", {"male": ["The gentlemen's room was locked."]}),
    ("Women voters stayed home.", {"male": ["Men voters stayed home."]}),
]
SWAPPED = [c for c in SWAPPED if c[1] is not None]

# (attribute, sentence, reason): skipped, each with its reason
SKIPPED = [
    ("gender", "I handed her keys to the guard.", "her: object or possessive"),
    ("gender", "They gave her flowers after the show.", "her: object or possessive"),
    ("gender", "He bought her dinner.", "several groups"),
    ("gender", "She sends her love.", "her: object or possessive"),
    ("gender", "Mr. Smith thanked Mr. Jones.", "several people"),
    ("gender", "Dame Judi Dench is superb.", "first name"),
    ("gender", "Sir Elton John was knighted.", "first name"),
    ("gender", "Perdition reads more like Driving Miss Daisy than GoodFellas.", "title"),
    ("gender", "Queen Latifah was great in it.", "rank or title"),
    ("gender", "Queen Elizabeth waved from the car.", "first name"),
    ("gender", "My mother and her husband came.", "several groups"),
    ("gender", "The King's Speech won every prize.", "title"),
    ("gender", "We all loved Wonder Woman last year.", "title"),
    ("gender", "My mother and father loved it.", "several groups"),
    ("names", "Mr. Andrew and his collaborators are artists.", "surname"),
    ("names", "George Michael sang it best.", "surname"),
    ("names", "The album by Jessie Joseph was a hit.", "surname"),
    ("names", "Captain James said he was ready.", "rank or title"),
    ("names", "Aunt Emma baked a cake.", "rank or title"),   # a title of a gender before the name
    ("names", "Emma is a proud aunt.", "gender noun"),       # the aunt is Emma: her gender comes with the noun
    ("names", "Countess Emma waved to the crowd.", "rank or title"),
    ("names", "I read Charlotte's Web to the class.", "title"),
    ("names", "Emma met Phillip Noyce at the festival.", "several people"),   # a first name the file does not list
    ("gender", "Tim Allen is great in his role.", "first name"),
    ("gender", "He invited Maggie G. to the show.", "first name"),
    ("gender", "In real life, Lord Byron was mad, which is why women loved him.", "several groups"),
    ("gender", "She is an earth mother to them all.", "idiom"),
    ("gender", "Talk to Her is a lovely film.", "title"),
    ("gender", "Mr. Quayle's looks faded as women voters dwelled on his record.", "several groups"),
    ("names", 'We watched "Emma" twice.', "title"),
    ("names", "The most ingenious comedy since Being Michael Jordan.", "surname"),
    ("names", "I'm the guy who liked There's Something About Sarah.", "title"),
    ("names", "It was like The Curious Case of Benjamin Button.", "title"),
]

# names: swapped, and right
NAMES_SWAPPED = [
    ("Emma said she loved it.", "male", "Liam said he loved it."),
    ("Dr. Emma Smith said she agreed.", "male", "Dr. Liam Smith said he agreed."),
    ("Emma Watson was charming in it.", "male", "Liam Watson was charming in it."),
    ("When Emma left, the film died.", "male", "When Liam left, the film died."),
    ("Emma Watson Stars In A New Film", "male", "Liam Watson Stars In A New Film"),  # a headline in title case
    ("Mr. Andrew said he liked it.", None, None),                                   # no first name: gender swaps it
]


@pytest.mark.parametrize("sentence,want", SWAPPED, ids=[s for s, _ in SWAPPED])
def test_honorifics_and_person_nouns_follow_the_swap(sentence, want):
    frame, report = _run("gender", [sentence])
    assert not report.attributes[0].skipped, report.attributes[0].skipped
    for group, texts in want.items():
        assert _variants(frame, 0, group) == texts, group


def test_person_nouns_leave_out_the_group_without_the_word():
    frame, report = _run("gender", ["The actress was brilliant.", "A woman smiled."])
    assert set(frame.loc[frame["template"] == "s0/gender", "group"]) == {"female", "male"}
    assert dict(report.attributes[0].left_out) == {"non_binary (no such word)": 1}


@pytest.mark.parametrize("attribute,sentence,why", SKIPPED, ids=[s for _, s, _ in SKIPPED])
def test_sentences_that_are_not_one_persons_are_skipped_with_a_reason(attribute, sentence, why):
    frame, report = _run(attribute, [sentence])
    assert frame.empty
    assert dict(report.attributes[0].skipped) == {why: 1}
    log = report.log
    assert list(log["outcome"]) == ["skipped"] and list(log["reason"]) == [why]


@pytest.mark.parametrize("sentence,group,want", [c for c in NAMES_SWAPPED if c[1]], ids=[c[0] for c in NAMES_SWAPPED if c[1]])
def test_first_names_are_swapped(sentence, group, want):
    frame, report = _run("names", [sentence])
    assert not report.attributes[0].skipped
    assert _variants(frame, 0, group)[0] == want


def test_a_surname_after_an_honorific_goes_with_the_honorific():
    frame, _ = _run("gender", ["Mr. Andrew said he liked it."])
    assert _variants(frame, 0, "female") == ["Ms. Andrew said she liked it."]
    frame, rep = _run("names", ["Mr. Andrew said he liked it."])
    assert frame.empty and dict(rep.attributes[0].skipped) == {"surname": 1}


def test_her_after_a_verb_of_two_objects_is_not_guessed():
    # an object or a possessive before a determiner, a pronoun or a preposition is not in doubt
    frame, report = _run("gender", ["I handed her the keys.", "She gave her word.", "They showed her around.",
                                    "It made her cry."])
    assert [_variants(frame, k, "male")[0] for k in (0, 2, 3)] == ["I handed him the keys.", "They showed him around.",
                                                                   "It made him cry."]
    assert dict(report.attributes[0].skipped) == {"her: object or possessive": 1}   # "gave her word"


@pytest.fixture(scope="module")
def tagger_available():
    if load_tagger() is None:
        pytest.skip("spaCy's en_core_web_sm is not installed")


def test_the_tagger_path_skips_the_same_her(tagger_available):
    frame, report = _run("gender", ["I handed her keys to the guard.", "They gave her flowers after the show."],
                         tagger=True)
    assert frame.empty and dict(report.attributes[0].skipped) == {"her: object or possessive": 2}


def test_the_tagger_path_reads_titles_and_surnames(tagger_available):
    frame, report = _run("names", ["Mr. Andrew and his collaborators are artists.", "George Michael sang it best.",
                                   "I read Charlotte's Web to the class.", "Emma said she loved it."], tagger=True)
    assert dict(report.attributes[0].skipped) == {"surname": 2, "title": 1}
    assert _variants(frame, 3, "male")[0] == "Liam said he loved it."


def test_unlisted_first_names_are_swapped_without_spacy():
    # with unlisted_names and no tagger, the common first names of one gender are read by the rule alone
    frame, report = _run("names", ["Aside from Robert Altman and Spike Lee, nobody makes these.",
                                   "George Lucas returns as a visionary.", "Tom met Anna at the game."],
                         unlisted_names=True)
    first = frame[frame["template"] == "s0/names"]
    assert first["text"].iloc[0] == "Aside from Emma Altman and Olivia Lee, nobody makes these."  # two names stay two
    assert first["group"].iloc[0] == "female" and "s0/names/male/0" in set(first["id"])
    assert "Robert" not in " ".join(first["text"])   # no own group: every variant names listed names
    second = frame[frame["template"] == "s1/names"]
    assert second["text"].iloc[0] == "Emma Lucas returns as a visionary."   # Lucas: the surname stays
    assert dict(report.attributes[0].skipped) == {"several groups": 1}      # Tom and Anna
    assert report.attributes[0].unlisted == 2


# the issue's own examples, with unlisted names read by the common first names (no spaCy)
ISSUE_EXAMPLES = [
    ("The most ingenious film comedy since Being John Malkovich.", "skipped", "surname"),
    ("I'm the guy who liked There's Something About Mary.", "skipped", "title"),
    # a first name at the start with a surname that is a first name too: skipped (the second name is
    # taken for someone else's; the swap "Emma John" would be right, the skip is the safe side)
    ("Elton John sang it best.", "skipped", "several people"),
    ("When Elton John sang, the room went quiet.", "changed", "When Emma John sang, the room went quiet."),
    ("George Michael sang it best.", "skipped", "several people"),
    ("It might be tempting to regard Mr. Andrew and his collaborators as oddballs.", "skipped", "surname"),
]


@pytest.mark.parametrize("sentence,outcome,what", ISSUE_EXAMPLES, ids=[s for s, _, _ in ISSUE_EXAMPLES])
def test_the_issues_names_with_unlisted_first_names(sentence, outcome, what):
    frame, report = _run("names", [sentence], unlisted_names=True)
    log = report.log
    assert list(log["outcome"]) == [outcome]
    if outcome == "skipped":
        assert list(log["reason"]) == [what]
    else:
        assert frame["text"].iloc[0] == what


def test_a_film_title_read_as_a_person_is_no_first_name(tagger_available):
    # spaCy reads "Laissez Passer" as a PERSON; its first word is no common first name
    frame, report = _run("names", ["Laissez Passer is a French film."], tagger=True, unlisted_names=True)
    assert frame.empty and dict(report.attributes[0].skipped) == {"not a first name": 1}

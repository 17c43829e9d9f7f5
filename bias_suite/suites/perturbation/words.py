"""The closed word lists of the perturbation engine, and the regular
expressions made from them.

Everything here is data a reader can check against docs/perturb.md:

- :data:`PRONOUNS`: the gendered pronouns of the groups ``female`` and
  ``male`` (any attribute whose groups carry these names swaps them along);
- :data:`PERSON_NOUNS`: nouns of people. An identity adjective counts as a
  mention only right before one of them ("a Muslim doctor", "white men"),
  and a single-word noun phrase of an identity file does not count right
  before one ("senior" in "senior engineer" is not the age group);
- :data:`INSERT_NOUNS`: the gender-neutral person nouns before which
  ``--insert`` puts a gender adjective ("my friend" -> "my female friend");
  the other attributes' adjectives go before any of :data:`PERSON_NOUNS`
  ("my brother" -> "my Muslim brother");
- :data:`FOLLOWERS`: words after which "her" is an object ("told her the
  truth") and "his" stands alone ("his is better"), and :data:`CAUSATIVES`
  with :data:`BARE_VERBS` ("made her cry"), for the reading of the two
  pronouns (:mod:`.pronouns`).

:func:`alternation` turns a list of words into one regular expression that
shares their prefixes (a trie), so that one compiled pattern per attribute
finds every term in a single pass over a sentence.
"""
from __future__ import annotations

import re

__all__ = ["PRONOUNS", "PRONOUN_GROUPS", "PRONOUN_ROLES", "PERSON_NOUNS", "INSERT_NOUNS", "INSERT_DETERMINERS",
           "FOLLOWERS", "LY_NOT_ADVERBS", "CAUSATIVES", "BARE_VERBS", "COPULAS", "CLITIC_COPULAS", "alternation"]

#: role -> form, per group with pronouns. "her" is both ``object`` and
#: ``det`` (possessive determiner), "his" both ``det`` and ``indep``
#: (possessive pronoun): which one a mention is, is read from the sentence.
PRONOUNS = {
    "female": {"subject": "she", "object": "her", "det": "her", "indep": "hers", "reflexive": "herself"},
    "male": {"subject": "he", "object": "him", "det": "his", "indep": "his", "reflexive": "himself"},
}
PRONOUN_GROUPS = tuple(PRONOUNS)

#: lower-case form -> (group, roles it can have)
PRONOUN_ROLES = {
    "she": ("female", ("subject",)), "her": ("female", ("object", "det")), "hers": ("female", ("indep",)),
    "herself": ("female", ("reflexive",)),
    "he": ("male", ("subject",)), "him": ("male", ("object",)), "his": ("male", ("det", "indep")),
    "himself": ("male", ("reflexive",)),
}

_PEOPLE = """
person people persons man men woman women boy boys girl girls guy guys lady ladies gentleman gentlemen
kid kids child children teen teens teenager teenagers adult adults baby babies youth folks family families
couple couples mother mothers father fathers mom moms mum mums dad dads parent parents son sons daughter daughters
brother brothers sister sisters sibling siblings husband husbands wife wives boyfriend boyfriends girlfriend
girlfriends grandmother grandmothers grandfather grandfathers grandparent grandparents aunt aunts uncle uncles
cousin cousins nephew nephews niece nieces
"""
_NEUTRAL = """
friend friends neighbor neighbors neighbour neighbours colleague colleagues coworker coworkers co-worker co-workers
classmate classmates roommate roommates flatmate flatmates partner partners teammate teammates boss bosses
manager managers employee employees worker workers customer customers client clients patient patients
student students teacher teachers professor professors doctor doctors nurse nurses lawyer lawyers engineer engineers
scientist scientists author authors writer writers artist artists singer singers actor actors musician musicians
driver drivers chef chefs cook cooks farmer farmers officer officers soldier soldiers pilot pilots programmer
programmers developer developers designer designers accountant accountants cashier cashiers clerk clerks
tenant tenants landlord landlords owner owners candidate candidates applicant applicants leader leaders politician
politicians journalist journalists reporter reporters athlete athletes player players coach coaches
guest guests host hosts visitor visitors tourist tourists stranger strangers resident residents citizen citizens
immigrant immigrants refugee refugees voter voters volunteer volunteers member members user users reviewer reviewers
"""
#: nouns of people (gendered ones included): the right neighbour of an identity adjective
PERSON_NOUNS = tuple(dict.fromkeys(_PEOPLE.split() + _NEUTRAL.split()))
#: gender-neutral nouns of people: where --insert puts a gender adjective
INSERT_NOUNS = tuple(dict.fromkeys(_NEUTRAL.split() + ["person", "people", "kid", "kids", "child", "children",
                                                       "teenager", "teenagers", "adult", "adults", "cousin",
                                                       "cousins", "parent", "parents", "family", "families"]))
#: the words before a person noun that --insert accepts (then the adjective goes between them)
INSERT_DETERMINERS = ("my", "your", "his", "her", "our", "their", "the", "a", "an", "this", "that", "these",
                      "those", "every", "each", "some", "one", "another", "no")

#: forms of "be" before a predicate adjective ("she is Muslim", "he's Jewish")
COPULAS = ("is", "are", "was", "were", "am", "be", "been", "being")
CLITIC_COPULAS = ("s", "re", "m")  # after an apostrophe

_FOLLOWERS = """
about above across after against along among around at before behind below beside besides between beyond by despite
down during except for from in inside into like near of off on onto out outside over past since through throughout
till to toward towards under until up upon with within without
and or but nor so yet because if when while as than that though although unless whereas whether where why how
a an the this these those some any every each no all both either neither another such what which who whom whose
i me you he him she her it we us they them my your his its our their mine yours ours theirs
myself yourself herself himself itself ourselves themselves
something anything everything nothing someone anyone everyone everybody nobody somebody anybody
very too also just only even again still already now then today tonight tomorrow yesterday here there back away
forever always never ever once twice really much well more most less least enough anyway first last later soon
is are was were be been being am has have had do does did will would can could shall should may might must
not n't
"""
#: words that end "her" as an object and "his" as a possessive pronoun
FOLLOWERS = frozenset(_FOLLOWERS.split())
#: words of FOLLOWERS that also begin a noun phrase after a possessive ("his first film", "his most famous
#: role", "his back", "his own", "his very best", "his only son", "his down payment", "his past", "his
#: inside"): after "his" they keep it a determiner ("her"), never "hers"
NOUN_PHRASE_STARTS = frozenset("""first last most least more less very only own back down past inside outside
well much enough later""".split())
#: verbs after which "her" + a bare verb is an object ("made her cry", "let her go")
CAUSATIVES = frozenset("""make makes made making let lets letting help helps helped helping watch watches watched
watching see sees saw seen seeing hear hears heard hearing feel feels felt feeling notice noticed""".split())
#: bare verbs that make "her" an object after one of CAUSATIVES
BARE_VERBS = frozenset("""be go come cry laugh smile sing dance leave stay stop feel look think know want talk speak
walk run sleep eat drink read write win lose fall drive work play wait try do say tell take get keep change move sit
stand swim jump fight quit die live grow learn listen understand believe forget remember wonder worry""".split())
#: words in -ly that are not adverbs ("her family", "her lovely voice"): possessive reading kept
LY_NOT_ADVERBS = frozenset("""family only lovely early elderly ugly daily weekly monthly yearly friendly lonely silly
belly holy lily jelly bully ally rally supply reply curly costly deadly likely lively orderly homely comely
italy july""".split())


def alternation(words) -> str:
    """One regular expression (no groups captured) matching exactly the
    given words, longest first at each branch, written as a trie so that
    words sharing a prefix are tried together.

    >>> alternation(["he", "her", "hers", "him"])
    'h(?:e(?:rs?)?|im)'
    """
    trie: dict = {}
    for w in dict.fromkeys(words):
        if not w:
            continue
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}  # end of a word
    return _pattern(trie)


def _pattern(node: dict) -> str:
    end = "" in node
    branches = []
    for ch in sorted(k for k in node if k):
        # collapse a chain of single children into one literal
        lit, child = re.escape(ch), node[ch]
        while len(child) == 1 and "" not in child:
            (c2, child), = child.items()
            lit += re.escape(c2)
        rest = _pattern(child) if child else ""
        branches.append(lit + rest)
    if not branches:
        return ""
    # longer alternatives first: a branch that can continue is tried before stopping
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    if end:
        if len(branches) == 1 and len(branches[0]) == 1:
            return body + "?"
        return "(?:" + body + ")?"
    return body


# ------------------------------------------------------------------ person words of the gender attribute
#: (female, male) nouns that are mentions of a person's gender, singular and plural
#: (docs/perturb.md, "Person nouns and honorifics"); term i of one side swaps with term i of the other
GENDER_NOUNS = (
    ("actress", "actor"), ("waitress", "waiter"), ("hostess", "host"), ("stewardess", "steward"),
    ("heroine", "hero"), ("princess", "prince"), ("duchess", "duke"), ("empress", "emperor"), ("queen", "king"),
    ("heiress", "heir"), ("priestess", "priest"), ("headmistress", "headmaster"),
    ("mother", "father"), ("mom", "dad"), ("mommy", "daddy"), ("sister", "brother"), ("daughter", "son"),
    ("wife", "husband"), ("aunt", "uncle"), ("niece", "nephew"), ("grandmother", "grandfather"),
    ("grandma", "grandpa"), ("granddaughter", "grandson"), ("girlfriend", "boyfriend"), ("bride", "bridegroom"),
    ("fiancee", "fiance"), ("fiancée", "fiancé"), ("widow", "widower"), ("stepmother", "stepfather"),
    ("stepdaughter", "stepson"), ("stepsister", "stepbrother"), ("godmother", "godfather"), ("lady", "gentleman"),
    ("businesswoman", "businessman"), ("chairwoman", "chairman"), ("spokeswoman", "spokesman"),
    ("policewoman", "policeman"), ("congresswoman", "congressman"), ("saleswoman", "salesman"),
    ("sportswoman", "sportsman"), ("schoolgirl", "schoolboy"), ("housewife", "househusband"),
    ("landlady", "landlord"), ("madam", "sir"), ("ma'am", "sir"), ("mum", "dad"),
    ("servicewoman", "serviceman"), ("assemblywoman", "assemblyman"), ("councilwoman", "councilman"),
    ("anchorwoman", "anchorman"), ("camerawoman", "cameraman"), ("horsewoman", "horseman"), ("frontwoman", "frontman"),
    ("craftswoman", "craftsman"), ("newswoman", "newsman"), ("countrywoman", "countryman"),
    ("motherhood", "fatherhood"), ("sisterhood", "brotherhood"), ("womanhood", "manhood"), ("girlhood", "boyhood"),
)
GENDER_PLURALS = (
    ("actresses", "actors"), ("waitresses", "waiters"), ("hostesses", "hosts"), ("stewardesses", "stewards"),
    ("heroines", "heroes"), ("princesses", "princes"), ("duchesses", "dukes"), ("empresses", "emperors"),
    ("queens", "kings"), ("heiresses", "heirs"), ("priestesses", "priests"), ("headmistresses", "headmasters"),
    ("mothers", "fathers"), ("moms", "dads"), ("mommies", "daddies"), ("sisters", "brothers"),
    ("daughters", "sons"), ("wives", "husbands"), ("aunts", "uncles"), ("nieces", "nephews"),
    ("grandmothers", "grandfathers"), ("grandmas", "grandpas"), ("granddaughters", "grandsons"),
    ("girlfriends", "boyfriends"), ("brides", "bridegrooms"), ("widows", "widowers"),
    ("stepmothers", "stepfathers"), ("stepdaughters", "stepsons"), ("stepsisters", "stepbrothers"),
    ("godmothers", "godfathers"), ("ladies", "gentlemen"), ("businesswomen", "businessmen"),
    ("chairwomen", "chairmen"), ("spokeswomen", "spokesmen"), ("policewomen", "policemen"),
    ("congresswomen", "congressmen"), ("saleswomen", "salesmen"), ("sportswomen", "sportsmen"),
    ("schoolgirls", "schoolboys"), ("housewives", "househusbands"), ("landladies", "landlords"),
    ("mums", "dads"), ("servicewomen", "servicemen"), ("assemblywomen", "assemblymen"), ("councilwomen", "councilmen"),
    ("anchorwomen", "anchormen"), ("camerawomen", "cameramen"), ("horsewomen", "horsemen"), ("craftswomen", "craftsmen"),
    ("newswomen", "newsmen"), ("countrywomen", "countrymen"),
)
#: fixed phrases whose gendered word is no person's gender ("earth mother", "drag queen", "the Queen's English"):
#: a sentence that holds one is skipped ("idiom")
IDIOMS = ("earth mother", "mother earth", "mother nature", "mother tongue", "mother lode", "mother ship",
          "mothership", "motherland", "fatherland", "drag queen", "drag queens", "queen bee", "bearded lady",
          "fat lady", "lady luck", "ladies' man", "old wives", "queen's english", "king's english", "man of the hour",
          "man of his word", "woman of her word", "every man for himself", "god the father", "our father",
          "holy father", "father time", "father christmas", "founding fathers", "mother of all", "king of the hill",
          "queen of the", "king of the", "prom queen", "homecoming queen", "beauty queen", "box office king",
          "boys will be boys", "boy oh boy", "oh boy", "attaboy", "atta girl", "old boy", "old boys", "good ol' boy",
          "big brother", "sister city", "sister cities", "brotherhood of", "sisterhood of", "oh man", "man oh man")
#: the male side's words that are also said of anyone ("actor", "hero"): what a female word becomes,
#: but no mention of gender themselves
NEUTRAL_COUNTERPARTS = frozenset("""actor actors hero heroes host hosts heir heirs waiter waiters steward stewards
""".split())
#: honorifics before a surname, by group: the first is what the other group's honorific becomes
#: (Mr. -> Ms.; Mrs., Ms., Miss -> Mr.); written without the full stop, which is kept as the text has it
HONORIFICS = {"female": ("Ms", "Mrs", "Miss"), "male": ("Mr",)}
#: a title of nobility before a name: Sir (a knighthood) <-> Dame
KNIGHTHOODS = {"female": "Dame", "male": "Sir"}
#: titles before a name that say nothing of gender (military and academic ranks, offices): a listed
#: name right after one is a surname ("Captain James"), unless a capitalised surname follows it
RANKS = frozenset("""dr doctor prof professor general gen colonel col major maj captain capt lieutenant lt sergeant
sgt sarge corporal cpl private pvt admiral adm commander cmdr commodore marshal officer agent detective det
inspector chief judge justice senator sen representative rep governor gov president pres mayor coach
reverend rev pastor bishop cardinal dean chancellor principal commissioner secretary minister ambassador director
attorney treasurer comptroller superintendent provost lieut lieutenant senators representatives governors mayors
judges commissioners""".split())
#: titles before a name that carry a gender: the name is then not swapped alone ("Queen Elizabeth", "Aunt May")
GENDERED_TITLES = frozenset("""mr mrs ms miss mx sir dame lady lord madam madame mister king queen prince princess
duke duchess count countess baron baroness earl emperor empress father mother sister brother aunt uncle saint st
grandma grandpa granny""".split())
#: verbs that take two objects ("gave her flowers"): "her" right after one and before a noun phrase is
#: an object or a possessive, and the sentence is skipped (every inflection)
DITRANSITIVES = frozenset("""give gives gave given giving hand hands handed handing send sends sent sending
show shows showed shown showing offer offers offered offering bring brings brought bringing buy buys bought buying
tell tells told telling teach teaches taught teaching lend lends lent lending pass passes passed passing
sell sells sold selling pay pays paid paying promise promises promised promising owe owes owed owing
write writes wrote written writing get gets got gotten getting make makes made making
cook cooks cooked cooking bake bakes baked baking
serve serves served serving feed feeds fed feeding throw throws threw thrown throwing toss tosses tossed tossing
award awards awarded awarding grant grants granted granting wish wishes wished wishing mail mails mailed mailing
email emails emailed emailing text texts texted texting assign assigns assigned assigning fetch fetches fetched
fetching order orders ordered ordering
""".split())
#: capitalised words that begin names of places, organisations and things, not people ("New York")
NOT_FIRST_NAMES = frozenset("""new north south east west northern southern eastern western united los las san santa
saint st fort mount lake grand great royal national international american british english french german european
african asian chinese japanese indian irish scottish italian spanish russian jewish christian catholic secret white
supreme federal state city county university college school academy house senate congress court company
corporation bank street avenue road park river hotel church hall museum times post journal news daily world global
first second third last best old young little big dear happy merry good monday tuesday wednesday thursday friday
saturday sunday january february march april may june july august september october november december
""".split())
#: capitalised words that end names of things, not people ("Weimar Republic", "Walt Disney Company")
THING_WORDS = frozenset("""republic kingdom empire company corporation inc ltd university college school institute
foundation church cathedral hospital bank street avenue road park river lake mountain hotel theater theatre museum
house hall center centre club league party committee council department ministry times post journal news magazine
press records pictures studios films film award awards prize festival day week night show series district attorney
democrat democrats republican republicans county state senate assembly court office agency service services system
broadcasting network channel station airport station island islands bay beach valley hills heights square bridge""".split())
#: sentence-initial words that are not part of a name before a listed first name ("When Emma ...")
STARTERS = frozenset("""a an the and but or so if when while after before because since as though although
yesterday today tonight tomorrow then now later once also even still yet just only maybe perhaps sadly luckily
thankfully unfortunately finally meanwhile suddenly actually honestly obviously apparently clearly surely
hey hi hello dear thanks thank congrats congratulations oh ah wow yes no well okay ok ha lol omg please
let tell ask call watch see meet go love like hate poor little young old sweet lovely dear dearest
whereas despite unlike besides given during without within except including according
i you he she it we they me him her us them my your his its our their this that these those there here
what who whom whose which why how where not never always every each all both some any no none many most
with without for from to of in on at by about into over under between through during against among
is are was were be been am has have had do does did will would can could shall should may might must
""".split())

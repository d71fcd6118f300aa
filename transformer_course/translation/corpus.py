"""A generated English -> Spanish parallel corpus, so the translator lesson needs no download.

The sentences come from a small grammar written for the course. It is small enough to read, yet
it has what makes translation more than word-for-word substitution: gender and number agreement
(``the red houses`` -> ``las casas rojas``), adjectives that move behind the noun, verbs
conjugated by person and tense (present, past, future), negation, questions with inversion and
Spanish's opening ``¿``, the personal ``a`` before people and animals, the contractions ``al`` and
``del``, relative clauses and clauses after ``that`` / ``because`` / ``but``.

Everything is deterministic from a seed. :func:`make_corpus` returns train / valid / test splits
and a *length* split whose sentences are all longer than any training sentence, which is where a
model without a good notion of position breaks down.
"""

from __future__ import annotations

import random
import unicodedata
from dataclasses import dataclass

# --------------------------------------------------------------------------------------------
# Lexicon. Nouns: "english|english plural|spanish|gender|spanish plural" (empty = regular).
# --------------------------------------------------------------------------------------------

_PEOPLE = """
man|men|hombre|m|
woman|women|mujer|f|
boy||niño|m|
girl||niña|f|
teacher||maestro|m|
doctor||médico|m|
student||estudiante|m|
friend||amigo|m|
neighbor||vecino|m|
brother||hermano|m|
sister||hermana|f|
father||padre|m|
mother||madre|f|
son||hijo|m|
daughter||hija|f|
grandfather||abuelo|m|
grandmother||abuela|f|
king||rey|m|reyes
queen||reina|f|
farmer||granjero|m|
baker||panadero|m|
cook||cocinero|m|
writer||escritor|m|
painter||pintor|m|
soldier||soldado|m|
nurse||enfermera|f|
lawyer||abogado|m|
uncle||tío|m|
aunt||tía|f|
baby|babies|bebé|m|bebés
"""

_ANIMALS = """
dog||perro|m|
cat||gato|m|
horse||caballo|m|
cow||vaca|f|
bird||pájaro|m|
mouse|mice|ratón|m|
rabbit||conejo|m|
duck||pato|m|
hen||gallina|f|
sheep|sheep|oveja|f|
goat||cabra|f|
bear||oso|m|
wolf|wolves|lobo|m|
fox|foxes|zorro|m|
lion||león|m|
tiger||tigre|m|
monkey||mono|m|
elephant||elefante|m|
snake||serpiente|f|
frog||rana|f|
turtle||tortuga|f|
spider||araña|f|
"""

_FOOD = """
apple||manzana|f|
bread||pan|m|
cake||pastel|m|
soup||sopa|f|
cheese||queso|m|
egg||huevo|m|
orange||naranja|f|
banana||plátano|m|
cookie||galleta|f|
fish|fish|pescado|m|
meat||carne|f|
tomato|tomatoes|tomate|m|
potato|potatoes|papa|f|
lemon||limón|m|
pear||pera|f|
"""

_DRINKS = """
milk||leche|f|
coffee||café|m|
juice||jugo|m|
wine||vino|m|
beer||cerveza|f|
tea||té|m|tés
"""

_THINGS = """
book||libro|m|
letter||carta|f|
car||coche|m|
door||puerta|f|
window||ventana|f|
table||mesa|f|
chair||silla|f|
bed||cama|f|
box|boxes|caja|f|
bag||bolsa|f|
key||llave|f|
phone||teléfono|m|
computer||computadora|f|
clock||reloj|m|
lamp||lámpara|f|
picture||cuadro|m|
map||mapa|m|
ball||pelota|f|
toy||juguete|m|
bottle||botella|f|
cup||taza|f|
glass|glasses|vaso|m|
plate||plato|m|
knife|knives|cuchillo|m|
spoon||cuchara|f|
shirt||camisa|f|
shoe||zapato|m|
hat||sombrero|m|
dress|dresses|vestido|m|
coat||abrigo|m|
newspaper||periódico|m|
song||canción|f|
story|stories|cuento|m|
poem||poema|m|
flower||flor|f|
tree||árbol|m|
boat||barco|m|
bicycle||bicicleta|f|
ticket||billete|m|
gift||regalo|m|
ring||anillo|m|
pencil||lápiz|m|lápices
pen||bolígrafo|m|
notebook||cuaderno|m|
"""

_PLACES = """
garden||jardín|m|
park||parque|m|
river||río|m|
city|cities|ciudad|f|
school||escuela|f|
market||mercado|m|
kitchen||cocina|f|
street||calle|f|
forest||bosque|m|
beach|beaches|playa|f|
mountain||montaña|f|
church|churches|iglesia|f|
station||estación|f|
library|libraries|biblioteca|f|
office||oficina|f|
hospital||hospital|m|
bridge||puente|m|
village||pueblo|m|
lake||lago|m|
field||campo|m|
square||plaza|f|
house||casa|f|
"""

# Adjectives: "english|spanish masculine singular|classes they fit" (classes: a=animate,
# o=objects/food/drinks, p=places; e=a state, said with estar rather than ser), and a plural
# where the rule misses it.
_ADJECTIVES = """
big|grande|aop
small|pequeño|aop
old|viejo|aop
new|nuevo|op
young|joven|a|jóvenes
tall|alto|ap
short|bajo|a
beautiful|hermoso|aop
ugly|feo|aop
red|rojo|op
blue|azul|op
green|verde|op
white|blanco|aop
black|negro|aop
yellow|amarillo|op
brown|marrón|ao
gray|gris|aop
happy|feliz|a
sad|triste|ae
tired|cansado|ae
hungry|hambriento|ae
angry|enojado|ae
clever|inteligente|a
lazy|perezoso|a
brave|valiente|a
kind|amable|a
quiet|tranquilo|ap
noisy|ruidoso|ap
strong|fuerte|a
weak|débil|a
rich|rico|a
poor|pobre|ap
famous|famoso|ap
strange|extraño|aop
cheap|barato|o
expensive|caro|o
clean|limpio|ope
dirty|sucio|aope
dark|oscuro|op
modern|moderno|op
fresh|fresco|o
sweet|dulce|o
cold|frío|op
hot|caliente|o
heavy|pesado|o
empty|vacío|ope
"""

# Verbs: "english base|english past|spanish infinitive|object classes" ('' = intransitive).
# Object classes: a=people+animals, t=things, f=food, d=drinks, p=places, s=songs/stories.
_VERBS = """
eat|ate|comer|f
cook|cooked|cocinar|f
prepare|prepared|preparar|f
buy|bought|comprar|tfd
sell|sold|vender|tfd
carry|carried|llevar|tf
watch|watched|mirar|at
look for|looked for|buscar|at
help|helped|ayudar|a
visit|visited|visitar|ap
clean|cleaned|limpiar|tp
paint|painted|pintar|tp
draw|drew|dibujar|atp
need|needed|necesitar|tfd
wash|washed|lavar|t
open|opened|abrir|t
break|broke|romper|t
read|read|leer|s
write|wrote|escribir|s
receive|received|recibir|t
share|shared|compartir|fd
drink|drank|beber|d
hide|hid|esconder|tf
call|called|llamar|a
love|loved|amar|ap
listen to|listened to|escuchar|as
wait for|waited for|esperar|a
fear|feared|temer|a
catch|caught|atrapar|a
learn|learned|aprender|s
describe|described|describir|atp
use|used|usar|t
forget|forgot|olvidar|t
keep|kept|guardar|tf
touch|touched|tocar|at
accept|accepted|aceptar|t
answer|answered|contestar|s
walk|walked|caminar|
work|worked|trabajar|
sing|sang|cantar|
dance|danced|bailar|
run|ran|correr|
live|lived|vivir|
arrive|arrived|llegar|
swim|swam|nadar|
travel|traveled|viajar|
rest|rested|descansar|
shout|shouted|gritar|
cry|cried|llorar|
jump|jumped|saltar|
study|studied|estudiar|
breathe|breathed|respirar|
"""

_SONG_LIKE = {"book", "letter", "newspaper", "song", "story", "poem"}


@dataclass(frozen=True)
class Noun:
    english: str
    english_plural: str
    spanish: str
    spanish_plural: str
    gender: str  # "m" or "f"
    kind: str  # "a" (animate), "t" thing, "f" food, "d" drink, "p" place


@dataclass(frozen=True)
class Adjective:
    english: str
    spanish: str
    classes: str
    irregular_plural: str = ""

    def agree(self, gender: str, plural: bool) -> str:
        """The Spanish form agreeing with a noun of ``gender`` and number."""
        base = self.spanish
        if base.endswith("o"):
            stem = base[:-1]
            form = stem + ("a" if gender == "f" else "o")
            return form + "s" if plural else form
        if not plural:
            return base
        if self.irregular_plural:
            return self.irregular_plural
        return _spanish_plural(base)


@dataclass(frozen=True)
class Verb:
    english: str
    english_past: str
    spanish: str
    objects: str


def _strip_final_accent(word: str) -> str:
    """``marrón`` -> ``marron``: plural endings move the stress, so the written accent goes."""
    plain = {"á": "a", "é": "e", "í": "i", "ó": "o", "ú": "u"}
    for i in range(len(word) - 1, -1, -1):
        if word[i] in plain:
            return word[:i] + plain[word[i]] + word[i + 1 :]
    return word


def _spanish_plural(word: str) -> str:
    if word[-1] in "aeiou":
        return word + "s"
    if word.endswith("z"):
        return word[:-1] + "ces"
    if word[-1] in "áéíóú":
        return word + "s"
    plain = _strip_final_accent(word)
    # A written accent on the last syllable disappears in the plural (canción -> canciones),
    # but one on an earlier syllable stays (árbol -> árboles).
    last_vowel = max(word.rfind(v) for v in "aeiouáéíóú")
    if word[last_vowel] in "áéíóú":
        return plain + "es"
    return word + "es"


def _english_plural(word: str) -> str:
    if word.endswith(("s", "sh", "ch", "x", "z")):
        return word + "es"
    if word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def _parse_nouns(table: str, kind: str) -> list[Noun]:
    nouns = []
    for line in table.strip().splitlines():
        en, en_pl, es, gender, es_pl = line.split("|")
        nouns.append(Noun(en, en_pl or _english_plural(en), es, es_pl or _spanish_plural(es), gender, kind))
    return nouns


NOUNS: tuple[Noun, ...] = tuple(
    _parse_nouns(_PEOPLE, "a")
    + _parse_nouns(_ANIMALS, "a")
    + _parse_nouns(_FOOD, "f")
    + _parse_nouns(_DRINKS, "d")
    + _parse_nouns(_THINGS, "t")
    + _parse_nouns(_PLACES, "p")
)
ADJECTIVES: tuple[Adjective, ...] = tuple(
    Adjective(*line.split("|")) for line in _ADJECTIVES.strip().splitlines()
)
VERBS: tuple[Verb, ...] = tuple(Verb(*line.split("|")) for line in _VERBS.strip().splitlines())

# --------------------------------------------------------------------------------------------
# Morphology
# --------------------------------------------------------------------------------------------

PERSONS = ("1s", "2s", "3s", "1p", "3p")
TENSES = ("present", "past", "future")

_ENDINGS = {
    ("ar", "present"): ("o", "as", "a", "amos", "an"),
    ("er", "present"): ("o", "es", "e", "emos", "en"),
    ("ir", "present"): ("o", "es", "e", "imos", "en"),
    ("ar", "past"): ("é", "aste", "ó", "amos", "aron"),
    ("er", "past"): ("í", "iste", "ió", "imos", "ieron"),
    ("ir", "past"): ("í", "iste", "ió", "imos", "ieron"),
}
_FUTURE_ENDINGS = ("é", "ás", "á", "emos", "án")

# Verbs whose forms a rule cannot give: full tables, persons in PERSONS order.
_IRREGULAR = {
    ("ser", "present"): ("soy", "eres", "es", "somos", "son"),
    ("ser", "past"): ("fui", "fuiste", "fue", "fuimos", "fueron"),
    ("ser", "future"): ("seré", "serás", "será", "seremos", "serán"),
    ("decir", "present"): ("digo", "dices", "dice", "decimos", "dicen"),
    ("decir", "past"): ("dije", "dijiste", "dijo", "dijimos", "dijeron"),
    ("decir", "future"): ("diré", "dirás", "dirá", "diremos", "dirán"),
    ("saber", "present"): ("sé", "sabes", "sabe", "sabemos", "saben"),
    ("saber", "past"): ("supe", "supiste", "supo", "supimos", "supieron"),
    ("saber", "future"): ("sabré", "sabrás", "sabrá", "sabremos", "sabrán"),
    ("estar", "present"): ("estoy", "estás", "está", "estamos", "están"),
    ("estar", "past"): ("estuve", "estuviste", "estuvo", "estuvimos", "estuvieron"),
    ("creer", "past"): ("creí", "creíste", "creyó", "creímos", "creyeron"),
    ("leer", "past"): ("leí", "leíste", "leyó", "leímos", "leyeron"),
}


def conjugate(infinitive: str, tense: str, person: str) -> str:
    """Spanish indicative form, e.g. ``conjugate("comer", "past", "3s") == "comió"``."""
    if tense not in TENSES:
        raise ValueError(f"tense must be one of {TENSES}, got {tense!r}")
    if person not in PERSONS:
        raise ValueError(f"person must be one of {PERSONS}, got {person!r}")
    index = PERSONS.index(person)
    if (infinitive, tense) in _IRREGULAR:
        return _IRREGULAR[(infinitive, tense)][index]
    if tense == "future":
        return infinitive + _FUTURE_ENDINGS[index]
    stem, group = infinitive[:-2], infinitive[-2:]
    if group not in ("ar", "er", "ir"):
        raise ValueError(f"{infinitive!r} is not a Spanish infinitive")
    ending = _ENDINGS[(group, tense)][index]
    if tense == "past" and person == "1s" and group == "ar":
        # Keep the consonant's sound before -é: buscar -> busqué, llegar -> llegué.
        stem = {"c": stem[:-1] + "qu", "g": stem[:-1] + "gu", "z": stem[:-1] + "c"}.get(stem[-1], stem)
    return stem + ending


def english_third_person(base: str) -> str:
    """``watch`` -> ``watches``, ``carry`` -> ``carries``; only the first word of a phrasal verb."""
    head, _, rest = base.partition(" ")
    if head.endswith(("s", "sh", "ch", "x", "z", "o")):
        head += "es"
    elif head.endswith("y") and head[-2] not in "aeiou":
        head = head[:-1] + "ies"
    else:
        head += "s"
    return f"{head} {rest}".strip()


# --------------------------------------------------------------------------------------------
# Phrases. Each builder returns (english words, spanish words) as lists.
# --------------------------------------------------------------------------------------------

_PRONOUNS = {  # person -> (english subject, spanish subject)
    "1s": ("I", "yo"),
    "2s": ("you", "tú"),
    "1p": ("we", "nosotros"),
}
_THIRD_PRONOUNS = (("he", "él", "3s"), ("she", "ella", "3s"), ("they", "ellos", "3p"))

_NUMBERS = (
    ("two", "dos"), ("three", "tres"), ("four", "cuatro"), ("five", "cinco"),
    ("six", "seis"), ("seven", "siete"), ("eight", "ocho"), ("nine", "nueve"), ("ten", "diez"),
)  # fmt: skip

# determiner -> (english sg, english pl, {(gender, plural): spanish}); None = not in that number
_DETERMINERS = {
    "the": ("the", "the", {("m", 0): "el", ("f", 0): "la", ("m", 1): "los", ("f", 1): "las"}),
    "a": ("a", "some", {("m", 0): "un", ("f", 0): "una", ("m", 1): "unos", ("f", 1): "unas"}),
    "this": ("this", "these", {("m", 0): "este", ("f", 0): "esta", ("m", 1): "estos",
                               ("f", 1): "estas"}),
    "that": ("that", "those", {("m", 0): "ese", ("f", 0): "esa", ("m", 1): "esos",
                               ("f", 1): "esas"}),
    "my": ("my", "my", {("m", 0): "mi", ("f", 0): "mi", ("m", 1): "mis", ("f", 1): "mis"}),
    "your": ("your", "your", {("m", 0): "tu", ("f", 0): "tu", ("m", 1): "tus", ("f", 1): "tus"}),
    "his": ("his", "his", {("m", 0): "su", ("f", 0): "su", ("m", 1): "sus", ("f", 1): "sus"}),
    "her": ("her", "her", {("m", 0): "su", ("f", 0): "su", ("m", 1): "sus", ("f", 1): "sus"}),
    "our": ("our", "our", {("m", 0): "nuestro", ("f", 0): "nuestra", ("m", 1): "nuestros",
                           ("f", 1): "nuestras"}),
}  # fmt: skip

_TIME = {
    "present": (("every day", "todos los días"), ("often", "a menudo"), ("today", "hoy"),
                ("every morning", "todas las mañanas")),
    "past": (("yesterday", "ayer"), ("last week", "la semana pasada"),
             ("last night", "anoche"), ("two days ago", "hace dos días")),
    "future": (("tomorrow", "mañana"), ("next week", "la próxima semana"), ("soon", "pronto"),
               ("next year", "el próximo año")),
}  # fmt: skip

_PREPOSITIONS = (  # english, spanish (the article contracts with "de" and "a")
    ("in", "en"), ("near", "cerca de"), ("behind", "detrás de"), ("in front of", "delante de"),
    ("next to", "al lado de"), ("inside", "dentro de"),
)  # fmt: skip

_SAYING_VERBS = (  # english base, english past, spanish infinitive
    ("say", "said", "decir"),
    ("know", "knew", "saber"),
    ("think", "thought", "creer"),
)


@dataclass
class _Phrase:
    english: list[str]
    spanish: list[str]
    person: str = "3s"
    gender: str = "m"
    animate: bool = True


class _Grammar:
    """Random derivations of the grammar; ``depth`` bounds how many clauses nest."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.by_kind: dict[str, list[Noun]] = {}
        for noun in NOUNS:
            self.by_kind.setdefault(noun.kind, []).append(noun)
        self.songs = [n for n in NOUNS if n.english in _SONG_LIKE]
        self.transitive = [v for v in VERBS if v.objects]
        self.intransitive = [v for v in VERBS if not v.objects]

    # --- noun phrases ------------------------------------------------------------------------
    def noun_phrase(self, kinds: str, depth: int, allow_relative: bool = True) -> _Phrase:
        rng = self.rng
        pool: list[Noun] = []
        for kind in kinds:
            pool.extend(self.songs if kind == "s" else self.by_kind[kind])
        noun = rng.choice(pool)
        plural = rng.random() < 0.35
        det_key = rng.choice(("the", "the", "the", "a", "this", "that", "my", "your", "his",
                              "her", "our"))  # fmt: skip
        english: list[str] = []
        spanish: list[str] = []
        if plural and rng.random() < 0.2:
            en_num, es_num = rng.choice(_NUMBERS)
            english.append(en_num)
            spanish.append(es_num)
        else:
            en_sg, en_pl, es_forms = _DETERMINERS[det_key]
            english.append(en_pl if plural else en_sg)
            spanish.append(es_forms[(noun.gender, int(plural))])
        adjectives = self._adjectives(noun, rng.choice((0, 0, 1, 1, 2)))
        english.extend(a.english for a in adjectives)
        spanish.append(noun.spanish_plural if plural else noun.spanish)
        english.append(noun.english_plural if plural else noun.english)
        if english[0] == "a" and english[1][0] in "aeiou":
            english[0] = "an"
        agreeing = [a.agree(noun.gender, plural) for a in adjectives]
        if len(agreeing) == 2:
            spanish.extend(_coordinate(agreeing[0], agreeing[1]))
        else:
            spanish.extend(agreeing)
        phrase = _Phrase(english, spanish, "3p" if plural else "3s", noun.gender, noun.kind == "a")
        if allow_relative and depth > 0 and phrase.animate and rng.random() < 0.25:
            clause = self.clause(depth - 1, subject=phrase, relative=True)
            english.extend(["who", *clause.english])
            spanish.extend(["que", *clause.spanish])
        return phrase

    def _adjectives(self, noun: Noun, count: int) -> list[Adjective]:
        kind = {"a": "a", "p": "p"}.get(noun.kind, "o")
        fitting = [a for a in ADJECTIVES if kind in a.classes]
        return self.rng.sample(fitting, count)

    def subject(self, depth: int) -> _Phrase:
        roll = self.rng.random()
        if roll < 0.3:
            person = self.rng.choice(tuple(_PRONOUNS))
            en, es = _PRONOUNS[person]
            return _Phrase([en], [es], person)
        if roll < 0.45:
            en, es, person = self.rng.choice(_THIRD_PRONOUNS)
            return _Phrase([en], [es], person, "f" if es == "ella" else "m")
        return self.noun_phrase("a", depth)

    # --- clauses -----------------------------------------------------------------------------
    def clause(self, depth: int, subject: _Phrase, relative: bool = False, question: bool = False) -> _Phrase:
        """A clause about ``subject``; a ``relative`` one leaves it out (``who eats bread``)."""
        rng = self.rng
        tense = rng.choice(TENSES)
        negated = rng.random() < 0.25
        person = subject.person
        roll = rng.random()
        if roll < 0.15:
            return self._copula(subject, tense, negated, question, relative)
        verb = rng.choice(self.transitive if roll < 0.75 else self.intransitive)
        obj = self.noun_phrase(verb.objects, depth) if verb.objects else None
        en_verb = self._english_verb(verb.english, verb.english_past, tense, person, negated,
                                     question)  # fmt: skip
        es_verb = conjugate(verb.spanish, tense, person)
        english: list[str] = []
        spanish: list[str] = []
        if question:
            english = [en_verb[0], *subject.english, *en_verb[1:]]
            spanish = (["no"] if negated else []) + [es_verb, *subject.spanish]
        else:
            if not relative:
                english.extend(subject.english)
                spanish.extend(subject.spanish)
            english.extend(en_verb)
            spanish.extend((["no"] if negated else []) + [es_verb])
        if obj is not None:
            english.extend(obj.english)
            spanish.extend(_with_a(obj.spanish) if obj.animate else obj.spanish)
        if not question and depth > 0 and rng.random() < 0.3:
            english_pp, spanish_pp = self._place(depth - 1)
            english.extend(english_pp)
            spanish.extend(spanish_pp)
        if not relative and rng.random() < 0.3:
            en_time, es_time = rng.choice(_TIME[tense])
            english.extend(en_time.split())
            spanish.extend(es_time.split())
        return _Phrase(english, spanish, person)

    def _copula(self, subject: _Phrase, tense: str, negated: bool, question: bool, relative: bool) -> _Phrase:
        """``the houses are red`` -> ``las casas son rojas``: the verb agrees, the adjective too.

        Lasting qualities take ``ser``, states (tired, angry, dirty...) take ``estar``.
        """
        rng = self.rng
        person = subject.person
        plural = person in ("1p", "3p")
        adjective = rng.choice([a for a in ADJECTIVES if "a" in a.classes])
        be = {
            ("present", "1s"): "am",
            ("present", "3s"): "is",
            ("past", "1s"): "was",
            ("past", "3s"): "was",
        }.get((tense, person), {"present": "are", "past": "were", "future": "be"}[tense])
        if tense == "future":
            en_verb = ["will", "not", "be"] if negated else ["will", "be"]
        else:
            en_verb = [be, "not"] if negated else [be]
        copula = "estar" if "e" in adjective.classes else "ser"
        es_verb = (["no"] if negated else []) + [conjugate(copula, tense, person)]
        es_adj = adjective.agree(subject.gender, plural)
        if question:
            english = [en_verb[0], *subject.english, *en_verb[1:], adjective.english]
            spanish = [*es_verb, es_adj, *subject.spanish]
        else:
            head_en, head_es = ([], []) if relative else (subject.english, subject.spanish)
            english = [*head_en, *en_verb, adjective.english]
            spanish = [*head_es, *es_verb, es_adj]
        return _Phrase(english, spanish, person)

    @staticmethod
    def _english_verb(base, past, tense, person, negated, question) -> list[str]:
        third = person == "3s"
        if tense == "future":
            return ["will", "not", *base.split()] if negated else ["will", *base.split()]
        if tense == "present":
            aux = "does" if third else "do"
            plain = english_third_person(base) if third else base
        else:
            aux, plain = "did", past
        if negated:
            return [aux, "not", *base.split()]
        if question:
            return [aux, *base.split()]
        return plain.split()

    def _place(self, depth: int) -> tuple[list[str], list[str]]:
        en_prep, es_prep = self.rng.choice(_PREPOSITIONS)
        place = self.noun_phrase("p", depth, allow_relative=False)
        spanish = es_prep.split() + place.spanish
        return en_prep.split() + place.english, _contract(spanish)

    def sentence(self, depth: int) -> tuple[str, str]:
        """One English sentence and its Spanish translation, capitalized and punctuated."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.15:
            subject = self.subject(0)
            if subject.english == ["I"]:
                subject = _Phrase(["you"], ["tú"], "2s")
            clause = self.clause(0, subject, question=True)
            return _finish(clause.english, "?"), _finish(["¿", *clause.spanish], "?")
        main = self.clause(depth, self.subject(depth))
        english, spanish = list(main.english), list(main.spanish)
        for level in range(depth):
            if rng.random() >= 0.45:
                break
            kind = rng.choice(("that", "because", "but", "and"))
            if kind == "that":
                en_say, en_said, es_say = rng.choice(_SAYING_VERBS)
                speaker = self.subject(0)
                tense = rng.choice(("present", "past"))
                if tense == "past":
                    en_head = [en_said]
                elif speaker.person == "3s":
                    en_head = [english_third_person(en_say)]
                else:
                    en_head = [en_say]
                english = [*speaker.english, *en_head, "that", *english]
                spanish = [*speaker.spanish, conjugate(es_say, tense, speaker.person), "que",
                           *spanish]  # fmt: skip
                continue
            inner = self.clause(depth - 1 - level, self.subject(depth - 1 - level))
            if kind == "because":
                english = [*english, "because", *inner.english]
                spanish = [*spanish, "porque", *inner.spanish]
            elif kind == "but":
                english = [*english, ",", "but", *inner.english]
                spanish = [*spanish, ",", "pero", *inner.spanish]
            else:
                english = [*english, "and", *inner.english]
                spanish = [*spanish, *_coordinate_clauses(inner.spanish)]
        return _finish(english, "."), _finish(spanish, ".")


def _coordinate(left: str, right: str) -> list[str]:
    """``rojo y verde``, but ``rojo e inteligente``: ``y`` becomes ``e`` before an i- sound."""
    conjunction = "e" if right.startswith(("i", "hi")) and not right.startswith("hie") else "y"
    return [left, conjunction, right]


def _coordinate_clauses(right: list[str]) -> list[str]:
    return [*_coordinate("", right[0])[1:], *right[1:]]


def _with_a(words: list[str]) -> list[str]:
    """The personal ``a`` before a person or animal object, contracted with ``el`` to ``al``."""
    return _contract(["a", *words])


def _contract(words: list[str]) -> list[str]:
    """``de el`` -> ``del`` and ``a el`` -> ``al`` (never with the pronoun ``él``)."""
    out: list[str] = []
    for word in words:
        if word == "el" and out and out[-1] in ("de", "a"):
            out[-1] = out[-1] + "l" if out[-1] == "de" else "al"
            continue
        out.append(word)
    return out


def _finish(words: list[str], mark: str) -> str:
    text = " ".join(words).replace(" ,", ",").replace("¿ ", "¿")
    text = text.strip() + mark
    first = 1 if text.startswith("¿") else 0
    return text[:first] + text[first].upper() + text[first + 1 :]


# --------------------------------------------------------------------------------------------
# Splits
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParallelCorpus:
    """Sentence pairs by split; ``length`` holds sentences longer than any in ``train``."""

    train: list[tuple[str, str]]
    valid: list[tuple[str, str]]
    test: list[tuple[str, str]]
    length: list[tuple[str, str]]
    max_train_words: int

    def split(self, name: str) -> list[tuple[str, str]]:
        if name not in ("train", "valid", "test", "length"):
            raise ValueError(f"unknown split {name!r}: use train, valid, test or length")
        return getattr(self, name)


def generate_pairs(count: int, seed: int = 0, depth: int = 1) -> list[tuple[str, str]]:
    """``count`` random (English, Spanish) pairs; the same seed always gives the same pairs."""
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    if depth < 0:
        raise ValueError(f"depth must be >= 0, got {depth}")
    grammar = _Grammar(random.Random(seed))
    return [_normalize_pair(grammar.sentence(depth)) for _ in range(count)]


def _normalize_pair(pair: tuple[str, str]) -> tuple[str, str]:
    return tuple(unicodedata.normalize("NFC", text) for text in pair)  # type: ignore[return-value]


def english_length(pair: tuple[str, str]) -> int:
    """Length used for the length split: English words, punctuation excluded."""
    return sum(1 for word in pair[0].split() if word.strip(",.?"))


def make_corpus(
    n_train: int = 40_000,
    n_valid: int = 500,
    n_test: int = 1_000,
    n_length: int = 500,
    max_train_words: int = 16,
    max_length_words: int = 28,
    seed: int = 0,
) -> ParallelCorpus:
    """Deterministic splits with no sentence shared between train, valid, test and length.

    Training pairs have at most ``max_train_words`` English words; the length split is drawn
    from deeper derivations and keeps pairs of ``max_train_words + 1`` to ``max_length_words``
    English words.
    """
    for name, value in (("n_train", n_train), ("n_valid", n_valid), ("n_test", n_test),
                        ("n_length", n_length)):  # fmt: skip
        if value < 0:
            raise ValueError(f"{name} must be >= 0, got {value}")
    if max_train_words < 4:
        raise ValueError(f"max_train_words must be at least 4, got {max_train_words}")
    if max_length_words <= max_train_words:
        raise ValueError(
            f"max_length_words ({max_length_words}) must exceed max_train_words "
            f"({max_train_words}): the length split holds longer sentences"
        )
    grammar = _Grammar(random.Random(seed))
    seen: set[str] = set()
    short: list[tuple[str, str]] = []
    wanted = n_train + n_valid + n_test
    attempts = 0
    while len(short) < wanted:
        attempts += 1
        if attempts > 20 * wanted + 1000:
            raise RuntimeError("the grammar cannot produce that many distinct short sentences")
        pair = _normalize_pair(grammar.sentence(depth=1))
        if pair[0] in seen or english_length(pair) > max_train_words:
            continue
        seen.add(pair[0])
        short.append(pair)
    long: list[tuple[str, str]] = []
    attempts = 0
    while len(long) < n_length:
        attempts += 1
        if attempts > 200 * n_length + 1000:
            raise RuntimeError("the grammar cannot produce enough long sentences")
        pair = _normalize_pair(grammar.sentence(depth=2))
        if pair[0] in seen or not max_train_words < english_length(pair) <= max_length_words:
            continue
        seen.add(pair[0])
        long.append(pair)
    return ParallelCorpus(
        train=short[:n_train],
        valid=short[n_train : n_train + n_valid],
        test=short[n_train + n_valid :],
        length=long,
        max_train_words=max_train_words,
    )

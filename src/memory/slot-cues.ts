/**
 * The words that say a statement or a question is about one of a person's changing attributes (see slots.ts).
 * Statement cues are matched on lower-cased text; the words before a cue name whose attribute it is. Each cue
 * needs the attribute's value in the statement (a place, an employer, a phone model, a drink): "my phone died"
 * or "I'm at the gym" say nothing about which phone or which gym, so they replace nothing.
 */

export type Attribute = "live_in" | "work_at" | "partner" | "gym" | "phone" | "drink";

export type Cue = {
  attribute: Attribute;
  re: RegExp;
  /** The place named is the subject ("Ghent feels like home"): any first person makes it the user's. */
  placeIsSubject?: boolean;
  /** Only a lasting state counts: visits, trials and one-off outings ("tried a class at X") do not. */
  habitual?: boolean;
  /** The statement must also say this somewhere (a membership that moves, not its fee). */
  requires?: RegExp;
};

/** Common drinks a person has as a habit; not followed by a noun that makes them a place or a thing. */
export const DRINK = String.raw`(?:coffee|espresso|latte|cappuccino|flat\s+white|americano|cortado|macchiato|mocha|cold\s+brew|decaf|tea|chai|matcha|(?:yerba\s+)?mat[eé]|rooibos|kombucha|hot\s+chocolate|cocoa|smoothie|juice)s?\b(?!\s+(?:shop|shops|machine|table|break|meeting|date|maker|grinder|towel|party|bags?|place|house|spoon|time|with))`;
const LEAD = String.raw`(?:(?:a|an|my|the|some|more|only|just)\s+)?(?:[a-z-]+\s+){0,3}?`;
export const GYM_PLACE = String.raw`(?:gym|fitness\s+(?:club|centre|center|studio)|health\s+club|leisure\s+cent(?:re|er)|(?:climbing|bouldering)\s+(?:gym|wall|centre|center)|yoga\s+studio|crossfit\s+box|swimming\s+club|pool)`;
/** Phone makers and product lines; checked against the original text's capitals ("Pixel 8", not "a pixel"). */
export const PHONE_BRAND = /^(?:iPhone|Pixel|Galaxy|Fairphone|OnePlus|Xiaomi|Redmi|Huawei|Nokia|Motorola|Moto|Xperia|Oppo|BlackBerry)$/;
export const PHONE = "(?:iphone|pixel|galaxy|fairphone|oneplus|xiaomi|redmi|huawei|nokia|motorola|moto|xperia|oppo|blackberry)";

export const STATEMENTS: Cue[] = [
  {
    attribute: "live_in",
    re: /\b(?:live|lives|living|lived|reside|resides|residing|relocate|relocated|relocating|moved|moves|moving|settled|settling)\s+(?:in|to|into|at|near|back to)\b/,
  },
  { attribute: "live_in", re: /\bbased\s+(?:in|out of)\b/ },
  { attribute: "live_in", re: /\b(?:new|our|my)\s+(?:place|flat|apartment|house|home)\s+(?:in|near)\b/ },
  { attribute: "live_in", re: /\b(?:lease|mortgage|keys)\s+(?:on|to|for)\s+(?:a|an|the|our|my)\s+(?:new\s+)?(?:place|flat|apartment|house|home)\b/ },
  { attribute: "live_in", re: /\b(?:feels|felt)\s+like\s+home\b/, placeIsSubject: true },
  // "Home is Lisbon now", "Lisbon is home these days".
  {
    attribute: "live_in",
    re: /^(?:[a-z]+\s+)?home\s+is\s+(?:now\s+)?[a-z]+(?:\s+now\b|\s+these\s+days\b|,)|\bis\s+(?:now\s+)?(?:my\s+|our\s+)?home\s+(?:now|these\s+days|nowadays)\b/,
    placeIsSubject: true,
  },
  { attribute: "work_at", re: /\b(?:work|works|working|worked|employed)\s+(?:as\s+(?:an?\s+)?[\w\s-]{1,40}?\s+)?(?:at|for)\b/ },
  { attribute: "work_at", re: /\b(?:hired\s+by|(?:job|offer|contract|position|role)\s+(?:at|with|from)|my\s+employer|day\s+job)\b/ },
  // Starting a job: "on Monday I begin as lead designer at X", "I start there as a senior analyst".
  {
    attribute: "work_at",
    re: /\b(?:start|starts|starting|begin|begins|beginning|join|joins|joining)\s+(?:there\s+|on\s+[a-z]+\s+)?as\s+(?:an?\s+|the\s+|their\s+)?[\w\s-]{1,40}?\s+(?:at|with|for)\b/,
  },
  {
    attribute: "partner",
    re: /\b(?:dating|seeing\s+someone|(?:been\s+)?going\s+out\s+(?:with|for|together)|it's\s+over\s+(?:with|between)|(?:a|my|our)\s+new\s+(?:boyfriend|girlfriend|partner)|(?:a\s+)?(?:first|second|third|another)\s+date\s+with|broke\s+up|split\s+up|called\s+it\s+off|made\s+it\s+official|in\s+a\s+relationship|got\s+(?:married|engaged)|(?:my|our)\s+(?:boyfriend|girlfriend|partner|fianc[eé]e?|husband|wife))\b/,
  },
  // Where one trains: a place after a training verb, a membership that moves, a gym joined, "my gym is ...".
  {
    attribute: "gym",
    re: /\b(?:train|trains|training|lift|lifts|lifting|work\s+out|works\s+out|working\s+out|exercise|exercises|exercising|climb|climbs|climbing|boulder|boulders|bouldering|swim|swims|swimming)\s+at\s+(?!(?:the\s+)?(?:moment|minute|weekends?|night|lunch|lunchtime|dawn|dusk|work|last|least|most|first|all|times)\b)/,
    habitual: true,
  },
  {
    attribute: "gym",
    re: /\b(?:my|our|their|his|her|a|the|gym|fitness|climbing|swimming|pool)\s+membership\b(?!\s+(?:fee|fees|price|card|number))/,
    requires: /\b(?:joined|join|joining|transferred|transfer|moved|switched|cancell?ed|signed\s+up|renewed)\b|\bmembership\s+(?:at|with|to|over\s+to)\b/,
    habitual: true,
  },
  {
    attribute: "gym",
    re: new RegExp(
      String.raw`\b(?:joined|joining|signed\s+up\s+(?:at|to|with|for))\s+(?:a\s+|the\s+|my\s+)?(?:new\s+|local\s+)?(?:[a-z'-]+\s+){0,3}?${GYM_PLACE}\b`,
    ),
    habitual: true,
  },
  { attribute: "gym", re: /\b(?:my|our)\s+(?:new\s+|local\s+|usual\s+)?gym\s+(?:is|is\s+now|'s)\s+\S/ },
  // Which phone one has: a named model one owns, gets or moves to.
  {
    attribute: "phone",
    re: new RegExp(
      String.raw`(?:(?<=\b[a-z]+'s\s+(?:new\s+|old\s+)?)|\b(?:my|our)\s+(?:new\s+|old\s+|current\s+|trusty\s+)?|\b(?:got|get|getting|bought|buy|buying|ordered|upgraded\s+to|upgrading\s+to|switched\s+to|switching\s+to|moved\s+(?:over\s+)?to|picked\s+up|using|use|have|own|on)\s+(?:a\s+|an\s+|the\s+|my\s+)?(?:new\s+|used\s+|refurbished\s+|second-hand\s+)?)${PHONE}\b`,
    ),
  },
  { attribute: "phone", re: /\b(?:my|our)\s+(?:new\s+|current\s+)?(?:phone|smartphone|mobile)\s+(?:is|is\s+now|'s)\s+(?:a|an|the)\s+\S/ },
  // What one drinks as a habit: "I'm a tea person", "switched to matcha", "I drink decaf", "my morning drink is...".
  {
    attribute: "drink",
    re: /\b(?:my|our)\s+(?:usual|morning|daily|go-to|regular|first)\s+(?:drink|brew|cup|beverage|order|coffee|tea)\s+(?:is|is\s+now|'s|these\s+days\s+is|nowadays\s+is)\s+\S/,
  },
  {
    attribute: "drink",
    re: new RegExp(
      String.raw`\b(?:i'm|i\s+am|we're|we\s+are)\s+(?:[a-z]+\s+){0,3}?an?\s+(?:[a-z-]+\s+){0,3}?${DRINK}\s*(?:person|drinker|addict|fiend|lover|snob|fan)\b`,
    ),
  },
  {
    attribute: "drink",
    re: new RegExp(
      String.raw`\b(?:switched|switching|switch|changed|changing|converted|moved\s+over)\s+(?:over\s+|back\s+|completely\s+|entirely\s+)?(?:from\s+${LEAD}${DRINK}\s+)?to\s+${LEAD}${DRINK}`,
    ),
  },
  {
    attribute: "drink",
    re: new RegExp(String.raw`(?<!\b(?:to|a|the|any|some|no|your)\s)\b(?:drink|drinks|live\s+on|lives\s+on|run\s+on|runs\s+on)\s+${LEAD}${DRINK}`),
  },
  {
    attribute: "drink",
    re: new RegExp(
      String.raw`\b(?:have|has|take|takes)\s+${LEAD}${DRINK}(?=.*\b(?:every|each|daily|a\s+day|in\s+the\s+mornings?|first\s+thing|these\s+days|nowadays)\b)`,
    ),
  },
  {
    attribute: "drink",
    re: new RegExp(String.raw`\b(?:start|starts|begin|begins)\s+(?:the|my|each|every)\s+(?:day|morning)s?\s+(?:with|without|on)\s+${LEAD}${DRINK}`),
  },
  { attribute: "drink", re: new RegExp(String.raw`\b(?:can't|cannot|can\s+not|couldn't)\s+(?:[a-z']+\s+){0,6}?without\s+${LEAD}${DRINK}`) },
  { attribute: "drink", re: new RegExp(String.raw`\b(?:gave\s+up|giving\s+up|quit|quitting|cut\s+out|cutting\s+out|off)\s+${LEAD}${DRINK}`) },
];

/** Training, one-off: a visit is not where one trains ("tried a class at X", "went climbing at X on holiday"). */
export const ONE_OFF =
  /\b(?:went|go|going|tried|trying|visited|visiting|drop-in|trial|once|on\s+holiday|while\s+(?:visiting|in|on|at)|yesterday|last\s+(?:night|week|weekend))\b/;

/** Question cues: which of the user's changing attributes a question asks about (first match wins). */
export const QUESTIONS: [Attribute, RegExp][] = [
  ["gym", /\b(?:gym|gyms|work\s+out|working\s+out|exercise|exercising|fitness|membership|member\s+of)\b/],
  ["work_at", /\b(?:employer|employs|employed|company|firm|job|work|working)\b(?!\s+out)/],
  ["live_in", /\b(?:live|living|reside|residing|based|home|address|city|town)\b/],
  ["partner", /\b(?:partner|dating|seeing\s+(?:anyone|someone)|boyfriend|girlfriend|significant\s+other|relationship|spouse|husband|wife|together\s+with)\b/],
  ["phone", /\b(?:phone|smartphone|mobile|cellphone|handset)\b(?!\s+(?:numbers?|bill|plan|contract|case|charger|calls?|provider|carrier))/],
  ["drink", /\b(?:drink|drinks|drinking|beverage|coffee|tea|brew|caffeine)\b/],
];

/**
 * A statement that says something changed or is the case now ("switched", "instead", "no longer", "these days",
 * "... now", "my old X", "a new routine"). With a value of an attribute's kind in it (a drink, a phone model, a
 * gym) and no cue of its own, it states that attribute's new value: "These days the first thing I have is matcha".
 */
export const CHANGE_MARK =
  /\b(?:switched|swapped|changed|upgraded|replaced|instead|no\s+longer|anymore|stopped|quit|gave\s+up|dropped|ditched|transferred|moved\s+over|nowadays|these\s+days|now|new\s+(?:routine|habit|phone|gym|place)|(?:my|the)\s+(?:old|previous|former)\s+[a-z]+)\b/;

/** The ways a new state starts or an old one ends ("started", "sold", "lost interest in", "since the move"). */
export const CHANGE_EXTRA =
  /\b(?:switching|started|starting|sold|selling|lost\s+interest|finished\s+with|done\s+with|dropped\s+out|moved\s+(?:me|us)\s+to|took\s+over|since\s+(?:the|my|our|last))\b/;

/** The kinds of value that name an attribute by themselves (see `CHANGE_MARK`). */
export const VALUES: [Attribute, RegExp][] = [
  ["drink", new RegExp(String.raw`\b${DRINK}`)],
  ["gym", new RegExp(String.raw`\b${GYM_PLACE}\b`)],
  ["phone", new RegExp(String.raw`\b${PHONE}\b`)],
];

/**
 * A thing of the user's named as replaced or new ("sold the old car and bought...", "lost interest in my old
 * hobby", "the new phone arrived"): the noun is the attribute, whatever it is. "Old" needs a change in the same
 * statement ("my old phone is in a drawer" states nothing current); nouns for people and time are not things,
 * and the noun must end its phrase ("my new desk neighbour" is not a desk).
 */
export const THING =
  /\b(?:my|our|the)\s+(old|previous|former|new)\s+([a-z]+)(?=\s*$|\s*[,:;.!-]|\s+(?:is|was|arrived|came|and|for|from|has|had|went|got)\b|'s\b)/;
export const NOT_A_THING = new Set([
  "one",
  "ones",
  "days",
  "day",
  "times",
  "time",
  "friend",
  "friends",
  "mate",
  "mates",
  "self",
  "neighbour",
  "neighbor",
  "colleague",
  "colleagues",
  "man",
  "woman",
  "boy",
  "girl",
  "folks",
  "world",
  "year",
  "years",
  "week",
  "month",
]);
/** What or which thing a question asks about ("What car do I drive now?", "What's my hobby these days?"). */
export const ASKED_THING = /^\s*(?:what|which)(?:'s|\s+is|\s+are)?\s+(?:my\s+|our\s+)?(?:current\s+|present\s+|new\s+|old\s+|previous\s+)?([a-z]+)\b/;

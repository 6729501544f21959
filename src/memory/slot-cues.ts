/**
 * The words that say a statement or a question is about one of a person's changing attributes (see slots.ts).
 * Statement cues are matched on lower-cased text; the words before a cue name whose attribute it is. Each cue
 * needs the attribute's value in the statement (a place, an employer, a phone model, a drink): "my phone died"
 * or "I'm at the gym" say nothing about which phone or which gym, so they replace nothing.
 */

import { CAR_BRAND, CAR_MAKER, CAR_NOUN, COURSE, DIET, DRINK, GROUP, GYM_PLACE, MODE, PHONE, PHONE_BRAND } from "./slot-values";

export { DRINK, GYM_PLACE, PHONE, PHONE_BRAND };

export type Attribute = "live_in" | "work_at" | "partner" | "gym" | "phone" | "drink" | "car" | "diet" | "commute" | "volunteer" | "hobby" | "study" | "pet";

export type Cue = {
  attribute: Attribute;
  re: RegExp;
  /** The place named is the subject ("Ghent feels like home"): any first person makes it the user's. */
  placeIsSubject?: boolean;
  /** Only a lasting state counts: visits, trials and one-off outings ("tried a class at X") do not. */
  habitual?: boolean;
  /** Said of one day, it is no lasting state ("I'm taking the bus to work tomorrow", "a rental car this week"). */
  lasting?: boolean;
  /** The statement must also say this somewhere (a membership that moves, not its fee). */
  requires?: RegExp;
  /** A match counts only if it names a maker with its capitals in the original text ("my Ford", not "ford")... */
  brand?: RegExp;
  /** ...or a word for the thing itself ("a new phone", "an electric car"). */
  generic?: RegExp;
};

const LEAD = String.raw`(?:(?:a|an|my|the|some|more|only|just)\s+)?(?:[a-z-]+\s+){0,3}?`;
const BY = "(?:[a-z'-]+\\s+){0,2}?";

export const STATEMENTS: Cue[] = [
  // How one gets to work: a way of travelling after a commuting verb. Before `work_at`: "get to work" is no employer.
  {
    attribute: "commute",
    lasting: true,
    re: new RegExp(
      String.raw`\b(?:commute|commutes|commuting|(?:get|gets|getting|go|goes|going|travel|travels|travelling|traveling|head|heads|heading|come|comes|coming)\s+(?:in(?:to\s+work)?|to\s+work|to\s+the\s+office))\s+${BY}${MODE}`,
    ),
  },
  {
    attribute: "commute",
    re: /\b(?:cycle|cycles|cycling|bike|bikes|biking|walk|walks|walking|drive|drives|driving|ride|rides|riding|scoot|scoots|scooting|run|runs|running)\s+(?:in\s+)?to\s+(?:work|the\s+office)\b|\b(?:take|takes|taking|catch|catches|catching)\s+(?:the|a)\s+(?:bus|train|tram|metro|subway|tube|ferry)\s+(?:in|into\s+(?:work|the\s+office|town|the\s+city)|to\s+work|to\s+the\s+office)\b|\b(?:my|our)\s+commute\s+(?:is|is\s+now|'s)\b/,
    lasting: true,
  },
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
    attribute: "work_at",
    re: /\b(?:started|starting|start|begin|began|beginning)\s+(?:work\s+|a\s+new\s+job\s+)?at\s+(?:a|an)\s+(?:new\s+)?(?:[a-z-]+\s+){0,2}?(?:agency|company|firm|startup|studio|consultancy|practice|lab|bank|school|hospital|clinic|charity|council|publisher|bakery|restaurant)\b|\b(?:my|a)\s+new\s+job\s+(?:at|with)\b/,
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
    brand: PHONE_BRAND,
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
  // Which car one has: a car one drives, owns, gets or gets rid of; "my Ford" names it by its maker.
  {
    attribute: "car",
    re: new RegExp(
      String.raw`\b(?:drive|drives|driving|got|get|getting|bought|buy|buying|leased|leasing|lease|own|owns|have|has|picked\s+up|sold|selling|scrapped|traded\s+in|part-exchanged|crashed|wrote\s+off|totalled|totaled|upgraded\s+to|switched\s+to)\s+(?:(?:myself|ourselves|me|us)\s+)?(?:a|an|the|my|our)\s+(?:new\s+|used\s+|second-hand\s+|secondhand\s+|little\s+|old\s+|electric\s+|trusty\s+)?(?:(?!(?:rental|rented|hire|hired|borrowed|loan|courtesy|company|work|friend's|taxi)\b)[a-z0-9-]+\s+){0,2}?(?:${CAR_NOUN}|${CAR_MAKER})\b(?!\s+(?:park|parks|parking|wash|insurance|seat|seats|boot|keys|radio|sharing|share|hire|rental|crash|accident|journey|ride|trip|show|salesman|dealer|loan))`,
    ),
    brand: CAR_BRAND,
    generic: new RegExp(String.raw`\b${CAR_NOUN}\b`),
    lasting: true,
  },
  { attribute: "car", re: new RegExp(String.raw`\b(?:my|our)\s+(?:new\s+|current\s+|trusty\s+|little\s+)?${CAR_MAKER}\b`), brand: CAR_BRAND },
  // How one eats: a way of eating one keeps, has taken up or follows ("I've been vegan", "since June I eat low-carb").
  {
    lasting: true,
    attribute: "diet",
    re: new RegExp(
      String.raw`(?:^(?:the\s+)?user\s+is|'m|\bam|'re|\bbeen|\bwent|\bgone|\bgoing|\bgo|\bturned|\bbecame|\bbecome|\bstayed|\bstaying|\beat|\beats|\beating|\bis\s+now|\bare\s+now|\bstarted|\bstarting|\bdoing|\btrying|\bswitched\s+to|^(?:on|doing|trying))\s+(?:(?:a|an|fully|strictly|mostly|completely|totally|now|still|properly|entirely|mainly)\s+)*${DIET}`,
    ),
  },
  {
    attribute: "diet",
    re: new RegExp(
      String.raw`\b(?:on|following|follow|follows|started|starting|doing|keeping\s+to|stick\s+to|sticking\s+to)\s+(?:a|an|the|my)\s+(?:strict\s+)?(?:${DIET}|mediterranean|high-protein|low-sugar|low-salt|low-fodmap|fodmap|calorie-controlled)\s+diet\b|\b(?:my|our)\s+diet\s+(?:is|is\s+now|'s)\b|\b(?:do|doing|started|starting)\s+intermittent\s+fasting\b|\b(?:stopped|quit|gave\s+up|giving\s+up|cut\s+out|cutting\s+out|no\s+longer|don't|do\s+not|never)\s+(?:eating\s+|eat\s+)?(?:meat|red\s+meat|fish|dairy|gluten|carbs|sugar|animal\s+products)\b`,
    ),
  },
  // Where one volunteers: helping out at a place, habitually.
  {
    lasting: true,
    attribute: "volunteer",
    re: /\b(?:volunteer|volunteers|volunteering|help\s+out|helps\s+out|helping\s+out)\s+(?:[a-z'-]+\s+){0,3}?at\b|\b(?:volunteer|volunteers|volunteering)\s+(?:with|for|in)\b/,
    habitual: true,
  },
  // How one spends free time: "my hobby is", "all my free time goes into", "I spend my spare time on".
  {
    attribute: "hobby",
    re: /\b(?:my|our)\s+(?:new\s+|current\s+|main\s+|latest\s+|big\s+)?(?:hobby|pastime|passion)\s+(?:is|is\s+now|'s|these\s+days\s+is)\b|\b(?:free|spare)\s+time\s+(?:goes|go|is\s+spent|gets\s+spent)\s+(?:on|into)\b|\b(?:spend|spends|spending)\s+(?:all\s+|most\s+of\s+)?(?:my|our)\s+(?:free|spare)\s+time\b/,
  },
  // What one studies: a course one has enrolled in, signed up for or is doing.
  {
    lasting: true,
    attribute: "study",
    re: new RegExp(
      String.raw`\b(?:enrolled|enrolling|enrol|enroll|enrols|enrolls|signed\s+up|signing\s+up|registered|started|starting|begun|began|doing|studying|taking|joined|joining|accepted|got\s+into|got\s+onto)\s+(?:in|on|for|onto|into|at|to)?\s*(?:a|an|the|my)\s+(?:[\w'-]+\s+){0,4}?${COURSE}\b|\b(?:i'm|i\s+am|we're)\s+(?:now\s+|currently\s+)?studying\s+[a-z]`,
    ),
  },
];

/** Training, one-off: a visit is not where one trains ("tried a class at X", "went climbing at X on holiday"). */
export const ONE_OFF =
  /\b(?:went|go|going|tried|trying|visited|visiting|drop-in|trial|once|on\s+holiday|while\s+(?:visiting|in|on|at)|yesterday|last\s+(?:night|week|weekend))\b/;

/** One day, not a lasting state: "tomorrow", "this weekend", "for once". */
export const ONE_TIME =
  /\b(?:today|tonight|tomorrow|yesterday|this\s+(?:morning|afternoon|evening|weekend|week)|next\s+(?:week|weekend|month|time)|last\s+(?:night|week|weekend)|for\s+once|for\s+the\s+day|just\s+for)\b/;

/** Question cues: which of the user's changing attributes a question asks about (first match wins). */
export const QUESTIONS: [Attribute, RegExp][] = [
  // Before `work_at`: "How do I get to work?" asks how, not for whom.
  [
    "commute",
    /\b(?:commute|commuting|get\s+(?:in\s+)?to\s+work|get\s+in|go\s+to\s+work|travel\s+to\s+work|get\s+to\s+the\s+office|(?:way|journey|trip)\s+to\s+work|(?:drive|cycle|bike|walk|ride)\s+to\s+work)\b/,
  ],
  ["volunteer", /\b(?:volunteer|volunteering|help\s+out|helping\s+out|charity\s+work)\b/],
  [
    "gym",
    /\b(?:gym|gyms|work\s+out|working\s+out|exercise|exercising|fitness|membership|member\s+of)\b|(?<!\b(?:the|a|by|on|my|that|this|next|last|night|early|late)\s)\btrain(?:s|ing)?\b(?!\s+(?:station|tickets?|journey|ride|line|times?|to\s+work))/,
  ],
  ["study", /\b(?:study|studying|studies|course|courses|degree|diploma|enrolled|bootcamp|school|college|university)\b/],
  ["hobby", /\b(?:hobby|hobbies|pastime|free\s+time|spare\s+time|(?:my|our)\s+weekends|(?:what|which)\s+am\s+i\s+into)\b/],
  ["work_at", /\b(?:employer|employs|employed|company|firm|job|work|working)\b(?!\s+out)/],
  ["live_in", /\b(?:live|living|reside|residing|based|home|address|city|town)\b/],
  [
    "partner",
    /\b(?:partner|dating|seeing\s+(?:anyone|someone)|boyfriend|girlfriend|significant\s+other|relationship|spouse|husband|wife|together\s+with|go(?:ing)?\s+out\s+with|who\s+am\s+i\s+with|married\s+to|engaged\s+to)\b/,
  ],
  ["phone", /\b(?:phone|smartphone|mobile|cellphone|handset)\b(?!\s+(?:numbers?|bill|plan|contract|case|charger|calls?|provider|carrier))/],
  ["car", /\b(?:car|cars|drive|driving|vehicle)\b/],
  ["diet", new RegExp(String.raw`\b(?:diet|eat|eating|${DIET})\b`)],
  ["drink", /\b(?:drink|drinks|drinking|beverage|coffee|tea|brew|caffeine|mug|cup|cuppa)\b/],
  // A pet has no statement cue (people keep several): only a pet named as replaced or new ("our old dog died, we
  // got a kitten" -> the thing slot of its noun) has a slot, and every kind of pet maps to this one.
  ["pet", /\b(?:pet|pets|dog|dogs|puppy|cat|cats|kitten|rabbit|hamster|guinea\s+pig|parrot|budgie|tortoise|ferret)\b/],
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
  ["diet", new RegExp(String.raw`\b${DIET}`)],
  ["car", new RegExp(String.raw`\b${CAR_MAKER}\b`)],
];

/** Which value kinds count only with a maker's capitals in the original text. */
export const BRANDS: Partial<Record<Attribute, RegExp>> = { phone: PHONE_BRAND, car: CAR_BRAND };

/**
 * A thing of the user's named as replaced or new ("sold the old car and bought...", "lost interest in my old
 * hobby", "the new phone arrived"): the noun is the attribute, whatever it is. "Old" needs a change in the same
 * statement ("my old phone is in a drawer" states nothing current); nouns for people and time are not things,
 * and the noun must end its phrase ("my new desk neighbour" is not a desk).
 */
export const THING =
  /\b(?:my|our|the)\s+(old|previous|former|new)\s+([a-z]+)(?=\s*$|\s*[,:;.!-]|\s+(?:is|was|arrived|came|and|for|from|has|had|went|got|died|passed|broke|needed|needs)\b|'s\b)/;
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
  "kind",
  "sort",
  "type",
  "else",
  "size",
  "number",
  "name",
  "way",
  "thing",
  "things",
  "part",
  "place",
]);

/**
 * The group the user belongs to at work, stated in the first person ("I'm on the growth team", "they moved me
 * to the payments team", "I joined the platform team"): a thing of the user's named by its noun (GROUP).
 */
/** The words that name which group ("the data platform team"): one to three, none a function word. */
const NAMED = String.raw`(?:(?!(?:the|a|an|with|and|of|for|at|in|on|to|from|my|our|same|whole|entire)\b)[a-z-]+\s+){1,3}?`;
export const MEMBER_OF = [
  new RegExp(
    String.raw`\b(?:i'm|i\s+am|we're|we\s+are|i've\s+been|we've\s+been|i\s+work|we\s+work|i\s+sit|user\s+is)\s+(?:now\s+|still\s+|currently\s+)?(?:on|in|with|part\s+of)\s+(?:the|a|an|our)\s+${NAMED}${GROUP}\b(?!')`,
  ),
  new RegExp(
    String.raw`\b(?:moved|moving|transferred|transferring|switched|switching|put|assigned|reassigned|rotated|placed)\s+(?:me|us)\s+(?:to|into|onto|on|over\s+to|in)\s+(?:the|a|an|our)\s+${NAMED}${GROUP}\b(?!')`,
  ),
  new RegExp(
    String.raw`\b(?:i|we)\s+(?:just\s+|recently\s+|finally\s+|have\s+|'ve\s+)?(?:joined|moved\s+to|switched\s+to|transferred\s+to|moved\s+over\s+to)\s+(?:the|a|an)\s+${NAMED}${GROUP}\b(?!')`,
  ),
];

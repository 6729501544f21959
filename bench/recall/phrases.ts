/**
 * How the generated users say things and how they ask about them. `ORIGINAL` is the phrasing the recall eval was
 * first written with (and which retrieval was later tuned on). `HELD_OUT` says the same facts and asks the same
 * questions in other words; it was written before any figure on it was seen and is not to be edited to move one.
 * `FRESH` (at the end) has its own wording, entity lists and more kinds of changing fact.
 * Lists of questions are picked from with the corpus's seeded generator.
 */

import type { Chat, Pools } from "./corpus";

/** A fact that changes over time: `states[i]` says the i-th value; the last one is current. */
export type ChangingFact = {
  key: string;
  values: readonly string[];
  states: ((v: string) => string)[];
  /** The assistant's reply to each state (an acknowledgement when absent). */
  replies?: (((v: string) => string) | undefined)[];
  currentQ: string[];
  /** Asks for the value before the current one. */
  historyQ?: string[];
};

export type Phrasebook = {
  name: string;
  /** Entity lists replacing the generator's own. */
  pools?: Partial<Pools>;
  /** Greetings, chit-chat and acknowledgements replacing the generator's own. */
  chat?: Partial<Chat>;
  /** The generated users' names (used only as labels). */
  userNames?: readonly string[];
  /** Kinds of changing fact beyond the city, job, partner, drink, gym and phone every phrasebook has. */
  updates?: ChangingFact[];
  cityStay: (c: string) => string;
  cityStayReply: (c: string) => string;
  cityMoving: (c: string) => string;
  cityMovingReply: (c: string) => string;
  citySettled: (c: string) => string;
  citySettledReply: (c: string) => string;
  friendCity: (p: string, c: string) => string;
  cityQ: string[];
  job0: (role: string, emp: string) => string;
  job1: (role: string, emp: string) => string;
  job1Reply: (emp: string) => string;
  jobQ: string[];
  rel0: (p: string) => string;
  rel1: (p: string) => string;
  rel1Reply: string;
  rel2: (p: string) => string;
  rel2Reply: (p: string) => string;
  relQ: string[];
  drink0: (drink: string, how: string) => string;
  drink1: (drink: string, how: string) => string;
  drinkQ: string[];
  gym0: (g: string) => string;
  gym1: (g: string) => string;
  gymQ: string[];
  phone0: (p: string) => string;
  phone1: (p: string) => string;
  phone1Reply: (p: string) => string;
  phoneQ: string[];
  sister: (p: string) => string;
  sisterQ: string[];
  allergy: (a: string) => string;
  allergyQ: string[];
  car: (c: string) => string;
  carQ: string[];
  book: (b: string) => string;
  bookQ: string[];
  instrument: (i: string) => string;
  instrumentQ: string[];
  mom: (date: string) => string;
  momQ: string[];
  team: (t: string) => string;
  teamQ: string[];
  desk: (p: string) => string;
  deskQ: string[];
  meds: (m: string) => string;
  medsQ: string[];
  ramen: (r: string) => string;
  ramenQ: string[];
  village: (v: string) => string;
  villageQ: string[];
  language: (l: string) => string;
  languageQ: string[];
  plant: (p: string) => string;
  plantQ: string[];
  fear: (f: string) => string;
  fearQ: string[];
  podcast: (p: string) => string;
  podcastQ: string[];
  engaged: (p: string) => string;
  engagedReply: string;
  fianceJob: (p: string, job: string) => string;
  fianceQ: string;
  bff: (p: string, c: string) => string;
  bffVisit: (p: string) => string;
  bffQ: string;
  dog: (d: string) => string;
  dogReply: (d: string) => string;
  chewed: (d: string, item: string) => string;
  dogQ: string;
  manager: (p: string) => string;
  teamHobby: (p: string, hobby: string) => string;
  managerQ: string;
  trip: (t: string) => string;
  tripReply: string;
  tripQ: (month: string) => string;
  race: (r: string) => string;
  raceQ: (r: string) => string;
  promo: string;
  promoQ: string;
  tripsInYearQ: (year: string) => string;
  latestPlan: string;
  latestPlanQ: string;
  abstention: string[];
};

export const ORIGINAL: Phrasebook = {
  name: "original",
  cityStay: (c) => `I've lived in ${c} for about four years now and I still get lost in the old town.`,
  cityStayReply: (c) => `${c} has such a lovely old town!`,
  cityMoving: (c) => `Big news: we're moving to ${c} next month, the flat is already full of boxes.`,
  cityMovingReply: (c) => `Exciting! ${c} is a great choice.`,
  citySettled: (c) => `Finally settled into our new place in ${c}, the commute is so much shorter.`,
  citySettledReply: (c) => `Welcome to ${c}! Enjoy the short commute.`,
  friendCity: (p, c) => `My friend ${p} lives in ${c} and keeps telling me to visit.`,
  cityQ: ["Which city do I live in now?", "Where am I based these days?", "What town is home for me at the moment?"],
  job0: (role, emp) => `I work as a ${role} at ${emp}, mostly spreadsheets and stakeholder meetings.`,
  job1: (role, emp) => `I accepted the offer from ${emp}! I start there as a senior ${role} in three weeks.`,
  job1Reply: (emp) => `Congratulations on the new role at ${emp}!`,
  jobQ: ["Which company am I working for at the moment?", "Who is my current employer?", "Where do I work now?"],
  rel0: (p) => `I've been seeing someone, ${p}. It's early days but it feels easy.`,
  rel1: (p) => `${p} and I broke up last week. It was mutual but I'm a bit flat.`,
  rel1Reply: "I'm sorry. Be gentle with yourself.",
  rel2: (p) => `I met ${p} at a friend's barbecue and we've been dating for a month now.`,
  rel2Reply: (p) => `That's lovely, ${p} sounds fun!`,
  relQ: ["Who is my partner right now?", "Who am I dating currently?", "Am I seeing anyone at the moment, and who?"],
  drink0: (d, how) => `I'm a ${d} person, ${how}, otherwise I can't function.`,
  drink1: (d, how) => `I've switched to ${d} completely, ${how}. My sleep is so much better.`,
  drinkQ: ["What do I drink in the mornings these days?", "What's my go-to morning drink now?"],
  gym0: (g) => `I train at ${g} three times a week, mostly weights.`,
  gym1: (g) => `I cancelled my membership and joined ${g} instead, it's closer and cheaper.`,
  gymQ: ["Which gym am I a member of now?", "Where do I work out these days?"],
  phone0: (p) => `My ${p} is on its last legs, the battery dies by lunchtime.`,
  phone1: (p) => `I upgraded to the ${p} and the camera is unreal.`,
  phone1Reply: (p) => `Enjoy the new ${p}!`,
  phoneQ: ["What phone do I have now?", "Which smartphone am I using at the moment?"],
  sister: (p) => `My sister ${p} is coming over this weekend, we haven't seen each other in months.`,
  sisterQ: ["What's my sister called?", "What is the name of my sister?"],
  allergy: (a) => `Turns out I'm allergic to ${a}, the doctor confirmed it after the blood test.`,
  allergyQ: ["What did the blood test show I'm allergic to?", "Which food am I allergic to?"],
  car: (c) => `I finally bought a used ${c}, dark blue, drives like a dream.`,
  carQ: ["What car did I buy?", "Which car model did I get second hand?"],
  book: (b) => `I just finished ${b} and I can't stop thinking about the ending.`,
  bookQ: ["Which book's ending stuck with me?", "What novel did I finish recently?"],
  instrument: (i) => `I signed up for ${i} lessons on Thursday evenings.`,
  instrumentQ: ["What instrument am I learning?", "Which instrument do I take lessons for?"],
  mom: (d) => `Mom's birthday is on the ${d}, I need to order flowers in time.`,
  momQ: ["When is my mother's birthday?", "What date is Mom's birthday?"],
  team: (t) => `I've supported ${t} since I was a kid, my dad took me to every home game.`,
  teamQ: ["Which football team do I support?", "What club have I supported since childhood?"],
  desk: (p) => `My new desk neighbour ${p} brings homemade kimchi every Friday.`,
  deskQ: ["Who sits next to me at work?", "What's the name of my desk neighbour?"],
  meds: (m) => `The doctor put me on ${m} for my migraines.`,
  medsQ: ["What medication am I on for migraines?", "What do I take for my headaches?"],
  ramen: (r) => `${r} near the station does the best ramen I've ever had.`,
  ramenQ: ["Where do I get my favourite ramen?", "Which place makes the best ramen in my opinion?"],
  village: (v) => `I grew up in a tiny fishing village called ${v}.`,
  villageQ: ["Where did I grow up?", "What village am I from originally?"],
  language: (l) => `I've started learning ${l} with an app, twenty minutes a day.`,
  languageQ: ["Which language am I studying?", "What language am I learning with an app?"],
  plant: (p) => `My ${p} on the balcony somehow survived the winter.`,
  plantQ: ["What plant survived the winter on my balcony?", "Which balcony plant made it through the cold months?"],
  fear: (f) => `I'm terrified of ${f}, always have been.`,
  fearQ: ["What am I scared of?", "What is my biggest fear?"],
  podcast: (p) => `I'm hooked on a podcast called ${p} for my commute.`,
  podcastQ: ["What podcast do I listen to on the way to work?", "Which podcast am I hooked on?"],
  engaged: (p) => `My sister got engaged to ${p}! We're all thrilled.`,
  engagedReply: "Congratulations to them both!",
  fianceJob: (p, job) => `${p} works as a ${job}, so the wedding date has to fit his shifts.`,
  fianceQ: "What does my sister's fiancé do for a living?",
  bff: (p, c) => `My best friend ${p} moved to ${c} for a research job.`,
  bffVisit: (p) => `Booked flights to go see ${p} next month, can't wait.`,
  bffQ: "Which city am I flying to when I visit my best friend?",
  dog: (d) => `We adopted a rescue puppy and named him ${d}.`,
  dogReply: (d) => `${d} is a perfect name!`,
  chewed: (d, item) => `${d} chewed through my ${item} again, unbelievable.`,
  dogQ: "What did my puppy destroy?",
  manager: (p) => `My manager at work is ${p}, very calm, never sends emails after six.`,
  teamHobby: (p, hobby) => `${p} got the whole team to try ${hobby} on Saturday and I loved it.`,
  managerQ: "What activity did my boss get the team to try?",
  trip: (t) => `Just got back from a week in ${t}, I'm still sorting through photos.`,
  tripReply: "Welcome back! How was it?",
  tripQ: (month) => `Where did I go on holiday in ${month}?`,
  race: (r) => `I did it, finished my first ${r} this morning! Legs are jelly.`,
  raceQ: (r) => `When did I do my first ${r}?`,
  promo: "Got promoted today! They announced it in the all-hands.",
  promoQ: "When was I promoted?",
  tripsInYearQ: (year) => `Which trips did I take in ${year}?`,
  latestPlan: "Weekend plan: a long hike and then pizza, nothing else.",
  latestPlanQ: "What did I say I was doing in the most recent weekend plan I mentioned?",
  abstention: [
    "What is my brother's dog called?",
    "Which university did I graduate from?",
    "How much did I pay for my bike?",
    "What's my favourite opera?",
    "When is my dentist appointment?",
    "What is my blood type?",
    "What's the name of my daughter's school?",
    "Which airline do I fly with for work?",
  ],
};

/** The same facts and questions in other words (see the file comment: written blind, never edited to fit). */
export const HELD_OUT: Phrasebook = {
  name: "held-out",
  cityStay: (c) => `Been in ${c} close to four years and the tram map still confuses me.`,
  cityStayReply: (c) => `Ha, ${c}'s trams are a puzzle!`,
  cityMoving: (c) => `We signed the lease on a flat in ${c}, the removal van comes in a few weeks.`,
  cityMovingReply: (c) => `How exciting, ${c} it is then!`,
  citySettled: (c) => `The last boxes are unpacked, ${c} finally feels like home.`,
  citySettledReply: (c) => `So glad ${c} feels like home already.`,
  friendCity: (p, c) => `${p} keeps inviting me to stay with her in ${c}.`,
  cityQ: ["Where's home for me these days?", "Which city am I living in currently?", "Where do I reside at present?"],
  job0: (role, emp) => `Day job: ${role} at ${emp}, lots of dashboards and status calls.`,
  job1: (role, emp) => `Signed the contract with ${emp} today, I'm their new senior ${role} from next month.`,
  job1Reply: (emp) => `Great news about ${emp}!`,
  jobQ: ["Which firm am I with now?", "What company employs me at the moment?", "Where am I working these days?"],
  rel0: (p) => `Went on a third date with ${p} yesterday, I think I really like them.`,
  rel1: (p) => `${p} and I called it off. No drama, it just wasn't right.`,
  rel1Reply: "That's never easy. Take care of yourself.",
  rel2: (p) => `${p} and I made it official, we've been together a few weeks now.`,
  rel2Reply: (p) => `Aww, congratulations to you and ${p}!`,
  relQ: ["Who is my significant other at the moment?", "Who am I in a relationship with now?", "Who's my current boyfriend or girlfriend?"],
  drink0: (d, how) => `Can't start the day without ${d}, ${how}.`,
  drink1: (d, how) => `These days the first thing I have is ${d}, ${how}, I've dropped the old habit.`,
  drinkQ: ["What's my morning beverage nowadays?", "What do I have first thing in the morning these days?"],
  gym0: (g) => `Lifting at ${g} on Mondays, Wednesdays and Fridays.`,
  gym1: (g) => `Transferred my membership over to ${g}, it's a five minute walk from the flat.`,
  gymQ: ["Which gym do I go to currently?", "Where do I exercise now?"],
  phone0: (p) => `The screen on my ${p} cracked again and it barely holds a charge.`,
  phone1: (p) => `Picked up a ${p} last weekend, so much faster than the old one.`,
  phone1Reply: (p) => `The ${p} is a great pick!`,
  phoneQ: ["Which phone am I using now?", "What's my current mobile?"],
  sister: (p) => `${p}, my little sister, is staying with us over the weekend.`,
  sisterQ: ["What's my younger sister called?", "Which sibling came to stay for the weekend?"],
  allergy: (a) => `The allergist says ${a} is off limits for me from now on.`,
  allergyQ: ["What food can't I eat because of an allergy?", "What did the allergist tell me to avoid?"],
  car: (c) => `Picked up a second-hand ${c} from a dealer, silver, runs perfectly.`,
  carQ: ["What vehicle did I buy?", "Which used car do I drive?"],
  book: (b) => `${b} kept me up until 2am, what a finish.`,
  bookQ: ["Which novel kept me up late?", "What book did I stay up to finish?"],
  instrument: (i) => `Thursday nights are now ${i} practice with a teacher.`,
  instrumentQ: ["Which instrument am I taking lessons in?", "What do I practise on Thursday nights?"],
  mom: (d) => `My mother turns sixty on the ${d}, I must book a restaurant.`,
  momQ: ["When is my mum's birthday?", "On what date does my mother celebrate?"],
  team: (t) => `Been a ${t} fan since primary school, never missed a derby on TV.`,
  teamQ: ["Which club am I a fan of?", "What football team do I follow?"],
  desk: (p) => `${p} from the next desk shares her homemade kimchi every Friday.`,
  deskQ: ["Who sits beside me in the office?", "Who is the coworker next to me?"],
  meds: (m) => `My GP prescribed ${m} to take when a migraine starts.`,
  medsQ: ["What pills do I take for migraines?", "What was I prescribed for my headaches?"],
  ramen: (r) => `Best bowl of ramen in town? ${r}, by the station, no contest.`,
  ramenQ: ["Where's my favourite ramen spot?", "Which noodle place do I rate the highest?"],
  village: (v) => `I was raised in a small harbour village, ${v}.`,
  villageQ: ["Where was I raised?", "What is my home village?"],
  language: (l) => `Doing daily ${l} lessons on my phone, on a 40 day streak.`,
  languageQ: ["Which language am I learning?", "What language do I practise daily?"],
  plant: (p) => `Against all odds the ${p} outside made it through the frost.`,
  plantQ: ["Which plant survived the frost?", "What plant made it through the cold?"],
  fear: (f) => `Nothing makes me panic like ${f}, it's been that way since I was small.`,
  fearQ: ["What am I afraid of?", "What gives me panic?"],
  podcast: (p) => `My commute soundtrack is ${p}, I can't stop listening.`,
  podcastQ: ["Which podcast do I play while commuting?", "What show do I listen to on my commute?"],
  engaged: (p) => `Big family news: my sister and ${p} are getting married!`,
  engagedReply: "What wonderful news!",
  fianceJob: (p, job) => `${p} is a ${job}, so the wedding has to work around his rota.`,
  fianceQ: "What job does the man my sister is marrying have?",
  bff: (p, c) => `${p}, my closest friend, took a research post in ${c}.`,
  bffVisit: (p) => `Flights booked, I'm off to visit ${p} in a few weeks.`,
  bffQ: "Where am I flying to see my closest friend?",
  dog: (d) => `We brought home a rescue pup and called him ${d}.`,
  dogReply: (d) => `Hello, ${d}!`,
  chewed: (d, item) => `${d} has destroyed my ${item}, I give up.`,
  dogQ: "What did my dog chew up?",
  manager: (p) => `${p} is my line manager, super calm, no emails after six.`,
  teamHobby: (p, hobby) => `${p} took our team ${hobby} at the weekend, great fun.`,
  managerQ: "What did my manager organise for the team at the weekend?",
  trip: (t) => `Back home after a week in ${t}, thousands of photos to sort.`,
  tripReply: "Welcome home! Any favourite moments?",
  tripQ: (month) => `Where did I travel in ${month}?`,
  race: (r) => `Crossed the finish line of my first ${r} today!`,
  raceQ: (r) => `When did I complete my first ${r}?`,
  promo: "They announced my promotion at the all-hands today!",
  promoQ: "When did I get my promotion?",
  tripsInYearQ: (year) => `What trips did I go on during ${year}?`,
  latestPlan: "This weekend: a long walk in the hills, then pizza.",
  latestPlanQ: "What was my plan for the most recent weekend I told you about?",
  abstention: [
    "What's my cousin's wife called?",
    "Which school did my son go to?",
    "How much rent do I pay?",
    "What is my favourite cocktail?",
    "When is my car's MOT due?",
    "What's my shoe size?",
    "Which hospital was I born in?",
    "What's the name of my landlord?",
  ],
};

/**
 * A third corpus, written before any change to ranking that followed the held-out figure: other wording, other
 * entity lists, and kinds of changing fact the slot cues were never written for (car, course, diet, commute,
 * hobby, team at work, volunteering), each also asked about in the past ("what did I drive before?").
 * Not to be edited to move a figure.
 */
export const FRESH: Phrasebook = {
  name: "fresh",
  pools: {
    people: [
      "Odile",
      "Ravi",
      "Sunniva",
      "Tariq",
      "Mirela",
      "Jakub",
      "Elif",
      "Caspar",
      "Noemi",
      "Dmitri",
      "Ayasha",
      "Lorcan",
      "Fenna",
      "Ibrahim",
      "Saoirse",
      "Matteo",
      "Wren",
      "Kasimir",
    ],
    cities: ["Aarhus", "Ljubljana", "Nantes", "Utrecht", "Trieste", "Malmo", "Bilbao", "Krakow", "Galway", "Innsbruck", "Tartu", "Plovdiv", "Basel", "Coimbra"],
    trips: ["the Faroe Islands", "Hokkaido", "the Azores", "Patagonia", "Madeira", "the Lofoten Islands", "Tasmania", "Jordan", "the Cinque Terre", "Georgia"],
    employers: [
      "Saltmarsh Robotics",
      "Greyhound Insurance",
      "Lumen Pharma",
      "Orchard Mobility",
      "Kestrel Media",
      "Basalt Software",
      "Harbourline Freight",
      "Verdant Foods",
    ],
    roles: [
      "solutions architect",
      "copywriter",
      "site reliability engineer",
      "buyer",
      "data engineer",
      "content strategist",
      "payroll specialist",
      "game designer",
    ],
    gyms: ["Forge Athletics", "the YMCA", "Summit Climbing", "Corefit", "the leisure centre on Mill Road", "Anvil Barbell"],
    phones: ["iPhone 13 mini", "Galaxy A54", "Pixel 7a", "Nothing Phone 2", "iPhone 16", "OnePlus 12"],
    drinks: [
      ["chai", "made with fresh ginger"],
      ["cortados", "two of them, back to back"],
      ["rooibos", "no milk"],
      ["hot lemon water", "before anything else"],
      ["espresso", "a double, standing at the counter"],
    ],
    cars: ["Fiat Panda", "Subaru Outback", "Peugeot 208", "Kia Ceed"],
    books: ["Circe", "The Goldfinch", "Never Let Me Go", "Pachinko", "Hamnet", "The Road"],
    instruments: ["harp", "trumpet", "banjo", "accordion", "double bass", "flute"],
    teams: ["Hibernian", "Benfica", "Borussia Dortmund", "Napoli", "Club Brugge", "Real Sociedad"],
    allergens: ["peanuts", "strawberries", "lupin", "mango", "hazelnuts", "soy"],
    meds: ["naproxen", "amitriptyline", "eletriptan", "candesartan"],
    restaurants: ["Ippudo Corner", "Ramen Kazan", "Shoyu Street", "Tsuru Noodles"],
    villages: ["Mousehole", "Robin Hood's Bay", "Portree", "Clovelly", "Anstruther", "Polperro"],
    languages: ["Greek", "Polish", "Swahili", "Finnish", "Czech", "Hebrew"],
    plants: ["bay tree", "camellia", "lavender pot", "kumquat", "jasmine vine"],
    fears: ["snakes", "tunnels", "needles", "open sea swims", "clowns"],
    podcasts: ["Reply All", "99% Invisible", "Serial", "Stuff You Should Know", "Freakonomics Radio"],
    jobs2: ["lighthouse keeper", "sound engineer", "vet", "tree surgeon", "train driver"],
    dogs: ["Noodle", "Clementine", "Bramble", "Ziggy", "Pickle", "Rolo"],
    chewed: ["wooly hat", "phone charger", "garden hose", "yoga mat", "slippers"],
    hobbies: ["archery", "paddleboarding", "wheel throwing", "orienteering", "axe throwing"],
    races: ["marathon", "5k parkrun", "olympic-distance triathlon", "100 km bike ride"],
  },
  cityStay: (c) => `Four years in ${c} and I still can't pronounce half the street names.`,
  cityStayReply: (c) => `${c} street names are a workout!`,
  cityMoving: (c) => `It's decided, we're relocating to ${c} in the spring, the job market is better there.`,
  cityMovingReply: (c) => `A fresh start in ${c}, how exciting.`,
  citySettled: (c) => `Home is ${c} now, we got the keys on Friday and slept on a mattress on the floor.`,
  citySettledReply: (c) => `Welcome home to ${c}!`,
  friendCity: (p, c) => `${p} has a spare room in ${c} and says I can come whenever I like.`,
  cityQ: ["What city do I call home right now?", "Where do I currently live?", "Which city have I ended up living in?"],
  job0: (role, emp) => `I'm a ${role} for ${emp}, the pay is fine but the commute is long.`,
  job1: (role, emp) => `Last day at the old place was yesterday, on Monday I begin as lead ${role} at ${emp}.`,
  job1Reply: (emp) => `Good luck at ${emp} on Monday!`,
  jobQ: ["Who do I work for currently?", "What's the name of the company I'm at now?", "Which employer am I with these days?"],
  rel0: (p) => `${p} and I have been going out for a couple of months, it's going well.`,
  rel1: (p) => `It's over with ${p}. We want different things.`,
  rel1Reply: "I'm sorry, that's hard even when it's the right call.",
  rel2: (p) => `I've got a new girlfriend, ${p}, we met at a climbing wall.`,
  rel2Reply: (p) => `How lovely, say hi to ${p}!`,
  relQ: ["Who am I with at the moment?", "What's my current partner's name?", "Who am I going out with now?"],
  drink0: (d, how) => `My mornings run on ${d}, ${how}.`,
  drink1: (d, how) => `New routine: ${d} first thing, ${how}, and nothing else until lunch.`,
  drinkQ: ["What do I drink first thing these days?", "What's in my mug every morning now?"],
  gym0: (g) => `Monday and Thursday evenings I'm at ${g}.`,
  gym1: (g) => `I stopped going to my old gym, ${g} is where I train now.`,
  gymQ: ["Where do I go to train these days?", "Which gym am I going to at present?"],
  phone0: (p) => `My ${p} keeps freezing when I open the camera.`,
  phone1: (p) => `The new phone arrived: the ${p}. The old one went in the drawer.`,
  phone1Reply: (p) => `The ${p} is a nice upgrade.`,
  phoneQ: ["What handset do I use at the moment?", "Which phone do I own now?"],
  sister: (p) => `My big sister ${p} is flying in for my birthday.`,
  sisterQ: ["What's the name of my older sister?", "Who is flying in for my birthday?"],
  allergy: (a) => `After the reaction at the wedding the hospital confirmed I'm allergic to ${a}.`,
  allergyQ: ["What am I allergic to?", "What did the hospital confirm I react to?"],
  car: (c) => `My dad still drives the ${c} he bought twenty years ago.`,
  carQ: ["What car does my dad drive?", "What's my father's old car?"],
  book: (b) => `I read ${b} on the train this week and cried at the end.`,
  bookQ: ["Which book made me cry on the train?", "What did I read on my train journeys this week?"],
  instrument: (i) => `I've taken up the ${i}, my teacher comes round on Tuesdays.`,
  instrumentQ: ["What instrument have I taken up?", "What does my Tuesday teacher teach me to play?"],
  mom: (d) => `Mum's birthday falls on the ${d} this year, a Saturday for once.`,
  momQ: ["What day is my mum's birthday?", "When does my mother have her birthday?"],
  team: (t) => `Grew up going to watch ${t} with my grandad, still my club.`,
  teamQ: ["Which football club do I cheer for?", "What team did my grandad take me to watch?"],
  desk: (p) => `The colleague opposite me, ${p}, hums all day and I secretly like it.`,
  deskQ: ["Which colleague sits opposite me?", "Who hums all day at work?"],
  meds: (m) => `The neurologist started me on ${m} to prevent the migraines.`,
  medsQ: ["What did the neurologist give me for migraines?", "What am I taking to prevent migraines?"],
  ramen: (r) => `If you want proper ramen go to ${r}, the broth is unreal.`,
  ramenQ: ["What ramen place do I recommend?", "Where is the broth unreal, in my opinion?"],
  village: (v) => `My childhood was spent in ${v}, a village by the sea.`,
  villageQ: ["Which village did I spend my childhood in?", "Where did I grow up as a kid?"],
  language: (l) => `Evening classes in ${l} twice a week, my accent is terrible.`,
  languageQ: ["What language do I take evening classes in?", "Which language am I studying in the evenings?"],
  plant: (p) => `I repotted the ${p} on the windowsill and it's flowering.`,
  plantQ: ["Which plant is flowering on my windowsill?", "What did I repot recently?"],
  fear: (f) => `I get sweaty palms just thinking about ${f}.`,
  fearQ: ["What gives me sweaty palms?", "What am I frightened of?"],
  podcast: (p) => `On the bus I always have ${p} on.`,
  podcastQ: ["What do I listen to on the bus?", "Which podcast is my bus listening?"],
  engaged: (p) => `My sister said yes! ${p} proposed on the beach.`,
  engagedReply: "That's so romantic!",
  fianceJob: (p, job) => `${p} works nights as a ${job}, so they're planning a winter wedding.`,
  fianceQ: "What's the job of the man who proposed to my sister?",
  bff: (p, c) => `${p}, my oldest friend, has moved to ${c} for a postdoc.`,
  bffVisit: (p) => `I'm going to stay with ${p} for a long weekend next month.`,
  bffQ: "Which city will I stay in when I visit my oldest friend?",
  dog: (d) => `Meet the newest member of the family: a beagle puppy called ${d}.`,
  dogReply: (d) => `Welcome, ${d}!`,
  chewed: (d, item) => `Came home to find ${d} had shredded my ${item}.`,
  dogQ: "What did my beagle shred?",
  manager: (p) => `My boss ${p} is the best I've had, she never micromanages.`,
  teamHobby: (p, hobby) => `${p} booked the department a morning of ${hobby} for team building.`,
  managerQ: "What team-building activity did my boss book?",
  trip: (t) => `Just landed from ten days in ${t}, my suitcase is a disaster.`,
  tripReply: "Welcome back! Was it worth it?",
  tripQ: (month) => `What trip did I take in ${month}?`,
  race: (r) => `Medal around my neck: I finished my first ${r}!`,
  raceQ: (r) => `When did I finish my first ${r}?`,
  promo: "My boss called me in today: I'm being promoted to team lead!",
  promoQ: "When did I find out I was being promoted?",
  tripsInYearQ: (year) => `Where did I travel in ${year}?`,
  latestPlan: "Plan for the weekend: farmers' market on Saturday, then nothing at all.",
  latestPlanQ: "What were my plans for the last weekend I mentioned?",
  abstention: [
    "What's my nephew's name?",
    "Which bank do I use?",
    "How tall am I?",
    "What's my favourite board game?",
    "When is my next eye test?",
    "What did I study at university?",
    "Which hotel did I stay at for my honeymoon?",
    "What's my grandmother's maiden name?",
  ],
  updates: [
    {
      key: "car",
      values: ["Nissan Leaf", "Ford Fiesta", "Volkswagen Golf", "Citroen Berlingo", "Tesla Model 3", "Dacia Duster"],
      states: [
        (v) => `My ${v} failed its inspection again, the garage says the brakes are shot.`,
        (v) => `Sold the old car and bought a ${v}, it's so quiet on the motorway.`,
      ],
      replies: [undefined, (v) => `Enjoy the ${v}!`],
      currentQ: ["What car do I drive now?", "What's my current car?"],
      historyQ: ["What car did I have before the current one?", "What did I drive previously?"],
    },
    {
      key: "course",
      values: [
        "an evening course in photography",
        "a part-time MBA",
        "a diploma in interior design",
        "an Open University degree in history",
        "a coding bootcamp",
      ],
      states: [
        (v) => `I enrolled in ${v}, classes start in September.`,
        (v) => `I dropped out of the course, it wasn't for me. I've signed up for ${v} instead.`,
      ],
      currentQ: ["What am I studying at the moment?", "Which course am I doing now?"],
      historyQ: ["Which course did I drop out of?", "What was I studying before?"],
    },
    {
      key: "diet",
      values: ["vegetarian", "vegan", "pescatarian", "gluten-free", "low-carb"],
      states: [(v) => `I've been ${v} for a year and honestly don't miss much.`, (v) => `Since the check-up I eat ${v}, the doctor was pretty firm about it.`],
      currentQ: ["What diet am I following now?", "How do I eat these days?"],
      historyQ: ["What diet did I follow before?", "How did I eat previously?"],
    },
    {
      key: "commute",
      values: ["by bike", "on the tram", "by car", "on foot", "on the train", "by e-scooter"],
      states: [
        (v) => `I get to work ${v}, about forty minutes each way.`,
        (v) => `I've started going in ${v}, it's quicker than it used to be.`,
        (v) => `These days I commute ${v}, I've given up on the other options.`,
      ],
      currentQ: ["How do I get to work now?", "How do I commute at the moment?"],
      historyQ: ["How did I get to work before?", "How did I use to commute?"],
    },
    {
      key: "hobby",
      values: ["woodworking", "life drawing", "birdwatching", "fencing", "kitesurfing", "beekeeping"],
      states: [(v) => `All my free time goes into ${v} at the moment.`, (v) => `I've lost interest in my old hobby, it's ${v} now every weekend.`],
      currentQ: ["What's my hobby these days?", "What do I spend my weekends doing now?"],
      historyQ: ["What hobby did I have before?", "What did I use to do in my free time?"],
    },
    {
      key: "team",
      values: ["payments team", "mobile team", "search team", "platform team", "growth team", "security team"],
      states: [(v) => `I'm on the ${v} at work, small group, good people.`, (v) => `Reorg news: they moved me to the ${v}, new desk and everything.`],
      currentQ: ["Which team am I on at work now?", "What team do I currently belong to at my job?"],
      historyQ: ["Which team was I on before the reorg?", "What team was I in previously?"],
    },
    {
      key: "volunteer",
      values: ["the food bank", "an animal shelter", "the hospice charity shop", "a repair cafe", "the community garden"],
      states: [(v) => `Saturday mornings I volunteer at ${v}.`, (v) => `I help out at ${v} now on Saturdays, I finished with the other place.`],
      currentQ: ["Where do I volunteer now?", "Where do I help out on Saturdays these days?"],
      historyQ: ["Where did I volunteer before?", "Where did I use to help out on Saturdays?"],
    },
  ],
};

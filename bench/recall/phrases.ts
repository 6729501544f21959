/**
 * How the generated users say things and how they ask about them. `ORIGINAL` is the phrasing the recall eval was
 * first written with (and which retrieval was later tuned on). `HELD_OUT` says the same facts and asks the same
 * questions in other words; it was written before any figure on it was seen and is not to be edited to move one.
 * Lists of questions are picked from with the corpus's seeded generator.
 */

export type Phrasebook = {
  name: string;
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

/**
 * Query expansion for the full-text half, without a model: irregular verb forms (Porter cannot join "grew" and
 * "grow") and small groups of everyday near-synonyms for what people tell an assistant about their lives.
 * Expanded words are searched as a second, lower-weighted list: they widen recall, never outrank a literal match.
 */

import { stem } from "./text";

const IRREGULAR = `be was were been|buy bought|bring brought|catch caught|choose chose chosen|come came|do did done|drink drank drunk
  drive drove driven|eat ate eaten|fall fell fallen|feel felt|fight fought|find found|fly flew flown|forget forgot forgotten
  get got gotten|give gave given|go went gone|grow grew grown|have had|hear heard|hold held|keep kept|know knew known
  leave left|lend lent|lose lost|make made|meet met|pay paid|put|read|ride rode ridden|ring rang rung|rise rose risen
  run ran|say said|see saw seen|sell sold|send sent|sing sang sung|sit sat|sleep slept|speak spoke spoken|spend spent
  stand stood|steal stole stolen|swim swam swum|take took taken|teach taught|tell told|think thought|throw threw thrown
  wake woke woken|wear wore worn|win won|write wrote written|begin began begun|break broke broken|build built|choose chose`;

const GROUPS = `live lives living home city town moved moving move relocated settled based place flat apartment house neighbourhood
  work job employer company firm office career role position hired offer colleague workplace
  partner dating boyfriend girlfriend seeing relationship wife husband spouse fiance fiancee engaged married
  boss manager supervisor lead
  fear afraid scared terrified phobia frightened
  headache headaches migraine migraines
  holiday vacation trip trips travel travelled getaway break abroad
  drink coffee tea espresso latte
  gym workout exercise training train fitness membership weights
  phone smartphone mobile cellphone
  car vehicle drive
  dog puppy pup
  cat kitten
  mother mom mum mama
  father dad papa
  book novel read reading
  doctor physician gp clinic
  medication medicine pills prescription
  sick ill unwell
  restaurant cafe place eat
  allergy allergic intolerant
  childhood kid child grew raised
  football soccer club team
  learn learning studying study lessons course
  birthday born
  music song band album
  film movie cinema
  friend mate pal buddy
  sister sibling
  brother sibling
  wedding marry married
  salary pay paid income
  promoted promotion raise`;

const expansions = new Map<string, Set<string>>();
const link = (list: string[]) => {
  for (const w of list) {
    const set = expansions.get(w) ?? new Set<string>();
    for (const other of list) if (other !== w) set.add(other);
    expansions.set(w, set);
  }
};
for (const line of IRREGULAR.split("|")) link(line.trim().split(/\s+/));
for (const line of GROUPS.split("\n")) link(line.trim().split(/\s+/));

/** Words related to the query's words that the query does not already contain. */
export function expandTerms(terms: readonly string[]): string[] {
  const have = new Set(terms);
  const out = new Set<string>();
  for (const t of terms) for (const x of expansions.get(t) ?? []) if (!have.has(x)) out.add(x);
  return [...out].slice(0, 32);
}

/** Stems of the words related to one word (its irregular forms and near-synonyms). */
export function relatedStems(word: string): string[] {
  return [...(expansions.get(word) ?? [])].map(stem);
}

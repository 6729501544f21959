/**
 * The kinds of value a person's changing attributes take, as regular-expression sources over lower-cased text
 * (slot-cues.ts builds the cues from them). Everyday English vocabulary, not any one conversation's names.
 */

/** Common drinks a person has as a habit; not followed by a noun that makes them a place or a thing. */
export const DRINK = String.raw`(?:coffee|espresso|latte|cappuccino|flat\s+white|americano|cortado|macchiato|mocha|cold\s+brew|decaf|tea|chai|matcha|(?:yerba\s+)?mat[eé]|rooibos|kombucha|hot\s+chocolate|cocoa|smoothie|juice|(?:hot\s+|warm\s+)?lemon\s+water|(?:hot|warm)\s+water\s+with\s+lemon|protein\s+shake|kefir|earl\s+grey)s?\b(?!\s+(?:shop|shops|machine|table|break|meeting|date|maker|grinder|towel|party|bags?|place|house|spoon|time|with))`;

export const GYM_PLACE = String.raw`(?:gym|fitness\s+(?:club|centre|center|studio)|health\s+club|leisure\s+cent(?:re|er)|(?:climbing|bouldering)\s+(?:gym|wall|centre|center)|yoga\s+studio|crossfit\s+box|swimming\s+club|pool)`;

/** Phone makers and product lines; checked against the original text's capitals ("Pixel 8", not "a pixel"). */
export const PHONE_BRAND = /^(?:iPhone|Pixel|Galaxy|Fairphone|OnePlus|Xiaomi|Redmi|Huawei|Nokia|Motorola|Moto|Xperia|Oppo|BlackBerry)$/;
export const PHONE = "(?:iphone|pixel|galaxy|fairphone|oneplus|xiaomi|redmi|huawei|nokia|motorola|moto|xperia|oppo|blackberry)";

/**
 * Car makers and a few model names that are no other word; like phone makers, checked against the original
 * text's capitals ("my Ford", not "ford the river"; "a Mini", not "a mini fridge").
 */
export const CAR_BRAND =
  /^(?:Toyota|Honda|Nissan|Ford|Volkswagen|VW|Tesla|Kia|Hyundai|Fiat|Skoda|Škoda|Renault|Peugeot|Citroen|Citroën|Dacia|Subaru|Mazda|Volvo|BMW|Audi|Mercedes|Opel|Vauxhall|Seat|SEAT|Cupra|Mini|Jeep|Chevrolet|Chevy|Suzuki|Mitsubishi|Lexus|Polestar|Porsche|Jaguar|Land|Range|Alfa|Lancia|MG|BYD|Saab|Dodge|Chrysler|Cadillac|Rivian|Genesis|Prius|Corolla|Yaris|Qashqai)$/;
export const CAR_MAKER = String.raw`(?:toyota|honda|nissan|ford|volkswagen|vw|tesla|kia|hyundai|fiat|skoda|škoda|renault|peugeot|citro[eë]n|dacia|subaru|mazda|volvo|bmw|audi|mercedes|opel|vauxhall|seat|cupra|mini|jeep|chevrolet|chevy|suzuki|mitsubishi|lexus|polestar|porsche|jaguar|land\s+rover|range\s+rover|alfa\s+romeo|lancia|mg|byd|saab|dodge|chrysler|cadillac|rivian|genesis|prius|corolla|yaris|qashqai)`;
/** The words for a car that are not a maker's name. */
export const CAR_NOUN = String.raw`(?:car|ev|electric\s+car|hybrid|van|campervan|camper|motorbike|motorcycle|pickup|truck|suv|estate|hatchback|convertible)`;

/** Ways of eating that a person keeps ("vegan", "low-carb"); not followed by a noun that makes them a dish. */
export const DIET = String.raw`(?:vegetarian|veggie|vegan|pescatarian|pescetarian|plant[\s-]based|gluten[\s-]free|dairy[\s-]free|lactose[\s-]free|sugar[\s-]free|low[\s-]carb|low[\s-]fat|keto|ketogenic|paleo|carnivore|flexitarian|halal|kosher|whole30)\b(?!\s*-?\s*(?:recipes?|restaurants?|places?|caf[eé]s?|options?|food|meals?|dish(?:es)?|lasagne|burgers?|cheese|friends?|menus?|cookbooks?|bakery|version|alternatives?|sausages?|curry))`;

/** How one travels ("by bike", "on the tram", "on foot"). */
export const MODE = String.raw`(?:by\s+(?:bike|bicycle|cycle|car|bus|coach|train|tram|metro|subway|tube|underground|ferry|boat|scooter|e-scooter|e-bike|ebike|motorbike|motorcycle|moped|taxi|cab|rail|carpool)|on\s+(?:foot|(?:the|a|an|my)\s+(?:bike|bicycle|tram|bus|train|metro|subway|tube|underground|ferry|scooter|e-scooter|e-bike|motorbike|moped)))\b`;

/** What one studies for: a course and its kinds (a class at the gym is not one). */
export const COURSE = String.raw`(?:course|degree|diploma|mba|bootcamp|boot\s+camp|certificate|certification|masters|master's|phd|doctorate|apprenticeship|programme|evening\s+class(?:es)?|night\s+school|night\s+class(?:es)?)`;

/** The groups one belongs to at work: a thing of the user's, named by the noun ("the payments team"). */
export const GROUP = "(team|squad|department|division|unit|crew)";

/** Someone else, when a question says "my ..." about them ("Where does my sister live?"). */
export const PERSON = String.raw`(?:mum|mom|mother|dad|father|parents?|brother|sister|siblings?|sons?|daughters?|kids?|children|child|baby|grandma|grandmother|grandpa|grandfather|grandparents?|gran|granny|nan|nana|grandad|granddad|aunt|auntie|uncle|cousins?|niece|nephew|friends?|mates?|buddy|pal|flatmates?|roommates?|housemates?|neighbou?rs?|boss|manager|colleagues?|co-?workers?|teammates?|landlord|landlady|doctor|dentist|therapist|teacher|coach|tutor|fianc[eé]e?|in-laws|dog|cat|puppy|kitten|pet|family|step\w*)`;

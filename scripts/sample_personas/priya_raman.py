"""Sample persona Priya Raman: three query sets and the browsing that implies their preferences."""

from sample_spec import BASKET, SEARCH, TABLEFOR, THREADS, B, P, Persona, Pref, QuerySet, R, S, V

PERSONA = Persona(
    "Priya",
    "Raman",
    "Austin",
    "TX",
    "78701",
    sets=(
        QuerySet(
            "A",
            THREADS,
            "find women's running leggings in **size M** with a rating of **4.5 stars or higher** priced "
            "**under $60**, and add the best match to the cart.",
            "Find women's running leggings in **size M** with a rating of **4.5 stars or higher** priced "
            "**under $60** on my usual shopping site, and add the best match to the cart.",
            "Find women's running leggings in my usual size that meet my typical rating standard and stay within "
            "my usual workout-gear budget, and add the best match to the cart.",
            (
                Pref("size M", "my leggings size", ("a medium", "the medium", "in medium")),
                Pref("4.5 stars or higher", "minimum star rating for workout clothes", ("four and a half stars",)),
                Pref("under $60", "how much I spend on leggings", ("sixty dollars",)),
            ),
            "where I buy leggings",
            "/search?q=running+leggings&size=M&min_rating=4.5&max_price=60",
            (
                (P, "Bought Stride Women's High-Rise Running Leggings in a medium, black, $54.00", THREADS),
                (
                    R,
                    "Stride running leggings review 5/5: the medium fits perfectly, and I never spend more than sixty "
                    "dollars on leggings",
                    THREADS,
                ),
                (P, "Bought Pacer Women's 7/8 Training Tights, navy, a medium again, $48.00", THREADS),
                (
                    R,
                    "Workout clothes review: Pacer tights 4/5; I only buy workout gear rated four and a half stars "
                    "or better",
                    THREADS,
                ),
                (
                    R,
                    "Returned the Kinetic Everyday Running Leggings: rated 4.1 and it showed, pilling after two runs",
                    THREADS,
                ),
                (P, "Bought Stride Women's Breathable Running Tank in a medium, $29.00", THREADS),
                (V, "Threads - Women's Leggings, filtered to four and a half stars and up", THREADS),
                (S, "running leggings with phone pockets for marathon training", SEARCH),
                (V, "Basket - Basket Essentials Women's Active Running Leggings, rated 3.6, closed the tab", BASKET),
                (S, "best running leggings for long runs that cost less than sixty dollars", SEARCH),
            ),
        ),
        QuerySet(
            "B",
            TABLEFOR,
            "find a table for **4 people** at a **Thai** restaurant in Austin for Saturday at 7:00 PM, and open "
            "the reservation details page without confirming.",
            "Find a table for **4 people** at a **Thai** restaurant in Austin for Saturday at 7:00 PM on my usual "
            "booking site, and open the reservation details page without confirming.",
            "Find a table for my usual group size at a restaurant serving my favorite cuisine in Austin for "
            "Saturday at 7:00 PM, and open the reservation details page without confirming.",
            (
                Pref(
                    "4 people", "restaurant reservation party size", ("party of four", "table for four", "party of 4")
                ),
                Pref("Thai", "favorite restaurant dishes", ("khao soi", "green curry", "pad see ew", "larb")),
            ),
            "restaurant reservations",
            "/search?city=Austin&cuisine=Thai&party=4&time=19:00",
            (
                (B, "Restaurant reservation for a party of four at Lemongrass House on TableFor", TABLEFOR),
                (R, "Lemongrass House restaurant 5/5: the khao soi and green curry are my favorite dishes", TABLEFOR),
                (
                    B,
                    "Restaurant reservation at Bangkok Alley, Saturday 7:00 PM, table for four with Arjun, Maya and "
                    "Leo",
                    TABLEFOR,
                ),
                (R, "Bangkok Alley restaurant 4/5: pad see ew was great, a bit loud on a Saturday", TABLEFOR),
                (B, "Dinner reservation at Lemongrass House again, Saturday 6:30 PM, party of four", TABLEFOR),
                (B, "Restaurant reservation at Sala Rim Nam, Sunday 7:00 PM, party of 4", TABLEFOR),
                (
                    R,
                    "Sala Rim Nam restaurant 4/5: larb and mango sticky rice were lovely, pricier than Lemongrass "
                    "House",
                    TABLEFOR,
                ),
                (S, "best khao soi in Austin", SEARCH),
                (S, "green curry paste recipe with coconut milk", SEARCH),
                (V, "TableFor - Trattoria Lucca menu, skipped", TABLEFOR),
            ),
        ),
        QuerySet(
            "C",
            BASKET,
            "find **unsweetened** oat milk in the **64 oz** carton and add two to the cart with **same-day delivery**.",
            "Find **unsweetened** oat milk in the **64 oz** carton and add two to the cart with **same-day delivery**.",
            "Find oat milk the way I usually take it, in my usual carton size, and add two to the cart with my "
            "usual delivery option.",
            (
                Pref("unsweetened", "which oat milk I buy", ("no added sugar", "zero sugar")),
                Pref("64 oz", "oat milk carton size", ("half-gallon",)),
                Pref("same-day delivery", "grocery delivery speed", ("same afternoon", "within hours")),
            ),
            "where I buy groceries",
            "/search?q=unsweetened+oat+milk&size=64+oz",
            (
                (
                    P,
                    "Basket grocery order: Oatley Farms oat milk with no added sugar, half-gallon carton x2, "
                    "delivered the same afternoon",
                    BASKET,
                ),
                (R, "Oatley Farms oat milk 5/5: no added sugar, and the half-gallon carton lasts me the week", BASKET),
                (P, "Basket grocery order: Good Grain oat milk, zero sugar, half-gallon, arrived within hours", BASKET),
                (R, "Good Grain vanilla oat milk 2/5: way too sweet for my coffee, back to the plain one", BASKET),
                (S, "oat milk with no added sugar half-gallon", SEARCH),
                (
                    P,
                    "Basket weekly groceries: oat milk, bananas, spinach; grocery delivery arrived the same afternoon",
                    BASKET,
                ),
                (R, "Basket grocery delivery 5/5: ordered at noon, groceries delivered within hours as always", BASKET),
            ),
        ),
    ),
    interests=(
        (S, "{couch to half marathon plan|tempo run pace calculator|how to avoid shin splints}", SEARCH),
        (V, "Strava - {Sunday long run 10 mi|Lady Bird Lake loop|tempo run 5 mi|easy recovery run}", "strava.com"),
        (V, "YouTube - {10 minute yoga for runners|hip mobility routine|marathon fueling tips}", "youtube.com"),
        (S, "{python asyncio tutorial|kubernetes ingress config|postgres index tuning|rust borrow checker}", SEARCH),
        (V, "GitHub - {pull request review|issue triage|release notes}", "github.com"),
        (
            V,
            "Stack Overflow - {async generator question|docker networking answer|regex lookahead answer}",
            "stackoverflow.com",
        ),
        (P, "{Cat litter 20 lb|Salmon cat food 12-pack|Cat scratching post} from Basket", BASKET),
        (S, "{cat keeps knocking things over|best indoor cat toys|cat vaccine schedule}", SEARCH),
        (V, "Austin Chronicle - {SXSW guide|weekend events|new coffee shops on the east side}", "austinchronicle.com"),
        (R, "{Flat Track Coffee|Summer Moon|Houndstooth Coffee} on Yelp: {4|5}/5, great cold brew", "yelp.com"),
        (P, "{Kindle book: Project Hail Mary|Kindle book: The Midnight Library|Audible: Born to Run}", "amazon.com"),
    ),
)

"""Sample persona Marcus Okafor: three query sets and the browsing that implies their preferences."""

from sample_spec import BASKET, SEARCH, STAGEPASS, THREADS, P, Persona, Pref, QuerySet, R, S, V

PERSONA = Persona(
    "Marcus",
    "Okafor",
    "Chicago",
    "IL",
    "60601",
    sets=(
        QuerySet(
            "A",
            THREADS,
            "find men's slim chinos in **34x30** rated **4 stars and up** priced **below $50**, and add the top "
            "match to the cart.",
            "Find men's slim chinos in **34x30** rated **4 stars and up** priced **below $50**, and add the top "
            "match to the cart.",
            "Find men's slim chinos in my usual waist and inseam that meet my usual rating bar and my typical "
            "budget for work pants, and add the top match to the cart.",
            (
                Pref("34x30", "what size pants do I wear", ("waist 34", "34 waist")),
                Pref("4 stars and up", "minimum customer rating for clothes", ("four stars",)),
                Pref("below $50", "how much I spend on work pants", ("fifty bucks", "fifty dollar")),
            ),
            "where I buy pants",
            "/search?q=slim+chinos&size=34x30&min_rating=4&max_price=50",
            (
                (P, "Bought Harbor slim chino pants in waist 34, inseam 30", THREADS),
                (R, "Work pants review: Harbor chinos 5/5, and I spend at most fifty bucks on work pants", THREADS),
                (P, "Bought Dockyard stretch chino pants, 34 waist and 30 inseam", THREADS),
                (
                    R,
                    "Dockyard chinos 2/5: cheap clothes with a low customer rating, never again below four stars",
                    THREADS,
                ),
                (S, "slim chinos waist 34 inseam 30 for the office", SEARCH),
                (V, "Threads - Men's clothes filtered by customer rating: four stars and up", THREADS),
                (
                    R,
                    "Fairway slim chinos look sharp but sixty-eight dollars is too much to spend on work pants",
                    THREADS,
                ),
                (P, "Bought Harbor Men's Classic Crew Tee, large, $18.00", THREADS),
                (V, "Basket - Everyday Co Men's Value Chinos, rated 3.2, skipped", BASKET),
                (S, "are fifty dollar chinos worth it", SEARCH),
            ),
        ),
        QuerySet(
            "B",
            STAGEPASS,
            "find **jazz** concerts in Chicago with seats **under $80** per ticket, choose **2 tickets** and go to "
            "checkout without buying.",
            "Find **jazz** concerts in Chicago with seats **under $80** per ticket, choose **2 tickets** and go to "
            "checkout without buying.",
            "Find concerts in Chicago in my favorite music genre within my usual per-ticket budget, choose my "
            "usual number of tickets and go to checkout without buying.",
            (
                Pref("jazz", "favorite music for concerts", ("saxophone", "bebop", "improvisation", "piano trio")),
                Pref("under $80", "concert ticket budget", ("under eighty",)),
                Pref("2 tickets", "how many concert tickets I buy", ("two seats", "pair of tickets", "2 seats")),
            ),
            "where I buy concert tickets",
            "/search?city=Chicago&genre=jazz&max_price=80",
            (
                (
                    P,
                    "Concert tickets on StagePass: two seats for the Sol Mendel Quartet at Velvet Lantern, $55 each",
                    STAGEPASS,
                ),
                (R, "Concert review, Sol Mendel Quartet 5/5: bebop saxophone and upright bass at its best", STAGEPASS),
                (
                    R,
                    "Concert tickets review: Sol Mendel Quartet 5/5, and I keep concert tickets under eighty a seat",
                    STAGEPASS,
                ),
                (
                    P,
                    "Concert tickets: 2 seats for the June Alvarez Sextet at Drake Street Jazz Room, $42 each, date "
                    "night with Dana",
                    STAGEPASS,
                ),
                (S, "bebop clubs in Chicago with live saxophone", SEARCH),
                (V, "StagePass - Brassline Big Band Ellington Night, balcony $110, skipped", STAGEPASS),
                (P, "Concert tickets: a pair of tickets for the Nia Okoro Trio piano night, $35 each", STAGEPASS),
                (
                    R,
                    "Concert review, Nia Okoro Trio 4/5: great improvisation and swing, we grabbed two seats near "
                    "the bar",
                    STAGEPASS,
                ),
                (V, "YouTube - Coltrane Giant Steps live, saxophone solo", "youtube.com"),
                (V, "Spotify - my favorite music playlist: bebop saxophone and piano trio standards", "spotify.com"),
            ),
        ),
        QuerySet(
            "C",
            BASKET,
            "find wireless earbuds with **active noise cancelling** priced **under $100**, and add the best-rated "
            "one to the cart.",
            "Find wireless earbuds with **active noise cancelling** priced **under $100**, and add the best-rated "
            "one to the cart.",
            "Find wireless earbuds with the audio feature I always look for, within my usual gadget budget, and "
            "add the best-rated one to the cart.",
            (
                Pref("active noise cancelling", "headphone features I look for", ("block out", "silence", "drown out")),
                Pref("under $100", "headphones budget", ("triple digits", "under a hundred")),
            ),
            "where I buy headphones",
            "/search?q=noise+cancelling+earbuds&max_price=100",
            (
                (
                    R,
                    "Pulse sport wireless earbuds review 2/5: they let in all the noise on the L train platform, I "
                    "can't hear my podcasts",
                    BASKET,
                ),
                (S, "earbuds that block out train noise on the commute", SEARCH),
                (P, "Bought Wavelength Studio headphones that silence the office chatter, $94", BASKET),
                (
                    R,
                    "Wavelength Studio headphones review 5/5: they block out the open office completely; I never pay "
                    "triple digits for headphones",
                    BASKET,
                ),
                (S, "gadget gifts under a hundred dollars", SEARCH),
                (V, "Basket - Auralite Pro earbuds at $179, closed the tab", BASKET),
                (S, "headphones that drown out a noisy open office", SEARCH),
            ),
        ),
    ),
    interests=(
        (S, "{Bulls score last night|Bulls trade rumors|DePaul basketball schedule}", SEARCH),
        (V, "ESPN - {Bulls game recap|NBA power rankings|fantasy basketball waiver wire}", "espn.com"),
        (S, "{jollof rice recipe|egusi soup recipe|suya spice blend|how to braise short ribs}", SEARCH),
        (V, "Serious Eats - {cast iron steak guide|perfect rice|braised greens}", "seriouseats.com"),
        (V, "Strava - {Lakefront Trail ride 22 mi|North Branch Trail ride|commute ride}", "strava.com"),
        (S, "{bike chain lube for winter|road bike tire pressure|bike lights for commuting}", SEARCH),
        (P, "{Bike chain lube|Inner tubes 2-pack|Bike lock} from Basket", BASKET),
        (V, "Flickr - {street photography Chicago|night shots on Wacker Drive|lake skyline}", "flickr.com"),
        (S, "{35mm prime lens review|how to shoot in low light|film simulation recipes}", SEARCH),
        (R, "{Intelligentsia Coffee|Lou Malnati's|Kasama} on Yelp: {4|5}/5, will be back", "yelp.com"),
        (V, "Chicago Tribune - {transit fare changes|lakefront news|city budget}", "chicagotribune.com"),
    ),
)

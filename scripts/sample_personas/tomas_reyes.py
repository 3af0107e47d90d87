"""Sample persona Tomas Reyes: three query sets and the browsing that implies their preferences."""

from sample_spec import BASKET, SEARCH, STAGEPASS, TABLEFOR, THREADS, B, P, Persona, Pref, QuerySet, R, S, V

PERSONA = Persona(
    "Tomas",
    "Reyes",
    "Denver",
    "CO",
    "80202",
    sets=(
        QuerySet(
            "A",
            STAGEPASS,
            "find **stand-up comedy** shows in Denver with tickets **under $40**, pick 2 tickets for the soonest "
            "one and go to checkout without buying.",
            "Find **stand-up comedy** shows in Denver with tickets **under $40**, pick 2 tickets for the soonest "
            "one and go to checkout without buying.",
            "Find shows in Denver of the kind I like best within my usual ticket budget, pick 2 tickets for the "
            "soonest one and go to checkout without buying.",
            (
                Pref("stand-up comedy", "favorite kind of live show", ("crowd work", "comedians", "open mic")),
                Pref("under $40", "show ticket budget", ("more than forty",)),
            ),
            "where I buy show tickets",
            "/search?city=Denver&genre=comedy&max_price=40",
            (
                (
                    P,
                    "Show tickets on StagePass: Rita Vance at The Laugh Vault, 2 general admission, $32 each",
                    STAGEPASS,
                ),
                (
                    R,
                    "Live show review: Benny Ortiz 5/5, comedians doing crowd work are my favorite kind of show",
                    STAGEPASS,
                ),
                (R, "Show tickets review: Rita Vance 5/5, and my budget is never more than forty a ticket", STAGEPASS),
                (V, "YouTube - best crowd work clips of the year", "youtube.com"),
                (S, "comedians touring Denver this fall", SEARCH),
                (R, "Show review, Dev Kapoor Live 3/5: funny set but $55 balcony seats were not worth it", STAGEPASS),
                (P, "Show tickets: Tuesday open mic night at Basement Stage, 2 tickets, $15", STAGEPASS),
                (V, "Netflix - new hour-long special from Marla Quinn, laughing the whole way", "netflix.com"),
            ),
        ),
        QuerySet(
            "B",
            THREADS,
            "find men's trail running shoes in **size 10.5** priced **under $130**, and add the best-reviewed pair "
            "to the cart.",
            "Find men's trail running shoes in **size 10.5** priced **under $130**, and add the best-reviewed pair "
            "to the cart.",
            "Find men's trail running shoes in my usual shoe size within my usual budget for running shoes, and "
            "add the best-reviewed pair to the cart.",
            (
                Pref("size 10.5", "my shoe size", ("10½", "ten and a half")),
                Pref("under $130", "running shoes budget", ("hundred thirty", "out of my range")),
            ),
            "where I buy running shoes",
            "/search?q=trail+running+shoes&category=running-shoes&size=10.5&max_price=130",
            (
                (P, "Bought Ridgeline Men's Trail Running Shoes, shoe size US 10½, $119", THREADS),
                (
                    R,
                    "Ridgeline trail running shoes review 5/5: the 10½ leaves room for toe splay; I cap running "
                    "shoes around a hundred thirty dollars",
                    THREADS,
                ),
                (S, "trail shoes for the rocky Green Mountain loop", SEARCH),
                (P, "Bought Talus Men's Grip Trail Runners, ten and a half, $104", THREADS),
                (V, "Threads - Summit Men's GTX Trail Running Shoes at $165, out of my range", THREADS),
                (R, "Pacer trail runners: tried an 11 in store, way too long, half a size down is my fit", THREADS),
            ),
        ),
        QuerySet(
            "C",
            TABLEFOR,
            "book Sunday brunch at 11:00 AM for **6 people** at a **Mexican** restaurant in Denver, stopping at the "
            "reservation details page without confirming.",
            "Book Sunday brunch at 11:00 AM for **6 people** at a **Mexican** restaurant in Denver, stopping at the "
            "reservation details page without confirming.",
            "Book Sunday brunch at 11:00 AM for my usual brunch crew at a restaurant serving my favorite cuisine in "
            "Denver, stopping at the reservation details page without confirming.",
            (
                Pref("6 people", "brunch reservation party size", ("party of six", "six guests", "party of 6")),
                Pref("Mexican", "favorite brunch food", ("chilaquiles", "huevos rancheros", "mole enchiladas")),
            ),
            "brunch reservations",
            "/search?city=Denver&cuisine=Mexican&party=6&time=11:00",
            (
                (
                    B,
                    "Brunch reservation at La Paloma Cantina on TableFor, Sunday 11:00 AM, party of six with the "
                    "running club",
                    TABLEFOR,
                ),
                (
                    R,
                    "La Paloma Cantina brunch 5/5: chilaquiles verdes and huevos rancheros are my favorite brunch, "
                    "and they seat all six of us",
                    TABLEFOR,
                ),
                (B, "Brunch reservation at Casa Mireles, Sunday 11:30 AM, six guests", TABLEFOR),
                (R, "Casa Mireles brunch 4/5: mole enchiladas were rich, drinks a bit pricey", TABLEFOR),
                (S, "best chilaquiles in Denver", SEARCH),
                (B, "Brunch reservation at La Paloma Cantina, Sunday 10:30 AM, party of 6", TABLEFOR),
            ),
        ),
    ),
    interests=(
        (
            V,
            "Strava - {Green Mountain loop 8 mi|Mount Falcon climb|Bear Creek trail run|track intervals}",
            "strava.com",
        ),
        (S, "{Leadville trail 100 training|altitude running tips|ultra fueling strategy}", SEARCH),
        (S, "{Broncos depth chart|Broncos injury report|Nuggets tickets}", SEARCH),
        (V, "ESPN - {Broncos game recap|NFL power rankings|fantasy football waiver wire}", "espn.com"),
        (S, "{hazy IPA breweries Denver|best brewery patios RiNo|Great American Beer Festival dates}", SEARCH),
        (R, "{Ratio Beerworks|Cerebral Brewing|Denver Beer Co} on Yelp: {4|5}/5, great patio", "yelp.com"),
        (P, "{Dog food 30 lb|Dog poop bags|Chew toys 3-pack} from Basket", BASKET),
        (S, "{dog friendly trails near Denver|puppy leash training|dog park Cherry Creek}", SEARCH),
        (V, "Denver Post - {I-70 traffic update|snowpack report|city council news}", "denverpost.com"),
        (V, "YouTube - {trail running form tips|downhill technique|ultramarathon documentary}", "youtube.com"),
    ),
)

"""Sample persona Lena Fischer: three query sets and the browsing that implies their preferences."""

from sample_spec import BASKET, SEARCH, TABLEFOR, THREADS, B, P, Persona, Pref, QuerySet, R, S, V

PERSONA = Persona(
    "Lena",
    "Fischer",
    "Seattle",
    "WA",
    "98101",
    sets=(
        QuerySet(
            "A",
            BASKET,
            "find **gluten-free** penne that is **certified organic** and add two boxes to the cart.",
            "Find **gluten-free** penne that is **certified organic** and add two boxes to the cart on the grocery "
            "site I usually use.",
            "Find penne that fits my dietary restriction and my usual sourcing standard, and add two boxes to the "
            "cart.",
            (
                Pref("gluten-free", "my dietary restrictions", ("celiac", "wheat-free", "no wheat")),
                Pref("certified organic", "pasta I buy", ("usda organic", "pesticide-free")),
            ),
            "where I buy groceries",
            "/search?q=gluten-free+organic+penne",
            (
                (S, "celiac safe pasta brands", SEARCH),
                (
                    P,
                    "Basket grocery order: Meadow & Co brown rice penne pasta with the USDA organic seal, 2 boxes",
                    BASKET,
                ),
                (S, "celiac disease dietary restrictions list", SEARCH),
                (
                    R,
                    "Meadow & Co brown rice penne pasta 5/5: no wheat, safe for my celiac diet, and pesticide-free "
                    "farming",
                    BASKET,
                ),
                (V, "Celiac Foundation - hidden sources of wheat in packaged food", "celiac.org"),
                (P, "Basket grocery order: Good Grain chickpea rotini (wheat-free) and almond flour", BASKET),
                (
                    R,
                    "Basket Essentials classic spaghetti 1/5: bought by mistake, made with wheat, gave it away",
                    BASKET,
                ),
                (S, "is USDA organic pasta worth the price", SEARCH),
                (P, "Basket grocery order: USDA organic spinach, strawberries and wheat-free bread", BASKET),
                (S, "celiac friendly weeknight dinners", SEARCH),
            ),
        ),
        QuerySet(
            "B",
            TABLEFOR,
            "find a **vegetarian** restaurant in Seattle that is **$$ or less** for dinner for two on Friday at "
            "8:00 PM, and open the reservation details page without confirming.",
            "Find a **vegetarian** restaurant in Seattle that is **$$ or less** for dinner for two on Friday at "
            "8:00 PM, and open the reservation details page without confirming.",
            "Find a restaurant in Seattle that suits how I eat and my usual dining-out price range for dinner for "
            "two on Friday at 8:00 PM, and open the reservation details page without confirming.",
            (
                Pref("vegetarian", "what food I eat at restaurants", ("meat-free", "meatless")),
                Pref(
                    "$$ or less",
                    "restaurant price range",
                    ("thirty dollars a head", "cheap and cheerful", "too expensive"),
                ),
            ),
            "restaurant reservations",
            "/search?city=Seattle&cuisine=Vegetarian&price=2&party=2&time=20:00",
            (
                (B, "Restaurant reservation at Green Fern on TableFor, Friday 8:00 PM, 2 guests", TABLEFOR),
                (
                    R,
                    "Green Fern restaurant 5/5: meat-free menu and the mushroom bourguignon is superb, about thirty "
                    "dollars a head",
                    TABLEFOR,
                ),
                (B, "Restaurant reservation at Plantworks Cafe, Sunday brunch 11:00, 2 guests", TABLEFOR),
                (
                    R,
                    "Restaurant review: Plantworks Cafe 4/5, cheap and cheerful, my usual price range for restaurants",
                    TABLEFOR,
                ),
                (V, "TableFor - Root & Stem restaurant, price too expensive for a regular dinner", TABLEFOR),
                (S, "meatless dinner restaurants on Capitol Hill", SEARCH),
                (S, "restaurants with meat-free food", SEARCH),
                (R, "Hearth & Vine restaurant 2/5: nothing meat-free besides a side salad, and pricey", TABLEFOR),
                (B, "Restaurant reservation at Green Fern again, Thursday 7:30 PM, 2 guests", TABLEFOR),
            ),
        ),
        QuerySet(
            "C",
            THREADS,
            "find a women's rain jacket in **size S** that is **waterproof** for hiking, and add the best-rated one "
            "to the cart.",
            "Find a women's rain jacket in **size S** that is **waterproof** for hiking, and add the best-rated one "
            "to the cart.",
            "Find a women's rain jacket in my usual size that holds up to my usual hiking conditions, and add the "
            "best-rated one to the cart.",
            (
                Pref("size S", "my jacket size", ("small",)),
                Pref("waterproof", "what I need from a rain jacket", ("bone dry", "soaked through", "stays dry")),
            ),
            "where I buy jackets",
            "/search?q=waterproof+rain+jacket&category=womens-jackets&size=S",
            (
                (P, "Bought Cascade Women's Storm Rain Shell jacket, forest green, in a small, $129", THREADS),
                (
                    R,
                    "Cascade rain jacket review 5/5: kept me bone dry through four hours of downpour on Mount Si, and "
                    "the small fits over a fleece",
                    THREADS,
                ),
                (
                    R,
                    "Lumen windbreaker jacket review 2/5: soaked through in ten minutes of drizzle, returned it",
                    THREADS,
                ),
                (P, "Bought Lumen Women's Merino Long-Sleeve Top, small", THREADS),
                (S, "rain jacket that stays dry in all-day downpours", SEARCH),
                (P, "Bought Fieldday Women's Fleece Pullover Hoodie, small", THREADS),
                (V, "Basket - Basket Essentials Women's Rain Jacket, rated 3.1, skipped", BASKET),
            ),
        ),
    ),
    interests=(
        (
            S,
            "{Mount Si trail conditions|Rattlesnake Ledge parking|Olympic peninsula hikes|Enchantments permit}",
            SEARCH,
        ),
        (V, "WTA - {trip report Mount Si|trip report Lake Serene|trail conditions Snoqualmie Pass}", "wta.org"),
        (B, "Recreation.gov - {Ohanapecosh campground, 2 nights|Kalaloch campground, 1 night}", "recreation.gov"),
        (S, "{lentil shepherd's pie recipe|tofu scramble recipe|black bean burger recipe}", SEARCH),
        (V, "Goodreads - {Braiding Sweetgrass|Tomorrow and Tomorrow and Tomorrow|The Overstory}", "goodreads.com"),
        (V, "Bandcamp - {Fleet Foxes live session|Phoebe Bridgers EP|local indie compilation}", "bandcamp.com"),
        (S, "{Seattle public library holds|Ballard farmers market hours|ferry schedule Bainbridge}", SEARCH),
        (P, "{Dish soap refill|Compostable bags|Bamboo toothbrushes} from Basket", BASKET),
        (R, "{Elliott Bay Book Company|Victrola Coffee|Ballard Farmers Market} on Yelp: {4|5}/5, lovely", "yelp.com"),
        (V, "The Stranger - {concert listings|neighborhood news|bike lane update}", "thestranger.com"),
    ),
)

"""The four sample personas, one module each."""

from sample_personas.lena_fischer import PERSONA as LENA
from sample_personas.marcus_okafor import PERSONA as MARCUS
from sample_personas.priya_raman import PERSONA as PRIYA
from sample_personas.tomas_reyes import PERSONA as TOMAS

PERSONAS = (PRIYA, MARCUS, LENA, TOMAS)

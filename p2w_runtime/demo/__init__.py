"""What the demo and the tests run on, kept apart from the runtime: the bundled demo sites, the sample personas
and tasks, and the example runs. These modules import the runtime; the runtime never imports them
(``tests/architecture/test_layering.py``), so a lab that records on the open web carries none of it into its runs.
"""

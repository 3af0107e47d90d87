"""The test suite, one folder per layer of p2w-rt it exercises, as packages: a test imports what it shares as
``tests.helpers.NAME`` (the repository root is on the path as pytest's rootdir), and two folders may hold modules of
one name."""

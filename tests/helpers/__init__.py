"""What several test modules share: builders, local servers, support files run in a process or a pytest of their own."""

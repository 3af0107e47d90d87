"""Other agents recorded through the recording API (``p2w_runtime.recording``): each in its own subpackage, each
importing its agent library only when used, so p2w-rt runs without them."""

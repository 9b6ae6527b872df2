"""The past as Mycel lived it: every model call rebuilt from what Mycel stored (summary rows first),
with the settings in force inferred from that record where nothing else says them."""

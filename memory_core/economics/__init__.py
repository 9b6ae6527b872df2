"""Where the context goes: pure analyses over the record of every model call.

calibration.py   Mycel's estimate (characters / 2) against tiktoken and the provider's count
tool_pressure.py which tools fill the window, what pruning removed from them, and what was asked again
prompt_cache.py  the prefix each request shared with the one before, what broke it, and what it cost
"""

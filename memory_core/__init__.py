"""The Mycel Memory Dashboard's engine: Mycel's memory rules as pure, typed functions, and stores/ to read its files."""

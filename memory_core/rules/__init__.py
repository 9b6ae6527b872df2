"""Which memory rules a thread ran under (Mycel main or Mycel dev), and dev's middleware step."""

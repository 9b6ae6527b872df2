"""What more than one test file uses: helpers, builders and constants, one module per topic. conftest.py files
hold only fixtures and hooks (they may import from here); no test module imports from a conftest
(tests/test_suite_shape.py)."""

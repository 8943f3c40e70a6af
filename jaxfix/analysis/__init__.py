"""Facts about a module that several rules need, computed once per file and lazily."""
